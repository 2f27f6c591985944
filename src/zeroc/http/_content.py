"""HTTP content codings (zstd, br, gzip, dcz) as bytes-in/bytes-out objects with limits.

One ``ContentCodings`` per dictionary (or none); its compressors are reused per thread, since
WSGI servers call from several threads and creating a zstd compressor with a dictionary costs
~70 µs (REFERENCE.md).
"""

from __future__ import annotations

import hashlib
import io
import threading
import zlib
from typing import Any

import zstandard as zstd

from zeroc._dictionary import Dictionary
from zeroc._errors import DecodeError, LimitExceeded, UnknownDictionary, UsageError

DCZ_MAGIC = bytes.fromhex("5e2a4d1820000000")  # a 32-byte zstd skippable frame (RFC 9842)
ZSTD_LEVEL = 3
BROTLI_QUALITY = 5
# A whole body shorter than BROTLI_SMALL is brotli'd at quality 3, which keeps the middleware's
# CPU per request within GZipMiddleware's (gzip-9): the demo's 17,896-byte list took ~200 us less
# at 3 than at 5 in the server (2,955 and 2,750 bytes; gzip-9's 3,039). One shorter than
# BROTLI_TINY, at quality 2: quality 3 builds Huffman trees for its three alphabets, ~5 us a body
# (cold, in a server, ~11 us of the demo's Order's 550 us), to save ~17 bytes on a body that fits
# one TCP segment at either quality (the demo's 100 Orders: 255 B at 2, 238 at 3, 254 in zstd,
# 257 in gzip).
BROTLI_SMALL = 64 << 10
BROTLI_SMALL_QUALITY = 3
BROTLI_TINY = 1 << 10
BROTLI_TINY_QUALITY = 2
GZIP_LEVEL = 6
# RFC 9842: dcz decoders accept windows up to max(8 MB, 1.25 x dictionary); zstd's 8 MiB cap.
MAX_WINDOW = 8 * 1024 * 1024


_BROTLI: Any = None  # the brotli module, imported on first use


def _brotli() -> Any:
    global _BROTLI
    if _BROTLI is None:
        try:
            import brotli
        except ImportError as exc:  # pragma: no cover - brotli is in the http extra
            raise UsageError("br needs the 'brotli' package (pip install 'zeroc[http]')") from exc
        _BROTLI = brotli
    return _BROTLI


