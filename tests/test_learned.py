"""Issue 6 through the public surface: the learned codec chosen by train, used by Codec, on the
real corpora, on adversarial JSON, under fuzzing of frames and model files, and its drift."""

import copy
import json
import random
import subprocess
import sys
from pathlib import Path

import pytest
import zstandard
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import zeroc
from tests.conftest import corpus, find_node, halves
from tests.strategies import json_values
from tests.test_json import same
from tests.test_native import assert_same_code
from zeroc import Codec, Dictionary, InvalidDictionary, UsageError, ZerocError
from zeroc._codec import SIDE_FAST, SIDE_LONG, SIDE_LONG_LEVEL, SIDE_SHARE, _SideEngine
from zeroc.learned._model import Model
from zeroc.workloads import generate

LEARNED = [("learned", 19)]


def _lean_zstd19(d: Dictionary, test: list[object]) -> float:
    """zstd-19 with the same trained dictionary in Zeroc's lean frame (tag + one zstd block)."""
    codec = Codec(d, method="zstd", level=19)
    return sum(len(codec.encode(v)) for v in test) / len(test)


@pytest.mark.parametrize(
    ("name", "items", "bound"),
    [
        ("apache jobs", lambda: corpus("apache_builds.json")["jobs"], 0.6),
        ("tweets", lambda: corpus("twitter.json")["statuses"], 1.0),
    ],
)
def test_real_corpora_against_zstd19_with_a_trained_dictionary(name: str, items, bound: float) -> None:  # type: ignore[no-untyped-def]
    train, test = halves(items())
    d = zeroc.train(train, candidates=LEARNED)
    assert d.codec["method"] == "learned"
    codec, bare = Codec(d), Codec(d, frame_id="bare")
    frames = [codec.encode(v) for v in test]
    assert [codec.decode(f) for f in frames] == test
    payloads = [bare.encode(v) for v in test]
    assert [bare.decode(p) for p in payloads] == test
    ours = sum(map(len, frames)) / len(test)
    model_only = sum(map(len, payloads)) / len(test)
    zstd19 = _lean_zstd19(d, test)
    print(
        f"{name}: learned codec {ours:.1f} B/message (model alone {model_only:.1f}) vs zstd-19 + the "
        f"same {len(d.content)}-byte dictionary in a lean frame {zstd19:.1f}: {ours / zstd19:.3f}x"
    )
    assert ours <= bound * zstd19


def test_every_message_of_the_other_corpora_round_trips() -> None:
    # GitHub events: 15 + 15, too few for train(); the model learns from them anyway.
    train, test = halves(corpus("github_events.json"))
    model = Model.learn(train)
    for v in train + test:
        assert same(model.decode(model.encode(v)), v)
    # GeoJSON: each polygon of the one feature as a message. Long-digit floats are nothing a
    # model predicts: they go to the side stream, or the codec gives them to zstd with the
    # dictionary. The whole document (2 MB, 600,000 symbols) is coded in blocks, and its frame is
    # within 0.1% of zstd's with the same dictionary at the level the codec gives long inputs.
    doc = corpus("canada.json")
    polygons = doc["features"][0]["geometry"]["coordinates"]
    d = zeroc.train(polygons, candidates=LEARNED)
    codec = Codec(d)
    for p in polygons:
        assert same(codec.decode(codec.encode(p)), p)
    whole = codec.encode(doc)
    zstd = zeroc.Codec(d, method="zstd", level=SIDE_LONG_LEVEL)._engine.compress(zeroc._json.dumps(doc))[1]
    assert same(codec.decode(whole), doc) and len(whole) <= 1.001 * len(zstd)
    assert whole == Codec(d, level=SIDE_LONG_LEVEL).encode(doc)  # long: no zstd work past that level


def test_a_side_stream_beside_many_symbols_goes_at_the_long_level(monkeypatch: pytest.MonkeyPatch) -> None:
    """A batch of faker orders as one message: its notes make a side stream of a few KB, under
    SIDE_LONG but a small part of a payload of tens of thousands of symbols, so it is compressed
    at SIDE_LONG_LEVEL (the codec's level costs much of the encode there and saves little); a
    dozen noted orders' stays at the codec's level. Native and pure-Python coders write the same
    bytes."""
    from zeroc.bench._corpora import SETS
    from zeroc.bench._traffic import batches_of

    train, test = SETS["faker_orders"][0](1500)
    d = zeroc.train(batches_of(train), candidates=LEARNED)
    seen: list[tuple[int, int]] = []
    weigh = _SideEngine.compress_in

    def weighed(engine: _SideEngine, data: bytes, symbols: int) -> tuple[int, bytes]:
        seen.append((len(data), symbols))
        return weigh(engine, data, symbols)

    monkeypatch.setattr(_SideEngine, "compress_in", weighed)
    codec, long = Codec(d), Codec(d, level=SIDE_LONG_LEVEL)
    batch = test[:500]
    frame = codec.encode(batch)
    side, symbols = seen[-1]
    assert SIDE_FAST <= side < SIDE_LONG <= SIDE_SHARE * side <= symbols, (side, symbols)
    assert frame == long.encode(batch) and codec.decode(frame) == batch
    noted = [m for m in test if "note" in m][:12]  # a dozen orders' notes, beside few symbols
    assert codec.encode(noted) != long.encode(noted)
    side, symbols = seen[-1]
    assert SIDE_FAST <= side and symbols < SIDE_SHARE * side, (side, symbols)
    model = Codec(d, frame_id="bare")._model
    assert model is not None
    assert_same_code(model, [batch, test[:40], noted], random.Random(3))


@pytest.fixture(scope="module")
def json_orders() -> Dictionary:
    """A learned model of Orders as plain JSON (no schema: any JSON value is a valid input)."""
    return zeroc.train(generate("order", 3000, seed=5), candidates=LEARNED)


