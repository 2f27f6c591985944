"""The wire format (spec/WIRE_FORMAT.md) as pure functions: bytes in, bytes out, no I/O."""

from __future__ import annotations

import zlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from enum import IntEnum

from zeroc._errors import ChecksumMismatch, DecodeError, LimitExceeded, TruncatedFrame, UnsupportedFrame


class Method(IntEnum):
    STORED = 0
    ZSTD_BLOCK = 1
    ZSTD_FRAME = 2
    DEFLATE = 3
    LEARNED = 4


class Ref(IntEnum):
    NONE = 0
    CONTEXT = 1
    SHORT_ID = 2
    SHA256 = 3


_REF_SIZE = (0, 0, 2, 32)
CHECKSUM_FLAG = 0x20
ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"
# Frame header for a rebuilt zstd-block frame: no content size, 128 KiB window (section 1.4).
ZSTD_BLOCK_PREFIX = ZSTD_MAGIC + b"\x00\x38"
ZSTD_BLOCK_MAX = 128 * 1024


@dataclass(frozen=True, slots=True)
class Header:
    """A parsed frame header; ``payload`` is the rest of the frame."""

    method: Method
    ref: Ref
    reference: bytes  # 0, 2 or 32 bytes, as in the frame
    checksum: int | None
    payload: bytes

    @property
    def short_id(self) -> int | None:
        return int.from_bytes(self.reference, "little") if self.ref is Ref.SHORT_ID else None


def tag(method: Method, ref: Ref, checksum: bool) -> int:
    return method | (ref << 3) | (CHECKSUM_FLAG if checksum else 0)


def parse(frame: bytes) -> Header:
    """Split a frame into its header fields and payload, rejecting what version 1 does not define."""
    if not frame:
        raise TruncatedFrame("empty frame: a frame has at least its tag byte")
    t = frame[0]
    if t >> 6:
        raise UnsupportedFrame(f"frame format version {(t >> 6) + 1} is not supported (tag 0x{t:02x})")
    method_bits = t & 0x07
    if method_bits > Method.LEARNED:
        raise UnsupportedFrame(f"frame method {method_bits} is reserved (tag 0x{t:02x})")
    ref = Ref((t >> 3) & 0x03)
    if method_bits == Method.LEARNED and ref is Ref.NONE:
        raise UnsupportedFrame(f"a learned-model frame must name its dictionary (tag 0x{t:02x})")
    pos = 1 + _REF_SIZE[ref]
    end = pos + (4 if t & CHECKSUM_FLAG else 0)
    if len(frame) < end:
        raise TruncatedFrame(f"frame of {len(frame)} bytes ends inside its {end}-byte header")
    checksum = int.from_bytes(frame[pos:end], "little") if t & CHECKSUM_FLAG else None
    method = Method(method_bits)
    payload = frame[end:]
    if not payload and method is not Method.STORED and method is not Method.LEARNED:
        raise TruncatedFrame(f"{method.name.lower()} frame has no payload")
    return Header(method, ref, bytes(frame[1:pos]), checksum, payload)


def short_id(sha256: bytes) -> int:
    """A dictionary's 16-bit short id: the first two bytes of its SHA-256, little-endian."""
    return int.from_bytes(sha256[:2], "little")


def crc32(data: bytes) -> int:
    return zlib.crc32(data)


def zstd_block_frame(payload: bytes) -> bytes:
    """Rebuild a standard zstd frame around a zstd-block payload by adding bytes in front."""
    size = len(payload)
    if size >= ZSTD_BLOCK_MAX:
        raise DecodeError(f"zstd-block payload of {size} bytes exceeds the 131071-byte block limit")
    return ZSTD_BLOCK_PREFIX + ((size << 3) | 0b101).to_bytes(3, "little") + payload


def zstd_block_payload(frame: bytes) -> bytes | None:
    """The block content of a zstd frame that is exactly one compressed block, else None.

    ``frame`` has no magic, no dictionary id and no checksum (the encoder asks zstd for that).
    """
    fhd = frame[0]
    fcs_code = fhd >> 6
    single_segment = (fhd >> 5) & 1
    fcs_size = (1 if single_segment else 0, 2, 4, 8)[fcs_code]
    pos = 1 + (0 if single_segment else 1) + fcs_size
    if fhd & 0x07 or len(frame) < pos + 3:  # dictionary id or checksum present
        return None
    bh = int.from_bytes(frame[pos : pos + 3], "little")
    size = bh >> 3
    if bh & 0b111 != 0b101 or pos + 3 + size != len(frame):  # last block, type compressed
        return None
    return frame[pos + 3 :]


