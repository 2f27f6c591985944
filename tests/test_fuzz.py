"""Fuzzing: random and mutated frames, streams and dictionary files raise only Zeroc's errors.

As in h11's fuzzer, any exception other than ZerocError is a bug.
"""

import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import zeroc
from zeroc import Codec, Dictionary, ZerocError
from zeroc.workloads import WORKLOADS, generate


@pytest.fixture(scope="module")
def codecs(workload_dicts: dict[str, zeroc.Dictionary], json_dict: zeroc.Dictionary) -> list[Codec]:
    pv = workload_dicts["product_view"]
    order = workload_dicts["order"]
    return [
        Codec(max_decoded_size=1 << 20),
        Codec(json_dict, max_decoded_size=1 << 20),
        Codec(json_dict, method="deflate", checksum=True),
        Codec(pv, schema=WORKLOADS["product_view"][1]),
        Codec(order, method="zstd", level=19, frame_id="short"),
    ]


@pytest.fixture(scope="module")
def frames(codecs: list[Codec]) -> list[bytes]:
    """Valid frames and streams of every codec: the seeds that mutations start from."""
    out = []
    for c in codecs:
        kind = "order" if c.schema is None or "Order" in c.schema.full_name else "product_view"
        for m in generate(kind, 20, seed=5):
            out.append(c.encode(m))
        out.append(c.encode_stream(generate(kind, 3, seed=6)))
        out.append(c.encode_stream(generate(kind, 3, seed=7), session=True))
    out.append(Codec().encode({"big": "z" * 200_000}))
    return out


def decode_all(codecs: list[Codec], data: bytes) -> None:
    for c in codecs:
        for fn in (c.decode, c.decode_stream):
            try:
                fn(data)
            except ZerocError:
                pass


@settings(max_examples=1500, suppress_health_check=[HealthCheck.function_scoped_fixture], deadline=None)
@given(st.binary(max_size=300))
def test_random_bytes(codecs: list[Codec], data: bytes) -> None:
    decode_all(codecs, data)


@settings(max_examples=1500, suppress_health_check=[HealthCheck.function_scoped_fixture], deadline=None)
@given(st.data())
def test_tag_bytes_over_valid_payloads(codecs: list[Codec], frames: list[bytes], data: st.DataObject) -> None:
    frame = data.draw(st.sampled_from(frames))
    tag = data.draw(st.integers(0, 255))
    decode_all(codecs, bytes([tag]) + frame[1:])


def test_mutated_frames(codecs: list[Codec], frames: list[bytes]) -> None:
    rng = random.Random(2026)
    for _ in range(6000):
        frame = bytearray(rng.choice(frames))
        op = rng.randrange(4)
        if op == 0:
            for _ in range(rng.randint(1, 4)):
                frame[rng.randrange(len(frame))] = rng.randrange(256)
        elif op == 1:
            del frame[rng.randrange(len(frame)) :]
        elif op == 2:
            frame[rng.randrange(len(frame)) : rng.randrange(len(frame) + 1)] = rng.randbytes(
                rng.randint(0, 9)
            )
        else:
            frame += rng.randbytes(rng.randint(1, 9))
        decode_all(codecs, bytes(frame))


def test_mutated_dictionary_files(json_dict: zeroc.Dictionary) -> None:
    rng = random.Random(7)
    data = json_dict.to_bytes()
    for _ in range(800):
        b = bytearray(data)
        for i in rng.sample(range(len(b)), rng.randint(1, 3)):
            b[i] ^= rng.randrange(1, 256)  # a real change at distinct places
        if rng.random() < 0.3:
            del b[rng.randrange(len(b)) :]
        with pytest.raises(zeroc.InvalidDictionary):
            Dictionary.from_bytes(bytes(b))
