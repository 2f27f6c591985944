"""The Codec: round trips, frame shapes, dictionaries by reference, limits and threads."""

import threading
import zlib

import pytest
from hypothesis import given, settings

import zeroc
from tests.conftest import CONTENT_CANDIDATES
from tests.strategies import json_values
from tests.test_json import same
from zeroc import (
    ChecksumMismatch,
    Codec,
    DecodeError,
    DictionaryMismatch,
    DictionaryStore,
    EncodeError,
    LimitExceeded,
    UnknownDictionary,
    UsageError,
)
from zeroc._frame import Method, parse
from zeroc.workloads import Order, generate


@settings(max_examples=200)
@given(json_values)
def test_schemaless_round_trip(value: object) -> None:
    codec = Codec()
    assert same(codec.decode(codec.encode(value)), value)


@settings(max_examples=100)
@given(json_values)
def test_round_trip_with_dictionary_all_ids_and_checksum(value: object) -> None:
    d = _JSON_DICT
    for frame_id in ("context", "short", "sha256"):
        codec = Codec(d, frame_id=frame_id, checksum=True)
        assert same(codec.decode(codec.encode(value)), value)


def test_frames_never_exceed_serialization_plus_one(workload_dicts: dict[str, zeroc.Dictionary]) -> None:
    for name, d in workload_dicts.items():
        for method, level in (("zstd", 3), ("zstd", 19), ("deflate", 9)):
            codec = Codec(d, method=method, level=level)
            for msg in generate(name, 500, seed=99):
                assert len(codec.encode(msg)) <= len(codec.schema.dumps(msg)) + 1  # type: ignore[union-attr]


def test_incompressible_data_is_stored() -> None:
    codec = Codec(serialization="bytes")
    data = bytes(range(256)) * 2
    import os

    noise = os.urandom(300)
    frame = codec.encode(noise)
    assert frame[0] == 0 and frame[1:] == noise and len(frame) == len(noise) + 1
    assert codec.decode(codec.encode(data)) == data
    assert codec.decode(codec.encode(b"")) == b""


def test_large_values_use_zstd_frames_and_round_trip() -> None:
    value = {"rows": [{"i": i, "name": f"row{i}"} for i in range(20_000)]}
    codec = Codec()
    frame = codec.encode(value)
    assert parse(frame).method is Method.ZSTD_FRAME
    assert codec.decode(frame) == value


def test_deflate_and_zstd_frames_decode_with_any_codec_of_the_dictionary(json_dict: zeroc.Dictionary) -> None:
    msg = generate("order", 1, seed=5)[0]
    deflate = Codec(json_dict, method="deflate").encode(msg)
    assert parse(deflate).method is Method.DEFLATE
    assert Codec(json_dict, method="zstd", level=19).decode(deflate) == msg


def test_wrong_dictionary_is_detected(json_dict: zeroc.Dictionary, tmp_path: object) -> None:
    other = zeroc.train(generate("order", 2000, seed=4), size=8 * 1024, candidates=CONTENT_CANDIDATES)
    msg = generate("order", 1)[0]
    with pytest.raises(DictionaryMismatch):
        Codec(other).decode(Codec(json_dict, frame_id="short").encode(msg))
    with pytest.raises(DictionaryMismatch):
        Codec(other).decode(Codec(json_dict, frame_id="sha256").encode(msg))
    with pytest.raises(UnknownDictionary):
        Codec().decode(Codec(json_dict).encode(msg))
    with pytest.raises(DecodeError):  # corrupt zstd data or a checksum mismatch
        Codec(other).decode(Codec(json_dict, checksum=True).encode(msg))
    stored = bytearray(Codec(serialization="bytes", checksum=True).encode(b"\x01\x02\x03"))
    assert stored[0] == 0x20
    stored[-1] ^= 1
    with pytest.raises(ChecksumMismatch):
        Codec(serialization="bytes").decode(bytes(stored))


