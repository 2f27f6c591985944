"""Learned field models (spec/LEARNED_MODEL.md): per-field statistics learned from samples,
coded with the exact arithmetic coder in ``_arith``.

A model is a tree of nodes. Every node accepts any JSON value: what its statistics do not cover
goes through an escape symbol to a fallback, and in the end to the value's JSON text in the side
stream, so decoding is always exact. A model is data: ``Model.to_bytes`` writes only tables, and
``Model.from_bytes`` checks every table before building nodes from it.
"""

from __future__ import annotations

import copy
import math
import os
import re
import urllib.parse
from collections import Counter
from collections.abc import Callable, Iterator
from typing import Any

import zstandard as zstd

from zeroc import _json
from zeroc._arith import NO_SIDE, Decoder, Encoder, code_length
from zeroc._errors import DecodeError, InvalidDictionary

MAX_CATEGORIES = 4096  # values a categorical keeps when learning
# An escape expected at most once in this many values makes its node *sure*: on the common path
# it then leaves the path, so messages on it code no symbol for a rule that holds and no escape
# mass for a categorical (spec/LEARNED_MODEL.md §3). Rare escapes cost about the same bits
# either way (they move into the flag), and the common path gets shorter.
SURE = 100
# The model document's format; formats 1 (no sure nodes, table rules code a symbol even without
# an entry for the source) and 2 (no magnitude or shape nodes, no numeric affixes) are read too.
FORMAT = 3
# Bounds a model file must respect (a hostile file is rejected before any node is built).
MAX_NODES = 50_000
MAX_DEPTH = 64
MAX_TABLE = 1 << 16
MAX_TOTAL = 1 << 40
MAX_SPAN = 1 << 64
MAX_MODEL_BYTES = 64 * 1024 * 1024
_TEMPLATE = re.compile(r"([^0-9]*?)([0-9]+)\Z")
_DIGITS = re.compile(r"[0-9]+\Z")
_NUMBER = re.compile(r"(?:0|[1-9][0-9]{0,29})\Z")  # an integer's decimal text


class Meter(Encoder):
    """An encoder that only adds up what the symbols cost, in bits; side bytes cost what
    ``text`` says (their compressed size when the side stream is compressed)."""

    __slots__ = ("bits", "loo", "text")

    def __init__(self, text: Callable[[bytes], float] | None = None, loo: bool = True) -> None:
        super().__init__()
        self.bits = 0.0
        self.text = text
        self.loo = loo  # price categoricals leave-one-out (see Categorical.encode)

    def put(self, start: int, freq: int, total: int) -> None:
        self.bits += math.log2(total / freq)

    def put_bytes(self, data: bytes) -> None:
        self.bits += 8 * len(data) if self.text is None else self.text(data)


class Node:
    """A model of one field: ``encode(value, enc)`` and ``decode(dec)``."""

    kind = ""

    def encode(self, v: Any, enc: Encoder) -> None:
        raise NotImplementedError

    def decode(self, dec: Decoder) -> Any:
        raise NotImplementedError

    def cost(self, values: list[Any], text: Callable[[bytes], float] | None = None) -> float:
        """Bits these values cost under this model (for choosing between candidates)."""
        meter = Meter(text)
        for v in values:
            self.encode(v, meter)
        return meter.bits

    def describe(self) -> str:
        return self.kind

    def to_data(self) -> dict[str, Any]:
        return {"kind": self.kind}


# -- the escape path: any JSON value as its text -------------------------------------------------
def put_raw(v: Any, enc: Encoder) -> None:
    data = _json.dumps(v)
    for op in code_length(len(data)):
        enc.put(*op)
    enc.put_bytes(data)


def get_raw(dec: Decoder) -> Any:
    width = dec.uniform(64)
    n = 0 if width == 0 else 1 if width == 1 else (1 << (width - 1)) + dec.uniform(1 << (width - 1))
    return _json.loads(dec.take_bytes(n))


class Raw(Node):
    """The value's JSON text, in the side stream."""

    kind = "raw"

    def encode(self, v: Any, enc: Encoder) -> None:
        put_raw(v, enc)

    def decode(self, dec: Decoder) -> Any:
        return get_raw(dec)

    def describe(self) -> str:
        return "JSON text"


class Escaping(Node):
    """A node with an escape symbol: slot 0..esc-1 means "not modelled", and the value then goes
    through ``other`` (its JSON text when ``other`` is None)."""

    esc = 1
    total = 1
    other: Node | None = None

    def fits(self, v: Any) -> bool:
        raise NotImplementedError

    def fallback_name(self) -> str:
        return "JSON text" if self.other is None else self.other.describe()

    def put(self, v: Any, enc: Encoder) -> None:
        raise NotImplementedError

    def get(self, dec: Decoder) -> Any:
        raise NotImplementedError

    def encode(self, v: Any, enc: Encoder) -> None:
        if self.fits(v):
            enc.put(self.esc, self.total - self.esc, self.total)
            self.put(v, enc)
        else:
            enc.put(0, self.esc, self.total)
            if self.other is None:
                put_raw(v, enc)
            else:
                self.other.encode(v, enc)

    def decode(self, dec: Decoder) -> Any:
        slot = dec.peek(self.total)
        if slot < self.esc:
            dec.take(0, self.esc, self.total)
            return get_raw(dec) if self.other is None else self.other.decode(dec)
        dec.take(self.esc, self.total - self.esc, self.total)
        return self.get(dec)

    def _counts(self) -> dict[str, Any]:
        return {"esc": self.esc, "hits": self.total - self.esc}


def _key(v: Any) -> Any:
    """A hashable key that tells 1 from 1.0 and True, and 0.0 from -0.0."""
    t = type(v)
    if t is float:
        return ("float", repr(v))
    return (t.__name__, _json.dumps(v) if t is dict or t is list else v)


def _unkey(k: Any) -> Any:
    kind, v = k
    if kind == "float":
        return float(v)
    return _json.loads(v) if kind in ("dict", "list") else v


def _copy(v: Any) -> Any:
    """A decoded value the caller may change without changing the model's tables."""
    return copy.deepcopy(v) if isinstance(v, (dict, list)) else v


