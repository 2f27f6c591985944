"""The codec: a value in, a frame out, and back (spec/WIRE_FORMAT.md)."""

from __future__ import annotations

import base64
import functools
import sys
from collections.abc import Callable, Iterable
from typing import Any

from zeroc import _json
from zeroc._compression import DeflateEngine, Engine, ZstdEngine, make_engine
from zeroc._defaults import DEFAULT_MAX_DECODED_SIZE, MAX_VALUES
from zeroc._dictionary import Dictionary, DictionaryStore
from zeroc._errors import (
    ChecksumMismatch,
    DecodeError,
    DictionaryMismatch,
    EncodeError,
    LimitExceeded,
    UnknownDictionary,
    UsageError,
)
from zeroc._frame import Method, Ref, crc32, is_session_stream, iter_stream, pack_stream, parse, tag
from zeroc._session import (
    SESSION_LEVEL,
    SESSION_WINDOW_LOG,
    SessionDecoder,
    SessionEncoder,
    SessionModel,
    file_session,
)
from zeroc.learned import Model

# RFC 9842 asks dcz decoders to accept windows up to 8 MB; Zeroc's own frames never need more.
DEFAULT_MAX_WINDOW_SIZE = 8 * 1024 * 1024
_FRAME_IDS = {"context": Ref.CONTEXT, "short": Ref.SHORT_ID, "sha256": Ref.SHA256}
_FAMILY = {Method.ZSTD_BLOCK: "zstd", Method.ZSTD_FRAME: "zstd", Method.DEFLATE: "deflate"}
# A learned payload longer than this is compared with zstd + dictionary (messages off the model).
LEARNED_RECHECK = 64
# For format-6 models the codec learns whether that pays: the first RECHECK_TRIALS long payloads
# (or fewer, once RECHECK_TRIAL_BYTES of them were compared) are all compared, and after that one
# in RECHECK_EVERY of their bytes -- a payload when those sent since the last comparison reach
# RECHECK_EVERY times its length -- unless zstd saved at least 1/RECHECK_SAVES of the bytes of
# the payloads compared (zstd of every message cost more than the model's coding; it saved
# 0.1-0.2% on faker records, 5% on AWS operations, where the model is far from the traffic).
# Counted in bytes, a batch of 1,500 orders as one message is compared as rarely as 1,500 orders.
RECHECK_TRIALS = 32
RECHECK_TRIAL_BYTES = 32 << 10
RECHECK_EVERY = 128
RECHECK_SAVES = 100
# Format-6 side streams shorter than this are compressed at level SIDE_FAST_LEVEL at most: zstd-19
# of a few dozen bytes with a dictionary took 18 us against zstd-3's 3 us, and saved 2-3% of a
# faker record's payload (longer texts, tweets', keep the codec's level).
SIDE_FAST = 256
SIDE_FAST_LEVEL = 3
# Serializations compared with a learned payload of RECHECK_LONG bytes or more, and side streams of
# SIDE_LONG bytes or more, are compressed at level SIDE_LONG_LEVEL at most, so that a long message
# costs no more per byte than a short one, and less than gzip-6: 50 tweets as one message (232 KB
# of JSON, a 54 KB side stream) took 13 ms to encode with zstd-19, 1.9 with zstd-9 and 1.4 with
# zstd-6 (gzip-6: 1.7), for 17,045, 17,641 and 17,949 bytes (gzip-6: 24,566); 1,500 faker orders
# as one (788 KB, a 12 KB side stream of their notes) 9.8 ms, of which zstd-19 took 1.2, where the
# orders one by one took no more. One message's side stream rarely reaches SIDE_LONG (a tweet's
# at most 3.9 KB, a GitHub event's 4.8), a batch's does.
RECHECK_LONG = 32 << 10
SIDE_LONG = 8 << 10
SIDE_LONG_LEVEL = 6
# So is a side stream of SIDE_FAST bytes or more beside at least SIDE_SHARE of the value's symbols
# a byte, a small part of its payload: 1,500 faker orders as one message (785 KB of JSON) have a
# 4.8 KB side stream of their notes beside 90,000 symbols, which zstd-19 made 2,721 B in 0.68 ms
# of the encode's 7.8; a tweet's (3.9 KB at most, beside a few hundred) keeps the codec's level.
SIDE_SHARE = 8
# For format-5 and 6 models, first at this level: a payload this much smaller than zstd-3's is taken
# without running zstd at the codec's level (zstd-19 of a large batch took longer than the
# model's own coding), else the two are compared as before. On the real-traffic sets zstd-19
# was a median 0.80-0.92 of zstd-3, and at 0.85 every set's mean frame size stayed the same.
RECHECK_LEVEL = 3
RECHECK_MARGIN = 0.85


