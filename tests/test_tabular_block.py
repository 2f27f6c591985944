"""Columnar blocks: exact round trips of any JSON value, real corpora, and hostile input."""

import json
import random
from datetime import datetime

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.conftest import corpus
from tests.strategies import json_values
from tests.test_json import same
from zeroc import DecodeError, LimitExceeded, ZerocError
from zeroc.tabular import _columns as C
from zeroc.tabular._table import decode_block, encode_block

CORPORA = ["apache_builds.json", "github_events.json", "twitter.json", "canada.json"]


@pytest.mark.parametrize("name", CORPORA)
def test_real_documents_round_trip_exactly(name: str) -> None:
    doc = corpus(name)
    assert same(decode_block(encode_block(doc)), doc)


@settings(max_examples=300)
@given(json_values)
def test_any_json_value_round_trips(value: object) -> None:
    assert same(decode_block(encode_block(value)), value)


rows = st.lists(
    st.dictionaries(st.sampled_from(["a", "b", "c", "d"]), json_values, max_size=4), min_size=1, max_size=40
)


@settings(max_examples=300)
@given(rows)
def test_tables_with_ragged_rows_round_trip(table: list[dict[str, object]]) -> None:
    assert same(decode_block(encode_block(table)), table)


def test_tricky_columns() -> None:
    table = [
        {"x": 3, "f": 0.1, "s": "test0", "t": "2010/01/01 00:00", "big": 2**70, "z": -0.0},
        {"x": 3.0, "f": float("nan"), "s": "test1", "t": "Jan 1 2000", "big": 1, "z": 0.0},
        {"f": float("inf"), "x": None, "s": 1.5, "t": "", "big": -(2**64), "z": 1e-7},
        {},
    ]
    assert same(decode_block(encode_block(table)), table)
    long = [{"name": f"test{i}", "v": round(i * 0.001, 3), "ok": i % 3 == 0} for i in range(5000)]
    assert decode_block(encode_block(long)) == long


def test_hostile_blocks_raise_only_zeroc_errors() -> None:
    rng = random.Random(5)
    seeds = [
        encode_block(corpus("apache_builds.json")),
        encode_block([{"a": i, "b": f"x{i}", "c": i * 0.5} for i in range(500)]),
    ]
    for _ in range(3000):
        b = bytearray(rng.choice(seeds))
        for _ in range(rng.randint(1, 4)):
            b[rng.randrange(len(b))] = rng.randrange(256)
        if rng.random() < 0.3:
            del b[rng.randrange(len(b)) :]
        try:
            decode_block(bytes(b))
        except ZerocError:
            pass
    with pytest.raises(DecodeError):
        decode_block(b"\x00\x00")
    with pytest.raises((DecodeError, LimitExceeded)):
        decode_block(encode_block(list(range(1000))), limit=100)


def test_beats_json_zstd19_on_the_real_documents() -> None:
    import zstandard

    for name in CORPORA:
        doc = corpus(name)
        ours = len(encode_block(doc))
        theirs = len(
            zstandard.ZstdCompressor(level=19).compress(json.dumps(doc, separators=(",", ":")).encode())
        )
        print(f"{name}: {ours} vs JSON+zstd-19 {theirs} ({ours / theirs:.3f})")
        assert ours < theirs


def test_iso_timestamps_cost_what_integers_cost() -> None:
    import numpy as np

    rng = random.Random(4)
    base = np.datetime64("2024-01-01T00:00:00", "ms")
    t, iso, ints = 0, [], []
    for _ in range(20_000):
        t += rng.randint(900, 1100)
        stamp = base + np.timedelta64(t, "ms")
        iso.append({"t": f"{np.datetime_as_string(stamp, unit='ms')}Z", "v": rng.randint(0, 99)})
        ints.append({"t": int(stamp.astype("datetime64[ms]").astype(np.int64)), "v": iso[-1]["v"]})
    a, b = encode_block(iso), encode_block(ints)
    assert decode_block(a) == iso and decode_block(b) == ints
    print(f"ISO strings {len(a)} B, integer ms {len(b)} B")
    assert len(a) <= len(b) * 1.02
    odd = [{"t": "2013-09-29T14:17:00Z"}, {"t": "2013-09-29 14:17:00"}, {"t": "2013-02-30T00:00:00Z"}]
    assert decode_block(encode_block(odd)) == odd


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.datetimes(min_value=datetime(1, 1, 1), max_value=datetime(9999, 12, 31, 23, 59, 59)),
        min_size=2,
        max_size=30,
    ),
    st.sampled_from(C.STAMP_FORMATS),
    st.sampled_from(["+0000", "-0700", "GMT"]),
)
def test_stamp_columns_are_written_back_exactly(times: list[datetime], template: str, zone: str) -> None:
    """Times in any of the stamp formats (spec/TABULAR_FORMAT.md §1.2), years 1 to 9999: the
    stamp encoding takes every such column and gives it back string for string, and so does a
    block (whichever encoding its writer chose)."""
    fmt = template.replace("{zone}", zone)
    values = [
        C.render_stamp(fmt, int((t.replace(microsecond=0) - datetime(1970, 1, 1)).total_seconds()))
        for t in times
    ]
    stamp = C._encode_stamps(values)  # (the writer may still prefer prefix + integer, or a dictionary)
    assert stamp is not None
    head, payload = stamp
    assert (
        head["enc"] == "stamp" and C.decode_strings(head, payload, len(values), C.PoolReader(b"")) == values
    )
    rows = {"rows": [{"t": v} for v in values]}
    assert decode_block(encode_block(rows)) == rows


def test_stamps_that_do_not_write_back_stay_text() -> None:
    """A weekday that disagrees with its date, another zone, or an impossible date: the column
    is not a stamp column (it would not come back identical)."""
    for values in (
        ["Thu Apr 23 07:42:42 +0000 2014", "Wed Apr 23 07:42:43 +0000 2014"],  # 23 April 2014 was a Wednesday
        ["Wed Apr 23 07:42:42 +0000 2014", "Wed Apr 23 07:42:43 +0100 2014"],
        ["2010/02/28 00:00", "2010/02/30 00:00"],
    ):
        head, _ = C.encode_strings(values, C.Pool())
        assert head["enc"] != "stamp"
        assert decode_block(encode_block(values)) == values
