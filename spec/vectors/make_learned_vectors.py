"""Write the learned-model golden vectors (spec/LEARNED_MODEL.md). Run once; released vectors are
never edited.

python spec/vectors/make_learned_vectors.py        # writes the sets that do not exist yet

learned.json (model format 1, a SearchRequest model), learned-2.json (model format 2: an Order
model with ``sure`` rules and categoricals) and learned-3.json (model format 3: counts and ids by
``magnitude``, an ``id_str`` as the numeric ``affix`` of its ``id``, a date by its ``shape``, a
suite number of any length by a ``template`` of width 0) and learned-4.json (model format 4:
optional keys as a chain of key orders, a field that is null or an object, and a ``map`` of
labels), learned-5.json (model format 5, the block coder: batches of sensor readings, one
block and many, on and off the common path, with and without a side stream) and learned-6.json
(model format 6, the range coder: tickets with a 50-bit id, a URL made from their key, a date,
a price, a title of known words, labels as a map and free text in the side stream) and
learned-7.json (model format 7, chars: accounts whose usernames, email local parts and names a
vocabulary has not seen are spelt out byte by byte, and a code field coded by chars alone) and
learned-8.json (model format 8: profiles whose optional keys make chains of key orders, at the
root and in a nested object, on the common path).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import zeroc
from zeroc.workloads import generate

HERE = Path(__file__).parent
NAME = "search_request-learned.zcd"


def main() -> None:
    sets = (
        ("learned.json", version_1),
        ("learned-2.json", version_2),
        ("learned-3.json", version_3),
        ("learned-4.json", version_4),
        ("learned-5.json", version_5),
        ("learned-6.json", version_6),
        ("learned-7.json", version_7),
        ("learned-8.json", version_8),
    )
    for out, write in ((HERE / name, fn) for name, fn in sets):
        if out.exists() and "--force" not in sys.argv:
            print(f"{out} exists: released vectors are never edited (add new ones under a new version)")
        else:
            write(out)


def version_1(out: Path) -> None:
    d = zeroc.train(generate("search_request", 1500, seed=44), candidates=[("learned", 19)], size=4096)
    d.save(HERE / NAME)
    (HERE / NAME.replace(".zcd", ".dict")).write_bytes(d.content)
    common = generate("search_request", 3, seed=45)
    off_path = {**common[0], "page": 99}  # an unseen page: the general rules, JSON text "99"
    unseen_key = {**common[0], "session": "b7f3c2"}  # the object escapes whole: zstd does better
    texty = {
        **common[1],
        "query": "the quick brown fox jumps over the lazy dog " * 8,
    }  # side stream compressed
    far = {"not": "a search request", "list": list(range(200))}  # zstd with the dictionary does better

    valid: list[dict[str, Any]] = []
    add = _adder(d, valid)

    first = add("common-path-context", common[0])
    add("common-path-2", common[1])
    add("common-path-short-id", common[2], frame_id="short")
    checked = add("common-path-sha256-checksum", common[2], frame_id="sha256", checksum=True)
    add("bare-payload", common[0], frame_id="bare")
    add("off-path-json-text", off_path)
    add("unseen-key-zstd", unseen_key)
    add("side-stream-compressed", texty)
    add("far-from-the-model-zstd", far)
    invalid = [
        # A learned payload has no redundancy: cut short, it is often another valid message. The
        # checksum (or the transport's) is what catches truncation.
        ("truncated-checksummed", checked[:-1], "ChecksumMismatch"),
        ("padded-payload", first + b"\x00", "DecodeError"),
        ("learned-without-dictionary", b"\x04" + first[1:], "UnsupportedFrame"),
        ("learned-names-unknown-dictionary", b"\x14\x00\x00" + first[1:], "DictionaryMismatch"),
        ("side-stream-past-the-end", b"\x0c\x00\x00\x00\x01", "DecodeError"),
    ]
    _write(out, "spec/LEARNED_MODEL.md, version 1", NAME, d, valid, invalid)


def _adder(d: zeroc.Dictionary, valid: list[dict[str, Any]]) -> Any:
    def add(name: str, value: Any, **codec: Any) -> bytes:
        frame = zeroc.Codec(d, **codec).encode(value)
        valid.append({"name": name, "codec": codec, "input": value, "frame_hex": frame.hex()})
        return frame

    return add


Invalid = list[tuple[str, bytes, str]]


def _refused(d: zeroc.Dictionary, invalid: Invalid) -> None:
    """Check that every invalid frame raises DecodeError with ``d``."""
    codec = zeroc.Codec(d)
    for n, frame, _e in invalid:
        try:
            codec.decode(frame)
        except zeroc.DecodeError:
            continue
        raise AssertionError(f"{n} decodes")


def _write(out: Path, spec: str, name: str, d: zeroc.Dictionary, valid: list[Any], invalid: Invalid) -> None:
    doc = {
        "spec": spec,
        "dictionary": name,
        "identity": d.id,
        "content_sha256": d.sha256.hex(),
        "valid": valid,
        "invalid": [{"name": n, "frame_hex": b.hex(), "error": e} for n, b, e in invalid],
    }
    text = json.dumps(doc, indent=1, ensure_ascii=False)
    try:
        text.encode()
    except UnicodeEncodeError:  # lone surrogates: as JSON escapes
        text = json.dumps(doc, indent=1)
    out.write_text(text + "\n", encoding="utf-8")
    print(f"wrote {out}: {len(valid)} valid, {len(invalid)} invalid")


def version_2(out: Path) -> None:
    from zeroc.learned import Model
    from zeroc.learned._nodes import walk

    name = "order-learned.zcd"
    d = zeroc.train(generate("order", 1500, seed=46), candidates=[("learned", 19)], size=4096)
    assert d.model is not None
    sure = [type(n).__name__ for n in walk(Model.from_bytes(d.model).root) if getattr(n, "sure", False)]
    assert {"SumOf", "Given"} <= set(sure), sure
    d.save(HERE / name)
    (HERE / name.replace(".zcd", ".dict")).write_bytes(d.content)
    common = generate("order", 4, seed=47)
    wrong_total = {**common[0], "total_amount": common[0]["total_amount"] + 1.0}  # a sure rule broken
    address = {**common[1]["shipping_address"]}
    address["country"] = "XX" if address["country"] != "XX" else "YY"
    wrong_country = {**common[1], "shipping_address": address}  # country no longer given by city
    unseen = {**common[2], "items": [{**common[2]["items"][0], "product_id": 999_999}]}  # escapes
    unseen["total_amount"] = round(unseen["items"][0]["quantity"] * unseen["items"][0]["price"], 2)

    valid: list[dict[str, Any]] = []
    add = _adder(d, valid)

    first = add("common-path", common[0])
    add("common-path-bare", common[3], frame_id="bare")
    add("sure-sum-broken", wrong_total)
    add("sure-given-broken", wrong_country)
    add("unseen-product-fallback", unseen)
    invalid = [("padded-payload", first + b"\x00", "DecodeError")]
    _write(out, "spec/LEARNED_MODEL.md, version 2 (model format 2)", name, d, valid, invalid)


def _account(rng: Any) -> dict[str, Any]:
    """A record of counts spread over magnitudes (0, 1, negative, up to 63 bits), its id, the
    date it was created (as Twitter writes dates) and a suite number of one to four digits."""
    uid = rng.randrange(1 << 40, 1 << 41)
    bits = rng.choice([0, 1, 2, 5, 9, 13, 17, 20, 24, 31, 40, 63])
    count = rng.randrange(1 << bits) if bits else 0
    day, month = (
        rng.choice("Mon Tue Wed Thu Fri Sat Sun".split()),
        rng.choice("Jan Feb Mar Apr May Jun".split()),
    )
    clock = f"{rng.randrange(24):02d}:{rng.randrange(60):02d}:00"
    created = f"{day} {month} {rng.randrange(1, 29):02d} {clock} +0000 20{rng.randrange(7, 15):02d}"
    return {
        "id": uid,
        "id_str": str(uid),
        "followers": count,
        "delta": -int(2 ** rng.uniform(0, 30)),
        "created": created,
        "suite": f"Suite {rng.randrange(1, 10 ** rng.randrange(1, 5))}",
    }


def version_3(out: Path) -> None:
    import random

    from zeroc.learned import Model
    from zeroc.learned._nodes import Affix, Magnitude, Shape, Template, walk

    name = "accounts-learned.zcd"
    rng = random.Random(48)
    d = zeroc.train([_account(rng) for _ in range(1500)], candidates=[("learned", 19)], size=4096)
    assert d.model is not None
    nodes = list(walk(Model.from_bytes(d.model).root))
    assert any(isinstance(n, Magnitude) for n in nodes)
    assert any(isinstance(n, Affix) and n.numeric for n in nodes)
    assert any(isinstance(n, Shape) for n in nodes)
    assert any(isinstance(n, Template) and n.width == 0 for n in nodes)
    d.save(HERE / name)
    (HERE / name.replace(".zcd", ".dict")).write_bytes(d.content)
    common = [_account(random.Random(49 + i)) for i in range(3)]

    valid: list[dict[str, Any]] = []
    add = _adder(d, valid)

    first = add("common-path", common[0])
    add("common-path-bare", common[1], frame_id="bare")
    add("zero-and-one-bit", {**common[2], "followers": 0, "delta": -1})
    add("bucket-of-63-bits", {**common[2], "followers": (1 << 62) + 12345})
    add("unseen-bucket-json-text", {**common[2], "followers": 1 << 50})
    add("past-64-bits-json-text", {**common[2], "followers": 1 << 64})
    add("id-str-not-the-id", {**common[0], "id_str": "x" + common[0]["id_str"]})
    add("date-of-another-shape", {**common[1], "created": "2014-04-23T07:42:00Z"})
    add("date-with-unseen-fields", {**common[1], "created": "Sun Dec 31 23:59:59 -0800 2099"})
    add("suite-number-unseen", {**common[2], "suite": "Suite 4321"})
    add("suite-number-leading-zero", {**common[2], "suite": "Suite 0042"})
    invalid = [("padded-payload", first + b"\x00", "DecodeError")]
    _write(out, "spec/LEARNED_MODEL.md, version 3 (model format 3)", name, d, valid, invalid)


def _event(rng: Any) -> dict[str, Any]:
    """A service event: optional keys (``user``, ``note``), a ``parent`` that is null or an
    object, and ``labels`` whose keys are data."""
    event: dict[str, Any] = {"id": rng.randrange(10_000, 99_999), "kind": rng.choice(["push", "pull", "tag"])}
    if rng.random() < 0.6:
        event["user"] = rng.choice(["ana", "bo", "cy", "di", "ed"])
    event["parent"] = None if rng.random() < 0.5 else {"id": rng.randrange(100), "kind": "push"}
    labels = rng.sample(
        ["env", "team", "tier", "zone", "app", "ver", "os", "arch", "lang", "cpu"], rng.randrange(4)
    )
    event["labels"] = {k: rng.choice(["a", "b", "c", "prod", "dev"]) for k in labels}
    if rng.random() < 0.2:
        event["note"] = rng.choice(["retry", "manual", "scheduled"])
    return event


def version_4(out: Path) -> None:
    import random

    from zeroc.learned import Model
    from zeroc.learned._nodes import Categorical, Map, Object, walk

    name = "events-learned.zcd"
    rng = random.Random(50)
    d = zeroc.train([_event(rng) for _ in range(1500)], candidates=[("learned", 19)], size=4096)
    assert d.model is not None
    nodes = list(walk(Model.from_bytes(d.model).root))
    assert any(isinstance(n, Object) and isinstance(n.other, Object) for n in nodes)
    assert any(isinstance(n, Map) for n in nodes)
    assert any(isinstance(n, Categorical) and isinstance(n.fallback, Object) for n in nodes)
    d.save(HERE / name)
    (HERE / name.replace(".zcd", ".dict")).write_bytes(d.content)
    shape = Model.from_bytes(d.model).root
    assert isinstance(shape, Object)
    common = {k: v for k, v in _event(random.Random(51)).items()}
    main = dict.fromkeys(shape.keys)
    ordered = {k: common.get(k, {"id": 1, "kind": "push"} if k == "parent" else "ana") for k in main}

    valid: list[dict[str, Any]] = []
    add = _adder(d, valid)

    first = add("most-common-key-order", ordered)
    add("most-common-key-order-bare", {**ordered, "parent": None}, frame_id="bare")
    short = {k: v for k, v in ordered.items() if k not in ("user", "note")}
    add("optional-keys-absent", short)
    add("parent-null-then-object", {**ordered, "parent": {"id": 7, "kind": "push"}})
    add("labels-empty", {**ordered, "labels": {}})
    add("labels-unseen-key", {**ordered, "labels": {"region": "eu", "env": "prod"}})
    add("key-order-never-seen", dict(reversed(list(ordered.items()))))
    add("parent-of-another-type", {**ordered, "parent": [1, 2]})
    invalid = [("padded-payload", first + b"\x00", "DecodeError")]
    _write(out, "spec/LEARNED_MODEL.md, version 4 (model format 4)", name, d, valid, invalid)


def _readings(rng: Any, count: int) -> list[dict[str, Any]]:
    """A batch of sensor readings, as one message."""
    return [
        {
            "sensor": f"s{rng.randrange(8)}",
            "value": rng.randrange(1000),
            "unit": "C",
            "ok": rng.random() < 0.9,
        }
        for _ in range(count)
    ]


def version_5(out: Path) -> None:
    import random

    from zeroc.learned import Model
    from zeroc.learned._coder import BLOCK_BYTES, NO_SIDE, Encoder
    from zeroc.learned._generate import generate as generate_code

    name = "readings-learned.zcd"
    rng = random.Random(52)
    samples = [_readings(rng, rng.randrange(1, 400)) for _ in range(400)]
    d = zeroc.train(samples, candidates=[("learned", 19)], size=4096)
    assert d.model is not None
    model = Model.from_bytes(d.model)
    assert model.blocks
    d.save(HERE / name)
    (HERE / name.replace(".zcd", ".dict")).write_bytes(d.content)
    rng = random.Random(53)
    small, large = _readings(rng, 5), _readings(rng, 300)
    assert model._fast_encode(small) is not None and model._fast_encode(large) is None

    valid: list[dict[str, Any]] = []
    add = _adder(d, valid)
    add("one-block-common-path", small)
    add("one-block-common-path-bare", small, frame_id="bare")
    add("one-block-off-path-side-stream", [*small, {**small[0], "unit": "K"}])
    many = add("common-path-value-of-many-blocks", large)
    add("many-blocks-side-stream", [*large[:150], {**large[0], "unit": "kelvin"}, *large[150:]])
    add("many-blocks-checksum", large, checksum=True)
    batch = add("many-blocks-long-array", _readings(rng, 900))
    assert len(many) > BLOCK_BYTES and len(batch) > 4 * BLOCK_BYTES

    # The same large value on the common path as formats 1-4 code it: one block, which format 5
    # never writes.
    head = Encoder()
    head.put(*NO_SIDE)
    head.put(*model.on)
    legacy, _ = generate_code(model.root, (head.low, head.rng, head.den), model.flag_total, model.common)
    two = legacy(large)
    assert two is not None
    invalid = [
        ("common-path-payload-of-two-blocks", many[:1] + two, "DecodeError"),
        ("block-cut-short", many[:200] + many[201:], "DecodeError"),
        ("block-byte-changed", many[:100] + bytes([many[100] ^ 0x10]) + many[101:], "DecodeError"),
        ("padded-payload", many + b"\x00", "DecodeError"),
    ]
    _refused(d, invalid)
    _write(out, "spec/LEARNED_MODEL.md, version 5 (model format 5)", name, d, valid, invalid)


_WORDS = [
    "build",
    "fails",
    "on",
    "arm",
    "login",
    "slow",
    "after",
    "update",
    "crash",
    "when",
    "saving",
    "page",
]


def _ticket(rng: Any) -> dict[str, Any]:
    """A tracker ticket: a 50-bit id, a key and the URL made from it, a date, a price, a title of
    known words, and optional labels whose keys are data, assignee and free-text note."""
    n = rng.randrange(1, 5000)
    ticket: dict[str, Any] = {
        "id": rng.randrange(1 << 50),
        "key": f"T-{n}",
        "url": f"https://tracker.example/T-{n}",
        "opened": f"2026-11-{rng.randrange(1, 31):02d}T{rng.randrange(24):02d}:{rng.randrange(60):02d}:00Z",
        "price": round(rng.uniform(1, 500), 2),
        "title": " ".join(rng.choice(_WORDS) for _ in range(rng.randrange(1, 6))),
    }
    if rng.random() < 0.3:
        keys = ["os", "arch", "team", "env", "app", "tier", "zone", "lang", "cpu", "ver"]
        ticket["labels"] = {k: rng.choice(["a", "b", "prod"]) for k in rng.sample(keys, rng.randrange(1, 5))}
    if rng.random() < 0.5:
        ticket["assignee"] = rng.choice(["ana", "bo", "cy", None])
    if rng.random() < 0.3:
        ticket["note"] = "".join(rng.choice("abcdefghij klmnop") for _ in range(rng.randrange(5, 40)))
    return ticket


def version_6(out: Path) -> None:
    import random

    from zeroc.learned import Model
    from zeroc.learned._nodes import Affix, Map, Object, Shape, Words, walk

    name = "tickets-learned.zcd"
    rng = random.Random(60)
    d = zeroc.train([_ticket(rng) for _ in range(2000)], candidates=[("learned", 19)], size=4096)
    assert d.model is not None
    model = Model.from_bytes(d.model)
    assert model.version == 6
    nodes = list(walk(model.root))
    for kind in (Affix, Map, Shape, Words):
        assert any(isinstance(n, kind) for n in nodes), kind
    assert any(isinstance(n, Object) and n.other is not None for n in nodes)
    d.save(HERE / name)
    (HERE / name.replace(".zcd", ".dict")).write_bytes(d.content)
    rng = random.Random(61)
    on = next(t for t in (_ticket(rng) for _ in range(200)) if model._fast_encode(t) is not None)
    off = next(t for t in (_ticket(rng) for _ in range(200)) if "note" in t)

    valid: list[dict[str, Any]] = []
    add = _adder(d, valid)
    first = add("common-path", on)
    add("common-path-bare", on, frame_id="bare")
    add("common-path-checksum", on, checksum=True)
    add("id-past-2^40-split-symbols", {**on, "id": (1 << 50) - 1})
    side = add("off-path-side-stream", off)
    add("side-stream-compressed", {**off, "note": "retry after the nightly build " * 12})
    add("url-breaks-its-rule", {**on, "url": "https://elsewhere.example/x"})
    add("labels-unseen-key", {**on, "labels": {"region": "eu"}})
    long = add("long-title-many-bytes", {**on, "title": " ".join(_WORDS * 40)}, frame_id="bare")
    assert len(long) > 200
    invalid = [
        ("padded-payload", first + b"\x00", "DecodeError"),
        ("side-stream-payload-padded", side + b"\x00", "DecodeError"),
        ("slot-past-the-total", first[:1] + b"\xff" * 9, "DecodeError"),
        ("long-payload-cut-short", first[:1] + long[:-1], "DecodeError"),
        (
            "long-payload-byte-changed",
            first[:1] + long[:100] + bytes([long[100] ^ 0x10]) + long[101:],
            "DecodeError",
        ),
    ]
    _refused(d, invalid)
    _write(out, "spec/LEARNED_MODEL.md, version 6 (model format 6)", name, d, valid, invalid)


_GIVEN_NAMES = ["Ana", "Bo", "Cyril", "Dana", "Emil", "Farah", "Greta", "Hugo", "Ines", "Jonas", "Kai"]
_GIVEN_NAMES.append("Lena")
_FAMILY_NAMES = ["Berg", "Costa", "Diaz", "Engel", "Fischer", "Gomez", "Hahn", "Ito", "Jansen", "Kowalski"]
_SYLLABLES = ["an", "bo", "ce", "di", "el", "fu", "ga", "ho", "ir", "jo", "ka", "lu", "mi", "no", "ra", "sa"]


def _signup(rng: Any, n: int) -> dict[str, Any]:
    """A signed-up account (format 7's set): a growing id, a username of syllables and digits,
    an email made of another handle, a name of listed first and last names, and a code of six
    letters and digits."""
    handle = "".join(rng.choice(_SYLLABLES) for _ in range(rng.randrange(2, 5)))
    return {
        "id": 1000 + 3 * n + rng.randrange(3),
        "username": handle + str(rng.randrange(100)),
        "email": "".join(rng.choice(_SYLLABLES) for _ in range(3))
        + "@"
        + rng.choice(["mail.example", "corp.example"]),
        "name": f"{rng.choice(_GIVEN_NAMES)} {rng.choice(_FAMILY_NAMES)}",
        "code": "".join(rng.choice("ABCDEFGHJK0123456789") for _ in range(6)),
    }


def version_7(out: Path) -> None:
    import random

    from zeroc.learned import Model
    from zeroc.learned._coder import RangeEncoder
    from zeroc.learned._nodes import BYTES, Chars, Words, walk

    name = "accounts-chars-learned.zcd"
    rng = random.Random(70)
    d = zeroc.train([_signup(rng, n) for n in range(1500)], candidates=[("learned", 19)], size=4096)
    assert d.model is not None
    model = Model.from_bytes(d.model)
    assert model.version == 7
    nodes = list(walk(model.root))
    assert any(isinstance(n, Words) and any(type(w.fallback) is Chars for w in n.words) for n in nodes)
    d.save(HERE / name)
    (HERE / name.replace(".zcd", ".dict")).write_bytes(d.content)
    rng = random.Random(71)
    later = [_signup(rng, n) for n in range(1500, 1600)]
    on = next(a for a in later if model._fast_encode(a) is not None)

    valid: list[dict[str, Any]] = []
    add = _adder(d, valid)
    first = add("common-path", on)
    add("common-path-bare", on, frame_id="bare")
    add("common-path-checksum", on, checksum=True)
    add("unseen-username-and-name", {**on, "username": "zyxwvq77", "name": "Quentin Zabrowski"})
    add("bytes-no-table-lists", {**on, "code": "~^|{}`", "username": "a\u00e9\u00df\u20ac"})
    add("non-ascii-text", {**on, "name": "\u5c0f\u6797 \u82b1\u5b50", "code": "\U0001f600x"})
    add("lone-surrogate-json-text", {**on, "code": "ab\ud800"})
    add("empty-code", {**on, "code": ""})
    add("many-accounts", later[:40])

    # Invalid payloads: the chars tables coded otherwise than an encoder codes them.
    def forged(put: Any) -> bytes:
        """The general rules' payload of ``on``, walked in Python with chars coded by ``put``."""
        original = Chars.put
        Chars.put = put  # type: ignore[method-assign]
        try:
            enc = RangeEncoder()
            enc.put(*model.off)
            model.root.encode(on, enc)  # type: ignore[arg-type] # the coder's methods
            return enc.finish()
        finally:
            Chars.put = original  # type: ignore[method-assign]

    def spelt(prefix: bytes, escape_first: bool) -> Any:
        """A chars put that codes ``prefix`` before the string's bytes, its first byte through
        the base table even where the first table lists it when ``escape_first``."""

        def put(self: Chars, v: Any, enc: Any, common: bool = False) -> None:
            before = 256
            for i, x in enumerate((*prefix, *v.encode(), 256)):
                table = self.tables.get(before)
                before = x
                if table is not None:
                    hit = table.starts.get(x)
                    if hit is not None and not (escape_first and i == 0):
                        enc.put(hit[0], hit[1], table.total)
                        continue
                    enc.put(0, table.esc, table.total)
                hit = self.base.starts.get(x)
                if hit is not None:
                    enc.put(hit[0], hit[1], self.base.total)
                else:
                    enc.put(0, self.base.esc, self.base.total)
                    enc.put(x, 1, BYTES)

        return put

    invalid = [
        ("padded-payload", first + b"\x00", "DecodeError"),
        ("escape-to-a-listed-byte", first[:1] + forged(spelt(b"", True)), "DecodeError"),
        ("bytes-not-utf-8", first[:1] + forged(spelt(b"\xff", False)), "DecodeError"),
    ]
    _refused(d, invalid)
    _write(out, "spec/LEARNED_MODEL.md, version 7 (model format 7)", name, d, valid, invalid)


_CITIES = ["Lyon", "Porto", "Graz", "Turku", "Gent", "Brno", "Cork", "Bari"]


def _profile(rng: Any, n: int) -> dict[str, Any]:
    """A profile (format 8's set): optional keys at the root (``email``, ``tags``) and in the
    nested ``address`` (``zip``, ``unit``), so that both objects are chains of key orders."""
    profile: dict[str, Any] = {"id": 5000 + n, "name": rng.choice(_GIVEN_NAMES)}
    if rng.random() < 0.6:
        profile["email"] = rng.choice(_SYLLABLES) + rng.choice(_SYLLABLES) + "@mail.example"
    address: dict[str, Any] = {"city": rng.choice(_CITIES)}
    if rng.random() < 0.5:
        address["zip"] = str(rng.randrange(10000, 99999))
    if rng.random() < 0.3:
        address["unit"] = rng.randrange(1, 40)
    profile["address"] = address
    if rng.random() < 0.4:
        profile["tags"] = rng.sample(["a", "b", "c", "d"], rng.randrange(1, 3))
    profile["active"] = rng.random() < 0.8
    return profile


def version_8(out: Path) -> None:
    import random

    from zeroc.learned import Model
    from zeroc.learned._coder import RangeEncoder
    from zeroc.learned._nodes import Object, walk

    name = "profiles-learned.zcd"
    rng = random.Random(80)
    d = zeroc.train([_profile(rng, n) for n in range(1500)], candidates=[("learned", 19)], size=4096)
    assert d.model is not None
    model = Model.from_bytes(d.model)
    assert model.version == 8
    chained = [n for n in walk(model.root) if isinstance(n, Object) and n.chained]
    assert model.root.chained and any(n is not model.root for n in chained)
    d.save(HERE / name)
    (HERE / name.replace(".zcd", ".dict")).write_bytes(d.content)
    rng = random.Random(81)
    later = [_profile(rng, n) for n in range(1500, 1700)]
    first_order = model.root.keys  # type: ignore[attr-defined]
    primary = next(p for p in later if tuple(p) == first_order and model._fast_encode(p) is not None)
    chain = [model.root]
    while isinstance(chain[-1].other, Object):  # type: ignore[attr-defined]
        chain.append(chain[-1].other)  # type: ignore[attr-defined]
    later_order = next(p for p in later if tuple(p) == chain[1].keys and model._fast_encode(p) is not None)
    last = chain[-1]
    last_order = {k: primary.get(k, later_order.get(k, [])) for k in last.keys}
    assert model._fast_encode(last_order) is not None

    valid: list[dict[str, Any]] = []
    add = _adder(d, valid)
    first = add("chain-first-order", primary)
    add("chain-first-order-bare", primary, frame_id="bare")
    add("chain-first-order-checksum", primary, checksum=True)
    add("chain-later-order", later_order)
    add("chain-last-order", last_order)
    nested = {**primary, "address": {"city": "Gent", "unit": 7}}  # the nested chain's third order
    assert all(model._fast_encode(v) is not None for v in (later_order, nested))
    add("nested-chain-other-order", nested)
    unseen = {"active": True, **{k: v for k, v in primary.items() if k != "active"}}
    assert model._fast_encode(unseen) is None
    add("key-order-not-in-the-chain", unseen)
    field_off = {**later_order, "name": 12}
    assert model._fast_encode(field_off) is None
    add("chained-object-field-off-the-path", field_off)
    add("many-profiles", later[:30])

    # Invalid: a common-path payload whose root escapes at every chained key order, then holds
    # junk where the last order's fields should be.
    enc = RangeEncoder()
    enc.put(*model.on)
    for node in chain:
        if node.chained:
            enc.put(0, node.esc, node.total)
    enc.put(0, 1, 2)
    forged = enc.finish()
    invalid = [
        ("padded-payload", first + b"\x00", "DecodeError"),
        ("chain-escaped-to-its-end-then-junk", first[:1] + forged + b"\x00", "DecodeError"),
    ]
    _refused(d, invalid)
    _write(out, "spec/LEARNED_MODEL.md, version 8 (model format 8)", name, d, valid, invalid)


if __name__ == "__main__":
    main()
