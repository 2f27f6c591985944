"""Compression back ends behind the frame methods, each holding its reusable objects.

Creating a zstd compressor with a dictionary costs ~70 µs against ~1.5 µs to compress a small
message with a reused one (REFERENCE.md), so every object that can be reused is created once.
zstandard's compressors are not thread-safe: each thread gets its own, built from one shared
precomputed dictionary.
"""

from __future__ import annotations

import threading
import zlib
from typing import Protocol

import zstandard as zstd

from zeroc._errors import DecodeError, InvalidDictionary, LimitExceeded, TruncatedFrame, UsageError
from zeroc._frame import (
    ZSTD_BLOCK_MAX,
    ZSTD_BLOCK_PREFIX,
    ZSTD_MAGIC,
    Method,
    zstd_block_frame,
    zstd_block_payload,
)

DEFLATE_WINDOW = 32 * 1024
# Plain ints on the hot path: an IntEnum hashes and compares through Python-level methods.
_ZSTD_BLOCK, _ZSTD_FRAME, _DEFLATE = int(Method.ZSTD_BLOCK), int(Method.ZSTD_FRAME), int(Method.DEFLATE)


class Engine(Protocol):
    name: str
    level: int

    def compress(self, data: bytes) -> tuple[int, bytes]: ...

    def decompress(self, method: Method, payload: bytes, max_size: int) -> bytes: ...


class ZstdEngine:
    """zstd with an optional trained dictionary; emits zstd-block or zstd-frame payloads."""

    name = "zstd"

    def __init__(self, dictionary: bytes | None, level: int, *, max_window_size: int) -> None:
        if not -7 <= level <= zstd.MAX_COMPRESSION_LEVEL:
            raise UsageError(f"zstd level {level} is outside -7..{zstd.MAX_COMPRESSION_LEVEL}")
        self.level = level
        self._max_window = max_window_size
        self._dict: zstd.ZstdCompressionDict | None = None
        if dictionary is not None:
            self._dict = zstd.ZstdCompressionDict(dictionary)
            # Pass level= (not compression_params=): REFERENCE.md pitfall, the latter builds level 3.
            try:
                self._dict.precompute_compress(level=level)
            except zstd.ZstdError as exc:  # a zstd-format dictionary whose tables are corrupt
                raise InvalidDictionary(f"zstd dictionary content does not load: {exc}") from exc
        self._params = zstd.ZstdCompressionParameters.from_level(
            level,
            format=zstd.FORMAT_ZSTD1_MAGICLESS,
            write_content_size=True,
            write_checksum=False,
            write_dict_id=False,
        )
        self._local = threading.local()

    def _compressor(self) -> zstd.ZstdCompressor:
        try:
            return self._local.cctx  # type: ignore[no-any-return]
        except AttributeError:
            self._local.cctx = zstd.ZstdCompressor(compression_params=self._params, dict_data=self._dict)
            return self._local.cctx  # type: ignore[no-any-return]

    def _decompressor(self) -> zstd.ZstdDecompressor:
        try:
            return self._local.dctx  # type: ignore[no-any-return]
        except AttributeError:
            self._local.dctx = zstd.ZstdDecompressor(dict_data=self._dict, max_window_size=self._max_window)
            return self._local.dctx  # type: ignore[no-any-return]

    def compress(self, data: bytes) -> tuple[int, bytes]:
        try:
            frame = self._local.cctx.compress(data)
        except AttributeError:
            frame = self._compressor().compress(data)
        size = len(data)
        if size < 256:  # the common case, inlined: 2-byte header (single segment, 1-byte size)
            if frame[0] == 0x20 and len(frame) > 5 and frame[2] & 0b111 == 0b101:  # last, compressed
                return _ZSTD_BLOCK, frame[5:]
        elif size < ZSTD_BLOCK_MAX:
            block = zstd_block_payload(frame)
            if block is not None:
                return _ZSTD_BLOCK, block
        return _ZSTD_FRAME, frame

    def decompress_block(self, payload: bytes, max_size: int) -> bytes:
        """The zstd-block fast path of :meth:`decompress`."""
        size = len(payload)
        if size >= ZSTD_BLOCK_MAX:
            return self.decompress(Method.ZSTD_BLOCK, payload, max_size)
        try:
            out: bytes = self._local.dctx.decompress(
                ZSTD_BLOCK_PREFIX + ((size << 3) | 0b101).to_bytes(3, "little") + payload,
                max_output_size=ZSTD_BLOCK_MAX,
            )
        except AttributeError:
            return self.decompress(Method.ZSTD_BLOCK, payload, max_size)
        except zstd.ZstdError as exc:
            raise DecodeError(f"corrupt zstd data: {exc}") from exc
        if len(out) > max_size:
            raise LimitExceeded(f"decoded size {len(out)} exceeds the limit of {max_size} bytes")
        return out

    def decompress(self, method: Method, payload: bytes, max_size: int) -> bytes:
        try:
            if method is Method.ZSTD_BLOCK:
                out: bytes = self._decompressor().decompress(
                    zstd_block_frame(payload), max_output_size=ZSTD_BLOCK_MAX
                )
            else:
                out = self._decompress_frame(ZSTD_MAGIC + payload, max_size)
        except zstd.ZstdError as exc:
            raise DecodeError(f"corrupt zstd data: {exc}") from exc
        if len(out) > max_size:
            raise LimitExceeded(f"decoded size {len(out)} exceeds the limit of {max_size} bytes")
        return out

    def _decompress_frame(self, data: bytes, max_size: int) -> bytes:
        try:
            params = zstd.get_frame_parameters(data)
        except zstd.ZstdError as exc:
            raise TruncatedFrame(f"bad zstd-frame header: {exc}") from exc
        if params.dict_id:
            raise DecodeError("zstd-frame payload carries a dictionary id")
        size = params.content_size
        if size == zstd.CONTENTSIZE_UNKNOWN or size == zstd.CONTENTSIZE_ERROR:
            raise DecodeError("zstd-frame payload does not declare its content size")
        if size > max_size:
            raise LimitExceeded(f"frame declares {size} decoded bytes, over the limit of {max_size}")
        if params.window_size > self._max_window:
            raise LimitExceeded(
                f"frame needs a {params.window_size}-byte window, over the limit of {self._max_window}"
            )
        dobj = self._decompressor().decompressobj()
        out: bytes = dobj.decompress(data)
        if not dobj.eof:
            raise TruncatedFrame("zstd-frame payload ends before its last block")
        if dobj.unused_data:
            raise DecodeError(f"{len(dobj.unused_data)} bytes after the zstd frame")
        return out


