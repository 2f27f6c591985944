"""The codec: a value in, a frame out, and back (spec/WIRE_FORMAT.md)."""

from __future__ import annotations

import base64
from collections.abc import Callable, Iterable
from typing import Any

from zeroc import _json
from zeroc._compression import DeflateEngine, Engine, ZstdEngine, make_engine
from zeroc._dictionary import Dictionary, DictionaryStore
from zeroc._errors import (
    ChecksumMismatch,
    DictionaryMismatch,
    EncodeError,
    LimitExceeded,
    UnknownDictionary,
    UsageError,
)
from zeroc._frame import Method, Ref, crc32, iter_stream, pack_stream, parse, tag

DEFAULT_MAX_DECODED_SIZE = 64 * 1024 * 1024
# RFC 9842 asks dcz decoders to accept windows up to 8 MB; Zeroc's own frames never need more.
DEFAULT_MAX_WINDOW_SIZE = 8 * 1024 * 1024
_FRAME_IDS = {"context": Ref.CONTEXT, "short": Ref.SHORT_ID, "sha256": Ref.SHA256}
_FAMILY = {Method.ZSTD_BLOCK: "zstd", Method.ZSTD_FRAME: "zstd", Method.DEFLATE: "deflate"}


def _bytes_dumps(value: Any) -> bytes:
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value)
    raise EncodeError(f"a bytes codec encodes bytes, not {type(value).__name__}")


def _bytes_loads(data: bytes) -> bytes:
    return data


