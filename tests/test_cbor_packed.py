"""Packed CBOR (draft-ietf-cbor-packed-19): the draft's own examples unpack to its originals,
Zeroc's packer round-trips any JSON value and the real corpora, and hostile items (loops,
blow-ups, bad references, mutated bytes) raise only Zeroc's errors."""

from __future__ import annotations

import json
import math
import random
from pathlib import Path
from typing import Any

import cbor2
import pytest
from hypothesis import given, settings

from tests.conftest import DATA, corpus, damaged
from tests.strategies import json_values
from tests.test_json import same
from tests.test_tabular_container import run
from zeroc import DecodeError, LimitExceeded, ZerocError
from zeroc.tabular import pack_cbor, unpack_cbor
from zeroc.tabular._cborpacked import unpack_item

T, S = cbor2.CBORTag, cbor2.CBORSimpleValue
UNDEFINED = cbor2.undefined

STORE = {
    "store": {
        "book": [
            {
                "category": "reference",
                "author": "Nigel Rees",
                "title": "Sayings of the Century",
                "price": 8.95,
            },
            {"category": "fiction", "author": "Evelyn Waugh", "title": "Sword of Honour", "price": 12.99},
            {
                "category": "fiction",
                "author": "Herman Melville",
                "title": "Moby Dick",
                "isbn": "0-553-21311-3",
                "price": 8.95,
            },
            {
                "category": "fiction",
                "author": "J. R. R. Tolkien",
                "title": "The Lord of the Rings",
                "isbn": "0-395-19395-8",
                "price": 22.99,
            },
        ],
        "bicycle": {"color": "red", "price": 19.95},
    }
}
# The draft's figure "item sharing only" (tag 113, simple values as references).
STORE_SHARED = T(
    113,
    [
        ["price", "category", "author", "title", "fiction", 8.95, "isbn"],
        {
            "store": {
                "book": [
                    {S(1): "reference", S(2): "Nigel Rees", S(3): "Sayings of the Century", S(0): S(5)},
                    {S(1): S(4), S(2): "Evelyn Waugh", S(3): "Sword of Honour", S(0): 12.99},
                    {
                        S(1): S(4),
                        S(2): "Herman Melville",
                        S(3): "Moby Dick",
                        S(6): "0-553-21311-3",
                        S(0): S(5),
                    },
                    {
                        S(1): S(4),
                        S(2): "J. R. R. Tolkien",
                        S(3): "The Lord of the Rings",
                        S(6): "0-395-19395-8",
                        S(0): 22.99,
                    },
                ],
                "bicycle": {"color": "red", S(0): 19.95},
            }
        },
    ],
)
# The draft's figure "item sharing and the record function tag": the keys' order differs from
# the original's (maps carry no order in CBOR), so it is compared as a mapping.
STORE_RECORD = T(
    113,
    [
        [T(114, ["category", "author", "title", S(1), "isbn"]), "price", "fiction", 8.95],
        {
            "store": {
                "book": [
                    T(128, ["reference", "Nigel Rees", "Sayings of the Century", S(3)]),
                    T(128, [S(2), "Evelyn Waugh", "Sword of Honour", 12.99]),
                    T(128, [S(2), "Herman Melville", "Moby Dick", S(3), "0-553-21311-3"]),
                    T(128, [S(2), "J. R. R. Tolkien", "The Lord of the Rings", 22.99, "0-395-19395-8"]),
                ],
                "bicycle": {"color": "red", S(1): 19.95},
            }
        },
    ],
)
URLS = ["https://packed.example/foo.html", "coap://packed.example/bar.cbor", "mailto:support@packed.example"]
JOIN_EXAMPLES = [
    T(
        113,
        [
            [T(106, "packed.example")],
            [
                T(128, ["https://", "/foo.html"]),
                T(128, ["coap://", "/bar.cbor"]),
                T(128, ["mailto:support@", ""]),
            ],
        ],
    ),
    T(
        113,
        [
            ["packed.example"],
            [
                T(136, T(105, ["https://", "/foo.html"])),
                T(136, T(105, ["coap://", "/bar.cbor"])),
                T(136, "mailto:support@"),
            ],
        ],
    ),
]
SENML = T(
    113,
    [
        [T(105, ["coaps://[2001:db8::1]/s/", ".senml"])],
        [T(128, "temp-freezer"), T(128, "temp-fridge"), T(128, "temp-ambient")],
    ],
)
RECORDS = [
    {"key0": False, "key1": "value 1", "key2": 2},
    {"key0": True, "key1": "value -1", "key2": -2},
    {"key1": "", "key2": 0},
]
RECORDS_PACKED = [
    T(
        113,
        [
            [T(114, ["key0", "key1", "key2"])],
            [T(128, [False, "value 1", 2]), T(128, [True, "value -1", -2]), T(128, [UNDEFINED, "", 0])],
        ],
    ),
    T(
        113,
        [
            [T(114, ["key1", "key2", "key0"])],
            [T(128, ["value 1", 2, False]), T(128, ["value -1", -2, True]), T(128, ["", 0])],
        ],
    ),
]