class Categorical(Node):
    """Seen values with their counts, plus an escape whose weight is the number of values seen
    once in training (Good-Turing: how often a new value turns up); unseen values go to
    ``fallback`` (an integer range for integers, else JSON text)."""

    kind = "categorical"
    sure = False  # on the common path, an unseen value leaves it (see ``SURE``)

    def __init__(self, values: list[Any], counts: list[int], esc: int, fallback: Node | None = None) -> None:
        self.fallback = fallback or Raw()
        self.values = values
        self.keys = [_key(v) for v in values]
        self.esc = esc
        self.starts: dict[Any, tuple[int, int]] = {}
        pos = esc
        for k, f in zip(self.keys, counts, strict=True):
            self.starts[k] = (pos, f)
            pos += f
        self.total = pos
        self.table = [(s, f, v) for (s, f), v in zip(self.starts.values(), values, strict=True)]
        self.mutable = any(isinstance(v, (dict, list)) for v in values)

    @classmethod
    def learn(cls, values: list[Any], fallback: Node | None = None) -> Categorical:
        counts = Counter(_key(v) for v in values)
        top = counts.most_common(MAX_CATEGORIES)
        esc = max(1, sum(1 for c in counts.values() if c == 1))
        node = cls([_unkey(k) for k, _ in top], [c for _, c in top], esc, fallback)
        node.sure = fallback is not None and not isinstance(fallback, Raw) and esc * SURE <= node.total
        return node

    def encode(self, v: Any, enc: Encoder) -> None:
        hit = self.starts.get(_key(v))
        if type(enc) is Meter and enc.loo and hit is not None:
            # Pricing the training values: leave each one out. A value seen once would have
            # been new, so it costs an escape; scoring training values as seen would always pick
            # the biggest table.
            if hit[1] <= 1:
                hit = None
            else:
                hit = (hit[0], hit[1] - 1)
        if hit is None:
            enc.put(0, self.esc, self.total)
            self.fallback.encode(v, enc)
        else:
            enc.put(hit[0], hit[1], self.total)

    def decode(self, dec: Decoder) -> Any:
        slot = dec.peek(self.total)
        if slot < self.esc:
            dec.take(0, self.esc, self.total)
            return self.fallback.decode(dec)
        lo, hi = 0, len(self.table) - 1
        while lo < hi:  # the symbol whose range holds the slot
            mid = (lo + hi + 1) // 2
            if self.table[mid][0] <= slot:
                lo = mid
            else:
                hi = mid - 1
        start, freq, value = self.table[lo]
        dec.take(start, freq, self.total)
        return _copy(value) if self.mutable else value

    def describe(self) -> str:
        more = "" if isinstance(self.fallback, Raw) else f"; else {self.fallback.describe()}"
        return f"categorical({len(self.values)} values{more})"

    def to_data(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "values": self.values,
            "counts": [f for _s, f, _v in self.table],
            "esc": self.esc,
            "fallback": self.fallback.to_data(),
            **({"sure": True} if self.sure else {}),
        }


class IntRange(Escaping):
    """Integers uniform in [lo, lo + span) (ids, timestamps)."""

    kind = "int_range"

    def __init__(self, lo: int, span: int, esc: int, hits: int) -> None:
        self.lo, self.span = lo, span
        self.esc, self.total = esc, esc + hits

    def fits(self, v: Any) -> bool:
        return type(v) is int and 0 <= v - self.lo < self.span

    def put(self, v: Any, enc: Encoder) -> None:
        enc.put(v - self.lo, 1, self.span)

    def get(self, dec: Decoder) -> Any:
        return self.lo + dec.uniform(self.span)

    def describe(self) -> str:
        return f"int range({self.lo}, +{self.span})"

    def to_data(self) -> dict[str, Any]:
        return {"kind": self.kind, "lo": self.lo, "span": self.span, **self._counts()}


MAX_BITS = 64  # magnitude: integers -2^64 < v < 2^64


def bucket(v: int) -> int:
    """A magnitude's bucket: the bit length, negative for negative integers."""
    return v.bit_length() if v >= 0 else -(-v).bit_length()


class Magnitude(Escaping):
    """Integers by bucketed magnitude: the bucket (bit length and sign) through ``buckets``,
    then the offset inside it, uniform. For counts, sizes and ids whose size repeats but whose
    digits do not (the bucket costs a few bits where a range would cost them all)."""

    kind = "magnitude"

    def __init__(self, buckets: Node, esc: int, hits: int) -> None:
        self.buckets = buckets
        self.esc, self.total = esc, esc + hits

    @classmethod
    def learn(cls, values: list[int]) -> Magnitude:
        return cls(Categorical.learn([bucket(v) for v in values]), 1, len(values))

    def fits(self, v: Any) -> bool:
        return type(v) is int and -(1 << MAX_BITS) < v < 1 << MAX_BITS

    def put(self, v: Any, enc: Encoder) -> None:
        b = bucket(v)
        self.buckets.encode(b, enc)
        if abs(b) >= 2:
            half = 1 << (abs(b) - 1)
            enc.put(abs(v) - half, 1, half)

    def get(self, dec: Decoder) -> Any:
        b = self.buckets.decode(dec)
        if type(b) is not int or abs(b) > MAX_BITS:
            raise DecodeError(f"learned-model payload has magnitude bucket {b!r} (at most ±{MAX_BITS})")
        if abs(b) < 2:
            return b
        half = 1 << (abs(b) - 1)
        v = half + dec.uniform(half)
        return v if b > 0 else -v

    def describe(self) -> str:
        return f"magnitude({self.buckets.describe()})"

    def to_data(self) -> dict[str, Any]:
        return {"kind": self.kind, "buckets": self.buckets.to_data(), **self._counts()}


class Decimal(Escaping):
    """Floats that are integers / 10^scale, coded through an integer model."""

    kind = "decimal"

    def __init__(self, scale: int, inner: Node, esc: int, hits: int) -> None:
        self.scale, self.inner = scale, inner
        self.esc, self.total = esc, esc + hits

    def fits(self, v: Any) -> bool:
        if type(v) is not float or not math.isfinite(v):
            return False
        i = round(v * 10**self.scale)
        return i / 10**self.scale == v and (i != 0 or math.copysign(1.0, v) > 0)

    def put(self, v: Any, enc: Encoder) -> None:
        self.inner.encode(round(v * 10**self.scale), enc)

    def get(self, dec: Decoder) -> Any:
        i = self.inner.decode(dec)
        if type(i) is not int:
            raise DecodeError("decimal field decoded to a non-integer")
        return i / 10**self.scale

    def describe(self) -> str:
        return f"decimal(/10^{self.scale}, {self.inner.describe()})"

    def to_data(self) -> dict[str, Any]:
        return {"kind": self.kind, "scale": self.scale, "inner": self.inner.to_data(), **self._counts()}


MAX_DIGITS = 30  # template digits (and width 0's integers: below 10^30)