class ContentCodings:
    """Encode and decode bodies in the codings of spec/HTTP.md; ``dcz`` needs a dictionary: a
    trained one, or any bytes as ``content`` (a delta route's earlier response)."""

    def __init__(self, dictionary: Dictionary | None = None, *, content: bytes | None = None) -> None:
        self.dictionary = dictionary
        self.content = dictionary.content if dictionary is not None else content
        if dictionary is not None:
            self.sha256 = dictionary.sha256  # computed once per Dictionary
        else:
            self.sha256 = hashlib.sha256(content).digest() if content is not None else b""
        self._raw: zstd.ZstdCompressionDict | None = None
        if self.content is not None:
            # RFC 9842 dcz: the dictionary is raw content on both sides, whatever its format.
            self._raw = zstd.ZstdCompressionDict(self.content, dict_type=zstd.DICT_TYPE_RAWCONTENT)
            self._raw.precompute_compress(level=ZSTD_LEVEL)
        self._local = threading.local()

    def _zstd(self, dcz: bool) -> zstd.ZstdCompressor:
        name = "dcz" if dcz else "zstd"
        c = getattr(self._local, name, None)
        if c is None:
            c = zstd.ZstdCompressor(
                level=ZSTD_LEVEL, dict_data=self._raw if dcz else None, write_dict_id=False
            )
            setattr(self._local, name, c)
        return c

    # -- whole bodies --------------------------------------------------------------------
    def encode(self, coding: str, body: bytes) -> bytes:
        if coding == "zstd":
            return self._zstd(False).compress(body)
        if coding == "gzip":
            # A window just large enough and a hash table to match (2^(memLevel + 7) entries):
            # zlib allocates and zeroes both in every compressobj, 64 KiB of hash at its defaults,
            # which for the demo's 322-byte Order cost more than compressing it. zlib reaches back
            # at most the window less 262 bytes, so every match in the body stays in reach. The
            # output is as small as at the defaults on the demo's orders (tests/test_http_choices.py)
            # and on 2,179 of 2,180 prefixes of the real corpora (1 B to 100 KB); the other, 4 KB of
            # canada, came out 2 bytes larger (a smaller hash table, another match).
            wbits = min(15, max(9, (len(body) + 261).bit_length()))
            c = zlib.compressobj(GZIP_LEVEL, zlib.DEFLATED, 16 + wbits, wbits - 7)
            return c.compress(body) + c.flush()
        if coding == "br":
            # A window no larger than the body: brotli's default (4 MiB) is allocated and
            # zeroed per call, which in a threaded server costs more than the compression. Not
            # below 2^16 either: quality 5's hasher for smaller windows cost more (the demo's
            # 17,896-byte list: 148 us at 2^16, 220 us at 2^10; 253 us at 2^22).
            window = min(22, max(16, (len(body) - 1).bit_length()))
            size = len(body)
            quality = (
                BROTLI_TINY_QUALITY
                if size < BROTLI_TINY
                else BROTLI_SMALL_QUALITY
                if size < BROTLI_SMALL
                else BROTLI_QUALITY
            )
            c = _brotli().Compressor(quality=quality, lgwin=window)
            return c.process(body) + c.finish()  # type: ignore[no-any-return]
        if coding == "dcz":
            if self._raw is None:
                raise UsageError("dcz needs a dictionary")
            return DCZ_MAGIC + self.sha256 + self._zstd(True).compress(body)
        if coding == "identity":
            return body
        raise UsageError(f"unknown content coding {coding!r}")

    def decode(self, coding: str, body: bytes, limit: int) -> bytes:
        """Decode a body, never producing more than ``limit`` bytes (LimitExceeded past it)."""
        try:
            if coding == "zstd":
                out = self._read_zstd(body, None, limit)
            elif coding == "dcz":
                out = self._decode_dcz(body, limit)
            elif coding == "gzip":
                d = zlib.decompressobj(31)
                out = d.decompress(body, limit + 1)
                if len(out) <= limit and (not d.eof or d.unused_data):
                    raise DecodeError("gzip body is truncated or has trailing bytes")
            elif coding == "br":
                dec = _brotli().Decompressor()
                out = dec.process(body, output_buffer_limit=limit + 1)
                if len(out) <= limit and not dec.is_finished():
                    raise DecodeError("brotli body is truncated")
            elif coding == "identity":
                out = body
            else:
                raise UsageError(f"unknown content coding {coding!r}")
        except zstd.ZstdError as exc:
            raise DecodeError(f"corrupt zstd body: {exc}") from exc
        except zlib.error as exc:
            raise DecodeError(f"corrupt gzip body: {exc}") from exc
        except Exception as exc:
            if type(exc).__name__ == "error" and type(exc).__module__ == "brotli":
                raise DecodeError(f"corrupt brotli body: {exc}") from exc
            raise
        if len(out) > limit:
            raise LimitExceeded(f"decoded body exceeds the limit of {limit} bytes")
        return out

    def _decode_dcz(self, body: bytes, limit: int) -> bytes:
        if len(body) < 40 or body[:8] != DCZ_MAGIC:
            raise DecodeError("dcz body lacks its 40-byte header")
        if self._raw is None or body[8:40] != self.sha256:
            raise UnknownDictionary(f"dcz body names dictionary {body[8:40].hex()[:16]}, not held here")
        return self._read_zstd(body[40:], self._raw, limit)

    @staticmethod
    def _read_zstd(body: bytes, dictionary: zstd.ZstdCompressionDict | None, limit: int) -> bytes:
        if not body:  # as an empty gzip or brotli body is: a zstd body holds at least one frame
            raise DecodeError("empty zstd body: it holds no frame")
        dctx = zstd.ZstdDecompressor(dict_data=dictionary, max_window_size=MAX_WINDOW)
        with dctx.stream_reader(io.BytesIO(body), read_across_frames=True) as reader:
            out: bytes = reader.read(limit + 1)
            if len(out) <= limit and reader.read(1):
                raise LimitExceeded(f"decoded body exceeds the limit of {limit} bytes")
        if not out and body:
            raise DecodeError("zstd body holds no frame")
        return out

    # -- streams -------------------------------------------------------------------------
    def stream(self, coding: str) -> StreamEncoder:
        return StreamEncoder(self, coding)


class StreamEncoder:
    """Compress a streamed body chunk by chunk; each chunk is flushed so it reaches the client."""

    def __init__(self, codings: ContentCodings, coding: str) -> None:
        self.coding = coding
        self._prefix = b""
        if coding in ("zstd", "dcz"):
            if coding == "dcz":
                assert codings._raw is not None
                self._prefix = DCZ_MAGIC + codings.sha256
            c = zstd.ZstdCompressor(
                level=ZSTD_LEVEL, dict_data=codings._raw if coding == "dcz" else None, write_dict_id=False
            )
            self._z = c.compressobj()
        elif coding == "gzip":
            self._g = zlib.compressobj(GZIP_LEVEL, zlib.DEFLATED, 31)
        elif coding == "br":
            self._b = _brotli().Compressor(quality=BROTLI_QUALITY)
        else:
            raise UsageError(f"cannot stream content coding {coding!r}")

    def chunk(self, data: bytes) -> bytes:
        prefix, self._prefix = self._prefix, b""
        if self.coding in ("zstd", "dcz"):
            return prefix + self._z.compress(data) + self._z.flush(zstd.COMPRESSOBJ_FLUSH_BLOCK)
        if self.coding == "gzip":
            return self._g.compress(data) + self._g.flush(zlib.Z_SYNC_FLUSH)
        return self._b.process(data) + self._b.flush()  # type: ignore[no-any-return]

    def finish(self) -> bytes:
        prefix, self._prefix = self._prefix, b""
        if self.coding in ("zstd", "dcz"):
            return prefix + self._z.flush(zstd.COMPRESSOBJ_FLUSH_FINISH)
        if self.coding == "gzip":
            return self._g.flush()
        return self._b.finish()  # type: ignore[no-any-return]
