"""Shredding JSON values into typed columns and back (a generic, lossless record shredder).

A *column* is a list of JSON values. Each value gets a kind tag (missing, null, bool, int,
float, string, object, array, other); values of one kind go to one typed sub-column:
objects become a nested table (one column per key, plus the key orders seen) or, where their
keys are data (ids, names), a map (a key column and a value column), arrays become
their lengths plus one child column of all their items — so GeoJSON coordinates end up as a
float column and a few length columns. Integers beyond 64 bits and anything deeper than
``MAX_DEPTH`` go through JSON text. Decoding rebuilds the identical values, key order included.

Block layout (spec/TABULAR_FORMAT.md §1): uint32 LE size of the payloads, the payloads the head
lists (in head order), then one zstd frame (or brotli text, outside portable blocks, where it is
smaller) of the JSON head (in its compact form, ``_head``) and the text pool.
"""

from __future__ import annotations

import functools
import json
import urllib.parse
from collections import Counter
from collections.abc import Callable
from itertools import islice
from typing import Any, TypeVar

import numpy as np
import zstandard as zstd

from zeroc._errors import DecodeError, LimitExceeded
from zeroc.tabular import _columns as C
from zeroc.tabular import _head as H

MISSING, NULL, BOOL, INT, FLOAT, STR, OBJ, ARR, OTHER = range(9)
MAX_DEPTH = 48
# Default bound on values per column and on decompressed text per block: a forged count cannot
# make the decoder allocate more than this (a 65k-row chunk of wide rows stays far below).
MAX_VALUES = 1 << 26
# Values one block may build, all columns and levels together (each decoded value counts once,
# checked before a column is built): at most ~300 MB of Python objects, however a forged block
# declares its counts. The writer's chunks (65,536 rows) stay under it up to ~64 values a row.
MAX_BUILT = 1 << 22
# What a malformed head or payload raises on its way through the decoders: a DecodeError then.
_MALFORMED = (
    KeyError,
    TypeError,
    ValueError,
    IndexError,
    AttributeError,
    ArithmeticError,
    RecursionError,
    StopIteration,
    zstd.ZstdError,
)
_MISSING = object()
T = TypeVar("T")


class _Writer:
    def __init__(self) -> None:
        self.parts: list[bytes] = []
        self.pool = C.Pool()
        self.values = bytearray()  # the value stream (spec §1.2), after the pool

    def add(self, head: dict[str, Any], payload: bytes) -> dict[str, Any]:
        """An encoding as the block writes it: its payload after the last, its (and its nested
        encodings') values in the value stream (spec §1.2), both in head order."""
        if payload:
            head["len"] = len(payload)
            self.parts.append(payload)
        C.take_streamed(head, self.values)
        return head


def _kind(v: Any) -> int:
    t = type(v)
    if t is str:
        return STR
    if t is int:
        return INT if C.fits_int64(v) else OTHER
    if t is float:
        return FLOAT
    if t is bool:
        return BOOL
    if v is None:
        return NULL
    if t is dict:
        return OBJ
    if t is list:
        return ARR
    if v is _MISSING:
        return MISSING
    return OTHER


_SIMPLE = {str: STR, float: FLOAT, bool: BOOL, dict: OBJ, list: ARR, type(None): NULL}


def _kinds(values: list[Any]) -> tuple[list[int] | None, set[int]]:
    """Per-value kinds, or (None, {kind}) when the column has one kind (checked in C)."""
    types = set(map(type, values))
    if len(types) == 1:
        t = types.pop()
        if t in _SIMPLE:
            return None, {_SIMPLE[t]}
        if t is int and C.fits_int64(min(values)) and C.fits_int64(max(values)):
            return None, {INT}
    kinds = [_kind(v) for v in values]
    return kinds, set(kinds)