class Template(Escaping):
    """Strings prefix + fixed-width ASCII digits (``ORD-0012345``), digits through an integer model;
    width 0 (format 3): prefix + an integer's decimal text, any length (``Suite 7``, ``227``)."""

    kind = "template"

    def __init__(self, prefix: str, width: int, inner: Node, esc: int, hits: int) -> None:
        self.prefix, self.width, self.inner = prefix, width, inner
        self.esc, self.total = esc, esc + hits
        digits = r"[0-9]{" + str(width) + "}" if width else r"(?:0|[1-9][0-9]{0,29})"
        self.pattern = re.compile(re.escape(prefix) + digits + r"\Z")

    def fits(self, v: Any) -> bool:
        return type(v) is str and self.pattern.match(v) is not None

    def put(self, v: Any, enc: Encoder) -> None:
        self.inner.encode(int(v[len(self.prefix) :]), enc)

    def get(self, dec: Decoder) -> Any:
        i = self.inner.decode(dec)
        if type(i) is not int or not 0 <= i < 10 ** (self.width or MAX_DIGITS):
            raise DecodeError("template digits out of range")
        return f"{self.prefix}{i:0{self.width}d}" if self.width else f"{self.prefix}{i}"

    def describe(self) -> str:
        digits = f"{self.width} digits" if self.width else "a number"
        return f"template({self.prefix!r} + {digits}, {self.inner.describe()})"

    def to_data(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "prefix": self.prefix,
            "width": self.width,
            "inner": self.inner.to_data(),
            **self._counts(),
        }


_TOKEN = re.compile(r"[A-Za-z]+|[0-9]+|.", re.DOTALL)
_RUN = re.compile(r"[A-Za-z]+|[0-9]+")
_FIELD = {"a": "([A-Za-z]+)", "9": "([0-9]+)"}
MAX_FIELDS = 32


def shape_of(v: str) -> tuple[tuple[str, ...], str]:
    """(literals, kinds) of a string: its runs of ASCII letters (``a``) and of ASCII digits
    (``9``) are its fields, and what lies between them its literals."""
    literals, kinds, at = [], [], 0
    for m in _RUN.finditer(v):
        literals.append(v[at : m.start()])
        kinds.append("a" if m.group().isalpha() else "9")
        at = m.end()
    literals.append(v[at:])
    return tuple(literals), "".join(kinds)


def _shape_pattern(literals: tuple[str, ...], kinds: str) -> re.Pattern[str]:
    """The strings of a shape, built from its literals and kinds (a model file never supplies a
    pattern). Fields are maximal runs: a literal never holds a letter or digit, and fields with
    an empty literal between them differ in kind (the reader checks both)."""
    pattern = re.escape(literals[0]) + "".join(
        _FIELD[k] + re.escape(lit) for k, lit in zip(kinds, literals[1:], strict=True)
    )
    return re.compile(pattern, re.DOTALL)


class Shape(Escaping):
    """Strings of letter and digit fields between fixed punctuation (dates, times, versions:
    ``Wed Apr 23 07:42:42 +0000 2014``), each field through its own model."""

    kind = "shape"

    def __init__(
        self, literals: tuple[str, ...], kinds: str, children: list[Node], esc: int, hits: int
    ) -> None:
        self.literals, self.kinds, self.children = literals, kinds, children
        self.esc, self.total = esc, esc + hits
        self.pattern = _shape_pattern(literals, kinds)

    @classmethod
    def learn(cls, learner: Learner, values: list[str]) -> Shape | None:
        """The shape most values have, if it has two fields or more and 90% of values have it
        (its fields then have one field each: learning them does not come back here)."""
        shapes = Counter(shape_of(v) for v in values)
        (literals, kinds), count = shapes.most_common(1)[0]
        if not 2 <= len(kinds) <= MAX_FIELDS or count * 10 < len(values) * 9:
            return None
        pattern = _shape_pattern(literals, kinds)
        fields = [m.groups() for v in values if (m := pattern.fullmatch(v)) is not None]
        columns = [list(col) for col in zip(*fields, strict=True)]
        return cls(literals, kinds, [learner.learn(c) for c in columns], len(values) - count + 1, count)

    def fits(self, v: Any) -> bool:
        return type(v) is str and self.pattern.fullmatch(v) is not None

    def put(self, v: Any, enc: Encoder) -> None:
        m = self.pattern.fullmatch(v)
        assert m is not None
        for child, field in zip(self.children, m.groups(), strict=True):
            child.encode(field, enc)

    def get(self, dec: Decoder) -> Any:
        parts = [self.literals[0]]
        for child, kind, lit in zip(self.children, self.kinds, self.literals[1:], strict=True):
            field = child.decode(dec)
            if type(field) is not str or not field or not (field.isascii() and _KIND[kind](field)):
                raise DecodeError(f"learned-model payload has a shape field {field!r} not of its kind")
            parts += (field, lit)
        return "".join(parts)

    def describe(self) -> str:
        form = "".join(f"{lit}{{{k}}}" for lit, k in zip(self.literals, self.kinds, strict=False))
        inner = ", ".join(c.describe() for c in self.children)
        return f"shape({form}{self.literals[-1]}: {inner})"

    def to_data(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "literals": list(self.literals),
            "kinds": self.kinds,
            "children": [c.to_data() for c in self.children],
            **self._counts(),
        }


_KIND: dict[str, Callable[[str], bool]] = {"a": str.isalpha, "9": str.isdigit}


