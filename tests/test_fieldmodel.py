"""Learned field models (issue 6, first part): exact coder, exact round trips, escapes, fuzz."""

import random
from itertools import pairwise

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.conftest import find_node
from tests.strategies import json_values
from tests.test_json import same
from zeroc import DecodeError, ZerocError
from zeroc.learned._coder import Decoder, Encoder
from zeroc.learned._model import Model
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


_DAYS, _MONTHS = (
    "Mon Tue Wed Thu Fri Sat Sun".split(),
    "Jan Feb Mar Apr May Jun Jul Aug Sep Oct Nov Dec".split(),
)


def _counts_sample(rng: random.Random) -> dict[str, object]:
    """A record of counts and ids that span magnitudes (followers, sizes), its id as text, and a
    date as Twitter writes them."""
    n = int(2 ** rng.uniform(0, 40)) * rng.choice([1, 1, 1, -1])
    uid = rng.randrange(1, 1 << 62)
    created = (
        f"{rng.choice(_DAYS)} {rng.choice(_MONTHS)} {rng.randrange(1, 29):02d} {rng.randrange(24):02d}:"
        f"{rng.randrange(60):02d}:{rng.randrange(60):02d} +0000 {rng.randrange(2007, 2015)}"
    )
    return {
        "id": uid,
        "id_str": str(uid),
        "followers": n,
        "size": int(2 ** rng.uniform(3, 20)),
        "created": created,
    }


_COUNTS = Model.learn([_counts_sample(random.Random(i)) for i in range(400)])


def test_counts_learn_magnitudes_ids_as_text_of_ids_and_shapes_of_dates() -> None:
    """Spread-out integers code by bucket + offset, ``id_str`` from ``id``, a date by its fields:
    a model of format 3, on the common path and smaller than coding the digits (an id_str of 19
    digits is 0 bits; a date ~30)."""
    from zeroc.learned._nodes import Affix, Magnitude, Shape, walk

    nodes = list(walk(_COUNTS.root))
    assert any(isinstance(n, Magnitude) for n in nodes)
    assert any(isinstance(n, Affix) and n.numeric for n in nodes)
    assert any(isinstance(n, Shape) and n.kinds == "aa999999" for n in nodes)
    assert Model.from_bytes(_COUNTS.to_bytes()).describe() == _COUNTS.describe()
    test = [_counts_sample(random.Random(10**6 + i)) for i in range(300)]
    assert sum(_COUNTS._fast_encode(m) is not None for m in test) >= 290  # ids past the range leave it
    frames = [_COUNTS.encode(m) for m in test]
    assert [_COUNTS.decode(f) for f in frames] == test
    assert sum(map(len, frames)) / len(frames) < 24  # 62-bit id, two magnitudes, a date: no digits
    from zeroc.learned._model import breakdown

    rows = {r["field"]: r["bits"] for r in breakdown(_COUNTS.root, test, len(test))}
    fields = [rows[f"$.created{{{i}}}"] for i in range(8)]  # inspect shows where a date's bits go
    assert abs(sum(fields) - rows["$.created"]) < 0.5  # the fields are what the shape costs


@settings(max_examples=300)
@given(
    st.one_of(
        st.integers(),
        st.sampled_from([0, 1, -1, 2, -2, 3, 2**63, 2**64 - 1, -(2**64) + 1, 2**64, -(2**64), 10**30]),
        st.booleans(),
        st.floats(allow_nan=False),
        st.none(),
        st.text(max_size=5),
    ),
    st.one_of(st.integers(), st.text(max_size=25), st.booleans()),
    st.one_of(
        st.text(max_size=40),
        st.from_regex(
            r"[A-Za-z\u00e9]{1,4} [A-Z][a-z]{2} [0-9]{1,3} [0-9]{2}:[0-9]{2}:[0-9]{2} [+-][0-9]{4} "
            r"[0-9]{4,5}",
            fullmatch=True,
        ),
        st.integers(),
    ),
)
def test_magnitudes_numeric_affixes_and_shapes_round_trip_anything(
    followers: object, id_str: object, created: object
) -> None:
    """Every integer, in range or not, every string of a date's shape or not (unseen day names,
    a minus zone, five-digit years, non-ASCII letters), and every other value, exactly, on both
    paths."""
    msg = {"id": 5, "id_str": id_str, "followers": followers, "size": 100, "created": created}
    assert same(_COUNTS.decode(_COUNTS.encode(msg)), msg)
    msg = {
        "id": followers,
        "id_str": id_str,
        "followers": 7,
        "size": followers,
        "created": "Mon Jan 01 00:00:00 +0000 2010",
    }
    assert same(_COUNTS.decode(_COUNTS.encode(msg)), msg)