@settings(max_examples=150, deadline=None)
@given(json_values)
def test_anything_round_trips_through_learned_frames(json_orders: Dictionary, value: object) -> None:
    d = json_orders
    for codec in (Codec(d), Codec(d, frame_id="bare"), Codec(d, checksum=True, frame_id="sha256")):
        assert same(codec.decode(codec.encode(value)), value)


def test_a_schema_still_decides_what_is_valid(workload_dicts: dict[str, Dictionary]) -> None:
    codec = Codec(workload_dicts["order"])
    for bad in (None, {"": None}, {"order_id": 5}, [1, 2]):
        with pytest.raises(zeroc.EncodeError):
            codec.encode(bad)


@settings(max_examples=150, deadline=None)
@given(st.data())
def test_adversarial_orders_round_trip_exactly(json_orders: Dictionary, data: st.DataObject) -> None:
    msg = generate("order", 1, seed=data.draw(st.integers(0, 10**6)))[0]
    kind = data.draw(st.sampled_from(["unseen key", "reorder", "type", "huge", "long", "deep", "unicode"]))
    if kind == "unseen key":
        msg["coupon"] = data.draw(json_values)
    elif kind == "reorder":
        msg = dict(reversed(list(msg.items())))
        msg["items"][0] = dict(reversed(list(msg["items"][0].items())))
    elif kind == "type":
        msg["user_id"] = float(msg["user_id"])
        msg["items"][0]["price"] = int(msg["items"][0]["price"])
        msg["total_amount"] = str(msg["total_amount"])
    elif kind == "huge":
        msg["timestamp"] = 2**90
        msg["items"][0]["quantity"] = -(2**70)
    elif kind == "long":
        msg["order_id"] = "ORD-" + "9" * 5000
        msg["shipping_address"]["street"] = " x " * 3000
    elif kind == "deep":
        msg["payment_method"] = [[[[[[{"a": [None, -0.0, 1e308]}]]]]]]
    else:
        msg["shipping_address"]["city"] = "Zürich \ud800 ☃ 東京"
    d = json_orders
    for codec in (Codec(d), Codec(d, frame_id="bare")):
        assert same(codec.decode(codec.encode(msg)), msg)


def test_random_and_mutated_frames_raise_only_zeroc_errors(json_orders: Dictionary) -> None:
    rng = random.Random(11)
    d = json_orders
    tagged, bare = Codec(d), Codec(d, frame_id="bare")
    msgs = generate("order", 40, seed=12)
    msgs[0]["note"] = "off the common path"
    seeds = [(tagged, tagged.encode(m)) for m in msgs] + [(bare, bare.encode(m)) for m in msgs]
    decoded = 0
    for _ in range(4000):
        codec, frame = rng.choice(seeds)
        b = bytearray(frame)
        r = rng.random()
        if r < 0.3:
            b = bytearray(rng.randbytes(rng.randint(0, 48)))
            if codec is tagged and b:
                b[0] = 0x0C  # method 4, dictionary by context
        elif r < 0.6 and b:
            b[rng.randrange(len(b))] ^= 1 << rng.randrange(8)
        elif r < 0.8:
            b = b[: rng.randrange(len(b) + 1)]
        else:
            b += rng.randbytes(rng.randint(1, 3))
        try:
            codec.decode(bytes(b))
            decoded += 1
        except ZerocError:
            pass
    assert decoded < 4000  # most corruptions are caught (canonical form, limits, checksums)


def _nodes(tree: object, out: list[tuple[object, object]]) -> list[tuple[object, object]]:
    if isinstance(tree, dict):
        for k, v in tree.items():
            out.append((tree, k))
            _nodes(v, out)
    elif isinstance(tree, list):
        for i, v in enumerate(tree):
            out.append((tree, i))
            _nodes(v, out)
    return out


def _mutated_model(d: Dictionary, doc: object, poison: list[object], rng: random.Random) -> bytes:
    """``d`` as a dictionary file whose model document has 1-3 of its fields deleted or poisoned."""
    bad = copy.deepcopy(doc)
    for _ in range(rng.randint(1, 3)):
        holder, key = rng.choice(_nodes(bad, []))
        if isinstance(holder, dict) and rng.random() < 0.2:
            del holder[key]
        else:
            holder[key] = rng.choice(poison)  # type: ignore[index]
    section = zstandard.ZstdCompressor().compress(json.dumps(bad).encode())
    return Dictionary(d.content, d.serialization, d.codec, d.schema, model=section).to_bytes()


@pytest.mark.parametrize(("name", "rounds"), [("search_request", 300), ("order", 150)])
def test_hostile_model_files_are_rejected_or_stay_safe(
    workload_dicts: dict[str, Dictionary], name: str, rounds: int
) -> None:
    rng = random.Random(5)
    d = workload_dicts[name]
    assert d.model is not None
    doc = json.loads(zstandard.ZstdDecompressor().decompress(d.model))
    msgs = generate(name, 20, seed=3)
    poison = [None, -1, 0, 2**70, -(2**80), "x", "", [], {}, 1.5, True, [1, 2], {"kind": "raw"}, "object"]
    rejected = loaded = 0
    for _ in range(rounds):
        try:
            hostile = Codec(Dictionary.from_bytes(_mutated_model(d, doc, poison, rng)))
        except InvalidDictionary:
            rejected += 1
            continue
        loaded += 1
        for m in msgs[:3]:
            try:
                hostile.decode(hostile.encode(m))
            except ZerocError:
                pass
        for _ in range(20):
            try:
                hostile.decode(b"\x0c" + rng.randbytes(rng.randint(0, 16)))
            except ZerocError:
                pass
    print(f"hostile {name} model files: {rejected} rejected, {loaded} loaded and stayed safe")
    assert rejected > rounds // 3
    # A section whose zstd header declares a terabyte is refused before anything is allocated.
    forged = d.model[:4] + bytes([0xE0]) + (2**40).to_bytes(8, "little") + d.model[6:]
    with pytest.raises(InvalidDictionary, match="declares"):
        Dictionary.from_bytes(
            Dictionary(d.content, d.serialization, d.codec, d.schema, model=forged).to_bytes()
        )
    with pytest.raises(InvalidDictionary, match="does not decompress"):
        Dictionary.from_bytes(
            Dictionary(d.content, d.serialization, d.codec, d.schema, model=b"junk").to_bytes()
        )


