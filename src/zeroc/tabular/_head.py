"""A block head's compact form and back (spec/TABULAR_FORMAT.md §1.3).

The writer builds a head in the form §1.1-1.2 define, where every name is spelt out; ``compact``
rewrites it with one-letter kinds, two-letter names and the commonest encodings bare (an inline
list, a text column's size, a constant, a column in the value stream), and ``expand`` gives the
reader back the spelt-out head, so that the column decoders know one form only. Names map one
to one, in both directions; a compact head naming anything else is refused.
"""

from __future__ import annotations

import json
from typing import Any

from zeroc._errors import DecodeError

KINDS = {
    "missing": "m",
    "null": "n",
    "bool": "b",
    "int": "i",
    "float": "f",
    "str": "s",
    "obj": "o",
    "arr": "a",
    "other": "x",
}
ENCS = {
    "empty": "em",
    "series": "se",
    "pco": "pc",
    "zstd-delta": "zd",
    "zstd-narrow": "zn",
    "decimal": "de",
    "f64-zstd": "fz",
    "f64-pco": "fp",
    "bits": "bi",
    "prefix-int": "pi",
    "dict": "di",
    "text": "te",
    "stamp": "st",
    "datetime": "dt",
    "json": "js",
    "ref": "rf",
    "zstd-bytes": "zb",
}
MEMBERS = {
    "value": "v",
    "start": "s",
    "step": "d",
    "len": "n",
    "first": "f",
    "width": "w",
    "scale": "k",
    "unit": "u",
    "z": "z",
    "ints": "i",
    "codes": "c",
    "table": "t",
    "lengths": "l",
    "text": "tx",
    "size": "sz",
    "count": "ct",
    "format": "fm",
    "prefix": "p",
    "source": "sr",
}
NESTED = frozenset({"ints", "codes", "table", "lengths", "text"})  # members that are encodings
DERIVED = {"derived": "dv", "prefix": "p", "suffix": "s", "quoted": "q", "except": "ex"}
MAX_NESTING = 64  # columns within columns a reader expands (writers nest at most 49)

_KIND_NAMES = {v: k for k, v in KINDS.items()}
_ENC_NAMES = {v: k for k, v in ENCS.items()}
_MEMBER_NAMES = {v: k for k, v in MEMBERS.items()}
_DERIVED_NAMES = {v: k for k, v in DERIVED.items()}


# -- writing ----------------------------------------------------------------------------------


BARE = {"varint": "v", "varint-except": "x"}  # encodings a compact head writes as a bare name
_BARE_NAMES = {v: k for k, v in BARE.items()}


def compact(head: dict[str, Any]) -> dict[str, Any]:
    """``{"root": column, "values": V?}`` -> ``{"r": c-column, "v": V?}``."""
    out = {"r": _compact_column(head["root"])}
    if "values" in head:
        out["v"] = head["values"]
    return out