class Words(Escaping):
    """Text as a count of parts, then each part — from one shared vocabulary (search queries),
    or one per position, the last repeating (``144 Cedar Ln``: number, name, kind). The parts
    are the space-separated words, or with ``tokens`` the runs of ASCII letters, of digits, and
    single other characters (``Hadoop-Common-trunk``: Hadoop, -, Common, -, trunk)."""

    kind = "words"
    MAX_POSITIONS = 8
    MAX_WORDS = 10_000

    def __init__(
        self, count: Node, words: list[Categorical], esc: int, hits: int, tokens: bool = False
    ) -> None:
        self.count, self.words, self.tokens = count, words, tokens
        self.esc, self.total = esc, esc + hits
        self.sep = "" if tokens else " "

    @classmethod
    def learn(cls, learner: Learner, values: list[str], positional: bool, tokens: bool = False) -> Words:
        # Only texts the model can write teach it (a double space would put an empty word in a
        # vocabulary, which a reader rejects); the others escape to JSON text.
        fitting = [v for v in values if v and (tokens or ("  " not in v and v.strip(" ") == v))]
        split = [_TOKEN.findall(v) if tokens else v.split(" ") for v in fitting or ["?"]]
        count = learner.learn([len(w) for w in split])
        if positional:
            longest = min(max(map(len, split)), cls.MAX_POSITIONS)
            words = [Categorical.learn([ws[i] for ws in split if len(ws) > i]) for i in range(longest)]
        else:
            words = [Categorical.learn([w for ws in split for w in ws])]
        return cls(count, words, len(values) - len(fitting) + 1, max(len(fitting), 1), tokens)

    def parts(self, v: str) -> list[str]:
        return _TOKEN.findall(v) if self.tokens else v.split(" ")

    def _model(self, i: int) -> Categorical:
        return self.words[min(i, len(self.words) - 1)]

    def fits(self, v: Any) -> bool:
        if self.tokens:
            return type(v) is str and v != ""
        return type(v) is str and v != "" and "  " not in v and v.strip(" ") == v

    def put(self, v: Any, enc: Encoder) -> None:
        words = self.parts(v)
        self.count.encode(len(words), enc)
        for i, w in enumerate(words):
            self._model(i).encode(w, enc)

    def get(self, dec: Decoder) -> Any:
        n = self.count.decode(dec)
        if type(n) is not int or not 0 < n <= self.MAX_WORDS:
            raise DecodeError("word count out of range")
        words = [self._model(i).decode(dec) for i in range(n)]
        if not all(type(w) is str and w for w in words):
            raise DecodeError("a word decoded to a non-string")
        out = self.sep.join(words)
        if not self.fits(out):
            raise DecodeError("words decoded to a text the model cannot have written")
        return out

    def describe(self) -> str:
        kind = "by position" if len(self.words) > 1 else "shared"
        return f"{'tokens' if self.tokens else 'words'}({kind}, {self.words[0].describe()})"

    def to_data(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "tokens": self.tokens,
            "count": self.count.to_data(),
            "words": [w.to_data() for w in self.words],
            **self._counts(),
        }


class Object(Escaping):
    """Objects with one key order: each key's value through its own model."""

    kind = "object"

    def __init__(self, keys: tuple[str, ...], children: list[Node], esc: int, hits: int) -> None:
        self.keys, self.children = keys, children
        self.esc, self.total = esc, esc + hits

    def fits(self, v: Any) -> bool:
        return type(v) is dict and tuple(v) == self.keys

    def put(self, v: Any, enc: Encoder) -> None:
        context: list[Any] = []  # the values so far: rules read them (passed, never stored,
        for child, value in zip(self.children, v.values(), strict=True):  # so threads may share)
            if isinstance(child, Rule):
                child.encode_in(value, enc, context)
            else:
                child.encode(value, enc)
            context.append(value)

    def get(self, dec: Decoder) -> Any:
        context: list[Any] = []
        for child in self.children:
            context.append(child.decode_in(dec, context) if isinstance(child, Rule) else child.decode(dec))
        return dict(zip(self.keys, context, strict=True))

    def describe(self) -> str:
        inner = ", ".join(f"{k}: {c.describe()}" for k, c in zip(self.keys, self.children, strict=True))
        return "{" + inner + "}"

    def to_data(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "keys": list(self.keys),
            "children": [c.to_data() for c in self.children],
            **self._counts(),
        }


_MISS = object()
OFF = object()  # what a generated decoder returns for a payload that is not on the common path


class Rule(Escaping):
    """A field of an object that reads an earlier field of it (``source``): one symbol when the
    rule holds, else an escape and the value through ``other``. The earlier values come as an
    argument (``encode_in``/``decode_in``), so one model may serve many threads."""

    source = 0
    sure = False  # on the common path, a broken rule leaves it (see ``SURE``)
    # Model format 1: the rule codes its symbol even when its table has no entry for the source.
    # From format 2 such a value goes straight through ``other`` (the rule cannot hold).
    legacy = False

    def _sure(self) -> dict[str, Any]:
        return {"sure": True} if self.sure else {}

    def holds(self, v: Any, src: Any) -> bool:
        raise NotImplementedError

    def predicts(self, src: Any) -> bool:
        """Whether the rule has a prediction for this source value (tables: an entry for it)."""
        return True

    def put_rest(self, v: Any, enc: Encoder, src: Any) -> None:
        pass  # the rule gives the whole value

    def get_value(self, dec: Decoder, src: Any) -> Any:
        raise NotImplementedError

    def encode_in(self, v: Any, enc: Encoder, context: list[Any]) -> None:
        src = context[self.source] if self.source < len(context) else _MISS
        assert self.other is not None
        if not self.legacy and not self.predicts(src):
            self.other.encode(v, enc)
        elif self.holds(v, src):
            enc.put(self.esc, self.total - self.esc, self.total)
            self.put_rest(v, enc, src)
        else:
            enc.put(0, self.esc, self.total)
            assert self.other is not None
            self.other.encode(v, enc)

    def decode_in(self, dec: Decoder, context: list[Any]) -> Any:
        src = context[self.source] if self.source < len(context) else _MISS
        assert self.other is not None
        if not self.legacy and not self.predicts(src):
            return self.other.decode(dec)
        slot = dec.peek(self.total)
        if slot < self.esc:
            dec.take(0, self.esc, self.total)
            return self.other.decode(dec)
        dec.take(self.esc, self.total - self.esc, self.total)
        return self.get_value(dec, src)

    def encode(self, v: Any, enc: Encoder) -> None:
        self.encode_in(v, enc, [])  # outside an object: the rule cannot hold

    def decode(self, dec: Decoder) -> Any:
        return self.decode_in(dec, [])


class Predicted(Rule):
    """A field computed from the earlier field, with an escape to ``other`` for the values that
    break the rule."""

    def __init__(self, source: int, other: Node, esc: int, hits: int) -> None:
        self.source, self.other = source, other
        self.esc, self.total = esc, esc + hits

    def compute(self, source: Any) -> Any:
        raise NotImplementedError

    def holds(self, v: Any, src: Any) -> bool:
        predicted = self.compute(src)
        return predicted is not _MISS and _key(predicted) == _key(v)

    def get_value(self, dec: Decoder, src: Any) -> Any:
        predicted = self.compute(src)
        if predicted is _MISS:
            raise DecodeError("a predicted field has no prediction")
        return _copy(predicted)

    def _rule(self) -> dict[str, Any]:
        assert self.other is not None  # set by __init__: a rule always has its fallback
        return {"source": self.source, "other": self.other.to_data(), **self._counts(), **self._sure()}


