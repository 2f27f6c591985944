"""Reading a model's tables (spec/LEARNED_MODEL.md §2): every table is checked before any node
is built from it, so a hostile model file is rejected with InvalidDictionary."""

from __future__ import annotations

from itertools import pairwise
from typing import Any

from zeroc._errors import InvalidDictionary
from zeroc.learned._nodes import (
    BYTES,
    END,
    MAX_BITS,
    MAX_DIGITS,
    MAX_FIELDS,
    RUN,
    Affix,
    Array,
    Categorical,
    Chars,
    CharTable,
    Decimal,
    Given,
    IntRange,
    Magnitude,
    Map,
    Node,
    Object,
    Prefixed,
    Raw,
    Rule,
    Shape,
    SumOf,
    Template,
    Words,
    as_key,
)

# The model document's format (8: format 7, with chained objects on the common path; 7: format 6
# and the chars node; 6: format 4's nodes, coded with the range coder, totals at most 2^40; a
# writer writes 8 only for a model with a chained object, 7 only for one with a chars node);
# formats 1 (no sure nodes, table rules code a symbol even without an entry for the
# source), 2 (no magnitude or shape nodes, no numeric affixes), 3 (no maps, objects escape to
# JSON text only), 4 (the exact coder, at most 4,096 symbols a message) and 5 (the exact coder
# in blocks) are read too.
FORMAT = 8
CHARS_FORMAT = 7  # what a model with a chars node and no chained object is written as
RANGE_FORMAT = 6  # what a model with neither is written as
# Bounds a model file must respect (a hostile file is rejected before any node is built).
MAX_NODES = 50_000
MAX_DEPTH = 64
MAX_LOOPS = 16  # array and words nodes nested one inside another
MAX_TABLE = 1 << 16
# Entries of all tables together (categorical values, rule pairs, object keys): each costs ~600
# bytes once built and generated for, so this bounds a model at ~300 MB. Learned models hold a
# few tens of thousands (the faker users model: 21,541).
MAX_ENTRIES = 1 << 19
MAX_TOTAL = 1 << 40
MAX_SPAN = 1 << 64
MAX_MODEL_BYTES = 64 * 1024 * 1024