def _compact_column(h: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if "tags" in h:
        out["t"] = _compact_enc(h["tags"])
    for kind, part in h["kinds"].items():
        if kind in ("missing", "null"):
            c: Any = 0
        elif kind == "obj":
            c = _compact_obj(part)
        elif kind == "arr":
            c = {"l": _compact_enc(part["lengths"]), "i": _compact_column(part["items"])}
        else:
            c = _compact_enc(part)
        out[KINDS[kind]] = c
    return out


def _compact_enc(h: dict[str, Any]) -> Any:
    enc, rest = h["enc"], h.keys() - {"enc"}
    if enc == "inline" and rest == {"values"}:
        return h["values"]
    if enc == "text" and rest == {"size"}:
        return h["size"]
    if enc == "const" and rest == {"value"}:
        return {"c": h["value"]}
    if enc in BARE and not rest:
        return BARE[enc]
    out: dict[str, Any] = {"e": ENCS[enc]}
    for k, v in h.items():
        if k != "enc":
            out[MEMBERS[k]] = _compact_enc(v) if k in NESTED else v
    return out


def _compact_obj(h: dict[str, Any]) -> dict[str, Any]:
    if "keys" in h:  # a map
        return {
            "l": _compact_enc(h["lengths"]),
            "y": _compact_column(h["keys"]),
            "v": _compact_column(h["values"]),
        }
    out: dict[str, Any] = {"h": h["shapes"]}
    if "shape_ids" in h:
        out["d"] = _compact_enc(h["shape_ids"])
    if "sparse" in h:
        out["p"] = h["sparse"]
    out["o"] = [
        _compact_column(e) if isinstance(e, dict) else [e[0], _compact_entry(e[1])] for e in h["columns"]
    ]
    return out


def _compact_entry(h: dict[str, Any]) -> dict[str, Any]:
    if "derived" not in h:
        return _compact_column(h)
    return {DERIVED[k]: v for k, v in h.items() if not (k in ("prefix", "suffix") and v == "")}


# -- reading ----------------------------------------------------------------------------------


def read(text: bytes) -> dict[str, Any]:
    """A block's head from its JSON text, spelt out whichever form it was written in."""
    try:
        head = json.loads(text)
        if not isinstance(head, dict):
            raise DecodeError("a block head is not an object")
        if "r" not in head:
            return head  # spelt out (§1.1); the column decoders check it
        if not head.keys() <= {"r", "v"}:
            raise DecodeError("a compact block head holds more than its root and its value stream's size")
        out = {"root": _expand_column(head["r"], 0)}
        if "v" in head:
            out["values"] = head["v"]
        return out
    except DecodeError:
        raise
    except (ValueError, TypeError, KeyError, AttributeError, IndexError, RecursionError) as exc:
        raise DecodeError(f"malformed block head: {exc}") from None


def _object(c: Any, what: str) -> dict[str, Any]:
    if not isinstance(c, dict):
        raise DecodeError(f"{what} in a compact head is not an object")
    return c


def _expand_column(c: Any, depth: int) -> dict[str, Any]:
    if depth > MAX_NESTING:
        raise DecodeError(f"a compact head nests columns more than {MAX_NESTING} deep")
    out: dict[str, Any] = {}
    kinds: dict[str, Any] = {}
    for k, v in _object(c, "a column").items():
        if k == "t":
            out["tags"] = _expand_enc(v)
            continue
        kind = _KIND_NAMES.get(k)
        if kind is None:
            raise DecodeError(f"a compact column names an unknown kind {k!r}")
        if kind in ("missing", "null"):
            if v != 0 or isinstance(v, bool):
                raise DecodeError(f"a compact column's {kind} part is not 0")
            kinds[kind] = {}
        elif kind == "obj":
            kinds[kind] = _expand_obj(_object(v, "an object part"), depth)
        elif kind == "arr":
            a = _object(v, "an array part")
            if a.keys() != {"l", "i"}:
                raise DecodeError("a compact array part is not its lengths and items")
            kinds[kind] = {"lengths": _expand_enc(a["l"]), "items": _expand_column(a["i"], depth + 1)}
        else:
            kinds[kind] = _expand_enc(v)
    out["kinds"] = kinds
    return out


def _expand_enc(c: Any) -> dict[str, Any]:
    if isinstance(c, list):
        return {"enc": "inline", "values": c}
    if type(c) is int:
        return {"enc": "text", "size": c}
    if type(c) is str and c in _BARE_NAMES:
        return {"enc": _BARE_NAMES[c]}
    h = _object(c, "an encoding")
    if "e" not in h:
        if h.keys() != {"c"}:
            raise DecodeError("a compact constant is not {'c': value}")
        return {"enc": "const", "value": h["c"]}
    enc = _ENC_NAMES.get(h["e"]) if isinstance(h["e"], str) else None
    if enc is None:
        raise DecodeError(f"a compact head names an unknown encoding {h['e']!r}")
    out: dict[str, Any] = {"enc": enc}
    for k, v in h.items():
        if k == "e":
            continue
        name = _MEMBER_NAMES.get(k)
        if name is None:
            raise DecodeError(f"a compact encoding names an unknown member {k!r}")
        out[name] = _expand_enc(v) if name in NESTED else v
    return out


def _expand_obj(c: dict[str, Any], depth: int) -> dict[str, Any]:
    if "y" in c:  # a map
        if c.keys() != {"l", "y", "v"}:
            raise DecodeError("a compact map is not its lengths, keys and values")
        return {
            "lengths": _expand_enc(c["l"]),
            "keys": _expand_column(c["y"], depth + 1),
            "values": _expand_column(c["v"], depth + 1),
        }
    if not c.keys() <= {"h", "d", "p", "o"} or not {"h", "o"} <= c.keys():
        raise DecodeError("a compact table is not its shapes, shape ids, sparse flag and columns")
    out: dict[str, Any] = {"shapes": c["h"]}
    if "d" in c:
        out["shape_ids"] = _expand_enc(c["d"])
    if "p" in c:
        out["sparse"] = c["p"]
    entries = c["o"]
    if not isinstance(entries, list):
        raise DecodeError("a compact table's columns are not a list")
    columns: list[Any] = []
    for e in entries:
        if isinstance(e, list) and len(e) == 2:
            columns.append([e[0], _expand_entry(_object(e[1], "a named column"), depth)])
        else:
            columns.append(_expand_column(e, depth + 1))
    out["columns"] = columns
    return out


def _expand_entry(c: dict[str, Any], depth: int) -> dict[str, Any]:
    if "dv" not in c:
        return _expand_column(c, depth + 1)
    out: dict[str, Any] = {"derived": c["dv"], "prefix": "", "suffix": ""}
    for k, v in c.items():
        name = _DERIVED_NAMES.get(k)
        if name is None:
            raise DecodeError(f"a compact derived column names an unknown member {k!r}")
        out[name] = v
    return out