def thing(color: str, writable: bool = True, kind: str = "number", event: bool = False) -> dict[str, Any]:
    """One interaction of the draft's second example (a W3C Thing Description)."""
    out: dict[str, Any] = {
        "links": [
            {"href": f"http://192.168.1.103:8445/wot/thing/MyLED/{color}", "mediaType": "application/json"}
        ],
        "outputData": {"valueType": {"type": kind}},
        "name": color,
    }
    if writable:
        out["writable"] = True
    out["@type"] = ["Event" if event else "Property"]
    return out


LED = {
    "name": "MyLED",
    "interactions": [
        thing("rgbValueRed"),
        thing("rgbValueGreen"),
        thing("rgbValueBlue"),
        thing("rgbValueWhite"),
        thing("ledOnOff", kind="boolean"),
        thing("colorTemperatureChanged", writable=False, event=True),
    ],
    "@type": "Lamp",
    "id": "0",
    "base": "http://192.168.1.103:8445/wot/thing",
    "@context": "http://192.168.1.102:8444/wot/w3c-wot-td-context.jsonld",
}


def led_interaction(color: str) -> Any:
    return T(133, {S(2): [{S(3): T(131, color), S(4): S(5)}], S(0): T(132, color)})


# The draft's split-table figure (tag 1113): shared items, arguments built on arguments, a map
# argument as defaults that the rump's map completes, straight references of both kinds.
LED_PACKED = T(
    1113,
    [
        [
            *("name", "@type", "links", "href", "mediaType", "application/json", "outputData"),
            *({"valueType": {"type": "number"}}, ["Property"], "writable", "valueType", "type"),
        ],
        [
            "http://192.168.1.10",
            T(128, "3:8445/wot/thing"),
            T(129, "/MyLED/"),
            T(130, "rgbValue"),
            "rgbValue",
            {S(6): S(7), S(9): True, S(1): S(8)},
        ],
        {
            S(0): "MyLED",
            "interactions": [
                led_interaction("Red"),
                led_interaction("Green"),
                led_interaction("Blue"),
                T(133, {S(2): [{S(3): T(131, "White"), S(4): S(5)}], S(0): "rgbValueWhite"}),
                {
                    S(2): [{S(3): T(130, "ledOnOff"), S(4): S(5)}],
                    S(6): {S(10): {S(11): "boolean"}},
                    S(0): "ledOnOff",
                    S(9): True,
                    S(1): S(8),
                },
                {
                    S(2): [{S(3): T(130, "colorTemperatureChanged"), S(4): S(5)}],
                    S(6): S(7),
                    S(0): "colorTemperatureChanged",
                    S(1): ["Event"],
                },
            ],
            S(1): "Lamp",
            "id": "0",
            "base": T(129, ""),
            "@context": T(128, "2:8444/wot/w3c-wot-td-context.jsonld"),
        },
    ],
)


def sorted_keys(v: Any) -> Any:
    if isinstance(v, dict):
        return {k: sorted_keys(v[k]) for k in sorted(v)}
    if isinstance(v, list):
        return [sorted_keys(x) for x in v]
    return v


def test_the_drafts_examples_unpack_to_their_originals() -> None:
    assert unpack_cbor(cbor2.dumps(STORE_SHARED)) == STORE
    assert sorted_keys(unpack_cbor(cbor2.dumps(STORE_RECORD))) == sorted_keys(STORE)
    for packed in JOIN_EXAMPLES:
        assert unpack_cbor(cbor2.dumps(packed)) == URLS
    assert unpack_cbor(cbor2.dumps(SENML)) == [
        f"coaps://[2001:db8::1]/s/temp-{x}.senml" for x in ("freezer", "fridge", "ambient")
    ]
    for packed in RECORDS_PACKED:
        assert [sorted_keys(r) for r in unpack_cbor(cbor2.dumps(packed))] == [sorted_keys(r) for r in RECORDS]
    back = unpack_cbor(cbor2.dumps(LED_PACKED))
    assert sorted_keys(back) == sorted_keys(LED)


@pytest.mark.parametrize("doc", [STORE, LED, RECORDS], ids=["store", "led", "records"])
def test_zerocs_packing_of_the_drafts_originals_is_exact_and_smaller(doc: Any) -> None:
    packed = pack_cbor(doc)
    assert same(unpack_cbor(packed), doc)
    assert list(unpack_cbor(packed)) == list(doc)  # key order kept
    assert len(packed) < len(cbor2.dumps(doc))