class Reader:
    def __init__(self, version: int = FORMAT) -> None:
        self.nodes = 0
        self.entries = 0
        self.version = version

    def spend(self, entries: int) -> None:
        """Count a table's entries against MAX_ENTRIES before anything is built from them."""
        self.entries += entries
        if self.entries > MAX_ENTRIES:
            raise self.fail(f"more than {MAX_ENTRIES} table entries")

    def fail(self, what: str) -> InvalidDictionary:
        return InvalidDictionary(f"learned model: {what}")

    def integer(self, d: dict[str, Any], key: str, lo: int, hi: int) -> int:
        v = d.get(key)
        if type(v) is not int or not lo <= v <= hi:
            raise self.fail(f"{d.get('kind')}.{key} must be an integer in {lo}..{hi}, not {v!r}")
        return v

    def text(self, d: dict[str, Any], key: str, most: int = 4096) -> str:
        v = d.get(key)
        if type(v) is not str or len(v) > most:
            raise self.fail(f"{d.get('kind')}.{key} must be a string of at most {most} characters")
        return v

    def sure(self, d: dict[str, Any]) -> bool:
        v = d.get("sure", False)
        if type(v) is not bool or (v and self.version < 2):
            raise self.fail(f"{d.get('kind')}.sure must be a boolean, and appears from format 2 on")
        return v

    def counts(self, d: dict[str, Any]) -> tuple[int, int]:
        esc, hits = self.integer(d, "esc", 1, MAX_TOTAL), self.integer(d, "hits", 1, MAX_TOTAL)
        if self.version >= RANGE_FORMAT and esc + hits > MAX_TOTAL:  # the range coder's totals
            raise self.fail(f"{d.get('kind')}: esc + hits must be at most {MAX_TOTAL}")
        return esc, hits

    def pairs(self, d: dict[str, Any]) -> list[tuple[Any, Any]]:
        table = d.get("table")
        if type(table) is not list or len(table) > MAX_TABLE:
            raise self.fail(f"{d.get('kind')}.table must be a list of at most {MAX_TABLE} pairs")
        self.spend(len(table))
        out = []
        for p in table:
            if type(p) is not list or len(p) != 2:
                raise self.fail(f"{d.get('kind')}.table holds a non-pair")
            out.append((as_key(p[0]), p[1]))
        return out

    def shape(self, d: dict[str, Any], sub: int) -> Shape:
        if self.version < 3:
            raise self.fail("shape appears from format 3 on")
        literals, kinds, children = d.get("literals"), d.get("kinds"), d.get("children")
        if (
            type(literals) is not list
            or not 3 <= len(literals) <= MAX_FIELDS + 1
            or not all(type(lit) is str and len(lit) <= 4096 and not RUN.search(lit) for lit in literals)
        ):
            raise self.fail(f"shape.literals must be 3..{MAX_FIELDS + 1} strings without letters or digits")
        if (
            type(kinds) is not str
            or len(kinds) != len(literals) - 1
            or set(kinds) - {"a", "9"}
            or any(a == b and not lit for a, b, lit in zip(kinds, kinds[1:], literals[1:-1], strict=False))
        ):
            raise self.fail("shape.kinds must give each field a or 9, unlike a neighbour with no literal")
        if type(children) is not list or len(children) != len(kinds):
            raise self.fail("shape.children must be one node per field")
        return Shape(tuple(literals), kinds, [self.node(c, sub) for c in children], *self.counts(d))

    def char_table(self, d: Any, context: bool) -> tuple[int, CharTable]:
        """A chars TABLE (spec §2, *Characters*): its context (-1 for base) and the table."""
        if type(d) is not dict or ("context" in d) != context:
            raise self.fail("chars tables must be objects, with a context except base")
        symbols, counts = d.get("symbols"), d.get("counts")
        if (
            type(symbols) is not list
            or type(counts) is not list
            or not 0 < len(symbols) == len(counts) <= BYTES
            or not all(type(x) is int and 0 <= x <= END for x in symbols)
            or any(a >= b for a, b in pairwise(symbols))
            or not all(type(c) is int and 0 < c <= MAX_TOTAL for c in counts)
        ):
            raise self.fail("a chars table needs 1..257 increasing symbols 0..256 with counts")
        self.spend(len(symbols))
        d = {**d, "kind": "chars table"}  # what the errors name
        table = CharTable(self.integer(d, "esc", 1, MAX_TOTAL), symbols, counts)
        if table.total > MAX_TOTAL:
            raise self.fail("chars table total too large")
        return (self.integer(d, "context", 0, END) if context else -1), table

    def node(self, d: Any, depth: int, position: int | None = None) -> Node:
        """A node from its data; ``position`` is its index among an object's children (the only
        place where rules that read an earlier field may appear)."""
        self.nodes += 1
        if self.nodes > MAX_NODES or depth > MAX_DEPTH:
            raise self.fail(f"more than {MAX_NODES} nodes or deeper than {MAX_DEPTH}")
        if type(d) is not dict or type(d.get("kind")) is not str:
            raise self.fail("a node is not an object with a kind")
        kind = d["kind"]
        sub = depth + 1
        if kind == "raw":
            return Raw()
        if kind == "categorical":
            values, counts = d.get("values"), d.get("counts")
            if type(values) is not list or type(counts) is not list or len(values) != len(counts):
                raise self.fail("categorical values and counts must be lists of one length")
            if not 0 < len(values) <= MAX_TABLE or not all(
                type(c) is int and 0 < c <= MAX_TOTAL for c in counts
            ):
                raise self.fail(f"categorical needs 1..{MAX_TABLE} values with counts in 1..{MAX_TOTAL}")
            self.spend(len(values))
            if len({as_key(v) for v in values}) != len(values):
                raise self.fail("categorical values repeat")
            node = Categorical(
                values, counts, self.integer(d, "esc", 1, MAX_TOTAL), self.node(d.get("fallback"), sub)
            )
            if node.total > MAX_TOTAL:
                raise self.fail("categorical total too large")
            node.sure = self.sure(d)
            return node
        if kind == "int_range":
            lo = d.get("lo")
            if type(lo) is not int or abs(lo) > MAX_SPAN:
                raise self.fail("int_range.lo must be an integer within ±2^64")
            return IntRange(lo, self.integer(d, "span", 1, MAX_SPAN), *self.counts(d))
        if kind == "magnitude":
            if self.version < 3:
                raise self.fail("magnitude appears from format 3 on")
            buckets = self.node(d.get("buckets"), sub)
            if not (
                isinstance(buckets, Categorical)
                and isinstance(buckets.fallback, Raw)
                and all(type(b) is int and abs(b) <= MAX_BITS for b in buckets.values)
            ):
                raise self.fail(
                    f"magnitude buckets must be a categorical of integers within ±{MAX_BITS} "
                    "escaping to JSON text"
                )
            return Magnitude(buckets, *self.counts(d))
        if kind == "shape":
            return self.shape(d, sub)
        if kind == "decimal":
            return Decimal(self.integer(d, "scale", 0, 6), self.node(d.get("inner"), sub), *self.counts(d))
        if kind == "template":
            return Template(
                self.text(d, "prefix"),
                self.integer(d, "width", 0 if self.version >= 3 else 1, MAX_DIGITS),
                self.node(d.get("inner"), sub),
                *self.counts(d),
            )
        if kind == "chars":
            if self.version < 7:
                raise self.fail("chars appears from format 7 on")
            tables = d.get("tables")
            if type(tables) is not list or len(tables) > BYTES:
                raise self.fail("chars.tables must be a list of at most 257 tables")
            by = dict(self.char_table(t, True) for t in tables)
            if len(by) != len(tables):
                raise self.fail("chars tables repeat a context")
            return Chars(by, self.char_table(d.get("base"), False)[1], *self.counts(d))
        if kind == "words":
            words = d.get("words")
            if type(words) is not list or not 0 < len(words) <= Words.MAX_POSITIONS:
                raise self.fail(f"words needs 1..{Words.MAX_POSITIONS} vocabularies")
            tokens = d.get("tokens")
            vocab = [self.node(w, sub) for w in words]
            if not all(
                isinstance(w, Categorical)
                and (isinstance(w.fallback, Raw) or (isinstance(w.fallback, Chars) and self.version >= 7))
                and all(type(v) is str and v and (tokens or " " not in v) for v in w.values)
                for w in vocab
            ):
                raise self.fail(
                    "a words vocabulary must be a categorical of words escaping to JSON text or chars"
                )
            tokens = d.get("tokens")
            if type(tokens) is not bool:
                raise self.fail("words.tokens must be a boolean")
            esc, hits = self.counts(d)
            return Words(self.node(d.get("count"), sub), vocab, esc, hits, tokens)  # type: ignore[arg-type]
        if kind == "object":
            keys, children = d.get("keys"), d.get("children")
            if type(keys) is not list or type(children) is not list or len(keys) != len(children):
                raise self.fail("object keys and children must be lists of one length")
            if not all(type(k) is str for k in keys) or len(set(keys)) != len(keys) or len(keys) > MAX_TABLE:
                raise self.fail("object keys must be distinct strings")
            self.spend(len(keys))
            kids = [self.node(c, sub, j) for j, c in enumerate(children)]
            other = None
            if "other" in d:
                if self.version < 4:
                    raise self.fail("object.other appears from format 4 on")
                other = self.node(d["other"], sub)
            return Object(tuple(keys), kids, *self.counts(d), other)
        if kind == "map":
            if self.version < 4:
                raise self.fail("map appears from format 4 on")
            return Map(
                self.node(d.get("count"), sub),
                self.node(d.get("key"), sub),
                self.node(d.get("value"), sub),
                *self.counts(d),
            )
        if kind in ("given", "affix", "sum", "prefixed"):
            if position is None:
                raise self.fail(f"{kind} appears outside an object")
            source = self.integer(d, "source", 0, max(position - 1, 0))
            if position == 0:
                raise self.fail(f"{kind} is an object's first field and has no earlier field to read")
            other = self.node(d.get("other"), sub)
            esc, hits = self.counts(d)
            rule: Rule
            if kind == "given":
                rule = Given(source, dict(self.pairs(d)), other, esc, hits)
            elif kind == "affix":
                quoted = d.get("quoted")
                if type(quoted) is not bool:
                    raise self.fail("affix.quoted must be a boolean")
                numeric = d.get("numeric", False)
                if type(numeric) is not bool or (numeric and self.version < 3):
                    raise self.fail("affix.numeric must be a boolean, and appears from format 3 on")
                rule = Affix(source, self.text(d, "prefix"), self.text(d, "suffix"), quoted, other, esc, hits)
                rule.numeric = numeric
            elif kind == "sum":
                a, b, scale = self.text(d, "a"), self.text(d, "b"), self.integer(d, "scale", 0, 6)
                rule = SumOf(source, a, b, scale, other, esc, hits)
            else:
                table = self.pairs(d)
                if not all(type(p) is str for _k, p in table):
                    raise self.fail("prefixed.table must map to strings")
                rule = Prefixed(source, dict(table), self.node(d.get("rest"), sub), other, esc, hits)
            rule.sure = self.sure(d)
            rule.legacy = self.version < 2
            return rule
        if kind == "array":
            return Array(self.node(d.get("lengths"), sub), self.node(d.get("item"), sub), *self.counts(d))
        raise self.fail(f"unknown node kind {kind!r}")