# --- streams (section 3) ---------------------------------------------------------------

STREAM_MAGIC = b"ZRCS"
STREAM_VERSION = 1
STREAM_CHECKSUMMED = 2  # a stream whose every frame carries a CRC-32 (spec section 3)
MAX_VARINT_BYTES = 5


def varint(n: int) -> bytes:
    out = bytearray()
    while n >= 0x80:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def read_varint(data: bytes, pos: int, max_bytes: int = MAX_VARINT_BYTES) -> tuple[int, int]:
    """Read a varint of at most ``max_bytes`` at ``pos``; return (value, next position)."""
    value = shift = 0
    for i in range(max_bytes):
        if pos + i >= len(data):
            raise TruncatedFrame(f"data ends inside a varint at byte {pos}")
        b = data[pos + i]
        value |= (b & 0x7F) << shift
        if not b & 0x80:
            return value, pos + i + 1
        shift += 7
    raise DecodeError(f"varint at byte {pos} is longer than {max_bytes} bytes")


STREAM_SHA = 1  # flags: a dictionary SHA-256 follows
STREAM_SESSION = 4  # flags: records are session records (spec section 3.1); bit 1 stays reserved


def stream_header(dictionary_sha256: bytes | None, checksummed: bool = False, session: bool = False) -> bytes:
    version = STREAM_CHECKSUMMED if checksummed else STREAM_VERSION
    flags = (STREAM_SESSION if session else 0) | (STREAM_SHA if dictionary_sha256 is not None else 0)
    return STREAM_MAGIC + bytes([version, flags]) + (dictionary_sha256 or b"")


def pack_stream(
    frames: Iterable[bytes],
    dictionary_sha256: bytes | None = None,
    checksummed: bool = False,
    session: bool = False,
) -> bytes:
    """A stream of ``frames``; ``checksummed`` (version 2) when every frame carries a CRC-32;
    ``session`` when they are a session's records."""
    parts = [stream_header(dictionary_sha256, checksummed, session)]
    for frame in frames:
        parts.append(varint(len(frame)))
        parts.append(frame)
    parts.append(b"\x00")
    return b"".join(parts)


def parse_stream_header(data: bytes) -> tuple[bytes | None, int]:
    """Return (dictionary SHA-256 or None, offset of the first record)."""
    if len(data) < 6:
        if STREAM_MAGIC.startswith(bytes(data[:4])):
            raise TruncatedFrame(f"stream of {len(data)} bytes ends inside its header")
        raise DecodeError("not a Zeroc stream (bad magic)")
    if data[:4] != STREAM_MAGIC:
        raise DecodeError("not a Zeroc stream (bad magic)")
    if data[4] not in (STREAM_VERSION, STREAM_CHECKSUMMED):
        raise UnsupportedFrame(f"stream version {data[4]} is not supported")
    flags = data[5]
    if flags & ~(STREAM_SHA | STREAM_SESSION):
        raise UnsupportedFrame(f"stream flags 0x{flags:02x} use reserved bits")
    if flags & STREAM_SHA:
        if len(data) < 38:
            raise TruncatedFrame("stream ends inside its dictionary hash")
        return bytes(data[6:38]), 38
    return None, 6


def is_session_stream(data: bytes) -> bool:
    """Whether a stream (its header already checked) holds session records."""
    return bool(data[5] & STREAM_SESSION)


def iter_stream(data: bytes, *, max_frame: int) -> tuple[bytes | None, Iterator[bytes]]:
    """Parse a whole stream held in memory: (dictionary SHA-256, iterator over its frames)."""
    sha, pos = parse_stream_header(data)
    checksummed = data[4] == STREAM_CHECKSUMMED and not is_session_stream(data)  # records check their own

    def frames() -> Iterator[bytes]:
        p = pos
        while True:
            length, p = read_varint(data, p)
            if length == 0:
                if p != len(data):
                    raise DecodeError(f"{len(data) - p} bytes after the end of the stream")
                return
            if length > max_frame:
                raise LimitExceeded(f"stream record of {length} bytes exceeds the frame limit {max_frame}")
            if p + length > len(data):
                raise TruncatedFrame(f"stream ends inside a {length}-byte record at byte {p}")
            if checksummed and not data[p] & CHECKSUM_FLAG:
                raise ChecksumMismatch(f"a frame of this checksummed stream has no CRC-32 (byte {p})")
            yield data[p : p + length]
            p += length

    return sha, frames()