def test_newer_nodes_need_newer_model_formats(workload_dicts: dict[str, Dictionary]) -> None:
    """Older readers would code newer nodes by older rules: sure nodes appear from format 2 and
    magnitudes from format 3 (the Order model has both: prices of new products by their
    magnitude), and a document that claims an older format for them is refused. New models are
    format 6 (the range coder), or 7 where they have chars nodes; one read as format 3 is written
    back as format 3, one read as format 5 as format 5."""
    d = workload_dicts["order"]
    assert d.model is not None
    doc = json.loads(zstandard.ZstdDecompressor().decompress(d.model))
    assert doc["format"] == (7 if '"kind": "chars"' in json.dumps(doc) else 6)

    def unspelt(node: object) -> object:  # the model without its chars nodes: format 6's nodes
        if isinstance(node, dict):
            return (
                {"kind": "raw"} if node.get("kind") == "chars" else {k: unspelt(v) for k, v in node.items()}
            )
        return [unspelt(v) for v in node] if isinstance(node, list) else node

    doc = {**doc, "format": 6, "root": unspelt(doc["root"])}
    text = json.dumps(doc)
    assert '"sure": true' in text and '"kind": "magnitude"' in text
    from zeroc.learned._model import Model

    legacy = Model.from_bytes(zstandard.ZstdCompressor().compress(json.dumps({**doc, "format": 3}).encode()))
    assert not legacy.blocks
    assert json.loads(zstandard.ZstdDecompressor().decompress(legacy.to_bytes()))["format"] == 3
    blocks = Model.from_bytes(zstandard.ZstdCompressor().compress(json.dumps({**doc, "format": 5}).encode()))
    assert blocks.blocks
    assert json.loads(zstandard.ZstdDecompressor().decompress(blocks.to_bytes()))["format"] == 5

    def load(document: object) -> Dictionary:
        section = zstandard.ZstdCompressor().compress(json.dumps(document).encode())
        return Dictionary.from_bytes(
            Dictionary(d.content, d.serialization, d.codec, d.schema, model=section).to_bytes()
        )

    with pytest.raises(InvalidDictionary, match=r"from format [23] on"):
        load({**doc, "format": 1})
    with pytest.raises(InvalidDictionary, match="magnitude appears from format 3 on"):
        load({**doc, "format": 2})
    with pytest.raises(InvalidDictionary, match="not supported"):
        load({**doc, "format": 9})
    # Format 4: maps, and objects whose other key orders go on to another object node.
    raw, count = {"kind": "raw"}, {"kind": "int_range", "lo": 0, "span": 9, "esc": 1, "hits": 9}
    mapped = {"kind": "map", "count": count, "key": raw, "value": raw, "esc": 1, "hits": 9}
    chained = {"kind": "object", "keys": ["a"], "children": [raw], "esc": 2, "hits": 8, "other": mapped}
    for node in (mapped, chained):
        with pytest.raises(InvalidDictionary, match="appears from format 4 on"):
            load({**doc, "format": 3, "root": node})
        load({**doc, "format": 4, "root": node})
        load({**doc, "root": node})
    # Format 7: chars, alone or as a words vocabulary's fallback.
    table = {"esc": 1, "symbols": [97, 256], "counts": [3, 1]}
    chars = {"kind": "chars", "tables": [{"context": 256, **table}], "base": table, "esc": 1, "hits": 9}
    vocab = {"kind": "categorical", "values": ["ab"], "counts": [4], "esc": 1, "fallback": chars}
    words = {"kind": "words", "tokens": True, "count": count, "words": [vocab], "esc": 1, "hits": 9}
    for node in (chars, words):
        with pytest.raises(
            InvalidDictionary, match=r"appears from format 7 on|escaping to JSON text or chars"
        ):
            load({**doc, "format": 6, "root": node})
        load({**doc, "format": 7, "root": node})
    for bad in (
        {**chars, "tables": [{"context": 257, **table}]},
        {**chars, "tables": [{"context": 256, **table}] * 2},
        {**chars, "base": {**table, "symbols": [256, 97]}},
        {**chars, "base": {**table, "symbols": [97, 257]}},
        {**chars, "base": {"context": 1, **table}},
        {**chars, "tables": [table]},
        {**chars, "base": {**table, "counts": [0, 1]}},
    ):
        with pytest.raises(InvalidDictionary, match="chars"):
            load({**doc, "format": 7, "root": bad})
    with pytest.raises(InvalidDictionary, match="sure"):
        load(json.loads(text.replace('"sure": true', '"sure": 1', 1)))
    hostile = json.loads(text)
    find_node(hostile, "magnitude")["buckets"]["values"][0] = 65  # a 2^64-wide offset would be past the bound
    with pytest.raises(InvalidDictionary, match="magnitude buckets"):
        load(hostile)
    load(doc)  # as written, it loads


def test_a_total_past_float_range_is_not_a_crash(json_orders: Dictionary) -> None:
    """The sum rule multiplies quantity by price: 10**400 * 1.5 overflows a float. That breaks
    the rule (the value goes its other way), it does not raise."""
    msg = generate("order", 1, seed=8)[0]
    msg["items"][0]["quantity"] = 10**400
    for codec in (Codec(json_orders), Codec(json_orders, frame_id="bare")):
        assert same(codec.decode(codec.encode(msg)), msg)