def test_mutated_payloads_of_magnitudes_raise_only_zeroc_errors() -> None:
    rng = random.Random(5)
    seeds = [_COUNTS.encode(_counts_sample(random.Random(i))) for i in range(50)]
    for _ in range(3000):
        b = bytearray(rng.choice(seeds))
        b[rng.randrange(len(b))] = rng.randrange(256)
        try:
            _COUNTS.decode(bytes(b))
        except ZerocError:
            pass


def test_ids_that_grow_across_batches_of_messages_are_magnitudes_not_ranges() -> None:
    """Samples that are batches of consecutive messages (overlapping windows, as a model for
    one-message-or-many is trained) rise within each batch and fall back at the next: the ids
    still grow, and later ones must not leave a range for JSON text in the side stream."""
    from zeroc.learned._learner import growing
    from zeroc.learned._nodes import IntRange, walk

    def order(i: int) -> dict[str, object]:
        return {"id": f"ORD-{1_000_000 + i}", "n": i % 7}

    batches = [[order(j) for j in range(i, i + 1 + i % 16)] for i in range(0, 1600, 4)]
    ids = [int(str(o["id"])[4:]) for b in batches for o in b]
    assert sum(b > a for a, b in pairwise(ids)) < 0.9 * (len(ids) - 1)  # not one rising run
    assert growing(ids)
    rng = random.Random(3)
    assert not growing([rng.randrange(10**6) for _ in range(400)])  # spread, not growing
    assert not growing(sorted(rng.randrange(10**6) for _ in range(4)))  # too few to say
    model = Model.learn(batches)
    assert not any(isinstance(n, IntRange) for n in walk(model.root))  # no range to leave
    later = [order(j) for j in range(5_000, 6_500)]  # one message of 1,500, past every id seen
    payload = model.encode(later)
    assert len(payload) < 1500 * 4  # 3.3 B an order; a range left for JSON text made it 9.8
    assert model.decode(payload) == later


@pytest.mark.parametrize(
    ("change", "error"),
    [
        (lambda d: d.update(format=2), "from format [37] on"),  # shapes (3), chars (7)
        (lambda d: find_node(d, "shape")["literals"].__setitem__(1, "x "), "literals"),
        (lambda d: find_node(d, "shape")["literals"].__setitem__(1, ""), "kinds"),  # "Wed" "Apr" run together
        (lambda d: find_node(d, "shape").update(kinds="ab999999"), "kinds"),
        (lambda d: find_node(d, "shape")["children"].pop(), "children"),
        (lambda d: find_node(d, "shape").update(literals=["", ""], kinds="a"), "literals"),
        (
            lambda d: find_node(d, "magnitude")["buckets"].update(
                fallback={"kind": "int_range", "lo": 0, "span": 9, "esc": 1, "hits": 1}
            ),
            "buckets",
        ),
        (lambda d: find_node(d, "affix").update(numeric="yes"), "numeric"),
    ],
)
def test_format_3_nodes_are_checked_when_read(change, error: str) -> None:  # type: ignore[no-untyped-def]
    """A shape's pattern is built from literals without letters or digits and kinds that keep
    its fields maximal runs (the file never supplies a pattern); magnitude buckets are bounded."""
    import json

    import zstandard

    from zeroc import InvalidDictionary

    doc = json.loads(zstandard.ZstdDecompressor().decompress(_COUNTS.to_bytes()))
    assert doc["format"] in (6, 7)  # 7 where a vocabulary spells out what it has not seen
    change(doc)
    with pytest.raises(InvalidDictionary, match=error):
        Model.from_bytes(zstandard.ZstdCompressor().compress(json.dumps(doc).encode()))