class Given(Predicted):
    """A field set by an earlier one (price given product, country given city): a table."""

    kind = "given"

    def __init__(self, source: int, table: dict[Any, Any], other: Node, esc: int, hits: int) -> None:
        super().__init__(source, other, esc, hits)
        self.table = table

    def compute(self, source: Any) -> Any:
        return self.table.get(_key(source), _MISS)

    def predicts(self, src: Any) -> bool:
        return _key(src) in self.table

    def describe(self) -> str:
        return f"given(field {self.source}, {len(self.table)} entries; else {self.fallback_name()})"

    def to_data(self) -> dict[str, Any]:
        pairs = [[_unkey(k), v] for k, v in self.table.items()]
        return {"kind": self.kind, "table": pairs, **self._rule()}


class Affix(Predicted):
    """A string = prefix + an earlier string field (URL-quoted or not) + suffix
    (``url = "https://host/job/" + name + "/"``); or, ``numeric`` (format 3), an earlier integer
    field's decimal text (``id_str = str(id)``)."""

    kind = "affix"
    numeric = False

    def __init__(
        self, source: int, prefix: str, suffix: str, quoted: bool, other: Node, esc: int, hits: int
    ) -> None:
        super().__init__(source, other, esc, hits)
        self.prefix, self.suffix, self.quoted = prefix, suffix, quoted

    def compute(self, source: Any) -> Any:
        if self.numeric:
            if type(source) is not int or not -(1 << MAX_BITS) < source < 1 << MAX_BITS:
                return _MISS
            source = str(source)
        elif type(source) is not str:
            return _MISS
        return self.prefix + (_quote(source) if self.quoted else source) + self.suffix

    def describe(self) -> str:
        middle = f"quote(field {self.source})" if self.quoted else f"field {self.source}"
        return f"{self.prefix!r} + {middle} + {self.suffix!r}; else {self.fallback_name()}"

    def to_data(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "prefix": self.prefix,
            "suffix": self.suffix,
            "quoted": self.quoted,
            **({"numeric": True} if self.numeric else {}),
            **self._rule(),
        }


def _quote(v: str) -> str:
    try:
        return urllib.parse.quote(v, safe="/")
    except UnicodeEncodeError:  # lone surrogates: no UTF-8
        return "\0"


class SumOf(Predicted):
    """A total: sum(item[a] * item[b]) over the items of an earlier array field, floats rounded
    to ``scale`` decimals."""

    kind = "sum"

    def __init__(self, source: int, a: str, b: str, scale: int, other: Node, esc: int, hits: int) -> None:
        super().__init__(source, other, esc, hits)
        self.a, self.b, self.scale = a, b, scale

    def compute(self, source: Any) -> Any:
        try:
            # Added left to right from the integer 0, each addition rounded (not ``sum``, whose
            # float addition is compensated from Python 3.12 on): spec/LEARNED_MODEL.md §2.
            total = 0
            for x in source:
                total += x[self.a] * x[self.b]
        except (TypeError, KeyError, IndexError, AttributeError, ArithmeticError):  # 10**400 * 1.5
            return _MISS
        if type(total) not in (int, float):
            return _MISS
        return round(total, self.scale) if isinstance(total, float) else total

    def describe(self) -> str:
        return f"sum(field {self.source}: {self.a} x {self.b}); else {self.fallback_name()}"

    def to_data(self) -> dict[str, Any]:
        return {"kind": self.kind, "a": self.a, "b": self.b, "scale": self.scale, **self._rule()}


class Prefixed(Rule):
    """A string whose prefix is set by an earlier field (postal code given city): the prefix
    from a table, the rest through its own model; an escape to ``other`` for the rest."""

    kind = "prefixed"

    def __init__(
        self, source: int, table: dict[Any, str], rest: Node, other: Node, esc: int, hits: int
    ) -> None:
        self.source, self.table, self.rest, self.other = source, table, rest, other
        self.esc, self.total = esc, esc + hits

    def holds(self, v: Any, src: Any) -> bool:
        prefix = self.table.get(_key(src))
        return prefix is not None and type(v) is str and v.startswith(prefix)

    def predicts(self, src: Any) -> bool:
        return _key(src) in self.table

    def put_rest(self, v: Any, enc: Encoder, src: Any) -> None:
        self.rest.encode(v[len(self.table[_key(src)]) :], enc)

    def get_value(self, dec: Decoder, src: Any) -> Any:
        prefix, rest = self.table.get(_key(src)), self.rest.decode(dec)
        if prefix is None or type(rest) is not str:
            raise DecodeError("a prefixed field cannot be rebuilt")
        return prefix + rest

    def describe(self) -> str:
        return f"prefix given field {self.source} + {self.rest.describe()}; else {self.fallback_name()}"

    def to_data(self) -> dict[str, Any]:
        assert self.other is not None
        return {
            "kind": self.kind,
            "source": self.source,
            "table": [[_unkey(k), v] for k, v in self.table.items()],
            "rest": self.rest.to_data(),
            "other": self.other.to_data(),
            **self._counts(),
            **self._sure(),
        }


class Array(Escaping):
    """Arrays: a length, then each item through one shared model."""

    kind = "array"
    MAX_LENGTH = 1_000_000

    def __init__(self, lengths: Node, item: Node, esc: int, hits: int) -> None:
        self.lengths, self.item = lengths, item
        self.esc, self.total = esc, esc + hits

    def fits(self, v: Any) -> bool:
        return type(v) is list

    def put(self, v: Any, enc: Encoder) -> None:
        self.lengths.encode(len(v), enc)
        for x in v:
            self.item.encode(x, enc)

    def get(self, dec: Decoder) -> Any:
        n = self.lengths.decode(dec)
        if type(n) is not int or not 0 <= n <= self.MAX_LENGTH:
            raise DecodeError("array length out of range")
        return [self.item.decode(dec) for _ in range(n)]

    def describe(self) -> str:
        return f"[{self.item.describe()}]"

    def to_data(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "lengths": self.lengths.to_data(),
            "item": self.item.to_data(),
            **self._counts(),
        }