class Codec:
    """Encode values to Zeroc frames and decode them back, exactly.

    ``Codec()`` compresses JSON values with zstd and no dictionary; ``Codec(dictionary)`` uses a
    trained :class:`Dictionary` with the serialization, schema and compression it was trained
    for. ``schema`` (a protobuf message class, ``"module:Message"`` or :class:`Schema`) switches to
    protobuf. Compressor objects are created once; a codec can be shared between threads.

    ``frame_id`` says how frames name their dictionary: ``"context"`` (0 bytes: the receiver
    knows it from the codec, stream or HTTP header), ``"short"`` (2 bytes) or ``"sha256"``
    (32 bytes, self-describing). ``checksum=True`` adds a CRC-32 for transports without one.
    ``store`` lets :meth:`decode` follow frames that name other dictionaries (rotation).
    """

    def __init__(
        self,
        dictionary: Dictionary | None = None,
        schema: Any = None,
        *,
        serialization: str | None = None,
        method: str | None = None,
        level: int | None = None,
        frame_id: str = "context",
        checksum: bool = False,
        max_decoded_size: int = DEFAULT_MAX_DECODED_SIZE,
        max_window_size: int = DEFAULT_MAX_WINDOW_SIZE,
        store: DictionaryStore | None = None,
    ) -> None:
        from zeroc._schema import Schema, resolve

        if dictionary is not None and not isinstance(dictionary, Dictionary):
            raise UsageError(f"dictionary must be a zeroc.Dictionary, got {type(dictionary).__name__}")
        if frame_id not in _FRAME_IDS:
            raise UsageError(f"frame_id must be one of {sorted(_FRAME_IDS)}, not {frame_id!r}")
        self.dictionary = dictionary
        self.schema = resolve(schema)
        if dictionary is not None and dictionary.schema is not None:
            name = dictionary.schema["message"]
            if self.schema is None:
                fds = base64.b64decode(dictionary.schema["descriptor_set"])
                self.schema = Schema.from_descriptor_set(fds, name)
            elif self.schema.full_name != name:
                raise UsageError(f"dictionary is for {name}, not {self.schema.full_name}")
        default = dictionary.serialization if dictionary else ("protobuf" if self.schema else "json")
        self.serialization = serialization or default
        if dictionary is not None and self.serialization != dictionary.serialization:
            raise UsageError(f"dictionary is for {dictionary.serialization}, not {self.serialization}")
        self._dumps: Callable[[Any], bytes]
        self._loads: Callable[[bytes], Any]
        if self.serialization == "protobuf":
            if self.schema is None:
                raise UsageError("protobuf serialization needs a schema")
            self._dumps, self._loads = self.schema.dumps, self.schema.loads
        elif self.serialization == "json":
            self._dumps, self._loads = _json.dumps, _json.loads
        elif self.serialization == "bytes":
            self._dumps, self._loads = _bytes_dumps, _bytes_loads
        else:
            raise UsageError(f"unknown serialization {self.serialization!r}")
        if self.schema is not None and self.serialization != "protobuf":
            raise UsageError(f"a schema needs protobuf serialization, not {self.serialization}")
        if max_decoded_size < 1 or max_window_size < 1024:
            raise UsageError("limits must be positive (window at least 1 KiB)")
        codec: dict[str, Any] = dictionary.codec if dictionary else {"method": "zstd", "level": 3}
        self.method: str = method or codec["method"]
        if level is None:
            level = (
                codec["level"] if self.method == codec["method"] else (9 if self.method == "deflate" else 3)
            )
        self.level: int = level
        self.checksum = checksum
        self.max_decoded_size = max_decoded_size
        self.max_window_size = max_window_size
        self.store = store
        content = dictionary.content if dictionary else None
        self._engine: Engine = make_engine(self.method, level, content, max_window_size=max_window_size)
        self._decoders: dict[str, Engine] = {self._engine.name: self._engine}
        self._plain: dict[str, Engine] = {}
        self._others: dict[bytes, Codec] = {}
        self._sha = dictionary.sha256 if dictionary else None
        ref = _FRAME_IDS[frame_id] if dictionary else Ref.NONE
        reference = b""
        if ref is Ref.SHORT_ID:
            reference = dictionary.short_id.to_bytes(2, "little")  # type: ignore[union-attr]
        elif ref is Ref.SHA256:
            reference = dictionary.sha256  # type: ignore[union-attr]
        self._ref = ref
        self._heads = tuple(bytes([tag(m, ref, checksum)]) + reference for m in Method)
        # The common frame (zstd-block, this codec's reference, no checksum) skips header parsing.
        self._fast_tag = -1
        if isinstance(self._engine, ZstdEngine) and not checksum and ref <= Ref.CONTEXT:
            self._block: ZstdEngine = self._engine
            self._fast_tag = tag(Method.ZSTD_BLOCK, ref, False)

    # -- frames --------------------------------------------------------------------------
    def encode(self, value: Any) -> bytes:
        """Serialize and compress ``value`` into one frame (never > serialization + 1 byte + ids)."""
        data = self._dumps(value)
        method, payload = self._engine.compress(data)
        if len(payload) >= len(data):
            method, payload = 0, data  # stored
        if self.checksum:
            return self._heads[method] + crc32(data).to_bytes(4, "little") + payload
        return self._heads[method] + payload

    def decode(self, frame: bytes, *, as_message: bool = False) -> Any:
        """Decode one frame; protobuf codecs return a dict, or the message if ``as_message``."""
        if len(frame) > 1 and frame[0] == self._fast_tag and not as_message and type(frame) is bytes:
            return self._loads(self._block.decompress_block(frame[1:], self.max_decoded_size))
        data = self.decode_payload(frame)
        if as_message:
            if self.schema is None:
                raise UsageError("as_message needs a protobuf schema")
            return self.schema.loads_message(data)
        return self._loads(data)

    def decode_payload(self, frame: bytes, *, _context: Dictionary | None = None) -> bytes:
        """Decode a frame to its serialization (JSON text, protobuf bytes or raw bytes)."""
        if type(frame) is not bytes:
            if not isinstance(frame, (bytearray, memoryview)):
                raise UsageError(f"frame must be bytes, not {type(frame).__name__}")
            frame = bytes(frame)
        if len(frame) > 1 and frame[0] == self._fast_tag and _context is None:
            return self._block.decompress_block(frame[1:], self.max_decoded_size)
        h = parse(frame)
        if h.ref is Ref.NONE:
            engine = self._plain_engine(h.method)
        else:
            owner = self._owner(h.ref, h.reference, _context)
            if owner is not self:
                return owner.decode_payload(frame, _context=owner.dictionary)
            engine = self._engine_for(h.method)
        if h.method is Method.STORED:
            data = h.payload
            if len(data) > self.max_decoded_size:
                raise LimitExceeded(f"stored payload of {len(data)} bytes exceeds the limit")
        else:
            data = engine.decompress(h.method, h.payload, self.max_decoded_size)
        if h.checksum is not None and crc32(data) != h.checksum:
            raise ChecksumMismatch("frame checksum does not match its decoded content")
        return data

    def _owner(self, ref: Ref, reference: bytes, context: Dictionary | None) -> Codec:
        """The codec whose dictionary a frame names."""
        if ref is Ref.CONTEXT:
            if context is not None and context.sha256 != self._sha:
                return self._other(context)
            if self._sha is None:
                raise UnknownDictionary("frame was compressed with a dictionary but this codec has none")
            return self
        if self._sha is not None and (
            reference == self._sha if ref is Ref.SHA256 else reference == self._sha[:2]
        ):
            return self
        if self.store is None:
            if self._sha is None:
                raise UnknownDictionary(f"frame names dictionary {reference.hex()} and this codec has none")
            raise DictionaryMismatch(
                f"frame names dictionary {reference.hex()}, this codec holds {self._sha.hex()[:16]}"
            )
        key: bytes | int = reference if ref is Ref.SHA256 else int.from_bytes(reference, "little")
        return self._other(self.store.get(key))

    def _other(self, dictionary: Dictionary) -> Codec:
        codec = self._others.get(dictionary.sha256)
        if codec is None:
            codec = Codec(
                dictionary, max_decoded_size=self.max_decoded_size, max_window_size=self.max_window_size
            )
            self._others[dictionary.sha256] = codec
        return codec

    def _engine_for(self, method: Method) -> Engine:
        family = _FAMILY.get(method, self._engine.name)
        engine = self._decoders.get(family)
        if engine is None:
            content = self.dictionary.content if self.dictionary else None
            engine = self._make(family, content)
            self._decoders[family] = engine
        return engine

    def _plain_engine(self, method: Method) -> Engine:
        family = _FAMILY.get(method, "zstd")
        engine = self._plain.get(family)
        if engine is None:
            engine = self._make(family, None)
            self._plain[family] = engine
        return engine

    def _make(self, family: str, content: bytes | None) -> Engine:
        if family == "deflate":
            return DeflateEngine(content, 9)
        return ZstdEngine(content, 3, max_window_size=self.max_window_size)

    # -- batches and streams -------------------------------------------------------------
    def encode_many(self, values: Iterable[Any]) -> list[bytes]:
        encode = self.encode
        return [encode(v) for v in values]

    def decode_many(self, frames: Iterable[bytes]) -> list[Any]:
        decode = self.decode
        return [decode(f) for f in frames]

    def encode_stream(self, values: Iterable[Any]) -> bytes:
        """Many values as one stream (spec section 3) whose header names the dictionary."""
        return pack_stream(self.encode_many(values), self._sha)

    def decode_stream(self, data: bytes) -> list[Any]:
        """Decode a whole stream; its header's dictionary is the context of its frames."""
        sha, frames = iter_stream(data, max_frame=self.max_decoded_size + 64)
        context = None
        if sha is not None:
            context = self._resolve_sha(sha)
        owner = self._owner(Ref.CONTEXT, b"", context) if context is not None else self
        return [owner._loads(owner.decode_payload(frame)) for frame in frames]

    def _resolve_sha(self, sha: bytes) -> Dictionary:
        if self.dictionary is not None and sha == self._sha:
            return self.dictionary
        if self.store is None:
            raise DictionaryMismatch(f"stream names dictionary {sha.hex()[:16]}, which this codec lacks")
        return self.store.get(sha)

    def __repr__(self) -> str:
        d = self.dictionary.id[:12] if self.dictionary else None
        return (
            f"Codec(dictionary={d}, serialization={self.serialization!r}, "
            f"method={self.method!r}, level={self.level})"
        )