def test_mutated_models_of_format_3_raise_only_zeroc_errors() -> None:
    """Bytes of the model section flipped at random: a clear error or a model that still codes
    exactly (never a crash, a hang or a wrong value)."""
    rng = random.Random(6)
    section = _COUNTS.to_bytes()
    import zstandard

    text = zstandard.ZstdDecompressor().decompress(section)
    msgs = [_counts_sample(random.Random(i)) for i in range(20)]
    for _ in range(300):
        b = bytearray(text)
        for _ in range(rng.randint(1, 3)):
            b[rng.randrange(len(b))] = rng.choice(b'0123456789-,[]{}":aAz9 ')
        try:
            model = Model.from_bytes(zstandard.ZstdCompressor().compress(bytes(b)))
        except ZerocError:
            continue
        for m in msgs:
            try:
                assert same(model.decode(model.encode(m)), m)
            except ZerocError:
                pass


def _payload_search() -> object:
    """The generated encoder's payload search (``_generate.PAYLOAD``) as a function."""
    from textwrap import indent

    from zeroc.learned._generate import PAYLOAD

    ns: dict[str, object] = {}
    exec("def search(low, rng, den):\n" + indent(PAYLOAD, "    "), ns)  # our own source
    return ns["search"]


_SEARCH = _payload_search()


@settings(max_examples=2000)
@given(st.integers(1, 2**200), st.data())
def test_the_inline_payload_search_is_the_canonical_one(den: int, data: st.DataObject) -> None:
    """One division a byte past the first length, the first length's result derived from it:
    the same payload as the specified search (``_coder.shortest``) for any interval."""
    from zeroc.learned._coder import shortest

    rng = data.draw(st.integers(1, den))
    low = data.draw(st.integers(0, den - rng))
    n, k = shortest(low, rng, den, False)
    assert _SEARCH(low, rng, den) == k.to_bytes(n, "big")  # type: ignore[operator]


def test_numbers_of_any_length_stay_on_the_common_path() -> None:
    """House numbers from 1 to 4 digits: a template of width 0 (format 3) codes an unseen one by
    its range instead of leaving the common path; leading zeros, a lone 0, 31 digits and words
    where the number was still round-trip, off it."""
    import json

    import zstandard

    from zeroc import InvalidDictionary
    from zeroc.learned._nodes import Template, walk

    rng = random.Random(7)
    samples = [
        {"street": f"{rng.randint(1, 5000)} {rng.choice(['Main', 'Oak', 'Elm'])} St"} for _ in range(300)
    ]
    model = Model.learn(samples)
    assert any(isinstance(n, Template) and n.width == 0 for n in walk(model.root))
    fresh = [{"street": f"{n} Oak St"} for n in (4999, 1234, 77, 5, 3001)]
    assert all(model._fast_encode(m) is not None for m in fresh)
    odd = ["007 Oak St", "0 Oak St", "9" * 31 + " Oak St", "Oak Oak St", "12 Oak St ", "١٢ Oak St"]
    for m in fresh + [{"street": s} for s in odd]:
        assert same(model.decode(model.encode(m)), m)
    assert all(model._fast_encode({"street": s}) is None for s in odd[:4])
    assert json.loads(zstandard.ZstdDecompressor().decompress(model.to_bytes()))["format"] in (6, 7)
    inner = {"kind": "int_range", "lo": 0, "span": 10, "esc": 1, "hits": 1}
    template = {"kind": "template", "prefix": "#", "width": 0, "inner": inner, "esc": 1, "hits": 1}
    for version in (3, 2):
        section = json.dumps({"format": version, "common": 1, "samples": 1, "root": template})
        if version == 3:
            assert Model.from_bytes(zstandard.ZstdCompressor().compress(section.encode())).encode("#7")
        else:
            with pytest.raises(InvalidDictionary, match="width"):
                Model.from_bytes(zstandard.ZstdCompressor().compress(section.encode()))