class DeflateEngine:
    """Raw DEFLATE with the last 32 KiB of the dictionary as preset dictionary.

    Smallest on tiny messages but ~10x slower to encode than zstd in Python: copying a primed
    compressobj costs 20-40 µs (REFERENCE.md), so the trainer only picks it when asked for size.
    """

    name = "deflate"

    def __init__(self, dictionary: bytes | None, level: int) -> None:
        if not 0 <= level <= 9:
            raise UsageError(f"deflate level {level} is outside 0..9")
        self.level = level
        self._zdict = dictionary[-DEFLATE_WINDOW:] if dictionary else None
        if self._zdict:
            self._base = zlib.compressobj(level, zlib.DEFLATED, -15, 9, zlib.Z_DEFAULT_STRATEGY, self._zdict)
        else:
            self._base = zlib.compressobj(level, zlib.DEFLATED, -15, 9)

    def compress(self, data: bytes) -> tuple[int, bytes]:
        c = self._base.copy()
        return _DEFLATE, c.compress(data) + c.flush()

    def decompress(self, method: Method, payload: bytes, max_size: int) -> bytes:
        d = zlib.decompressobj(-15, zdict=self._zdict) if self._zdict else zlib.decompressobj(-15)
        try:
            out = d.decompress(payload, max_size + 1)
        except zlib.error as exc:
            raise DecodeError(f"corrupt deflate data: {exc}") from exc
        if len(out) > max_size:
            raise LimitExceeded(f"decoded size exceeds the limit of {max_size} bytes")
        if not d.eof:
            raise TruncatedFrame("deflate payload ends before its final block")
        if d.unused_data:
            raise DecodeError(f"{len(d.unused_data)} bytes after the deflate stream")
        return out


def make_engine(method: str, level: int, dictionary: bytes | None, *, max_window_size: int) -> Engine:
    if method == "zstd":
        return ZstdEngine(dictionary, level, max_window_size=max_window_size)
    if method == "deflate":
        return DeflateEngine(dictionary, level)
    raise UsageError(f"unknown compression method {method!r}; choose 'zstd' or 'deflate'")
