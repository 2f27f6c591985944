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


class _Mapping(dict):  # type: ignore[type-arg]
    """A dict subclass that lies about its values: orjson reads the stored ones, as the walks do."""

    def values(self):  # type: ignore[no-untyped-def]
        return []


_with_nonfinite = st.recursive(
    json_values | nonfinite | st.just(float("nan")),
    lambda children: (
        st.lists(children, max_size=6)
        | st.tuples(children, children)
        | st.dictionaries(st.text(max_size=3), children, max_size=6)
        | st.dictionaries(st.text(max_size=3), children, max_size=3).map(_Mapping)
    ),
    max_leaves=60,
)


@settings(max_examples=400)
@given(_with_nonfinite)
def test_the_c_walk_finds_what_the_python_walk_finds(value: object) -> None:
    """zeroc._finite (C, built with the package) and the pure-Python fallback agree on every
    value, wherever a NaN or an infinity sits, and the text round-trips either way."""
    from zeroc import _finite
    from zeroc._json import _has_nonfinite, _walk_nonfinite

    assert _has_nonfinite is _finite.has_nonfinite  # the build made it: make test reinstalls
    held = _containers(value)
    expected = any(isinstance(v, float) and not math.isfinite(v) for v in held)
    assert _finite.has_nonfinite(value) is expected
    if not any(isinstance(v, _Mapping) for v in held):  # its values() hides what it stores
        assert _walk_nonfinite(value) is expected
        assert same(loads(dumps(value)), _listed(value))


def _containers(value: object) -> list[object]:
    out, stack = [], [value]
    while stack:
        v = stack.pop()
        out.append(v)
        if isinstance(v, dict):
            stack.extend(v.values() if not isinstance(v, _Mapping) else dict.values(v))
        elif isinstance(v, (list, tuple)):
            stack.extend(v)
    return out


def _listed(value: object) -> object:
    """``value`` as JSON gives it back: tuples as lists."""
    if isinstance(value, dict):
        return {k: _listed(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_listed(v) for v in value]
    return value


def test_a_deep_wide_value_is_walked_without_recursion() -> None:
    from zeroc import _finite

    value: object = [0.5] * 10_000 + [float("-inf")]
    for _ in range(200):
        value = {"a": value, "b": [1, None]}
    assert _finite.has_nonfinite(value) and not _finite.has_nonfinite([[1.0] * 10_000] * 100)


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