def test_drift_ratio_tells_when_traffic_moves(workload_dicts: dict[str, Dictionary]) -> None:
    d = workload_dicts["product_view"]
    same_traffic, moved = Codec(d), Codec(d)
    for m in generate("product_view", 500, seed=21):
        same_traffic.encode(m)
        m["referrer"] = f"ads-{m['user_id'] % 97}.example"  # referrers never seen in training
        m["timestamp"] += 90 * 24 * 3600  # a quarter later: past the learned range
        moved.encode(m)
    steady, drifted = same_traffic.drift(), moved.drift()
    print(f"drift: same traffic {steady}, moved {drifted}")
    assert steady["messages"] == 500 and 0.85 <= steady["ratio"] <= 1.15
    assert drifted["ratio"] > 1.5 and drifted["off_common_path"] > 0.9
    assert Codec().drift() == {}


def test_drift_counts_what_frames_coded_in_c(json_orders: Dictionary) -> None:
    """Frames made in one C call are counted there (Program.seen, bits, misses): drift() reads
    the same figures as if Python had counted each payload and each value off the common path."""
    codec = Codec(json_orders, frame_id="bare")  # payloads as they are: no head, no recheck
    model = codec._encode_model
    assert model is not None and model._frame is not None  # the C path (built here)
    values: list[dict[str, object]] = generate("order", 200, seed=31)
    for v in values[::3]:
        v["status"] = "lost in the mail"  # a value the model has not seen: off the common path
    payloads = [codec.encode(v) for v in values]
    off = sum(model._fast_encode(v) is None for v in values)
    assert 0 < off < len(values)
    assert (model.seen, model.bits, model.misses) == (200, 8 * sum(map(len, payloads)), off)
    drift = codec.drift()
    assert drift["messages"] == 200 and drift["off_common_path"] == round(off / 200, 4)
    codec.encode(7)  # not an order at all: the general rules
    assert (model.seen, model.misses) == (201, off + 1)


def test_bare_frames_drop_exactly_the_tag(workload_dicts: dict[str, Dictionary]) -> None:
    d = workload_dicts["product_view"]
    tagged, bare = Codec(d), Codec(d, frame_id="bare")
    for m in generate("product_view", 50, seed=2):
        assert tagged.encode(m) == b"\x0c" + bare.encode(m)
    with pytest.raises(UsageError, match="streams"):
        bare.encode_stream([m])
    with pytest.raises(UsageError, match="bare frames need"):
        Codec(frame_id="bare")
    stream = tagged.encode_stream(generate("product_view", 5, seed=3))
    assert tagged.decode_stream(stream) == generate("product_view", 5, seed=3)


def test_cli_trains_a_model_and_shows_where_the_bits_go(tmp_path: Path) -> None:
    samples = tmp_path / "views.ndjson"
    samples.write_text("".join(json.dumps(m) + "\n" for m in generate("search_request", 800, seed=4)))
    zeroc_cmd = [sys.executable, "-m", "zeroc"]
    dic = tmp_path / "sr.zcd"
    subprocess.run([*zeroc_cmd, "train", str(samples), "-o", str(dic), "--only", "learned"], check=True)
    out = subprocess.run([*zeroc_cmd, "inspect", str(dic)], check=True, capture_output=True, text=True).stdout
    print(out)
    assert "codec: method=learned" in out and "bits/msg" in out
    assert "$.query" in out and "$.filters[]" in out and "words(" in out


def test_one_model_serves_many_threads_exactly(json_orders: Dictionary) -> None:
    """Rules read earlier fields passed as arguments, never stored on the shared model."""
    from concurrent.futures import ThreadPoolExecutor

    codec = Codec(json_orders)
    msgs = generate("order", 1600, seed=31)
    for i, m in enumerate(msgs):  # off the common path (an unseen street) but through every rule
        m["shipping_address"]["street"] = f"{i} Unseen-{i % 7} Way"

    def round_trip(chunk: list[dict[str, object]]) -> bool:
        return all(codec.decode(codec.encode(m)) == m for m in chunk)

    with ThreadPoolExecutor(8) as pool:
        assert all(pool.map(round_trip, [msgs[i::8] for i in range(8)]))


def test_decoded_values_never_share_the_model_tables() -> None:
    """A categorical of lists or objects hands out copies, also where the generated decoder
    takes several symbols with one division: changing a decoded value changes nothing else."""
    rng = random.Random(4)
    tags = [["a", "b"], ["c"], {"k": [1, 2]}, []]
    samples = [{"tags": rng.choice(tags), "n": rng.randrange(50), "m": rng.randrange(7)} for _ in range(400)]
    codec = Codec(zeroc.train(samples, candidates=LEARNED), frame_id="bare")
    frame = codec.encode({"tags": ["a", "b"], "n": 3, "m": 2})
    first = codec.decode(frame)
    first["tags"].append("changed")
    assert codec.decode(frame) == {"tags": ["a", "b"], "n": 3, "m": 2}


