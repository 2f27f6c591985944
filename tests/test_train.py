"""Training: held-back figures, the codec choice by preference, and clear refusals."""

import pytest

import zeroc
from zeroc import TrainingError, UsageError
from zeroc._train import choose
from zeroc.workloads import ProductView, generate


def test_dictionary_records_what_it_measured() -> None:
    d = zeroc.train(generate("product_view", 3000, seed=1), schema=ProductView, size=8192)
    v = d.validation
    assert d.samples == 3000 and v["messages"] == 600
    assert len(d.content) <= 8192 and d.serialization == "protobuf"
    assert {(c["method"], c["level"]) for c in v["candidates"]} == set(zeroc._train.CANDIDATES)
    chosen = d.bytes_per_message
    assert chosen is not None and chosen < v["zstd_bytes"] and chosen < v["gzip_bytes"]
    assert v["json_gzip_encode_us"] > 0 and d.created.endswith("+00:00")


def test_choice_follows_preference() -> None:
    rows = [
        {"method": "zstd", "level": 3, "bytes_per_message": 30.0, "encode_us": 2.0},
        {"method": "zstd", "level": 19, "bytes_per_message": 25.0, "encode_us": 9.0},
        {"method": "deflate", "level": 9, "bytes_per_message": 20.0, "encode_us": 30.0},
    ]
    assert choose(rows, "size", 30.0)["method"] == "deflate"
    tie = [*rows, {"method": "zstd", "level": 1, "bytes_per_message": 33.0, "encode_us": 1.9}]
    assert choose(tie, "speed", 30.0)["level"] == 3  # within 15% of the fastest, and smaller
    assert choose(rows, "speed", 30.0)["level"] == 3
    assert choose(rows, "balanced", 32.4)["level"] == 19  # 9 * 3 * 1.2 <= 32.4
    assert choose(rows, "balanced", 32.3)["level"] == 3
    assert choose(rows, "balanced", 20.0)["level"] == 3
    assert choose(rows, "balanced", 3.0)["level"] == 3  # none fast enough: the fastest


def test_too_few_or_too_small_samples_are_refused() -> None:
    with pytest.raises(TrainingError, match="too few"):
        zeroc.train([{"a": 1}] * 10)
    with pytest.raises(TrainingError, match="bytes"):
        zeroc.train([{"a": i} for i in range(100)])
    with pytest.raises(UsageError):
        zeroc.train(generate("order", 100), preference="tiny")


def test_bytes_samples() -> None:
    samples = [f"GET /api/items/{i} HTTP/1.1\r\nHost: example.com\r\n\r\n".encode() for i in range(200)]
    d = zeroc.train(samples, size=4096)
    codec = zeroc.Codec(d)
    assert d.serialization == "bytes" and codec.decode(codec.encode(samples[3])) == samples[3]