def test_store_follows_frames_that_name_other_dictionaries(
    json_dict: zeroc.Dictionary, tmp_path: object
) -> None:
    from pathlib import Path

    store = DictionaryStore(Path(str(tmp_path)) / "dicts")
    new = zeroc.train(generate("order", 2000, seed=11), size=8 * 1024, candidates=CONTENT_CANDIDATES)
    store.add(json_dict)
    store.add(new)
    assert len(store) == 2 and store.get(json_dict.short_id) == json_dict
    assert store.get(json_dict.id[:10]) == json_dict and store.get(json_dict.sha256) == json_dict
    msg = generate("order", 1, seed=12)[0]
    old_frame = Codec(json_dict, frame_id="short").encode(msg)
    assert Codec(new, store=store).decode(old_frame) == msg
    stream = Codec(json_dict).encode_stream([msg, msg])
    assert Codec(new, store=store).decode_stream(stream) == [msg, msg]
    with pytest.raises(UnknownDictionary):
        store.get("ff" * 32)


def test_schema_mode_returns_dicts_or_messages(workload_dicts: dict[str, zeroc.Dictionary]) -> None:
    codec = Codec(workload_dicts["order"], schema=Order)
    msg = generate("order", 1, seed=8)[0]
    frame = codec.encode(msg)
    assert codec.decode(frame) == msg
    message = codec.decode(frame, as_message=True)
    assert isinstance(message, Order) and codec.encode(message) == frame
    # A codec built from the dictionary alone rebuilds the schema it carries.
    assert Codec(workload_dicts["order"]).decode(frame) == msg
    with pytest.raises(EncodeError, match="bogus"):
        codec.encode({"bogus": 1})


def test_limits() -> None:
    big = Codec().encode("x" * 100_000)
    with pytest.raises(LimitExceeded):
        Codec(max_decoded_size=1000).decode(big)
    huge = Codec().encode("y" * 300_000)
    assert parse(huge).method is Method.ZSTD_FRAME
    with pytest.raises(LimitExceeded):
        Codec(max_decoded_size=200_000).decode(huge)
    stored = Codec(serialization="bytes").encode(b"\x00" + bytes(range(256)))
    with pytest.raises(LimitExceeded):
        Codec(serialization="bytes", max_decoded_size=10).decode(stored)
    bomb = zlib.compressobj(9, zlib.DEFLATED, -15)
    payload = bomb.compress(b"\0" * 10_000_000) + bomb.flush()
    with pytest.raises(LimitExceeded):
        Codec(max_decoded_size=1_000_000).decode(b"\x03" + payload)


def test_usage_errors() -> None:
    with pytest.raises(UsageError):
        Codec(frame_id="long")
    with pytest.raises(UsageError):
        Codec(method="lz4")
    with pytest.raises(UsageError):
        Codec(serialization="protobuf")
    with pytest.raises(UsageError):
        Codec().decode("text")  # type: ignore[arg-type]
    with pytest.raises(UsageError):
        Codec(level=99)


def test_shared_between_threads(workload_dicts: dict[str, zeroc.Dictionary]) -> None:
    codec = Codec(workload_dicts["product_view"])
    msgs = generate("product_view", 2000, seed=21)
    frames = codec.encode_many(msgs)
    failures: list[str] = []

    def work(offset: int) -> None:
        for i in range(offset, len(msgs), 4):
            if codec.decode(codec.encode(msgs[i])) != msgs[i] or codec.encode(msgs[i]) != frames[i]:
                failures.append(f"message {i}")

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert failures == []


def test_learned_frames_shared_between_threads_that_switch_mid_frame() -> None:
    """A learned codec's C walk reuses its coders from frame to frame; a thread that finds them
    in use (another thread's frame paused while its side stream is compressed in Python) takes
    its own. Threads switching every microsecond on messages with free text get the frames one
    thread gets, and decode them."""
    import sys

    from zeroc.bench import _corpora

    train, test = _corpora.SETS["faker_users"][0](300)
    codec = Codec(zeroc.train(train, candidates=[("learned", 19)]))
    msgs = [{**m, "note": f"free text {i} " * (i % 7)} if i % 2 else m for i, m in enumerate(test[:400])]
    frames = [codec.encode(m) for m in msgs]
    assert codec._frame is not None and any(len(f) > 80 for f in frames)
    failures: list[int] = []

    def work(offset: int) -> None:
        for _ in range(3):
            for i in range(offset, len(msgs), 4):
                if codec.encode(msgs[i]) != frames[i] or codec.decode(frames[i]) != msgs[i]:
                    failures.append(i)

    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        sys.setswitchinterval(interval)
    assert failures == []