def _random_shape(rng: random.Random, depth: int = 0) -> list[tuple[str, str, object]]:
    """A random message shape: fields of the kinds the learner models (and relations)."""
    kinds = ["cat_str", "cat_int", "range", "decimal", "template", "words", "tags", "null_or"]
    kinds += ["count", "date", "house", "bigid"]  # magnitudes, shapes, templates of width 0
    kinds += ["labels"]  # format 4: maps (and optional keys, and null-or-object, below)
    if depth < 2:
        kinds += ["object", "items", "null_or_object"]
    fields: list[tuple[str, str, object]] = []
    for i in range(rng.randint(1, 6)):
        kind = rng.choice(kinds)
        arg: object = None
        if kind in ("object", "null_or_object"):
            arg = _random_shape(rng, depth + 1)
        elif kind == "items":
            arg = [("id", "cat_int", None), ("qty", "range", None), ("price", "decimal", None)]
        fields.append((f"f{i}", kind, arg))
    if any(k == "cat_str" for _, k, _ in fields):
        source = next(n for n, k, _ in fields if k == "cat_str")
        fields += [("derived", "given", source), ("postal", "prefixed", source)]
    if any(k == "words" for _, k, _ in fields):
        fields.append(("url", "affix", next(n for n, k, _ in fields if k == "words")))
    if any(k == "bigid" for _, k, _ in fields):
        fields.append(("bigid_str", "numeric", next(n for n, k, _ in fields if k == "bigid")))
    items = [n for n, k, _ in fields if k == "items"]
    if items:
        fields.append(("total", "sum", items[0]))
    sources = {arg for _, k, arg in fields if k in ("given", "prefixed", "affix", "numeric", "sum")}
    derived = {"given", "prefixed", "affix", "numeric", "sum"}
    return [  # some fields optional (absent from 30% of messages): chains of key orders
        (f"{n}?" if k not in derived and n not in sources and rng.random() < 0.25 else n, k, arg)
        for n, k, arg in fields
    ]


def _random_value(shape: list[tuple[str, str, object]], rng: random.Random) -> dict[str, object]:
    out: dict[str, object] = {}
    words = ["red", "green", "blue", "big", "small", "new", "old"]
    for name, kind, arg in shape:
        if name.endswith("?") and rng.random() < 0.3:
            continue
        if kind == "cat_str":
            out[name] = rng.choice(
                ["alpha", "beta", "gamma", "delta"] + [f"rare{rng.randrange(30)}"] * (rng.random() < 0.05)
            )
        elif kind == "cat_int":
            out[name] = rng.choice([1, 2, 3, 5, 8, 13, 21]) if rng.random() < 0.9 else rng.randrange(1000)
        elif kind == "range":
            out[name] = rng.randrange(-50, 5000)
        elif kind == "decimal":
            out[name] = round(rng.uniform(0.5, 500), 2)
        elif kind == "template":
            out[name] = f"ID-{rng.randrange(10**6):06d}"
        elif kind == "words":
            sep = "  " if rng.random() < 0.05 else " "  # a text no words model can write
            out[name] = sep.join(rng.choice(words) for _ in range(rng.randint(1, 4)))
        elif kind == "tags":
            out[name] = [rng.choice(words) for _ in range(rng.randint(0, 3))]
        elif kind == "null_or":
            out[name] = None if rng.random() < 0.5 else rng.choice([True, False, "x"])
        elif kind == "count":
            out[name] = int(2 ** rng.uniform(0, 40)) * rng.choice([1, 1, -1])
        elif kind == "date":
            day, month = rng.choice(["Mon", "Tue", "Sun"]), rng.choice(["Jan", "Apr", "Dec"])
            clock = f"{rng.randrange(24):02d}:{rng.randrange(60):02d}:{rng.randrange(60):02d}"
            out[name] = f"{day} {month} {rng.randrange(1, 29):02d} {clock} +0000 20{rng.randrange(7, 15):02d}"
        elif kind == "house":
            out[name] = f"{rng.randint(0, 5000)} {rng.choice(['Oak', 'Elm', 'Main'])} St"
        elif kind == "bigid":
            out[name] = rng.randrange(1 << 40, 1 << 41)
        elif kind == "numeric":
            out[name] = str(out[arg])  # type: ignore[index]
        elif kind == "object":
            out[name] = _random_value(arg, rng)  # type: ignore[arg-type]
        elif kind == "null_or_object":
            out[name] = None if rng.random() < 0.4 else _random_value(arg, rng)  # type: ignore[arg-type]
        elif kind == "labels":
            keys = rng.sample(
                ["env", "team", "tier", "zone", "app", "ver", "os", f"k{rng.randrange(50)}"], rng.randrange(5)
            )
            out[name] = {k: rng.choice(["a", "b", "prod", 3, None]) for k in keys}
        elif kind == "items":
            out[name] = [_random_value(arg, rng) for _ in range(rng.randint(1, 4))]  # type: ignore[arg-type]
        elif kind == "prefixed":
            prefix = {"alpha": "AL-", "beta": "BE-", "gamma": "GA-"}.get(out[arg], "ZZ")  # type: ignore[index]
            out[name] = prefix + f"{rng.randrange(100):02d}"
        elif kind == "affix":
            out[name] = "https://example.org/" + str(out[arg]).replace(" ", "%20") + ".json"
        elif kind == "given":
            out[name] = {"alpha": "A", "beta": "B", "gamma": "C", "delta": "D"}.get(out[arg], "?")  # type: ignore[index]
        elif kind == "sum":
            total = 0
            for it in out[arg]:  # type: ignore[attr-defined]
                total += it["qty"] * it["price"]
            out[name] = round(total, 2) if isinstance(total, float) else total
    return out


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 10**9))
def test_generated_code_round_trips_any_shape(seed: int) -> None:
    """Models of random shapes (every kind the learner knows, nested, with relations): the
    generated common path and the general rules give back every message, seen or new, and
    messages moved off the shape."""
    rng = random.Random(seed)
    shape = _random_shape(rng)
    train = [_random_value(shape, rng) for _ in range(300)]
    try:
        d = zeroc.train(train, candidates=LEARNED)
    except zeroc.TrainingError:  # a shape too small to have 2 KB in 300 messages
        assume(False)
    fresh = [_random_value(shape, rng) for _ in range(100)]
    moved = []
    for m in fresh[:30]:
        m = copy.deepcopy(m)
        if not m:  # every field optional and absent
            continue
        key = rng.choice(list(m))
        m[key] = rng.choice([None, -1, 10**30, "zz", [1], {"a": 1.5}, 0.0, -0.0])
        moved.append(m)
    for codec in (Codec(d), Codec(d, frame_id="bare")):
        for m in train[:50] + fresh + moved:
            assert same(codec.decode(codec.encode(m)), m)
    model = Codec(d, frame_id="bare")._model
    assert model is not None
    assert_same_code(model, train[:50] + fresh + moved, rng)  # native and pure Python: same bytes