def encode_column(values: list[Any], w: _Writer, depth: int = 0) -> dict[str, Any]:
    known, present = _kinds(values) if values else (None, set())
    if depth > MAX_DEPTH and known is None:
        known = [_kind(v) for v in values]
    kinds = known if known is not None else []
    if depth > MAX_DEPTH:
        kinds = [MISSING if k == MISSING else OTHER for k in kinds]
        present = set(kinds)
    head: dict[str, Any] = {}
    if len(present) > 1:
        head["tags"] = w.add(*C.encode_ints(np.asarray(kinds, dtype=np.int64)))
    parts: dict[str, Any] = {}
    for kind in sorted(present):
        sub = [v for v, k in zip(values, kinds, strict=True) if k == kind] if len(present) > 1 else values
        if kind == BOOL:
            parts["bool"] = w.add(*C.encode_bools(sub))
        elif kind == INT:
            parts["int"] = w.add(*C.encode_ints(np.asarray(sub, dtype=np.int64)))
        elif kind == FLOAT:
            parts["float"] = w.add(*C.encode_floats(sub))
        elif kind == STR:
            parts["str"] = w.add(*C.encode_strings(sub, w.pool))
            w.pool.register(sub, parts["str"])  # string columns are numbered in head order (§1.2)
        elif kind == OBJ:
            parts["obj"] = encode_object(sub, w, depth + 1)
        elif kind == ARR:
            lengths = np.fromiter(map(len, sub), dtype=np.int64, count=len(sub))
            parts["arr"] = {
                "lengths": w.add(*C.encode_ints(lengths)),
                "items": encode_column([x for a in sub for x in a], w, depth + 1),
            }
        elif kind == OTHER:
            parts["other"] = w.add(*C.encode_json(sub, w.pool))
        else:  # MISSING and NULL carry no data beyond their tags
            parts["missing" if kind == MISSING else "null"] = {}
    head["kinds"] = parts
    return head


def encode_object(rows: list[dict[str, Any]], w: _Writer, depth: int = 0) -> dict[str, Any]:
    """Objects as a table (one column per key) or, where their keys are data, as a map (key and
    value columns): whichever ``_map_is_smaller`` expects to cost less, and a map past
    ``MAX_COLUMNS`` keys (spec/TABULAR_FORMAT.md §1.1)."""
    shapes = list(dict.fromkeys(map(tuple, rows)))  # in C, in order of first appearance
    if len(shapes) == 1 and len(shapes[0]) <= MAX_COLUMNS:
        return encode_table(rows, w, depth, shapes)
    if _map_is_smaller(rows, shapes):
        lengths = np.fromiter(map(len, rows), dtype=np.int64, count=len(rows))
        return {  # payloads in head order: lengths first, which a reader needs to read the rest
            "lengths": w.add(*C.encode_ints(lengths)),
            "keys": encode_column([k for row in rows for k in row], w, depth),
            "values": encode_column([v for row in rows for v in row.values()], w, depth),
        }
    return encode_table(rows, w, depth, shapes)


MAX_COLUMNS = 256  # a table's columns at most: past this many distinct keys, objects are a map


def _map_is_smaller(rows: list[dict[str, Any]], shapes: list[tuple[str, ...]]) -> bool:
    """Keys are data when there are many and each is in few objects: a table would then pay a
    column (its head, its own compression) for a handful of values, where a map pays a key code
    an entry. A table keeps like values together in typed columns, which pays wherever keys recur."""
    keys: dict[str, None] = {}
    for shape in shapes:
        keys.update(dict.fromkeys(shape))
    if len(keys) > MAX_COLUMNS:
        return True
    n, entries = len(rows), sum(map(len, rows))
    return min(n, len(keys)) >= MAP_MIN and 2 * len(shapes) > n and entries < MAP_USES * len(keys)


MAP_MIN = 16  # fewer objects or distinct keys than this stay a table (as do keys that mostly
MAP_USES = 4  # come in recurring key sets, or that are used by this many objects on average)


def encode_table(
    rows: list[dict[str, Any]],
    w: _Writer,
    depth: int,
    shapes: list[tuple[str, ...]],
    first: str | None = None,
) -> dict[str, Any]:
    """Objects by column: one column per key, plus the key orders (shapes) seen. With several
    shapes the table is sparse: a key's column holds only the rows that have the key. ``first``:
    the key whose column is written first, named (a document block's rows, spec §2)."""
    if len(shapes) == 1:
        names = list(shapes[0])
        head: dict[str, Any] = {"shapes": [names]}
        columns = {name: [row[name] for row in rows] for name in names}  # 5x faster than zip(*rows)
        full = set(names)
    else:
        index = {shape: i for i, shape in enumerate(shapes)}
        ids = [index[tuple(row)] for row in rows]
        names = list(dict.fromkeys(k for shape in shapes for k in shape))
        head = {
            "shapes": [list(s) for s in shapes],
            "shape_ids": w.add(*C.encode_ints(np.asarray(ids, dtype=np.int64))),
            "sparse": True,
        }
        columns = {name: [] for name in names}
        for row in rows:
            for k, v in row.items():
                columns[k].append(v)
        full = set(names).intersection(*map(set, shapes))
    derived: dict[str, dict[str, Any]] = {}
    sources = {k: v for k, v in columns.items() if k in full}  # a sparse column aligns with no other
    used: set[str] = set()  # the sources of derived columns, which stay stored (spec §1.1)
    for name in sources:
        d = None if name in used else _derive(name, sources, set(derived))
        if d is not None and d["derived"] not in derived:
            derived[name] = d
            used.add(d["derived"])
    order, moved = _key_lists_last([name for name in names if name not in derived], columns)
    if first is not None:
        order.remove(first)
        order.insert(0, first)
        moved.add(first)
    stored: list[Any] = []
    for name in order:
        column = encode_column(columns[name], w, depth)
        stored.append([name, column] if name in moved else column)
    head["columns"] = stored + [[name, d] for name, d in derived.items()]  # bare: the next key
    return head