class _SideEngine:
    """A learned model's side-stream engine: short streams compressed by ``fast`` and long ones
    by ``long`` (any zstd level decodes alike), the rest, and every decompression, by
    ``engine``."""

    def __init__(self, engine: Engine, fast: Engine, long: Engine) -> None:
        self.engine, self.fast, self.long = engine, fast, long

    def compress(self, data: bytes) -> tuple[int, bytes]:
        n = len(data)
        return (self.fast if n < SIDE_FAST else self.long if n >= SIDE_LONG else self.engine).compress(data)

    def compress_in(self, data: bytes, symbols: int) -> tuple[int, bytes]:
        """``compress(data)`` for a side stream beside a value of so many symbols (both coders
        ask this where the engine has it)."""
        n = len(data)
        if n >= SIDE_FAST and symbols >= SIDE_SHARE * n:
            return self.long.compress(data)
        return self.compress(data)

    def decompress(self, method: Method, payload: bytes, max_size: int) -> bytes:
        return self.engine.decompress(method, payload, max_size)


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
    (32 bytes, self-describing). ``checksum=True`` adds a CRC-32 for transports without one, and
    makes :meth:`decode` refuse frames without it (``ChecksumMismatch``): one flipped bit of the
    tag byte would otherwise turn a checked frame into an unchecked one.
    ``store`` lets :meth:`decode` follow frames that name other dictionaries (rotation).
    Decoding is bounded: ``max_decoded_size`` bytes of serialization (64 MiB), and ``max_values``
    JSON values and containers built from one, counted as the text's commas and opening
    brackets (2,097,152; ``LimitExceeded`` past either).

    A dictionary trained with a learned model (``train`` chose ``"learned"``) codes values with
    it (frame method 4); ``frame_id="bare"`` then drops the tag byte too: a frame is the model's
    payload alone, for contexts that fix the dictionary and its codec (spec/LEARNED_MODEL.md).
    :meth:`drift` says how the model fares on the traffic it sees.
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
        max_values: int = MAX_VALUES,
        max_window_size: int = DEFAULT_MAX_WINDOW_SIZE,
        store: DictionaryStore | None = None,
    ) -> None:
        from zeroc._schema import Schema, resolve

        if dictionary is not None and not isinstance(dictionary, Dictionary):
            raise UsageError(f"dictionary must be a zeroc.Dictionary, got {type(dictionary).__name__}")
        if frame_id not in _FRAME_IDS and frame_id != "bare":
            raise UsageError(f"frame_id must be one of {sorted([*_FRAME_IDS, 'bare'])}, not {frame_id!r}")
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
            if max_values != MAX_VALUES:
                self._loads = functools.partial(_json.loads, max_values=max_values)
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
        self.max_values = max_values
        self.max_window_size = max_window_size
        self.store = store
        content = dictionary.content if dictionary else None
        # A learned codec compresses side streams, and messages its model codes badly, with zstd
        # and the dictionary at the codec's level.
        family = "zstd" if self.method == "learned" else self.method
        self._engine: Engine = make_engine(family, level, content, max_window_size=max_window_size)
        self._decoders: dict[str, Engine] = {self._engine.name: self._engine}
        self._plain: dict[str, Engine] = {}
        self._others: dict[bytes, Codec] = {}
        self._model: Model | None = None
        self._recheck = self._engine  # what a long learned payload is compared with
        self._long_engine = self._engine  # for long inputs (SIDE_LONG_LEVEL at most)
        if dictionary is not None and dictionary.model is not None:
            self._model = Model.from_bytes(dictionary.model, side=self._engine)
            if self._model.version >= 6 and family == "zstd" and level > SIDE_FAST_LEVEL:
                window = max_window_size
                fast = make_engine("zstd", SIDE_FAST_LEVEL, content, max_window_size=window)
                if level > SIDE_LONG_LEVEL:
                    self._long_engine = make_engine("zstd", SIDE_LONG_LEVEL, content, max_window_size=window)
                self._model.use_side(_SideEngine(self._engine, fast, self._long_engine))
            if self._model.version >= 5 and family == "zstd" and level > RECHECK_LEVEL:
                self._recheck = make_engine("zstd", RECHECK_LEVEL, content, max_window_size=max_window_size)
        elif self.method == "learned":
            raise UsageError("the learned codec needs a dictionary trained with a model")
        self._sha = dictionary.digest if dictionary else None
        self._bare = frame_id == "bare"
        if self._bare and (self._model is None or self.method != "learned" or checksum):
            raise UsageError("bare frames need a learned-model dictionary and no checksum")
        ref = _FRAME_IDS.get(frame_id, Ref.CONTEXT) if dictionary else Ref.NONE
        reference = b""
        if ref is Ref.SHORT_ID:
            reference = dictionary.short_id.to_bytes(2, "little")  # type: ignore[union-attr]
        elif ref is Ref.SHA256:
            reference = dictionary.digest  # type: ignore[union-attr]
        self._ref = ref
        self._heads = tuple(bytes([tag(m, ref, checksum)]) + reference for m in Method)
        # The common frames (zstd-block or learned, this codec's reference, no checksum) skip
        # header parsing.
        self._fast_tag = self._learned_tag = -1
        if isinstance(self._engine, ZstdEngine) and not checksum and ref <= Ref.CONTEXT:
            self._block: ZstdEngine = self._engine
            self._fast_tag = tag(Method.ZSTD_BLOCK, ref, False)
            if self._model is not None:
                self._learned_tag = tag(Method.LEARNED, ref, False)
        self._encode_model = self._model if self.method == "learned" else None
        self._learned_head = self._heads[Method.LEARNED]
        self._expected_bits = 0.0
        if dictionary is not None and self._model is not None:
            self._expected_bits = float(dictionary.validation.get("model", {}).get("bits_per_message", 0.0))
        # Long payloads compared with zstd, and how often zstd was smaller (format 6: see above).
        self._sampled = self._model is not None and self._model.version >= 6
        self._long = self._checked = self._saved = self._due = 0
        # Learned frames in one call (Model._frame) where nothing else needs the value: no
        # schema to convert or check it, no checksum of its serialization. Frames up to _short
        # bytes go out unchecked (bare ones always).
        model = self._encode_model
        self._frame = model._frame if model is not None and self.schema is None and not checksum else None
        self._frame_head = b"" if self._bare else self._learned_head
        self._head_len = len(self._frame_head)
        self._short = sys.maxsize if self._bare else self._head_len + LEARNED_RECHECK

    # -- frames --------------------------------------------------------------------------
    def encode(self, value: Any) -> bytes:
        """Serialize and compress ``value`` into one frame (never > serialization + 1 byte + ids)."""
        if self._frame is not None:  # the learned model walked in C: head and payload in one call
            try:
                out = self._frame(value, self._frame_head)  # (counted there for drift())
            except LimitExceeded:  # too many fields for the model's coder: zstd takes the value
                if self._bare:
                    raise
                return self._encode_rechecked(value, None)
            if len(out) <= self._short or self._skip_recheck(len(out) - self._head_len):
                return out
            return self._encode_rechecked(value, out[self._head_len :])
        if self._encode_model is not None:
            if self._bare:
                return self._encode_bare(value)
            return self._encode_learned(value)
        data = self._dumps(value)
        method, payload = self._engine.compress(data)
        if len(payload) >= len(data):
            method, payload = 0, data  # stored
        if self.checksum:
            return self._heads[method] + crc32(data).to_bytes(4, "little") + payload
        return self._heads[method] + payload

    def _encode_bare(self, value: Any) -> bytes:
        """The model's payload, counted for :meth:`drift`; LimitExceeded past the symbol limit."""
        model = self._encode_model
        assert model is not None
        # Models whose messages mostly leave the common path walk both at once (Model.encode).
        tried = type(value) is dict and not model._both
        payload = model._fast_encode(value) if tried else None
        if payload is None:  # off the common path (or not a dict): the general rules
            payload = self._model_payload(model, self._as_value(value), not tried)
        model.tally(payload)
        return payload

    def _as_value(self, value: Any) -> Any:
        """What a learned model codes: the value, or a protobuf message as its dict."""
        if self.schema is None or isinstance(value, dict):
            return value
        # A message of the schema becomes its dict; anything else fails here, as it would in
        # protobuf serialization, with an EncodeError that says why.
        return self.schema.loads(self.schema.dumps(value))

    def _model_payload(self, model: Model, value: Any, common: bool = True) -> bytes:
        misses = model.misses
        payload = model.encode(value, common)
        if model.misses != misses and self.schema is not None:
            # Off the model's common path (which only schema-valid samples taught it), the
            # schema still decides what is a valid value: this raises EncodeError naming the field.
            self.schema.dumps(value)
        return payload

    def _encode_learned(self, value: Any) -> bytes:
        payload: bytes | None
        try:
            payload = self._encode_bare(value)
        except LimitExceeded:  # too many fields for the model's coder: zstd takes the value
            payload = None
        if payload is not None and (len(payload) <= LEARNED_RECHECK or self._skip_recheck(len(payload))):
            if not self.checksum:
                return self._learned_head + payload
            crc = crc32(_json.dumps(self._as_value(value))).to_bytes(4, "little")
            return self._learned_head + crc + payload
        return self._encode_rechecked(value, payload)

    def _encode_rechecked(self, value: Any, payload: bytes | None) -> bytes:
        """A long learned ``payload`` (None: the model could not code ``value``) against zstd:
        the smaller one's frame."""
        value = self._as_value(value)
        # Far from what the model learned: zstd with the dictionary (or the serialization as it
        # is) when that is smaller.
        data = self._dumps(value)
        method, packed = self._recheck.compress(data)
        if self._recheck is not self._engine and (
            payload is None or len(payload) > RECHECK_MARGIN * min(len(packed), len(data))
        ):
            # close: compare at the codec's level (SIDE_LONG_LEVEL at most on long ones)
            method, packed = (self._long_engine if len(data) >= RECHECK_LONG else self._engine).compress(data)
        if len(packed) >= len(data):
            method, packed = 0, data
        if payload is not None and len(payload) <= len(packed):
            method, packed, data = int(Method.LEARNED), payload, _json.dumps(value)
        if payload is not None:
            self._checked += len(payload)
            self._saved += len(payload) - len(packed)
        if self.checksum:
            return self._heads[method] + crc32(data).to_bytes(4, "little") + packed
        return self._heads[method] + packed

    def _skip_recheck(self, size: int) -> bool:
        """Whether a long learned payload of ``size`` bytes goes out without comparing it with
        zstd (format 6: where zstd has rarely been smaller). Counters are shared by threads
        without a lock: a lost update only moves a sample."""
        if not self._sampled:
            return False
        self._long += 1
        trial = self._long <= RECHECK_TRIALS and self._checked < RECHECK_TRIAL_BYTES
        if trial or self._saved * RECHECK_SAVES >= self._checked:
            return False
        self._due += size
        if self._due < RECHECK_EVERY * size:
            return True
        self._due = 0
        return False

    def drift(self) -> dict[str, Any]:
        """How this codec's learned model fares on the messages it encoded: ``ratio`` is the
        actual bits per message over the bits measured on the held-back split at training
        (1.0 = as trained; retrain when it climbs), ``off_common_path`` the share of messages
        that left the model's common path. Empty without a learned model."""
        model = self._encode_model
        if model is None:
            return {}
        actual = model.bits / model.seen if model.seen else 0.0
        return {
            "messages": model.seen,
            "bits_per_message": round(actual, 3),
            "expected_bits_per_message": round(self._expected_bits, 3),
            "ratio": round(actual / self._expected_bits, 4) if self._expected_bits and model.seen else None,
            "off_common_path": round(model.misses / model.seen, 4) if model.seen else 0.0,
        }

    def decode(self, frame: bytes, *, as_message: bool = False) -> Any:
        """Decode one frame; protobuf codecs return a dict, or the message if ``as_message``."""
        if self._bare:
            if type(frame) is bytes and not as_message:  # the common case
                return self._model.decode(frame, self.max_decoded_size)  # type: ignore[union-attr]
            if type(frame) is not bytes:
                if not isinstance(frame, (bytearray, memoryview)):
                    raise UsageError(f"frame must be bytes, not {type(frame).__name__}")
                frame = bytes(frame)
            value = self._model.decode(frame, self.max_decoded_size)  # type: ignore[union-attr]
            if as_message:
                if self.schema is None:
                    raise UsageError("as_message needs a protobuf schema")
                return self.schema.loads_message(self.schema.dumps(value))
            return value
        if not as_message and type(frame) is bytes and frame:  # the common frames, unparsed
            t = frame[0]
            if t == self._fast_tag and len(frame) > 1:
                return self._loads(self._block.decompress_block(frame[1:], self.max_decoded_size))
            if t == self._learned_tag:
                return self._model.decode(frame[1:], self.max_decoded_size)  # type: ignore[union-attr]
        learned, out = self._decode(frame, None)
        if as_message:
            if self.schema is None:
                raise UsageError("as_message needs a protobuf schema")
            return self.schema.loads_message(self.schema.dumps(out) if learned else out)
        return out if learned else self._loads(out)

    def decode_payload(self, frame: bytes, *, _context: Dictionary | None = None) -> bytes:
        """Decode a frame to its serialization (JSON text, protobuf bytes or raw bytes)."""
        if self._bare and _context is None:
            return self._dumps(self.decode(frame))
        learned, out = self._decode(frame, _context)
        return self._dumps(out) if learned else out

    def _decode(self, frame: bytes, _context: Dictionary | None) -> tuple[bool, Any]:
        """(False, the serialization) or, for a learned-model frame, (True, the value)."""
        if type(frame) is not bytes:
            if not isinstance(frame, (bytearray, memoryview)):
                raise UsageError(f"frame must be bytes, not {type(frame).__name__}")
            frame = bytes(frame)
        if len(frame) > 1 and frame[0] == self._fast_tag and _context is None:
            return False, self._block.decompress_block(frame[1:], self.max_decoded_size)
        h = parse(frame)
        if self.checksum and h.checksum is None:
            raise ChecksumMismatch("frame has no checksum, and this codec expects one")
        if h.ref is Ref.NONE:
            engine = self._plain_engine(h.method)
        else:
            owner = self._owner(h.ref, h.reference, _context)
            if owner is not self:
                return owner._decode(frame, owner.dictionary)
            engine = self._engine_for(h.method)
        if h.method is Method.LEARNED:
            if self._model is None:
                raise DecodeError("a learned-model frame names a dictionary without a model")
            value = self._model.decode(h.payload, self.max_decoded_size)
            if h.checksum is not None and crc32(_json.dumps(value)) != h.checksum:
                raise ChecksumMismatch("frame checksum does not match its decoded content")
            return True, value
        if h.method is Method.STORED:
            data = h.payload
            if len(data) > self.max_decoded_size:
                raise LimitExceeded(f"stored payload of {len(data)} bytes exceeds the limit")
        else:
            data = engine.decompress(h.method, h.payload, self.max_decoded_size)
        if h.checksum is not None and crc32(data) != h.checksum:
            raise ChecksumMismatch("frame checksum does not match its decoded content")
        return False, data

    def _owner(self, ref: Ref, reference: bytes, context: Dictionary | None) -> Codec:
        """The codec whose dictionary a frame names."""
        if ref is Ref.CONTEXT:
            if context is not None and context.digest != self._sha:
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
        codec = self._others.get(dictionary.digest)
        if codec is None:
            codec = Codec(
                dictionary,
                checksum=self.checksum,
                max_decoded_size=self.max_decoded_size,
                max_values=self.max_values,
                max_window_size=self.max_window_size,
            )
            self._others[dictionary.digest] = codec
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

    def encode_stream(self, values: Iterable[Any], *, session: bool = False) -> bytes:
        """Many values as one stream (spec section 3) whose header names the dictionary; a
        checksummed one (version 2) when this codec writes checksums. ``session=True`` codes
        each value with the ones before it as history (section 3.1: smaller, read in order)
        instead of as independent frames (any one decodable alone)."""
        if session:
            records, from_dictionary = file_session(self, values)
            sha = self._sha if from_dictionary else None
            return pack_stream(records, sha, checksummed=self.checksum, session=True)
        if self._bare:
            raise UsageError("streams hold tagged frames: use frame_id='context' for streams")
        return pack_stream(self.encode_many(values), self._sha, checksummed=self.checksum)

    def decode_stream(self, data: bytes) -> list[Any]:
        """Decode a whole stream; its header's dictionary is the context of its frames."""
        sha, frames = iter_stream(data, max_frame=self.max_decoded_size + 64)
        context = None
        if sha is not None:
            context = self._resolve_sha(sha)
        owner = self._owner(Ref.CONTEXT, b"", context) if context is not None else self
        if is_session_stream(data):  # its history starts from the header's dictionary, if any
            decoder = owner.session_decoder(checksum=data[4] == 2, dictionary=sha is not None)
            return [v for record in frames for v in decoder.decode_many(record)]
        return [owner.decode(frame) for frame in frames]

    # -- sessions ------------------------------------------------------------------------
    def session_encoder(
        self,
        *,
        level: int = SESSION_LEVEL,
        window_log: int = SESSION_WINDOW_LOG,
        checksum: bool | None = None,
        dictionary: bool = True,
        learned: bool = True,
    ) -> SessionEncoder:
        """An encoder for one session (spec section 4): each record it writes is coded with
        every earlier one as history, starting from this codec's dictionary (``dictionary=False``:
        from nothing). ``level`` and ``window_log`` (the zstd window, 2^10..2^23 bytes) trade
        speed and memory for size; ``checksum`` (default: this codec's) adds a CRC-32 to every
        record. Where this codec codes with a learned model (and the session starts from its
        dictionary), a record goes as the model's payloads where those are smaller than zstd's
        rate in the session predicts (``learned=False``: never)."""
        return SessionEncoder(
            dumps=self._dumps,
            lines=self.serialization == "json",
            dictionary=self._session_dictionary(dictionary),
            level=level,
            window_log=window_log,
            checksum=self.checksum if checksum is None else checksum,
            model=self._session_model() if learned and self._encode_model is not None else None,
        )

    def session_decoder(self, *, checksum: bool | None = None, dictionary: bool = True) -> SessionDecoder:
        """A decoder for one session's records, in order; bounded by this codec's limits."""
        return SessionDecoder(
            loads=self._loads,
            lines=self.serialization == "json",
            dictionary=self._session_dictionary(dictionary),
            checksum=self.checksum if checksum is None else checksum,
            max_decoded_size=self.max_decoded_size,
            max_window_size=self.max_window_size,
            model=self._session_model() if self._model is not None else None,
        )

    def _session_dictionary(self, use: bool) -> bytes | None:
        return self.dictionary.content if use and self.dictionary is not None else None

    def _session_model(self) -> SessionModel:
        """This codec's learned model as sessions use it (learned records, spec section 4)."""
        model = self._model
        assert model is not None

        def payload(value: Any) -> bytes | None:
            try:
                if self._frame is not None:  # the C walk, head and payload in one call
                    return self._frame(value, b"")
                return self._encode_bare(value)
            except LimitExceeded:  # too many fields for the model's coder: zstd takes the record
                return None

        def text(value: Any) -> bytes:
            return _json.dumps(self._as_value(value))

        return SessionModel(payload, model.decode, text)

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