def test_batches_and_streams(json_dict: zeroc.Dictionary) -> None:
    codec = Codec(json_dict)
    msgs = generate("order", 50, seed=30)
    assert codec.decode_many(codec.encode_many(msgs)) == msgs
    stream = codec.encode_stream(msgs)
    assert stream[:6] == b"ZRCS\x01\x01" and stream[6:38] == json_dict.sha256
    assert codec.decode_stream(stream) == msgs


_JSON_DICT = zeroc.train(generate("order", 1000, seed=2), size=8 * 1024, candidates=CONTENT_CANDIDATES)


def test_a_checksum_codec_refuses_frames_whose_checksum_bit_was_cleared(json_dict: zeroc.Dictionary) -> None:
    """Hostile input (../shared/repro, learned checksum bypass): clearing the tag's checksum bit
    of a checked learned Order frame gave a frame without a CRC that decoded, with no error, to
    another Order. A codec with ``checksum=True`` now refuses every frame without a checksum, of
    every method, and still reads its own."""
    from pathlib import Path

    vectors = Path(__file__).parent.parent / "spec" / "vectors"
    learned = Codec(zeroc.Dictionary.load(vectors / "order-learned.zcd"), checksum=True)
    sent = bytes.fromhex("2cc5290550ad8bcc847222095906ff77edb0")
    flipped = bytes.fromhex("0cc5290550ad8bcc847222095906ff77edb0")
    assert learned.decode(sent)["order_id"]
    with pytest.raises(ChecksumMismatch, match="no checksum"):
        learned.decode(flipped)
    codecs = [
        learned,
        Codec(json_dict, checksum=True),
        Codec(json_dict, checksum=True, method="deflate"),
        Codec(checksum=True),
        Codec(serialization="bytes", checksum=True),
    ]
    for msg in generate("order", 20, seed=9):
        for codec in codecs:
            value = msg if codec.serialization != "bytes" else zeroc._json.dumps(msg)
            frame = codec.encode(value)
            assert frame[0] & 0x20 and codec.decode(frame) == value
            with pytest.raises(ChecksumMismatch):
                codec.decode(bytes([frame[0] & ~0x20]) + frame[1:])


def test_a_small_frame_cannot_build_more_values_than_the_limit() -> None:
    """Hostile input (../shared/repro): 5,644 bytes of zstd held 64 MiB of ``[{},{},...]``, which
    ``Codec()`` turned into 2.0 GB of objects (the 715-byte, 8 MiB one: 284 MB). A decoded text
    that may hold more than ``max_values`` values is refused before it is parsed; the limit can
    be raised, and texts under it decode as before."""
    bomb = b"[" + b"{}," * (4 << 20) + b"{}]"  # 4,194,305 objects, 12 MiB
    frame = Codec(serialization="bytes").encode(bomb)  # the frame names no serialization
    assert len(frame) < 4096
    with pytest.raises(LimitExceeded, match="max_values"):
        Codec().decode(frame)
    assert len(Codec(max_values=10_000_000).decode(frame)) == (4 << 20) + 1
    fine = [{"a": i} for i in range(100_000)]
    assert Codec().decode(Codec().encode(fine)) == fine


def test_no_single_bit_flip_of_a_checksummed_stream_decodes(json_dict: zeroc.Dictionary) -> None:
    """Issue 14's bar for data at rest: every single-bit flip of a stream written with the
    defaults of ``zeroc encode`` (checksummed, version 2) raises one of Zeroc's errors; none
    decodes to different data. The same flips of an unchecksummed stream do slip through."""
    values = generate("order", 6, seed=11)
    codec = zeroc.Codec(json_dict, checksum=True)
    stream = codec.encode_stream(values)
    assert stream[4] == 2 and codec.decode_stream(stream) == values

    def slipped(data: bytes, reader: zeroc.Codec) -> int:
        count = 0
        for i in range(len(data) * 8):
            flipped = bytearray(data)
            flipped[i // 8] ^= 1 << (i % 8)
            try:
                count += reader.decode_stream(bytes(flipped)) != values
            except zeroc.ZerocError:
                pass
        return count

    assert slipped(stream, zeroc.Codec(json_dict)) == 0
    plain = zeroc.Codec(json_dict).encode_stream(values)
    assert slipped(plain, zeroc.Codec(json_dict)) > 0  # what the checksums are for