@settings(max_examples=300)
@given(json_values)
def test_any_json_value_round_trips(value: object) -> None:
    assert same(unpack_cbor(pack_cbor(value)), value)


@pytest.mark.parametrize(
    "name", ["apache_builds.json", "github_events.json", "twitter.json", "instruments.json"]
)
def test_real_documents_round_trip_and_shrink(name: str) -> None:
    doc = corpus(name)
    packed = pack_cbor(doc)
    assert same(unpack_cbor(packed), doc)
    assert len(packed) < 0.9 * len(cbor2.dumps(doc))


def test_hostile_items_raise_only_zeroc_errors() -> None:
    loop = T(113, [[S(1), S(0)], S(0)])
    with pytest.raises(DecodeError, match="loop"):
        unpack_item(loop)
    doubling = [[S(i - 1), S(i - 1)] if i else "x" * 64 for i in range(16)]  # 2^15 copies of 64 bytes
    with pytest.raises(LimitExceeded):
        unpack_cbor(cbor2.dumps(T(113, [doubling, S(15)])), max_built=100_000)
    assert len(json.dumps(unpack_cbor(cbor2.dumps(T(113, [doubling[:6], S(5)]))))) > 32 * 64
    for bad in (
        T(113, [[], S(0)]),  # outside the table
        T(113, [["a"], T(129, "b")]),  # argument 1 of 1
        T(113, [[1], T(128, "b")]),  # integer and text: no concatenation
        T(113, [[T(114, ["a"])], T(128, [1, 2])]),  # more values than keys
        T(113, [[T(114, [["k"]])], T(128, [1])]),  # an array as a key
        T(113, [[T(114, ["a", "a"])], T(128, [1, 2])]),  # a key twice
        T(113, [[T(114, [T(106, ["a"])])], T(128, [1])]),  # a function tag as a record's key
        T(6, "x"),
        T(99, 1),  # not Packed CBOR, not JSON
        T(1, 1_600_000_000),  # a date cbor2 decodes: not JSON
        T(113, [["a"], {S(0): 1, "b": UNDEFINED}]),  # undefined left over
        b"bytes",
    ):
        with pytest.raises(DecodeError):
            unpack_cbor(cbor2.dumps(bad))
    # A map keyed by a function tag, which cbor2 cannot hash (found by fuzz/fuzz_zeroc.py).
    with pytest.raises(DecodeError, match="a tag"):
        unpack_cbor(bytes([0xA1, 0xD8, 106, 0x81, 0x61, ord("a"), 0x01]))
    rng = random.Random(9)
    seeds = [pack_cbor(corpus("apache_builds.json")), cbor2.dumps(LED_PACKED), cbor2.dumps(STORE_RECORD)]
    for _ in range(2000):
        try:
            unpack_cbor(damaged(rng, rng.choice(seeds)), max_built=1 << 22)
        except ZerocError:
            pass


def test_what_cbor_cannot_hold_is_an_encode_error_and_sizes_are_cbor2s() -> None:
    from zeroc import EncodeError
    from zeroc.tabular._cborpacked import _size

    with pytest.raises(EncodeError, match="surrogate"):
        pack_cbor([{"a": "\ud800"}, {"a": "x"}])
    for v in (0, 23, 24, -25, 256, 65536, 2**32, -(2**63), 2**64, 2**70, 1.5, "a" * 24, "é" * 200):
        assert _size(v) == len(cbor2.dumps(v)), v
    zeros = [0.0, -0.0, 0.0, -0.0, 1.0, 1.0, 1.0]  # shared, each sign kept apart
    signs = [math.copysign(1, x) for x in zeros]
    assert [math.copysign(1, x) for x in unpack_cbor(pack_cbor(zeros))] == signs


def test_cli_packs_to_and_from_packed_cbor(tmp_path: Path) -> None:
    """`zeroc pack --format cbor-packed` writes Packed CBOR; `unpack` and `pack` read it back."""
    src = DATA / "json" / "github_events.json"
    doc = json.loads(src.read_bytes())
    run("pack", str(src), "--format", "cbor-packed", "-o", str(tmp_path / "e.cbor"))
    assert same(unpack_cbor((tmp_path / "e.cbor").read_bytes()), doc)
    run("unpack", str(tmp_path / "e.cbor"), "-o", str(tmp_path / "back.json"))
    assert same(json.loads((tmp_path / "back.json").read_bytes()), doc)
    run("pack", str(tmp_path / "e.cbor"), "-o", str(tmp_path / "e.zct"))
    run("unpack", str(tmp_path / "e.zct"), "-o", str(tmp_path / "again.json"))
    assert same(json.loads((tmp_path / "again.json").read_bytes()), doc)
