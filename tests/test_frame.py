"""The wire format's pure functions: tag layout, header parsing, streams, zstd block rebuild."""

import pytest
import zstandard

from zeroc import DecodeError, LimitExceeded, TruncatedFrame, UnsupportedFrame
from zeroc._frame import (
    Method,
    Ref,
    iter_stream,
    pack_stream,
    parse,
    read_varint,
    tag,
    varint,
    zstd_block_frame,
    zstd_block_payload,
)


@pytest.mark.parametrize(
    ("method", "ref", "checksum", "byte"),
    [
        (Method.STORED, Ref.NONE, False, 0x00),
        (Method.ZSTD_BLOCK, Ref.CONTEXT, False, 0x09),
        (Method.ZSTD_FRAME, Ref.SHORT_ID, False, 0x12),
        (Method.DEFLATE, Ref.SHA256, True, 0x3B),
    ],
)
def test_tag_layout(method: Method, ref: Ref, checksum: bool, byte: int) -> None:
    assert tag(method, ref, checksum) == byte


@pytest.mark.parametrize(
    ("frame", "error"),
    [
        (b"", TruncatedFrame),
        (b"\x40abc", UnsupportedFrame),  # version bits
        (b"\x04abc", UnsupportedFrame),  # method 4 (learned) without a dictionary reference
        (b"\x05abc", UnsupportedFrame),  # method 5 reserved
        (b"\x07abc", UnsupportedFrame),
        (b"\x10\x01", TruncatedFrame),  # short id cut
        (b"\x18" + b"\x00" * 31, TruncatedFrame),  # sha256 cut
        (b"\x20\x00\x00", TruncatedFrame),  # checksum cut
        (b"\x01", TruncatedFrame),  # zstd-block without payload
    ],
)
def test_parse_rejects(frame: bytes, error: type[Exception]) -> None:
    with pytest.raises(error):
        parse(frame)


def test_parse_fields() -> None:
    h = parse(b"\x32\x34\x12\x01\x02\x03\x04payload")
    assert (h.method, h.ref, h.short_id) == (Method.ZSTD_FRAME, Ref.SHORT_ID, 0x1234)
    assert h.checksum == 0x04030201 and h.payload == b"payload"
    assert parse(b"\x00").payload == b""  # an empty stored payload is valid


def test_zstd_block_rebuilds_standard_frame_by_prefix() -> None:
    data = b'{"hello":"world","n":[1,2,3,4,5,6,7,8,9,10]}' * 20
    params = zstandard.ZstdCompressionParameters.from_level(
        3,
        format=zstandard.FORMAT_ZSTD1_MAGICLESS,
        write_content_size=True,
        write_dict_id=False,
        write_checksum=False,
    )
    frame = zstandard.ZstdCompressor(compression_params=params).compress(data)
    block = zstd_block_payload(frame)
    assert block is not None and frame.endswith(block) and len(block) <= len(frame) - 5
    rebuilt = zstd_block_frame(block)
    assert rebuilt.endswith(block)  # everything added is in front
    assert zstandard.ZstdDecompressor().decompress(rebuilt, max_output_size=1 << 17) == data


def test_varints() -> None:
    for n in (0, 1, 127, 128, 300, 2**32 - 1):
        assert read_varint(varint(n), 0) == (n, len(varint(n)))
    with pytest.raises(TruncatedFrame):
        read_varint(b"\x80", 0)
    with pytest.raises(DecodeError):
        read_varint(b"\xff" * 6, 0)


def test_stream_round_trip_and_rejections() -> None:
    frames = [b"\x00a", b"\x00" + b"b" * 300, b"\x00"]
    sha = bytes(range(32))
    data = pack_stream(frames, sha)
    assert data[:6] == b"ZRCS\x01\x01" and data.endswith(b"\x00")
    got_sha, it = iter_stream(data, max_frame=1000)
    assert got_sha == sha and list(it) == frames
    with pytest.raises(TruncatedFrame):
        list(iter_stream(data[:-1], max_frame=1000)[1])
    with pytest.raises(DecodeError):
        list(iter_stream(data + b"x", max_frame=1000)[1])
    with pytest.raises(LimitExceeded):
        list(iter_stream(data, max_frame=10)[1])
    with pytest.raises(UnsupportedFrame):
        iter_stream(b"ZRCS\x03\x00\x00", max_frame=10)  # 2 is the checksummed stream
    with pytest.raises(DecodeError):
        iter_stream(b"NOPE\x01\x00\x00", max_frame=10)