def test_texts_with_double_spaces_train_a_loadable_model() -> None:
    """A words vocabulary never learns the empty word a double space would give (the reader
    rejects such a model: training made unloadable dictionaries before)."""
    rng = random.Random(1)
    words = ["red-x", "green-y", "blue-z", "big-q", "small-w"]
    samples = [
        {"t": " ".join(rng.choice(words) for _ in range(3)) + ("  a-b" if i % 20 == 0 else ""), "n": i % 7}
        for i in range(500)
    ]
    d = Dictionary.from_bytes(zeroc.train(samples, candidates=LEARNED).to_bytes())
    assert d.model is not None and "words" in Model.from_bytes(d.model).describe()
    codec = Codec(d)
    assert all(codec.decode(codec.encode(s)) == s for s in samples)


def _section(root: dict[str, object]) -> bytes:
    doc = {"format": 1, "common": 90, "samples": 100, "root": root}
    return zstandard.ZstdCompressor().compress(json.dumps(doc).encode())


def _cat(values: list[object]) -> dict[str, object]:
    return {
        "kind": "categorical",
        "values": values,
        "counts": [1] * len(values),
        "esc": 1,
        "fallback": {"kind": "raw"},
    }


def _nested(depth: int, lengths: list[int]) -> dict[str, object]:
    node: dict[str, object] = _cat([1, 2, 3])
    for _ in range(depth):
        node = {"kind": "array", "lengths": _cat(list(lengths)), "item": node, "esc": 1, "hits": 99}
    return node


def test_models_of_nested_arrays_stay_small_and_bounded() -> None:
    """Nested arrays of a fixed length must not multiply the generated code (16^6 copies of the
    innermost item), and nested loops must not multiply the work a forged payload can ask for:
    the payload's item budget bounds them all."""
    model = Model.from_bytes(_section(_nested(6, [16])))  # loads at once
    value = [[[[[[1] * 16] * 16] * 16] * 16] * 16] * 16
    with pytest.raises(zeroc.LimitExceeded):  # 16^6 items: past the symbol limit, not a hang
        model.encode(value)
    small = Model.from_bytes(_section(_nested(4, list(range(65)))))
    rng = random.Random(3)
    for _ in range(300):
        payload = rng.randbytes(rng.randint(1, 24))
        try:
            out = small.decode(payload)
        except ZerocError:
            continue
        assert len(json.dumps(out)) < 200_000  # at most the budget's 4,096 items


def test_loops_the_model_bounds_are_counted_once_not_per_message() -> None:
    """Counts from a table of at most 16 bound two nested loops to 16 + 16 * 16 items: the
    generated code tests no budget per message. Four levels of counts up to 64 may ask for more
    than the 4,096 items, and their code keeps the test (it starts from what the bounded loops
    may take)."""
    bounded = Model.from_bytes(_section(_nested(2, list(range(17)))))
    assert "budget" not in bounded._fast_decode.__code__.co_varnames
    assert "budget" not in bounded._fast_encode.__code__.co_varnames
    value = [[1] * 16] * 16
    assert bounded.decode(bounded.encode(value)) == value
    rng = random.Random(4)
    for _ in range(300):
        try:
            out = bounded.decode(rng.randbytes(rng.randint(1, 16)))
        except ZerocError:
            continue
        assert len(out) <= 16 and all(len(x) <= 16 for x in out)
    deep = Model.from_bytes(_section(_nested(4, list(range(65)))))
    assert "budget" in deep._fast_decode.__code__.co_varnames
    assert "budget" in deep._fast_encode.__code__.co_varnames


def test_dict_subclasses_learn_and_round_trip() -> None:
    """botocore hands out OrderedDicts: the learner keys them as the dicts they equal (it raised
    TypeError: unhashable type)."""
    from collections import OrderedDict

    samples = [
        OrderedDict(a=i % 5, b=OrderedDict(c="x" * (i % 7), d=[i, OrderedDict(e=1)])) for i in range(200)
    ]
    codec = zeroc.Codec(zeroc.train(samples, candidates=LEARNED))
    for v in samples[:50]:
        assert codec.decode(codec.encode(v)) == v


def test_format_4_models_under_fuzzing() -> None:
    """The format-4 vectors' model (chains of key orders, a null-or-object union, a map): random
    and mutated frames, on both paths, and mutated model documents give only Zeroc's errors;
    what decodes re-encodes to a value equal to itself."""
    vectors = Path(__file__).parent.parent / "spec" / "vectors"
    d = Dictionary.load(vectors / "events-learned.zcd")
    inputs = [v["input"] for v in json.loads((vectors / "learned-4.json").read_text())["valid"]]
    rng = random.Random(23)
    tagged, bare = Codec(d), Codec(d, frame_id="bare")
    seeds = [(c, c.encode(m)) for m in inputs for c in (tagged, bare)]
    for _ in range(3000):
        codec, frame = rng.choice(seeds)
        b = bytearray(frame)
        r = rng.random()
        if r < 0.3:
            b = bytearray(rng.randbytes(rng.randint(0, 48)))
        elif r < 0.6 and b:
            b[rng.randrange(len(b))] ^= 1 << rng.randrange(8)
        elif r < 0.8:
            b = b[: rng.randrange(len(b) + 1)]
        else:
            b += rng.randbytes(rng.randint(1, 3))
        try:
            value = codec.decode(bytes(b))
        except ZerocError:
            continue
        assert same(codec.decode(codec.encode(value)), value)
    assert d.model is not None
    doc = json.loads(zstandard.ZstdDecompressor().decompress(d.model))
    poison = [None, -1, 0, 2**70, "x", [], {}, 1.5, True, {"kind": "raw"}, {"kind": "map"}, "object"]
    rejected = 0
    for _ in range(200):
        try:
            hostile = Codec(Dictionary.from_bytes(_mutated_model(d, doc, poison, rng)))
        except InvalidDictionary:
            rejected += 1
            continue
        for m in inputs:
            try:
                hostile.decode(hostile.encode(m))
                hostile.decode(b"\x0c" + rng.randbytes(rng.randint(0, 16)))
            except ZerocError:
                pass
    assert rejected > 60


