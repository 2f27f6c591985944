"""The json serialization: exact round trips, including what orjson alone would lose."""

import json
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.strategies import json_values, nonfinite
from zeroc import DecodeError, EncodeError
from zeroc._json import dumps, loads


def same(a: object, b: object) -> bool:
    """Equality that also tells 1 from 1.0, -0.0 from 0.0, True from 1, and key order."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return list(a) == list(b) and all(same(a[k], b[k]) for k in a)  # type: ignore[index]
    if isinstance(a, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))  # type: ignore[arg-type]
    if isinstance(a, float):
        return (math.isnan(a) and math.isnan(b)) or (a == b and math.copysign(1, a) == math.copysign(1, b))  # type: ignore[arg-type]
    return a == b


@settings(max_examples=400)
@given(json_values)
def test_round_trip_is_exact(value: object) -> None:
    assert same(loads(dumps(value)), value)


@given(st.lists(nonfinite | st.just(float("nan")) | st.integers(), min_size=1))
def test_nonfinite_and_big_ints_survive(value: list[object]) -> None:
    assert same(loads(dumps(value)), value)


def test_fast_path_is_compact_json_and_exact_path_is_marked() -> None:
    assert dumps({"a": [1, 2.5, "é"]}) == '{"a":[1,2.5,"é"]}'.encode()
    big = dumps({"n": 2**70})
    assert big.startswith(b" ") and json.loads(big) == {"n": 2**70}
    assert dumps([float("nan")]).startswith(b" ")
    assert dumps("\ud800") == b' "\\ud800"'


@pytest.mark.parametrize("value", [{1: "x"}, {"a": {1, 2}}, [object()], {"t": (1, {2: 3})}])
def test_non_json_values_are_encode_errors(value: object) -> None:
    with pytest.raises(EncodeError):
        dumps(value)


@pytest.mark.parametrize("data", [b"{", b"nul", b"\xff", b" {", b" [1e999999x]", b"[" * 100_000])
def test_bad_payloads_are_decode_errors(data: bytes) -> None:
    with pytest.raises(DecodeError):
        loads(data)


def test_deep_nesting() -> None:
    value: object = "x"
    for _ in range(300):
        value = [value]
    assert loads(dumps(value)) == value
    for _ in range(200):
        value = [value]
    with pytest.raises(EncodeError):
        dumps(value)