# -- learning ---------------------------------------------------------------------------------------
class Learner:
    """Chooses, for every field, the cheapest model among the candidates its values allow.

    ``text`` prices side-stream bytes: their size once compressed with the trained dictionary
    when there is one (so free text that zstd compresses well is left to zstd)."""

    def __init__(self, text: Callable[[bytes], float] | None = None) -> None:
        self.text = text

    def cost(self, node: Node, values: list[Any]) -> float:
        return node.cost(values, self.text)

    def learn(self, values: list[Any]) -> Node:
        n = len(values)
        types = {type(v) for v in values}
        candidates: list[Node] = [Raw()]
        if types == {dict}:
            return self._object(values)
        if types == {list}:
            return Array(
                self.learn([len(v) for v in values]), self.learn([x for v in values for x in v]), 1, n
            )
        distinct = len(set(map(_key, values)))
        # Few distinct values: a table of them. In a small sample they may be few and still
        # mostly distinct: integers then weigh the table against ranges and magnitudes, and
        # strings against templates and shapes (dates) -- not against word models, whose
        # vocabularies a sample this small prices as if they were complete.
        few = distinct <= 64
        spread = few and distinct * 4 > n and types in ({int}, {str})
        if len(types) == 1 and (types <= {bool, type(None)} or (few and not spread)):
            return Categorical.learn(values)
        if types == {int}:
            lo, width = min(values), max(values) - min(values) + 1
            if abs(lo) <= MAX_SPAN and width <= MAX_SPAN:  # as the reader allows
                span = IntRange(lo, width, 1, n)
                candidates.append(span)
                if distinct <= MAX_CATEGORIES:
                    candidates.append(Categorical.learn(values, fallback=span))
            if max(map(abs, values)) < 1 << MAX_BITS:
                magnitude = Magnitude.learn(values)
                candidates.append(magnitude)
                if distinct <= MAX_CATEGORIES:
                    candidates.append(Categorical.learn(values, fallback=magnitude))
        elif distinct <= MAX_CATEGORIES:
            candidates.append(Categorical.learn(values))
        if types == {float}:
            scale = _scale(values)
            if scale is not None:
                ints = [round(v * 10**scale) for v in values]
                candidates.append(Decimal(scale, self.learn(ints), 1, n))
        elif types == {str}:
            m = _TEMPLATE.match(values[0])
            if m and all(
                len(v) == len(values[0]) and v.startswith(m.group(1)) and _DIGITS.match(v, len(m.group(1)))
                for v in values
            ):
                digits = [int(v[len(m.group(1)) :]) for v in values]
                candidates.append(Template(m.group(1), len(m.group(2)), self.learn(digits), 1, n))
            elif m and all(v.startswith(m.group(1)) and _NUMBER.match(v, len(m.group(1))) for v in values):
                numbers = [int(v[len(m.group(1)) :]) for v in values]  # of any length: width 0
                candidates.append(Template(m.group(1), 0, self.learn(numbers), 1, n))
            if any(" " in v for v in values) and not spread:
                candidates += [Words.learn(self, values, False), Words.learn(self, values, True)]
            if distinct > len(values) // 4 and not spread:  # mostly distinct: try it as tokens
                candidates += [Words.learn(self, values, False, True), Words.learn(self, values, True, True)]
            shape = Shape.learn(self, values)
            if shape is not None:
                candidates.append(shape)
        # A shape must save 1%: within that, the word and template models code faster.
        return min(candidates, key=lambda c: self.cost(c, values) * (1.01 if isinstance(c, Shape) else 1))

    def _object(self, values: list[dict[str, Any]]) -> Object:
        n = len(values)
        shape, count = Counter(tuple(v) for v in values).most_common(1)[0]
        rows = [v for v in values if tuple(v) == shape]
        columns = [[r[k] for r in rows] for k in shape]
        return Object(shape, [self._child(columns, j) for j in range(len(shape))], n - count + 1, count)

    def _child(self, columns: list[list[Any]], j: int) -> Node:
        """Column j's model: a rule over an earlier column where one holds or is cheaper than
        the column alone (learned once, and weighed by both table rules)."""
        rule = self._sum_rule(columns, j) or self._affix_rule(columns, j)
        if rule is not None:
            return rule
        alone = self.learn(columns[j])
        cost = self.cost(alone, columns[j])
        return self._dependency(columns, j, alone, cost) or self._prefix_rule(columns, j, cost) or alone

    def _dependency(self, columns: list[list[Any]], j: int, alone: Node, best_cost: float) -> Given | None:
        """Column j as a function of an earlier column, when that is cheaper than ``alone``."""
        target = columns[j]
        n = len(target)
        best: Given | None = None
        for i in range(j):
            table: dict[Any, Any] = {}
            clash: set[Any] = set()
            for a, b in zip(columns[i], target, strict=True):
                ka = _key(a)
                if ka in table and _key(table[ka]) != _key(b):
                    clash.add(ka)
                table.setdefault(ka, b)
            for ka in clash:
                del table[ka]
            rest = [
                b
                for a, b in zip(columns[i], target, strict=True)
                if not (_key(a) in table and _key(table[_key(a)]) == _key(b))
            ]
            hits = n - len(rest)
            if hits < n * 0.5 or len(table) > n // 2:
                continue
            misses = len(rest)
            flag = n * math.log2((n + misses + 1) / n) + misses * math.log2((n + misses + 1) / (misses + 1))
            other = self.learn(rest) if rest else alone
            cost = flag + (self.cost(other, rest) if rest else 0)
            if cost < best_cost:
                best, best_cost = Given(i, table, other, misses + 1, n), cost
                # A source value the table lacks (seen once: new next time) goes through ``other``
                # without a symbol; the rule is sure when it is rarely broken where it predicts.
                best.sure = not isinstance(other, Raw) and misses * SURE <= n
        return best

    def _prefix_rule(self, columns: list[list[Any]], j: int, alone: float) -> Prefixed | None:
        """Column j (strings) = a prefix fixed by an earlier low-cardinality column + a rest,
        when that costs less than ``alone`` bits."""
        target = columns[j]
        n = len(target)
        if not all(type(v) is str for v in target):
            return None
        best: Prefixed | None = None
        for i in range(j):
            groups: dict[Any, list[str]] = {}
            for a, b in zip(columns[i], target, strict=True):
                groups.setdefault(_key(a), []).append(b)
            if len(groups) > max(64, n // 50):
                continue
            table = {k: os.path.commonprefix(vs) for k, vs in groups.items() if len(vs) >= 5}  # noqa: RUF071 - character-wise is meant
            table = {k: p for k, p in table.items() if p}
            if not table:
                continue
            pairs = list(zip(columns[i], target, strict=True))
            hits = [b[len(table[_key(a)]) :] for a, b in pairs if _key(a) in table]
            misses = [b for a, b in pairs if _key(a) not in table]
            rest = self.learn(hits)
            other = self.learn(misses) if misses else Raw()
            flag = n * math.log2((n + len(misses) + 1) / max(len(hits), 1))
            cost = flag + self.cost(rest, hits) + (self.cost(other, misses) if misses else 0.0)
            if cost < alone:
                best, alone = Prefixed(i, table, rest, other, len(misses) + 1, len(hits)), cost
                best.sure = not isinstance(other, Raw) and len(misses) * SURE <= n
        return best

    def _affix_rule(self, columns: list[list[Any]], j: int) -> Affix | None:
        """Column j == prefix + column i (as is or URL-quoted; an integer as its decimal text) +
        suffix for 95% of the rows."""
        target = columns[j]
        n = len(target)
        if not all(type(v) is str for v in target):
            return None
        for i in range(j):
            source = columns[i]
            numeric = all(type(v) is int and -(1 << MAX_BITS) < v < 1 << MAX_BITS for v in source)
            if numeric:
                source = [str(v) for v in source]
            elif not all(type(v) is str and v for v in source):
                continue
            for quoted in (False,) if numeric else (False, True):
                shapes: Counter[tuple[str, str]] = Counter()
                for a, b in zip(source, target, strict=True):
                    mid = _quote(a) if quoted else a
                    at = b.find(mid)
                    if at >= 0:
                        shapes[(b[:at], b[at + len(mid) :])] += 1
                if not shapes:
                    continue
                (prefix, suffix), _hits = shapes.most_common(1)[0]
                rule = Affix(i, prefix, suffix, quoted, Raw(), 1, n)
                rest = [b for a, b in zip(source, target, strict=True) if rule.compute(a) != b]
                if len(rest) * 20 <= n:
                    other = self.learn(rest) if rest else Raw()
                    affix = Affix(i, prefix, suffix, quoted, other, len(rest) + 1, n)
                    affix.sure = not isinstance(other, Raw) and len(rest) * SURE <= n
                    affix.numeric = numeric
                    return affix
        return None

    def _sum_rule(self, columns: list[list[Any]], j: int) -> SumOf | None:
        """Column j == sum(item[a] * item[b]) over the items of an earlier array column."""
        target = columns[j]
        n = len(target)
        if not all(type(v) in (int, float) for v in target):
            return None
        scale = _scale([v for v in target if type(v) is float]) or 0
        for i in range(j):
            first = columns[i][0]
            if not (type(first) is list and first and type(first[0]) is dict):
                continue
            numeric = [k for k, v in first[0].items() if type(v) in (int, float)]
            for ai, a in enumerate(numeric):
                for b in numeric[ai:]:
                    rule = SumOf(i, a, b, scale, Raw(), 1, n)
                    rest = [
                        t for s, t in zip(columns[i], target, strict=True) if _key(rule.compute(s)) != _key(t)
                    ]
                    if len(rest) * 20 <= n:
                        other = self.learn(rest) if rest else self.learn(target)
                        total = SumOf(i, a, b, scale, other, len(rest) + 1, n)
                        total.sure = not isinstance(other, Raw) and len(rest) * SURE <= n
                        return total
        return None


def _walk(node: Node) -> Iterator[Node]:
    """The node and every node under it."""
    yield node
    for name in ("fallback", "other", "inner", "count", "rest", "lengths", "item", "buckets"):
        sub = getattr(node, name, None)
        if isinstance(sub, Node):
            yield from _walk(sub)
    for sub in getattr(node, "children", None) or getattr(node, "words", None) or ():
        yield from _walk(sub)


def _scale(values: list[float]) -> int | None:
    longest = 0
    for v in values:
        r = repr(v)
        if "e" in r or "n" in r:
            return None
        longest = max(longest, len(r) - r.index(".") - 1)
    return longest if longest <= 6 else None


# -- reading a model's tables (spec/LEARNED_MODEL.md §2): checked before any node is built ----
class _Reader:
    def __init__(self, version: int = FORMAT) -> None:
        self.nodes = 0
        self.version = version

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
        return self.integer(d, "esc", 1, MAX_TOTAL), self.integer(d, "hits", 1, MAX_TOTAL)

    def pairs(self, d: dict[str, Any]) -> list[tuple[Any, Any]]:
        table = d.get("table")
        if type(table) is not list or len(table) > MAX_TABLE:
            raise self.fail(f"{d.get('kind')}.table must be a list of at most {MAX_TABLE} pairs")
        out = []
        for p in table:
            if type(p) is not list or len(p) != 2:
                raise self.fail(f"{d.get('kind')}.table holds a non-pair")
            out.append((_key(p[0]), p[1]))
        return out

    def shape(self, d: dict[str, Any], sub: int) -> Shape:
        if self.version < 3:
            raise self.fail("shape appears from format 3 on")
        literals, kinds, children = d.get("literals"), d.get("kinds"), d.get("children")
        if (
            type(literals) is not list
            or not 3 <= len(literals) <= MAX_FIELDS + 1
            or not all(type(lit) is str and len(lit) <= 4096 and not _RUN.search(lit) for lit in literals)
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
            if len({_key(v) for v in values}) != len(values):
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
        if kind == "words":
            words = d.get("words")
            if type(words) is not list or not 0 < len(words) <= Words.MAX_POSITIONS:
                raise self.fail(f"words needs 1..{Words.MAX_POSITIONS} vocabularies")
            tokens = d.get("tokens")
            vocab = [self.node(w, sub) for w in words]
            if not all(
                isinstance(w, Categorical)
                and isinstance(w.fallback, Raw)
                and all(type(v) is str and v and (tokens or " " not in v) for v in w.values)
                for w in vocab
            ):
                raise self.fail("a words vocabulary must be a categorical of words escaping to JSON text")
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
            kids = [self.node(c, sub, j) for j, c in enumerate(children)]
            return Object(tuple(keys), kids, *self.counts(d))
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


class Model:
    """A learned model of a message: ``encode(value) -> bytes``, ``decode(bytes) -> value``.

    The first symbol says whether the message is on the model's common path (``_fieldgen``);
    ``common`` of ``samples`` training messages were, which sets that symbol's probability.
    ``side`` (a zstd engine with the trained dictionary) compresses the side stream.
    """

    def __init__(self, root: Node, common: int = 0, samples: int = 0, side: Any = None) -> None:
        from zeroc._fieldgen import generate

        self.root, self.common, self.samples, self.side = root, common, samples, side
        self.seen = self.bits = self.misses = 0  # drift figures, kept by Codec and encode
        self.flag_total = samples + 2
        self.on = (0, common + 1, self.flag_total)
        self.off = (common + 1, samples - common + 1, self.flag_total)
        # The fast path's head (no side stream, then the flag) folded into its starting interval.
        head = Encoder()
        head.put(*NO_SIDE)
        head.put(*self.on)
        self._fast_encode, self._fast_decode = generate(
            root, (head.low, head.rng, head.den), self.flag_total, common
        )

    @classmethod
    def learn(cls, samples: list[Any], side: Any = None, dictionary_size: int = 32 * 1024) -> Model:
        """Learn from samples; with ``side`` (the engine that will compress the side stream),
        text is priced by what it compresses to (see :func:`_text_pricer`)."""
        text = _text_pricer(samples, side, dictionary_size) if side is not None else None
        root = Learner(text).learn(samples)
        probe = cls(root)
        common = sum(1 for v in samples if probe._fast_encode(v) is not None)
        return cls(root, common, len(samples), side)

    def encode(self, value: Any) -> bytes:
        fast = self._fast_encode(value)
        if fast is not None:
            return fast
        self.misses += 1
        enc = Encoder()
        enc.put(*self.off)
        self.root.encode(value, enc)
        return enc.finish(self.side)

    def decode(self, data: bytes, max_size: int = 64 * 1024 * 1024) -> Any:
        try:
            value = self._fast_decode(data)  # the common case: no side stream, common path
            if value is not OFF:
                return value
            dec = Decoder(data, self.side, max_size)
            if dec.peek(self.flag_total) <= self.common:
                raise DecodeError("learned-model payload puts a side stream on the common path")
            dec.take(*self.off)
            value = self.root.decode(dec)
        except (
            RecursionError,
            UnicodeDecodeError,
            ValueError,
            KeyError,
            IndexError,
            TypeError,
            ArithmeticError,
        ) as exc:
            if isinstance(exc, DecodeError):
                raise
            raise DecodeError(f"learned-model payload does not decode: {exc}") from exc
        dec.finish()
        return value

    def describe(self) -> str:
        return self.root.describe()

    # -- the model section of a dictionary file ---------------------------------------------
    def to_bytes(self) -> bytes:
        root = self.root.to_data()
        # The lowest format that has every node: format 1 when the model codes as format 1 did
        # (no sure node, no rule of format 2's), 2 without format 3's nodes: older readers read it.
        nodes = list(_walk(self.root))
        modern = any(getattr(n, "sure", False) or (isinstance(n, Rule) and not n.legacy) for n in nodes)
        latest = any(
            isinstance(n, (Magnitude, Shape)) or getattr(n, "numeric", False) or getattr(n, "width", 1) == 0
            for n in nodes
        )
        version = 3 if latest else 2 if modern else 1
        doc = {"format": version, "common": self.common, "samples": self.samples, "root": root}
        return zstd.ZstdCompressor(level=19).compress(_json.dumps(doc))

    @classmethod
    def from_bytes(cls, data: bytes, side: Any = None) -> Model:
        try:
            size = zstd.get_frame_parameters(data).content_size
            if not 0 <= size <= MAX_MODEL_BYTES:  # checked before any allocation of that size
                raise InvalidDictionary(
                    f"learned model section declares {size} bytes (at most {MAX_MODEL_BYTES})"
                )
            text = zstd.ZstdDecompressor().decompress(data, max_output_size=MAX_MODEL_BYTES)
        except zstd.ZstdError as exc:
            raise InvalidDictionary(f"learned model section does not decompress: {exc}") from exc
        if len(text) > MAX_MODEL_BYTES:
            raise InvalidDictionary("learned model section is too large")
        try:
            doc = _json.loads(text)
        except (ValueError, RecursionError, UnicodeDecodeError) as exc:
            raise InvalidDictionary(f"learned model section is not JSON: {exc}") from exc
        if type(doc) is not dict or doc.get("format") not in (1, 2, FORMAT):
            raise InvalidDictionary(
                f"learned model format {doc.get('format') if type(doc) is dict else '?'!r} is not supported"
            )
        samples, common = doc.get("samples"), doc.get("common")
        if type(samples) is not int or type(common) is not int or not 0 <= common <= samples <= MAX_TOTAL:
            raise InvalidDictionary("learned model: common/samples must be integers 0 <= common <= samples")
        try:
            root = _Reader(doc["format"]).node(doc.get("root"), 0)
        except RecursionError as exc:
            raise InvalidDictionary("learned model is nested too deeply") from exc
        return cls(root, common, samples, side)


def _text_pricer(samples: list[Any], side: Any, size: int) -> Callable[[bytes], float] | None:
    """Bits a value's JSON text costs in a compressed side stream, as if the value were new.

    The trained dictionary has seen every training value, so pricing training values with it
    would make JSON text look nearly free. Instead two probe dictionaries are trained, one on
    each half of the samples, and a text costs the larger of its two prices: the price from the
    half that did not see it (unless both did, and then it is common and cheap indeed)."""
    from zeroc._compression import ZstdEngine

    texts = [_json.dumps(v) for v in samples]
    engines = []
    for half in (texts[0::2], texts[1::2]):
        try:
            probe = zstd.train_dictionary(min(size, max(sum(map(len, half)) // 2, 1024)), list[Any](half))
        except zstd.ZstdError:
            return None  # too little text to train on: price side bytes as they are
        engines.append(ZstdEngine(probe.as_bytes(), side.level, max_window_size=8 << 20))
    prices: dict[bytes, float] = {}

    def text(data: bytes) -> float:
        bits = prices.get(data)
        if bits is None:  # one value alone pays ~3 B of block header that a joint stream does not
            packed = max(len(e.compress(data)[1]) for e in engines) - 3
            bits = prices[data] = 8 * min(len(data), max(packed, 1))
        return bits

    return text


def breakdown(node: Node, values: list[Any], messages: int, path: str = "$") -> list[dict[str, Any]]:
    """Where the bits go: for every field (JSONPath-like ``$.items[].price``), its model and the
    bits per message it costs, children included."""
    meter = Meter(loo=False)
    for v in values:
        node.encode(v, meter)
    rows = [{"field": path, "model": node.describe(), "bits": round(meter.bits / max(messages, 1), 3)}]
    if isinstance(node, Object):
        fitting = [v for v in values if node.fits(v)]
        for j, (key, child) in enumerate(zip(node.keys, node.children, strict=True)):
            column = [list(v.values())[j] for v in fitting]
            if isinstance(child, Rule):
                contexts = [list(v.values())[:j] for v in fitting]
                meter = Meter(loo=False)
                for ctx, v in zip(contexts, column, strict=True):
                    child.encode_in(v, meter, ctx)
                rows.append(
                    {
                        "field": f"{path}.{key}",
                        "model": child.describe(),
                        "bits": round(meter.bits / max(messages, 1), 3),
                    }
                )
            else:
                rows += breakdown(child, column, messages, f"{path}.{key}")
    elif isinstance(node, Array):
        items = [x for v in values if type(v) is list for x in v]
        rows += breakdown(node.item, items, messages, f"{path}[]")
    elif isinstance(node, Shape):  # its fields by position: $.created{0} is the weekday
        fields = [m.groups() for v in values if type(v) is str and (m := node.pattern.fullmatch(v))]
        for i, child in enumerate(node.children):
            rows += breakdown(child, [f[i] for f in fields], messages, f"{path}{{{i}}}")
    return rows