def test_format_5_blocks_under_fuzzing() -> None:
    """The format-5 vectors' model codes batches of many blocks. Random, cut, extended and
    bit-flipped frames of one and of many blocks give only Zeroc's errors, and what decodes
    round-trips (a payload off the common path may hold a value that is on it: both decode)."""
    vectors = Path(__file__).parent.parent / "spec" / "vectors"
    d = Dictionary.load(vectors / "readings-learned.zcd")
    inputs = [v["input"] for v in json.loads((vectors / "learned-5.json").read_text())["valid"]]
    rng = random.Random(29)
    tagged, bare = Codec(d), Codec(d, frame_id="bare")
    seeds = [(c, c.encode(m)) for m in inputs for c in (tagged, bare)]
    decoded = 0
    for _ in range(3000):
        codec, frame = rng.choice(seeds)
        b = bytearray(frame)
        r = rng.random()
        if r < 0.2:
            b = bytearray(rng.randbytes(rng.randint(0, 700)))
        elif r < 0.6 and b:
            for _ in range(rng.randint(1, 2)):
                b[rng.randrange(len(b))] ^= 1 << rng.randrange(8)
        elif r < 0.8:
            b = b[: rng.randrange(len(b) + 1)]
        else:
            b += rng.randbytes(rng.randint(1, 3))
        try:
            value = codec.decode(bytes(b))
        except ZerocError:
            continue
        decoded += 1
        assert same(codec.decode(codec.encode(value)), value)
    assert decoded > 0


def test_formats_5_and_6_code_any_size_and_bound_the_work() -> None:
    """Batches from one to thousands of orders round-trip through a format-6 model (the range
    coder) and the same model in format 5 (the walker codes past the common path's one block);
    a payload may not yield more than 4,096 + 16 symbols a byte, and older formats' payloads are
    refused past their longest arithmetic part."""
    from zeroc.learned._coder import BLOCK_BYTES, LEGACY_BYTES, Decoder, Encoder, RangeDecoder, RangeEncoder

    orders = generate("order", 3000, seed=8)
    model = Model.learn([orders[i : i + 1 + i % 9] for i in range(0, 1800, 3)])
    assert model.version >= 6 and not model.blocks
    blocks = Model(model.root, model.common, model.samples, model.side, 5)
    assert blocks.blocks
    for size in (1, 7, 60, 600, 3000):
        batch = orders[:size]
        payload = blocks.encode(batch)
        assert same(blocks.decode(payload), batch)
        assert size < 60 or len(payload) > 2 * BLOCK_BYTES
        ranged = model.encode(batch)
        assert same(model.decode(ranged), batch)
        assert len(ranged) <= len(payload) + 2, (len(ranged), len(payload))  # no blocks to end
    # Symbols that carry almost nothing: more than the payload may hold is refused, both ways.
    enc = Encoder(blocks=True)
    renc = RangeEncoder()
    for _ in range(5000):
        enc.put(0, 1 << 20, (1 << 20) + 1)
        renc.put(0, 1 << 20, (1 << 20) + 1)
    with pytest.raises(zeroc.LimitExceeded):
        enc.finish()
    with pytest.raises(zeroc.LimitExceeded):
        renc.finish()
    dec = Decoder(b"\x00", blocks=True)
    with pytest.raises(zeroc.DecodeError, match="more symbols"):
        for _ in range(5000):
            dec.take(0, 1 << 20, (1 << 20) + 1)
    rdec = RangeDecoder(b"\x00")
    with pytest.raises(zeroc.DecodeError, match="more symbols"):
        for _ in range(5000):
            rdec.take(0, 1 << 20, (1 << 20) + 1)
    with pytest.raises(zeroc.DecodeError, match="more items"):
        RangeDecoder(b"\x00").spend(5000)
    with pytest.raises(zeroc.DecodeError, match="longer than any"):
        Decoder(b"\x01" * (LEGACY_BYTES + 1))


def test_long_legacy_payloads_are_read_a_bounded_window_at_a_time() -> None:
    """Hostile input (../shared/repro, item 1): an Order of the format-2 vectors' model whose
    one text field holds 1 MB of incompressible text decoded in time that grew with the square
    of the payload, as the whole payload was read as one number. The decoder now reads at most
    the longest arithmetic part its format allows; the value still comes back exactly."""
    from zeroc.learned._coder import LEGACY_BYTES, Decoder

    vectors = Path(__file__).parent.parent / "spec" / "vectors"
    codec = Codec(Dictionary.load(vectors / "order-learned.zcd"), frame_id="bare")
    model = codec._model
    assert model is not None and not model.blocks
    order = generate("order", 1, seed=5)[0]
    text = random.Random(3).randbytes(1 << 20).hex()
    huge = {**order, "order_id": text}
    payload = model.encode(huge)
    assert len(payload) > 1_000_000
    dec = Decoder(payload, model.side, blocks=False)
    assert dec.scale.bit_length() - 1 <= 8 * LEGACY_BYTES
    assert codec.decode(payload) == huge


