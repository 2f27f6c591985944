"""Learned field models (issue 6, first part): exact coder, exact round trips, escapes, fuzz."""

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.strategies import json_values
from tests.test_json import same
from zeroc import DecodeError, ZerocError
from zeroc._arith import Decoder, Encoder
from zeroc._fieldmodel import Model
from zeroc.workloads import WORKLOADS, entropy_floor, generate


@given(st.lists(st.tuples(st.integers(1, 1000), st.integers(0, 999)), max_size=60))
def test_coder_is_exact(symbols: list[tuple[int, int]]) -> None:
    enc = Encoder()
    for total, v in symbols:
        enc.put(v % total, 1, total)
    dec = Decoder(enc.finish())
    assert [dec.uniform(total) for total, _ in symbols] == [v % total for total, v in symbols]
    dec.finish()


def test_coder_costs_the_information_rounded_up_to_bytes() -> None:
    enc = Encoder()
    for _ in range(40):
        enc.put(0, 1, 1 << 20)  # 800 bits
    assert len(enc.finish()) <= 101  # + at most a byte: the coder has no header or state words


_MODELS = {w: Model.learn(generate(w, 4000, seed=1)) for w in WORKLOADS}


@pytest.mark.parametrize("workload", sorted(WORKLOADS))
def test_workloads_round_trip_and_approach_the_floor(workload: str) -> None:
    model = _MODELS[workload]
    test = generate(workload, 1000, seed=2)
    frames = [model.encode(m) for m in test]
    assert [model.decode(f) for f in frames] == test
    mean = sum(map(len, frames)) / len(frames)
    print(f"{workload}: {mean:.2f} B/message, floor {entropy_floor(workload):.2f}: {model.describe()[:120]}")
    assert mean < 1.5 * entropy_floor(workload) + 1


@settings(max_examples=300)
@given(json_values)
def test_anything_round_trips_through_escapes(value: object) -> None:
    for model in _MODELS.values():
        assert same(model.decode(model.encode(value)), value)


@settings(max_examples=200)
@given(st.data())
def test_adversarial_variants_of_real_messages(data: st.DataObject) -> None:
    msg = generate("order", 1, seed=data.draw(st.integers(0, 10**6)))[0]
    kind = data.draw(st.sampled_from(["reorder", "type", "huge", "drop", "extra", "deep"]))
    if kind == "reorder":
        msg = dict(reversed(list(msg.items())))
    elif kind == "type":
        msg["user_id"] = float(msg["user_id"])
        msg["items"][0]["quantity"] = str(msg["items"][0]["quantity"])
    elif kind == "huge":
        msg["timestamp"] = 2**90
        msg["order_id"] = "ORD-" + "9" * 200
    elif kind == "drop":
        del msg["shipping_address"]["city"]
    elif kind == "extra":
        msg["items"].append({"note": "ünïcödé \ud800"})
    else:
        msg["payment_method"] = [[[[{"a": None}]]]]
    model = _MODELS["order"]
    assert same(model.decode(model.encode(msg)), msg)


def test_random_and_mutated_payloads_raise_only_zeroc_errors() -> None:
    rng = random.Random(4)
    model = _MODELS["order"]
    seeds = [model.encode(m) for m in generate("order", 50, seed=3)]
    for _ in range(3000):
        if rng.random() < 0.5:
            data = rng.randbytes(rng.randint(0, 40))
        else:
            b = bytearray(rng.choice(seeds))
            b[rng.randrange(len(b))] = rng.randrange(256)
            data = bytes(b)
        try:
            model.decode(data)
        except ZerocError:
            pass
    with pytest.raises(DecodeError):
        model.decode(b"")  # the all-escape path: an empty JSON text