KEY_LIST_SAMPLE = 256  # strings of a column checked against a later column's keys


def _key_lists_last(names: list[str], columns: dict[str, list[Any]]) -> tuple[list[str], set[str]]:
    """The order to write a table's columns in: as given, except that a column of strings (or
    lists of them) that are mostly keys of the objects of a later column goes right after it,
    where its strings may refer to those keys (``ref``, spec §1.2): JSON Schema's ``required``
    and botocore's list the keys of ``properties`` and ``members`` that come after them. The
    columns moved, which the head names (their keys are not the next ones a reader expects).
    Judged on a sample of each column's values, so that wide numeric tables cost nothing."""
    order, moved = list(names), set()
    keys: dict[str, set[str]] = {}  # a later column's objects' keys, once asked for
    for name in names:
        values = columns[name]
        probe = values[:: max(1, len(values) // KEY_LIST_SAMPLE)]
        sample = [x for v in probe for x in (v if type(v) is list else (v,)) if type(x) is str]
        if not sample or len(sample) * len(values) < C.REF_MIN * len(probe):  # too few strings
            continue
        for later in order[order.index(name) + 1 :]:
            if later not in keys:
                objects = columns[later]
                step = max(1, len(objects) // KEY_LIST_SAMPLE)
                has = any(type(v) is dict for v in objects[::step])
                keys[later] = {k for v in objects if type(v) is dict for k in v} if has else set()
            known = keys[later]
            if len(known) >= C.REF_SOURCE and 10 * sum(x in known for x in sample) >= 9 * len(sample):
                order.remove(name)
                order.insert(order.index(later) + 1, name)
                moved.add(name)
                break
    return order, moved


def _derive(name: str, columns: dict[str, list[Any]], derived_names: set[str]) -> dict[str, Any] | None:
    """``url`` = prefix + ``name`` + suffix for every row (a relation REFERENCE.md found in real
    JSON): store the prefix and suffix, not the column."""
    target = columns[name]
    if not target or type(target[0]) is not str or len(target) < 2:
        return None
    first = target[0]
    for source, values in columns.items():
        if source == name or source in derived_names:
            continue  # sources are stored columns; derived ones are rebuilt after them
        v0 = values[0]
        if type(v0) is not str or not v0 or v0 not in first:
            continue
        i = first.index(v0)
        prefix, suffix = first[:i], first[i + len(v0) :]
        for quoted in (False, True):  # the source as is, or URL-quoted (``a b`` -> ``a%20b``)
            misses = [
                j
                for j, (a, b) in enumerate(zip(values, target, strict=True))
                if type(a) is not str or b != f"{prefix}{_quote(a) if quoted else a}{suffix}"
            ]
            if len(misses) * 20 <= len(target):  # up to 5% exceptions
                d: dict[str, Any] = {"derived": source, "prefix": prefix, "suffix": suffix}
                if quoted:
                    d["quoted"] = True
                if misses:
                    d["except"] = [[j, _plain(target[j])] for j in misses]
                return d
    return None


def _quote(v: str) -> str:
    return urllib.parse.quote(v, safe="/")


def _plain(v: Any) -> Any:
    """An exception value as it goes into the JSON head (missing -> a marker object)."""
    return {"missing": True} if v is _MISSING else {"value": v}


@functools.lru_cache(maxsize=256)
def _row_builder(keys: tuple[str, ...]) -> Any:
    """``lambda _0, _1: {"k0": _0, "k1": _1}`` for these keys: 2x faster than dict(zip()) on
    100k rows (REFERENCE.md). Keys enter the source only as repr() literals."""
    if not all(isinstance(k, str) for k in keys):
        raise DecodeError("table keys must be strings")
    params = ", ".join(f"_{i}" for i in range(len(keys)))
    body = ", ".join(f"{k!r}: _{i}" for i, k in enumerate(keys))
    return eval(f"lambda {params}: {{{body}}}", {"__builtins__": {}})  # noqa: S307


class _Reader:
    def __init__(
        self, data: bytes, pos: int, limit: int, pool: bytes, budget: int = MAX_BUILT, values: bytes = b""
    ) -> None:
        self.values = C.ValueReader(values)
        self.data, self.pos, self.limit, self.pool = data, pos, limit, C.PoolReader(pool, self.values)
        self.budget, self.max_values = budget, budget

    def spend(self, n: int) -> None:
        """Count ``n`` values about to be built against the block's budget."""
        self.budget -= n
        if self.budget < 0:
            raise LimitExceeded(f"the block would build more than {self.max_values} values (max_values)")

    def take(self, head: dict[str, Any]) -> bytes:
        n = head.get("len", 0)
        if not isinstance(n, int) or n < 0 or self.pos + n > len(self.data):
            raise DecodeError("column payload runs past the block")
        out = self.data[self.pos : self.pos + n]
        self.pos += n
        return out


def decode_column(
    head: dict[str, Any], r: _Reader, n: int, allow_missing: bool = False, want: tuple[int, int] | None = None
) -> list[Any]:
    """The column's ``n`` values, or only values ``want`` = (lo, hi) of them: every payload is
    still read and every number decoded, but objects, arrays and rows outside the range are
    not built (a row range of a chunk, ``decode_rows``)."""
    if n > r.limit:
        raise LimitExceeded(f"a column of {n} values exceeds the limit of {r.limit}")
    r.spend(n)
    lo, hi = want if want is not None else (0, n)
    whole = (lo, hi) == (0, n)
    tags = None
    if "tags" in head:
        tags = C.decode_ints(head["tags"], r.take(head["tags"]), n, r.values).tolist()
    parts: dict[int, list[Any]] = {}
    kinds = head.get("kinds")
    if not isinstance(kinds, dict):
        raise DecodeError("column head lacks its kinds")
    for name, kind in (
        ("missing", MISSING),
        ("null", NULL),
        ("bool", BOOL),
        ("int", INT),
        ("float", FLOAT),
        ("str", STR),
        ("obj", OBJ),
        ("arr", ARR),
        ("other", OTHER),
    ):
        if name not in kinds:
            continue
        h = kinds[name]
        m = n if tags is None else tags.count(kind)
        if whole:  # this kind's values a..b: all of them, or those of rows lo..hi
            a, b = 0, m
        else:
            a, b = (lo, hi) if tags is None else (tags[:lo].count(kind), tags[:hi].count(kind))
        part: Any
        if kind == MISSING:
            if not allow_missing:
                raise DecodeError("a missing value outside a table with several shapes")
            part = [_MISSING] * (b - a)
        elif kind == NULL:
            part = [None] * (b - a)
        elif kind == BOOL:
            part = C.decode_bools(h, r.take(h), m, r.values)[a:b].tolist()
        elif kind == INT:
            part = C.decode_ints(h, r.take(h), m, r.values)[a:b].tolist()
        elif kind == FLOAT:
            part = C.decode_floats(h, r.take(h), m, r.values)[a:b].tolist()
        elif kind == STR:
            part = C.decode_strings(h, r.take(h), m, r.pool)
            r.pool.sources.append(part)  # which a later column may refer to (spec §1.2)
            part = part if whole or len(part) != m else part[a:b]
        elif kind == OBJ:
            part = decode_map(h, r, m, (a, b)) if "keys" in h else decode_table(h, r, m, (a, b))
        elif kind == ARR:
            lengths = _lengths(h, r, m, "array")
            total = sum(lengths)
            first, last = (0, total) if whole else (sum(lengths[:a]), sum(lengths[:b]))
            items = decode_column(h["items"], r, total, want=(first, last))
            if last - first != len(items):
                raise DecodeError("array lengths do not match their items")
            part, pos = [], 0
            for ln in lengths if whole else lengths[a:b]:
                part.append(items[pos : pos + ln])
                pos += ln
        else:
            part = C.decode_json(h, r.take(h), m, r.pool)
            part = part if whole or len(part) != m else part[a:b]
        if len(part) != b - a:
            raise DecodeError("column part has the wrong number of values")
        parts[kind] = part
    if tags is None:
        if n == 0 and not parts:
            return []
        if len(parts) != 1:
            raise DecodeError("an untagged column must hold one kind")
        return next(iter(parts.values()))
    iters = {k: iter(v) for k, v in parts.items()}
    try:
        return [next(iters[t]) for t in (tags if whole else tags[lo:hi])]
    except (KeyError, StopIteration):
        raise DecodeError("column tags do not match its parts") from None


def _lengths(head: dict[str, Any], r: _Reader, n: int, what: str) -> list[int]:
    """An array's or a map's ``n`` lengths, none negative."""
    lengths: list[int] = C.decode_ints(head["lengths"], r.take(head["lengths"]), n, r.values).tolist()
    if lengths and min(lengths) < 0:
        raise DecodeError(f"negative {what} length")
    return lengths


def decode_map(
    head: dict[str, Any], r: _Reader, n: int, want: tuple[int, int] | None = None
) -> list[dict[str, Any]]:
    lo, hi = want if want is not None else (0, n)
    lengths = _lengths(head, r, n, "map")
    total = sum(lengths)
    first, last = (0, total) if (lo, hi) == (0, n) else (sum(lengths[:lo]), sum(lengths[:hi]))
    keys = decode_column(head["keys"], r, total, want=(first, last))
    values = decode_column(head["values"], r, total, want=(first, last))
    if len(keys) != last - first or len(values) != last - first:
        raise DecodeError("map lengths do not match their entries")
    if not all(type(k) is str for k in keys):
        raise DecodeError("a map key is not a string")
    ks, vs = iter(keys), iter(values)
    out = [dict(zip(islice(ks, ln), islice(vs, ln), strict=True)) for ln in lengths[lo:hi]]
    if sum(map(len, out)) != last - first:
        raise DecodeError("a key repeated within one map")
    return out


def _named(columns: list[Any], keys: dict[str, int]) -> list[list[Any]]:
    """A table's column entries as [key, head]: a bare head takes the next of ``keys`` (the
    shapes' keys in order of first appearance) that no entry names."""
    names = [e[0] for e in columns if isinstance(e, list) and len(e) == 2 and isinstance(e[0], str)]
    named = set(names)
    if len(named) != len(names):
        raise DecodeError("a table's column entries name a key twice")
    free = iter([k for k in keys if k not in named])
    out = []
    for entry in columns:
        if isinstance(entry, dict):
            key = next(free, None)
            if key is None:
                raise DecodeError("more column entries than the table has keys")
            entry = [key, entry]
        elif not (isinstance(entry, list) and len(entry) == 2 and isinstance(entry[0], str)):
            raise DecodeError("bad column entry")
        out.append(entry)
    return out


def decode_table(
    head: dict[str, Any], r: _Reader, n: int, want: tuple[int, int] | None = None
) -> list[dict[str, Any]]:
    lo, hi = want if want is not None else (0, n)
    shapes = head.get("shapes")
    columns = head.get("columns")
    if not isinstance(shapes, list) or not isinstance(columns, list) or not shapes:
        raise DecodeError("table head lacks shapes or columns")
    if not all(isinstance(s, list) and all(type(k) is str for k in s) for s in shapes):
        raise DecodeError("a table shape is not a list of keys")
    if any(len(set(s)) != len(s) for s in shapes):
        raise DecodeError("a table shape repeats a key")
    ids = None
    counts = dict.fromkeys((k for s in shapes for k in s), n)
    spans = dict.fromkeys(counts, (lo, hi))  # each column's values for rows lo..hi
    sparse = head.get("sparse") is True and len(shapes) > 1
    if len(shapes) > 1:
        ids = C.decode_ints(head["shape_ids"], r.take(head["shape_ids"]), n, r.values).tolist()
        if n and (min(ids) < 0 or max(ids) >= len(shapes)):
            raise DecodeError("shape id out of range")
        if sparse:  # a key's column holds the rows that have it: rows lo..hi are a span of those
            whole = (lo, hi) == (0, n)
            counts, before, within = (dict.fromkeys(counts, 0) for _ in range(3))
            for part, some in (
                (counts, ids),
                (before, [] if whole else ids[:lo]),
                (within, [] if whole else ids[lo:hi]),
            ):
                for s, c in Counter(some).items():
                    for k in shapes[s]:
                        part[k] += c
            spans = (
                {k: (0, c) for k, c in counts.items()}
                if whole
                else {k: (before[k], before[k] + within[k]) for k in counts}
            )
    values: dict[str, list[Any]] = {}
    for entry in _named(columns, counts):
        h = entry[1]
        m = counts.get(entry[0], n)
        a, b = spans.get(entry[0], (lo, hi))
        if isinstance(h, dict) and "derived" in h:
            if sparse and (m != n or counts.get(h["derived"]) != n):
                raise DecodeError(f"column {entry[0]!r} of a sparse table derives from a partial column")
            source = values.get(h["derived"])
            prefix, suffix = h.get("prefix"), h.get("suffix")
            if source is None or not isinstance(prefix, str) or not isinstance(suffix, str):
                raise DecodeError(f"column {entry[0]!r} derives from an unknown column")
            col: list[Any]
            if h.get("quoted"):
                col = [f"{prefix}{_quote(x)}{suffix}" if type(x) is str else None for x in source]
            else:
                col = [f"{prefix}{x}{suffix}" if type(x) is str else None for x in source]
            for item in h.get("except", []):
                i, v = item
                if not (isinstance(i, int) and 0 <= i < m and isinstance(v, dict)):
                    raise DecodeError("bad derived-column exception")
                if a <= i < b:
                    col[i - a] = _MISSING if v.get("missing") else v["value"]
        else:
            col = decode_column(h, r, m, allow_missing=len(shapes) > 1 and not sparse, want=(a, b))
        if len(col) != b - a:
            raise DecodeError(f"column {entry[0]!r} holds {len(col)} values, expected {b - a}")
        values[entry[0]] = col
    if len(shapes) == 1:
        keys = shapes[0]
        cols = [values.get(k) for k in keys]
        if any(c is None for c in cols) or len(values) != len(keys):
            raise DecodeError("table shape does not match its columns")
        if not keys:
            return [{} for _ in range(hi - lo)]
        # One shape: no value can be missing (decode_column refused any), so rows zip straight.
        return list(map(_row_builder(tuple(keys)), *cols))  # type: ignore[arg-type]
    if ids is None:
        raise DecodeError("a table of several shapes lacks its shape ids")
    if any(k not in values for k in counts):
        raise DecodeError("table shape does not match its columns")
    rows = []
    if sparse:  # a row takes the next value of each of its shape's columns (counts match exactly)
        its = {k: iter(v) for k, v in values.items()}
        build = [(shape, [its[k] for k in shape]) for shape in shapes]
        return [
            dict(zip(ks, map(next, cs), strict=True))
            for ks, cs in map(build.__getitem__, ids[lo:hi] if want else ids)
        ]
    for i, s in enumerate(ids[lo:hi]):
        row = {k: values[k][i] for k in shapes[s]}
        if any(v is _MISSING for v in row.values()):
            raise DecodeError("a value is missing where the shape has its key")
        rows.append(row)
    return rows


# -- blocks ---------------------------------------------------------------------------------------
def encode_block(value: Any, *, portable: bool = False, first: str | None = None) -> bytes:
    """One value (usually a list of rows) as a self-contained block; ``portable``: without
    pcodec encodings or a brotli text, for readers that lack them (spec/TABULAR_FORMAT.md §1.2);
    ``first``: a document block's table key (spec §2), where ``value`` is an object of at most
    MAX_COLUMNS keys, whose column goes first so that its rows read as a chunk's do.

    Layout: uint32 LE size of the binary column payloads, the payloads, then one zstd frame (or
    brotli text, the smaller) holding uint32 LE head size, the JSON head (compact, §1.3), the
    text pool and the value stream (§1.2) — one stream, so key names in the head, text in the
    pool and short columns of numbers share a context.
    """
    w = _Writer()
    token = C.PORTABLE.set(portable)
    try:
        if first is None:
            root = encode_column([value], w)
        else:  # as encode_column makes it, the one object a table, the rows' column first
            root = {"kinds": {"obj": encode_table([value], w, 1, [tuple(value)], first)}}
    finally:
        C.PORTABLE.reset(token)
    spelt: dict[str, Any] = {"root": root, "values": len(w.values)} if w.values else {"root": root}
    head = json.dumps(H.compact(spelt), separators=(",", ":")).encode()
    parts = b"".join(w.parts)
    text = C.pack_text(len(head).to_bytes(4, "little") + head + b"".join(w.pool.parts) + w.values, portable)
    return len(parts).to_bytes(4, "little") + parts + text


def decode_block(data: bytes, limit: int = MAX_VALUES, max_values: int = MAX_BUILT) -> Any:
    """Decode a block; ``limit`` bounds a column's values and the decompressed head and text,
    ``max_values`` the values the whole block builds."""
    out = _decoded(data, limit, max_values, lambda head, r: decode_column(head["root"], r, 1))
    if len(out) != 1:
        raise DecodeError("a block holds one value")
    return out[0]


def decode_rows(
    data: bytes,
    lo: int,
    hi: int,
    limit: int = MAX_VALUES,
    max_values: int = MAX_BUILT,
    key: str | None = None,
) -> tuple[int, list[Any]] | None:
    """Rows lo..hi (0 <= lo <= hi) of a block holding rows (a container's chunk), and how many
    it holds: every payload is read, but only those rows (and what they hold) are built. With
    ``key``, of a document block (spec §2) whose first column is the rows', read alone. None
    where the block holds something else."""

    def read(head: dict[str, Any], r: _Reader) -> tuple[int, list[Any]] | None:
        arr = _rows_head(head, key)
        if arr is None:
            return None
        r.spend(1)
        (n,) = _lengths(arr, r, 1, "array")
        return n, decode_column(arr["items"], r, n, want=(min(lo, n), min(hi, n)))

    return _decoded(data, limit, max_values, read, whole=key is None)


def _rows_head(head: dict[str, Any], key: str | None) -> dict[str, Any] | None:
    """The head of a block's array of rows: its root's, or (``key``) that of the first column of
    its root's one object, where that column is ``key``'s and an array (a document block's, spec
    §2); None where the block is not so."""
    root = head["root"]
    if key is not None:
        if not isinstance(root, dict) or "tags" in root or list(root.get("kinds", {})) != ["obj"]:
            return None
        table = root["kinds"]["obj"]  # a table of one shape: no payload before its first column
        one = isinstance(table, dict) and isinstance(table.get("shapes"), list) and len(table["shapes"]) == 1
        columns = table.get("columns") if one else None
        entry = columns[0] if isinstance(columns, list) and columns else None
        if not (isinstance(entry, list) and len(entry) == 2 and entry[0] == key):
            return None
        root = entry[1]
    if not isinstance(root, dict) or "tags" in root or list(root.get("kinds", {})) != ["arr"]:
        return None
    arr: dict[str, Any] = root["kinds"]["arr"]
    return arr


def _decoded(
    data: bytes, limit: int, max_values: int, read: Callable[[dict[str, Any], _Reader], T], whole: bool = True
) -> T:
    """``read(head, reader)`` of a block, malformed heads and payloads as DecodeError, and (where
    ``read`` reads the ``whole`` block) every payload consumed (unless ``read`` gives None: the
    block is not what it reads)."""
    try:
        head, r = _open(data, limit, max_values)
        out = read(head, r)
    except (DecodeError, LimitExceeded):
        raise
    except _MALFORMED as exc:
        raise DecodeError(f"malformed block: {exc}") from exc
    if whole and out is not None and r.pos != len(r.data):
        raise DecodeError(f"{len(r.data) - r.pos} bytes after the block's columns")
    if whole and out is not None and r.values.pos != len(r.values.data):
        raise DecodeError(f"{len(r.values.data) - r.values.pos} bytes after the value stream's columns")
    return out


def _open(data: bytes, limit: int, max_values: int) -> tuple[dict[str, Any], _Reader]:
    if len(data) < 4:
        raise DecodeError("block is shorter than its header")
    p = int.from_bytes(data[:4], "little")
    if 4 + p > len(data):
        raise DecodeError("block payloads run past the block")
    text = C.unpack_text(data[4 + p :], limit)  # DecodeError or LimitExceeded where it is not one
    m = int.from_bytes(text[:4], "little")
    if len(text) < 4 + m:
        raise DecodeError("block head runs past its frame")
    head = H.read(text[4 : 4 + m])
    v = head.get("values", 0)
    if type(v) is not int or not 0 <= v <= len(text) - 4 - m:
        raise DecodeError("a block's value stream is not within its text")
    end = len(text) - v
    return head, _Reader(data[: 4 + p], 4, limit, text[4 + m : end], max_values, text[end:])


def describe_block(data: bytes, limit: int = MAX_VALUES) -> dict[str, Any]:
    """What a block is made of, without decoding its columns: its text's coding (``zstd`` or
    ``brotli``), its payload and text bytes, its head, pool and value stream bytes before
    compression, how many payloads are brotli texts, and how often the head names each
    encoding (nested ones included: a dictionary's codes and table, a decimal's integers): where
    a container's bytes go."""
    try:
        p = int.from_bytes(data[:4], "little")
        text = C.unpack_text(data[4 + p :], limit)
        m = int.from_bytes(text[:4], "little")
        head = H.read(text[4 : 4 + m])
        values = head.get("values", 0)
        if type(values) is not int or not 0 <= values <= len(text) - 4 - m:
            raise DecodeError("a block's value stream is not within its text")
    except (DecodeError, LimitExceeded):
        raise
    except _MALFORMED as exc:
        raise DecodeError(f"malformed block: {exc}") from exc
    encodings: Counter[str] = Counter()
    sizes: list[int] = []  # each payload's size, in head order (the payloads' order)

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            if isinstance(node.get("enc"), str):
                encodings[node["enc"]] += 1
            if isinstance(node.get("len"), int):
                sizes.append(node["len"])
            for v in node.values():
                walk(v)
        elif isinstance(node, list):
            for v in node:
                walk(v)

    walk(head)
    at, brotli_payloads = 4, 0
    for size in sizes:
        brotli_payloads += data[at : at + 1] == C.BROTLI_TEXT
        at += size
    return {
        "bytes": len(data),
        "text": "brotli" if data[4 + p : 5 + p] == C.BROTLI_TEXT else "zstd",
        "text_bytes": len(data) - 4 - p,
        "head_bytes": m,
        "pool_bytes": len(text) - 4 - m - values,
        "value_bytes": values,
        "payload_bytes": p,
        "brotli_payloads": brotli_payloads,
        "encodings": dict(encodings.most_common()),
    }


def decode_columns(
    data: bytes, limit: int = MAX_VALUES, max_values: int = MAX_BUILT, key: str | None = None
) -> dict[str, Any]:
    """A block holding rows (with ``key``, a document block, spec §2), as columns: numpy arrays
    for integer, float and boolean columns, lists otherwise — without building a dict per row.
    Rows of several shapes fall back to building rows first; missing values then read as None.
    Rows that are not all objects are one column, ``value``."""
    try:
        head, r = _open(data, limit, max_values)
        arr = _rows_head(head, key)
        items = arr["items"] if arr is not None else None
        table = items["kinds"].get("obj") if items is not None and "tags" not in items else None
        if arr is None or table is None or len(table.get("shapes", ())) != 1:  # or a map
            rows = decode_block(data, limit, max_values)
            if key is not None:
                rows = rows.get(key) if isinstance(rows, dict) else None
            if not isinstance(rows, list):
                raise DecodeError("block does not hold rows")
            return columns_of(rows)
        r.take(arr["lengths"])
        n = C.decode_ints(arr["lengths"], b"", 1).tolist()[0] if "len" not in arr["lengths"] else None
        if n is None:
            raise DecodeError("row count is not stored inline")
        if n > r.limit:
            raise LimitExceeded(f"a table of {n} rows exceeds the limit of {r.limit}")
        out: dict[str, Any] = {}
        for name, h in _named(table["columns"], dict.fromkeys(table["shapes"][0], n)):
            kinds = h.get("kinds", {})
            if "derived" in h:
                out[name] = _derived(h, out, name)
            elif "tags" not in h and len(kinds) == 1 and next(iter(kinds)) in ("int", "float", "bool"):
                kind, k = next(iter(kinds.items()))
                r.spend(n)
                decode = {"int": C.decode_ints, "float": C.decode_floats, "bool": C.decode_bools}[kind]
                out[name] = decode(k, r.take(k), n, r.values)
            else:
                out[name] = decode_column(h, r, n)
        return {k: out[k] for k in table["shapes"][0]}
    except (DecodeError, LimitExceeded):
        raise
    except _MALFORMED as exc:
        raise DecodeError(f"malformed block: {exc}") from exc


def columns_of(rows: list[Any]) -> dict[str, list[Any]]:
    """Rows already built, as columns of values: a key a row lacks reads as None; rows that are
    not all objects are one column, ``value``."""
    if not all(isinstance(x, dict) for x in rows):
        return {"value": rows}
    names = list(dict.fromkeys(k for row in rows for k in row))
    return {k: [row.get(k) for row in rows] for k in names}


def _derived(h: dict[str, Any], done: dict[str, Any], name: str) -> list[Any]:
    source = done.get(h["derived"])
    if not isinstance(source, list):
        raise DecodeError(f"column {name!r} derives from an unknown column")
    prefix, suffix = h["prefix"], h["suffix"]
    fix = _quote if h.get("quoted") else str
    col: list[Any] = [f"{prefix}{fix(a)}{suffix}" if type(a) is str else None for a in source]
    for i, v in h.get("except", []):
        col[i] = None if v.get("missing") else v["value"]
    return col