_NESTED_ARRAYS_ZCD = (  # ../shared/repro: a dictionary whose model nests 21 arrays (SyntaxError)
    "5a52434402000000f40000007b22666f726d6174223a322c2273657269616c697a6174696f6e223a226a736f6e222c"
    "22736368656d61223a6e756c6c2c22636f646563223a7b226d6574686f64223a226c6561726e6564222c226c6576"
    "656c223a337d2c22707265666572656e6365223a2273697a65222c2263726561746564223a22222c2273616d706c"
    "6573223a302c2276616c69646174696f6e223a7b7d2c227a65726f635f76657273696f6e223a22222c2273686132"
    "3536223a2233316431323766646366643262306131376233653164623831626265633739393938353764316233383632"
    "346637316635343465366634626539653063666163227d0800000061626364656667688f00000028b52ffd607c0a2d"
    "040082081a18706d1b80a0b8252c16493e1d592000202b9ad267e9ff1b02d3907fbd14a0a95ec7693aa46e59351853"
    "e418e4f7a9661cde631110f9a71ca6cff14c77394e54eb3ea51346b1e323754e9f3f98b55cca37b33b0241fe29d634"
    "7dc721cf706bbc4721dfda1c2397020800663595190583105d1775c0c81d3e31425c80f97ee8789a013ab97ec596f1"
    "8ed78a8b940ae476273b32a916300b6b4adb371e98dc311fc2c5"
)


def _section_5(root: dict[str, object]) -> bytes:
    doc = {"format": 5, "common": 1, "samples": 2, "root": root}
    return zstandard.ZstdCompressor().compress(json.dumps(doc).encode())


def test_models_past_what_their_code_can_nest_or_hold_are_refused_and_never_learned() -> None:
    """Hostile model files (../shared/repro): 21 nested arrays raised SyntaxError (Python nests
    20 blocks at most); 20,000 children of one object took 86 s to load (code generation grew
    with their square); 64 categoricals of 65,536 values took 2.9 GB. Now more than 16 nested
    arrays and words, or more than MAX_ENTRIES table entries, are an InvalidDictionary, wide
    objects load in linear time, and training on data nested that deep gives a model that loads
    (JSON text below the limits)."""
    from zeroc.learned._format import MAX_ENTRIES

    with pytest.raises(InvalidDictionary, match="nests more than 16"):
        Codec(Dictionary.from_bytes(bytes.fromhex(_NESTED_ARRAYS_ZCD)))
    lengths = {"kind": "int_range", "lo": 0, "span": 3, "esc": 1, "hits": 9}
    node: dict[str, object] = {"kind": "raw"}
    for depth in range(1, 18):
        node = {"kind": "array", "lengths": lengths, "item": node, "esc": 1, "hits": 9}
        if depth == 16:
            model = Model.from_bytes(_section_5(node))
            value: object = 7
            for _ in range(16):
                value = [value, value]
            assert model.decode(model.encode(value)) == value
    with pytest.raises(InvalidDictionary, match="nests more than 16"):
        Model.from_bytes(_section_5(node))
    wide = {
        "kind": "object",
        "keys": [f"k{i}" for i in range(20_000)],
        "children": [lengths] * 20_000,
        "esc": 1,
        "hits": 9,
    }
    model = Model.from_bytes(_section_5(wide))
    record = {f"k{i}": i % 3 for i in range(20_000)}
    assert model.decode(model.encode(record)) == record
    per = 1 << 15
    cats = [
        {"kind": "categorical", "values": [f"v{j}.{i}" for i in range(per)], "counts": [1] * per, "esc": 1}
        for j in range(MAX_ENTRIES // per + 1)
    ]
    for c in cats:
        c["fallback"] = {"kind": "raw"}
    many = {
        "kind": "object",
        "keys": [f"c{j}" for j in range(len(cats))],
        "children": cats,
        "esc": 1,
        "hits": 9,
    }
    with pytest.raises(InvalidDictionary, match="table entries"):
        Model.from_bytes(_section_5(many))
    rng = random.Random(1)

    def nest(depth: int, x: object) -> object:
        for i in range(depth):
            x = [x] + [0] * rng.randrange(2) if i % 3 else {"k": x, "n": i if rng.random() < 0.5 else None}
        return x

    samples = [nest(40, i % 3) for i in range(80)]
    codec = Codec(zeroc.train(samples, candidates=LEARNED))
    assert all(codec.decode(codec.encode(s)) == s for s in samples)


def test_long_payloads_are_compared_with_zstd_by_bytes_not_by_count() -> None:
    """A learned payload past 64 bytes is compared with zstd + dictionary while the codec learns
    whether that pays, then for one in 128 of the bytes: a batch of 100 orders as one message is
    compared as rarely as 100 orders would be, and every frame still decodes exactly."""
    orders = generate("order", 4000, seed=11)
    batches = [orders[i : i + 1 + i % 16] for i in range(0, 1600, 4)]
    codec = Codec(zeroc.train(batches, candidates=LEARNED))
    compared: list[int] = []
    recheck = codec._recheck

    class Spy:
        def compress(self, data: bytes) -> tuple[int, bytes]:
            compared.append(len(data))
            return recheck.compress(data)

    codec._recheck = Spy()  # type: ignore[assignment]
    big = [orders[2000 + 100 * k : 2100 + 100 * k] for k in range(20)]
    frames = [codec.encode(b) for b in big[:2] for _ in range(15)]
    size = len(frames[0]) - 1
    assert frames[0][0] & 7 == 4 and size > 1024  # learned, long
    trials = len(compared)
    sent = [len(f) - 1 for f in frames[:trials]]
    assert trials < 32 and sum(sent[:-1]) < 32 << 10 <= sum(sent)  # 32 KiB of payloads end the trials
    frames += [codec.encode(b) for b in big[2:] for _ in range(15)]
    assert len(compared) - trials <= (300 - trials) // 128 + 1  # then one in 128 of the bytes
    before = len(compared)
    small = [orders[3000 + k : 3001 + k % 3] for k in range(900)]
    for b in small:
        codec.encode(b)
    assert len(compared) - before <= 2  # small ones add to the count by their bytes only
    for b, f in zip(big, frames[::15], strict=True):
        assert codec.decode(f) == b
