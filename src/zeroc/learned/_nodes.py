"""Learned field models (spec/LEARNED_MODEL.md): per-field statistics learned from samples,
coded with the exact arithmetic coder in ``_coder``.

A model is a tree of nodes. Every node accepts any JSON value: what its statistics do not cover
goes through an escape symbol to a fallback, and in the end to the value's JSON text in the side
stream, so decoding is always exact. A model is data: ``Model.to_bytes`` writes only tables, and
``Model.from_bytes`` checks every table before building nodes from it.
"""

from __future__ import annotations

import math
import re
import urllib.parse
from bisect import bisect_right
from collections import Counter
from collections.abc import Callable, Iterator
from itertools import pairwise
from operator import itemgetter
from typing import Any

from zeroc import _json
from zeroc._errors import DecodeError
from zeroc.learned._coder import Decoder, Encoder, code_length

MAX_CATEGORIES = 4096  # values a categorical keeps when learning
# An escape expected at most once in this many values makes its node *sure*: on the common path
# it then leaves the path, so messages on it code no symbol for a rule that holds and no escape
# mass for a categorical (spec/LEARNED_MODEL.md §3). Rare escapes cost about the same bits
# either way (they move into the flag), and the common path gets shorter.
SURE = 100
TEMPLATE = re.compile(r"([^0-9]*?)([0-9]+)\Z")
DIGITS = re.compile(r"[0-9]+\Z")
NUMBER = re.compile(r"(?:0|[1-9][0-9]{0,29})\Z")  # an integer's decimal text


class Off(Exception):
    """The value leaves the common path (the general rules then code it)."""


def _enc(node: Node, v: Any, enc: Any, common: bool) -> None:
    node.encode_common(v, enc) if common else node.encode(v, enc)


def _dec(node: Node, dec: Any, common: bool) -> Any:
    return node.decode_common(dec) if common else node.decode(dec)


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

    # The common path of format 6 (spec/LEARNED_MODEL.md §3), walked: ``encode_common`` raises
    # ``Off`` where the value leaves the path; ``decode_common`` reads what it coded. Kinds that
    # are never on it (raw, map) keep these.
    def encode_common(self, v: Any, enc: Any) -> None:
        raise Off

    def decode_common(self, dec: Any) -> Any:
        raise DecodeError("learned-model payload says common path where the model has none")

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

    def put(self, v: Any, enc: Encoder, common: bool = False) -> None:
        raise NotImplementedError

    def get(self, dec: Decoder, common: bool = False) -> Any:
        raise NotImplementedError

    def encode_common(self, v: Any, enc: Any) -> None:
        if not self.fits(v):
            raise Off
        self.put(v, enc, True)

    def decode_common(self, dec: Any) -> Any:
        return self.get(dec, True)

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


def as_key(v: Any) -> Any:
    """A hashable key that tells 1 from 1.0 and True, and 0.0 from -0.0."""
    t = type(v)
    if t is str or t is int or t is bool or v is None:  # first: the generated code's lookups
        return (t.__name__, v)
    if t is float:
        return ("float", repr(v))
    if t is dict or t is list:
        return (t.__name__, _json.dumps(v))
    if isinstance(v, (dict, list)):  # an OrderedDict (botocore's models) keys as the dict it equals
        return ("dict" if isinstance(v, dict) else "list", _json.dumps(v))
    return (t.__name__, v)


def from_key(k: Any) -> Any:
    kind, v = k
    if kind == "float":
        return float(v)
    return _json.loads(v) if kind in ("dict", "list") else v


def copy_value(v: Any) -> Any:
    """A decoded value the caller may change without changing the model's tables: through its
    exact JSON text (2-4x faster than copy.deepcopy on tweets' entities and users)."""
    return _json.loads(_json.dumps(v)) if isinstance(v, (dict, list)) else v


class Categorical(Node):
    """Seen values with their counts, plus an escape whose weight is the number of values seen
    once in training (Good-Turing: how often a new value turns up); unseen values go to
    ``fallback`` (an integer range for integers, else JSON text)."""

    kind = "categorical"
    sure = False  # on the common path, an unseen value leaves it (see ``SURE``)

    def __init__(self, values: list[Any], counts: list[int], esc: int, fallback: Node | None = None) -> None:
        self.fallback = fallback or Raw()
        self.values = values
        self.keys = [as_key(v) for v in values]
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
        counts = Counter(as_key(v) for v in values)
        top = counts.most_common(MAX_CATEGORIES)
        esc = max(1, sum(1 for c in counts.values() if c == 1))
        node = cls([from_key(k) for k, _ in top], [c for _, c in top], esc, fallback)
        node.sure = fallback is not None and not isinstance(fallback, Raw) and esc * SURE <= node.total
        return node

    def encode(self, v: Any, enc: Encoder) -> None:
        hit = self.starts.get(as_key(v))
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

    def leaves(self) -> bool:
        """Whether an unseen value leaves the common path (JSON text, or a *sure* table)."""
        return self.sure or type(self.fallback) is Raw

    def encode_common(self, v: Any, enc: Any) -> None:
        hit = self.starts.get(as_key(v))
        if self.leaves():  # a hit given a hit: no escape mass, nothing for one value
            if hit is None:
                raise Off
            if len(self.table) > 1:
                enc.put(hit[0] - self.esc, hit[1], self.total - self.esc)
        elif hit is None:
            enc.put(0, self.esc, self.total)
            self.fallback.encode_common(v, enc)
        else:
            enc.put(hit[0], hit[1], self.total)

    def decode_common(self, dec: Any) -> Any:
        if self.leaves():
            if len(self.table) == 1:
                value = self.table[0][2]
                return copy_value(value) if self.mutable else value
            return self._entry(dec, dec.peek(self.total - self.esc) + self.esc, self.esc)
        slot = dec.peek(self.total)
        if slot < self.esc:
            dec.take(0, self.esc, self.total)
            return self.fallback.decode_common(dec)
        return self._entry(dec, slot, 0)

    def _entry(self, dec: Any, slot: int, shift: int) -> Any:
        """The value whose slots hold ``slot``, taken (with its slots ``shift`` lower)."""
        lo, hi = 0, len(self.table) - 1
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if self.table[mid][0] <= slot:
                lo = mid
            else:
                hi = mid - 1
        start, freq, value = self.table[lo]
        dec.take(start - shift, freq, self.total - shift)
        return copy_value(value) if self.mutable else value

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
        return copy_value(value) if self.mutable else value

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

    def put(self, v: Any, enc: Encoder, common: bool = False) -> None:
        enc.put(v - self.lo, 1, self.span)

    def get(self, dec: Decoder, common: bool = False) -> Any:
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

    def put(self, v: Any, enc: Encoder, common: bool = False) -> None:
        b = bucket(v)
        _enc(self.buckets, b, enc, common)
        if abs(b) >= 2:
            half = 1 << (abs(b) - 1)
            enc.put(abs(v) - half, 1, half)

    def get(self, dec: Decoder, common: bool = False) -> Any:
        b = _dec(self.buckets, dec, common)
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
        if type(v) is not float or not math.isfinite(v * 10**self.scale):  # 1e307 * 100: inf
            return False
        i = round(v * 10**self.scale)
        return i / 10**self.scale == v and (i != 0 or math.copysign(1.0, v) > 0)

    def put(self, v: Any, enc: Encoder, common: bool = False) -> None:
        _enc(self.inner, round(v * 10**self.scale), enc, common)

    def get(self, dec: Decoder, common: bool = False) -> Any:
        i = _dec(self.inner, dec, common)
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

    def put(self, v: Any, enc: Encoder, common: bool = False) -> None:
        _enc(self.inner, int(v[len(self.prefix) :]), enc, common)

    def get(self, dec: Decoder, common: bool = False) -> Any:
        i = _dec(self.inner, dec, common)
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


TOKEN = re.compile(r"[A-Za-z]+|[0-9]+|.", re.DOTALL)
RUN = re.compile(r"[A-Za-z]+|[0-9]+")
_FIELD = {"a": "([A-Za-z]+)", "9": "([0-9]+)"}
MAX_FIELDS = 32


def shape_of(v: str) -> tuple[tuple[str, ...], str]:
    """(literals, kinds) of a string: its runs of ASCII letters (``a``) and of ASCII digits
    (``9``) are its fields, and what lies between them its literals."""
    literals, kinds, at = [], [], 0
    for m in RUN.finditer(v):
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
    def learn(cls, learn: Callable[[list[Any]], Node], values: list[str]) -> Shape | None:
        """The shape most values have, if it has two fields or more and 90% of values have it
        (its fields then have one field each: learning them does not come back here)."""
        shapes = Counter(shape_of(v) for v in values)
        (literals, kinds), count = shapes.most_common(1)[0]
        if not 2 <= len(kinds) <= MAX_FIELDS or count * 10 < len(values) * 9:
            return None
        pattern = _shape_pattern(literals, kinds)
        fields = [m.groups() for v in values if (m := pattern.fullmatch(v)) is not None]
        columns = [list(col) for col in zip(*fields, strict=True)]
        return cls(literals, kinds, [learn(c) for c in columns], len(values) - count + 1, count)

    def fits(self, v: Any) -> bool:
        return type(v) is str and self.pattern.fullmatch(v) is not None

    def put(self, v: Any, enc: Encoder, common: bool = False) -> None:
        m = self.pattern.fullmatch(v)
        assert m is not None
        for child, field in zip(self.children, m.groups(), strict=True):
            _enc(child, field, enc, common)

    def get(self, dec: Decoder, common: bool = False) -> Any:
        parts = [self.literals[0]]
        for child, kind, lit in zip(self.children, self.kinds, self.literals[1:], strict=True):
            field = _dec(child, dec, common)
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
    def learn(
        cls, learn: Callable[[list[Any]], Node], values: list[str], positional: bool, tokens: bool = False
    ) -> Words:
        # Only texts the model can write teach it (a double space would put an empty word in a
        # vocabulary, which a reader rejects); the others escape to JSON text.
        fitting = [v for v in values if v and (tokens or ("  " not in v and v.strip(" ") == v))]
        split = [TOKEN.findall(v) if tokens else v.split(" ") for v in fitting or ["?"]]
        count = learn([len(w) for w in split])
        if positional:
            longest = min(max(map(len, split)), cls.MAX_POSITIONS)
            words = [Categorical.learn([ws[i] for ws in split if len(ws) > i]) for i in range(longest)]
        else:
            words = [Categorical.learn([w for ws in split for w in ws])]
        return cls(count, words, len(values) - len(fitting) + 1, max(len(fitting), 1), tokens)

    def parts(self, v: str) -> list[str]:
        return TOKEN.findall(v) if self.tokens else v.split(" ")

    def _model(self, i: int) -> Categorical:
        return self.words[min(i, len(self.words) - 1)]

    def fits(self, v: Any) -> bool:
        if self.tokens:
            return type(v) is str and v != ""
        return type(v) is str and v != "" and "  " not in v and v.strip(" ") == v

    def put(self, v: Any, enc: Encoder, common: bool = False) -> None:
        words = self.parts(v)
        _enc(self.count, len(words), enc, common)
        if common:
            enc.spend(len(words))  # type: ignore[attr-defined] # a RangeEncoder
        for i, w in enumerate(words):
            _enc(self._model(i), w, enc, common)

    def get(self, dec: Decoder, common: bool = False) -> Any:
        n = _dec(self.count, dec, common)
        if type(n) is not int or not 0 < n <= self.MAX_WORDS:
            raise DecodeError("word count out of range")
        if common:
            dec.spend(n)  # type: ignore[attr-defined] # a RangeDecoder
        words = [_dec(self._model(i), dec, common) for i in range(n)]
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
    """Objects with one key order: each key's value through its own model. Objects of other
    keys or orders escape to ``other``: JSON text, or (format 4) the next most common key order
    as an object node of its own, so optional keys and a few orders are a chain of shapes."""

    kind = "object"
    # Model format 8: an object whose ``other`` is the next key order's object stays on the
    # common path through that chain, coding its hit or escape there too (set by Model).
    chained = False

    def __init__(
        self, keys: tuple[str, ...], children: list[Node], esc: int, hits: int, other: Node | None = None
    ) -> None:
        self.keys, self.children = keys, children
        self.esc, self.total = esc, esc + hits
        self.other = other

    def fits(self, v: Any) -> bool:
        return type(v) is dict and tuple(v) == self.keys

    def encode_common(self, v: Any, enc: Any) -> None:
        if not self.chained:
            super().encode_common(v, enc)
        elif self.fits(v):
            enc.put(self.esc, self.total - self.esc, self.total)
            self.put(v, enc, True)
        else:
            enc.put(0, self.esc, self.total)
            assert self.other is not None
            self.other.encode_common(v, enc)

    def decode_common(self, dec: Any) -> Any:
        if not self.chained:
            return self.get(dec, True)
        if dec.peek(self.total) < self.esc:
            dec.take(0, self.esc, self.total)
            assert self.other is not None
            return self.other.decode_common(dec)
        dec.take(self.esc, self.total - self.esc, self.total)
        return self.get(dec, True)

    def put(self, v: Any, enc: Encoder, common: bool = False) -> None:
        context: list[Any] = []  # the values so far: rules read them (passed, never stored,
        for child, value in zip(self.children, v.values(), strict=True):  # so threads may share)
            if isinstance(child, Rule):
                if common:
                    child.encode_common_in(value, enc, context)
                else:
                    child.encode_in(value, enc, context)
            else:
                _enc(child, value, enc, common)
            context.append(value)

    def get(self, dec: Decoder, common: bool = False) -> Any:
        context: list[Any] = []
        for child in self.children:
            if isinstance(child, Rule):
                value = child.decode_common_in(dec, context) if common else child.decode_in(dec, context)
            else:
                value = _dec(child, dec, common)
            context.append(value)
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
            **({"other": self.other.to_data()} if self.other is not None else {}),
        }


MISSING = object()
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

    def source_in(self, context: list[Any]) -> Any:
        """The source field's value among the object's earlier values (MISSING where absent)."""
        return context[self.source] if self.source < len(context) else MISSING

    def encode_in(self, v: Any, enc: Encoder, context: list[Any]) -> None:
        src = self.source_in(context)
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
        src = self.source_in(context)
        assert self.other is not None
        if not self.legacy and not self.predicts(src):
            return self.other.decode(dec)
        slot = dec.peek(self.total)
        if slot < self.esc:
            dec.take(0, self.esc, self.total)
            return self.other.decode(dec)
        dec.take(self.esc, self.total - self.esc, self.total)
        return self.get_value(dec, src)

    # The common path (format 6): a rule that holds codes nothing when sure or when it
    # escapes to JSON text, else its hit symbol; a value it does not hold for leaves the path
    # or goes on through ``other``'s common path. "Holds" is stricter than the general rules'
    # sameness only where values compare equal across types or signs (spec §3).
    def common_holds(self, v: Any, src: Any) -> bool:
        raise NotImplementedError

    def common_value(self, dec: Any, src: Any) -> Any:
        raise NotImplementedError

    def encode_common_in(self, v: Any, enc: Any, context: list[Any]) -> None:
        src = self.source_in(context)
        assert self.other is not None
        if not self.legacy and not self.predicts(src):
            self.other.encode_common(v, enc)  # JSON text (raw) raises Off
        elif self.sure or type(self.other) is Raw:
            if not self.common_holds(v, src):
                raise Off
            self.put_rest_common(v, enc, src)
        elif self.common_holds(v, src):
            enc.put(self.esc, self.total - self.esc, self.total)
            self.put_rest_common(v, enc, src)
        else:
            enc.put(0, self.esc, self.total)
            self.other.encode_common(v, enc)

    def decode_common_in(self, dec: Any, context: list[Any]) -> Any:
        src = self.source_in(context)
        assert self.other is not None
        if not self.legacy and not self.predicts(src):
            return self.other.decode_common(dec)
        if not (self.sure or type(self.other) is Raw):
            slot = dec.peek(self.total)
            if slot < self.esc:
                dec.take(0, self.esc, self.total)
                return self.other.decode_common(dec)
            dec.take(self.esc, self.total - self.esc, self.total)
        return self.common_value(dec, src)

    def put_rest_common(self, v: Any, enc: Any, src: Any) -> None:
        pass  # the rule gives the whole value

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
        return predicted is not MISSING and as_key(predicted) == as_key(v)

    def get_value(self, dec: Decoder, src: Any) -> Any:
        predicted = self.compute(src)
        if predicted is MISSING:
            raise DecodeError("a predicted field has no prediction")
        return copy_value(predicted)

    def common_holds(self, v: Any, src: Any) -> bool:
        p = self.compute(src)
        return p is not MISSING and type(v) is type(p) and v == p and (type(p) is str or p != 0)

    def common_value(self, dec: Any, src: Any) -> Any:
        p = self.compute(src)
        if p is MISSING or (type(p) is not str and p == 0):
            raise DecodeError("a predicted field has no prediction on the common path")
        return p

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
        return self.table.get(as_key(source), MISSING)

    def predicts(self, src: Any) -> bool:
        return as_key(src) in self.table

    def common_holds(self, v: Any, src: Any) -> bool:
        p = self.table.get(as_key(src), MISSING)
        return _plain(p) and type(v) is type(p) and v == p

    def common_value(self, dec: Any, src: Any) -> Any:
        p = self.table.get(as_key(src), MISSING)
        if not _plain(p):
            raise DecodeError("a given field has no plain prediction on the common path")
        return p

    def describe(self) -> str:
        return f"given(field {self.source}, {len(self.table)} entries; else {self.fallback_name()})"

    def to_data(self) -> dict[str, Any]:
        pairs = [[from_key(k), v] for k, v in self.table.items()]
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
                return MISSING
            source = str(source)
        elif type(source) is not str:
            return MISSING
        return self.prefix + (url_quote(source) if self.quoted else source) + self.suffix

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


def _plain(v: Any) -> bool:
    """A value ``==`` tells apart from every other of its type (not 0.0, NaN or containers)."""
    return type(v) in (str, int, bool, type(None)) or (type(v) is float and v == v and v != 0.0)


def url_quote(v: str) -> str:
    try:
        return urllib.parse.quote(v, safe="/")
    except UnicodeEncodeError:  # lone surrogates: no UTF-8
        return "\0"


_FACTORS = (int, float, bool)  # what a sum's item fields may be (JSON's numbers and booleans)


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
                a, b = x[self.a], x[self.b]
                # Numbers only: a text or list times a big integer is a repetition, gigabytes
                # long from a few bytes of input, whose sum would have no prediction anyway.
                if type(a) not in _FACTORS or type(b) not in _FACTORS:
                    return MISSING
                total += a * b
        except (TypeError, KeyError, IndexError, AttributeError, ArithmeticError):  # 10**400 * 1.5
            return MISSING
        if type(total) not in (int, float):
            return MISSING
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
        prefix = self.table.get(as_key(src))
        return prefix is not None and type(v) is str and v.startswith(prefix)

    def predicts(self, src: Any) -> bool:
        return as_key(src) in self.table

    def put_rest(self, v: Any, enc: Encoder, src: Any) -> None:
        self.rest.encode(v[len(self.table[as_key(src)]) :], enc)

    def common_holds(self, v: Any, src: Any) -> bool:
        return self.holds(v, src)

    def put_rest_common(self, v: Any, enc: Any, src: Any) -> None:
        self.rest.encode_common(v[len(self.table[as_key(src)]) :], enc)

    def common_value(self, dec: Any, src: Any) -> Any:
        prefix, rest = self.table.get(as_key(src)), self.rest.decode_common(dec)
        if prefix is None or type(rest) is not str:
            raise DecodeError("a prefixed field cannot be rebuilt")
        return prefix + rest

    def get_value(self, dec: Decoder, src: Any) -> Any:
        prefix, rest = self.table.get(as_key(src)), self.rest.decode(dec)
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
            "table": [[from_key(k), v] for k, v in self.table.items()],
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

    def put(self, v: Any, enc: Encoder, common: bool = False) -> None:
        _enc(self.lengths, len(v), enc, common)
        if common:
            enc.spend(len(v))  # type: ignore[attr-defined] # a RangeEncoder
        for x in v:
            _enc(self.item, x, enc, common)

    def get(self, dec: Decoder, common: bool = False) -> Any:
        n = _dec(self.lengths, dec, common)
        if type(n) is not int or not 0 <= n <= self.MAX_LENGTH:
            raise DecodeError("array length out of range")
        if common:
            dec.spend(n)  # type: ignore[attr-defined] # a RangeDecoder
        return [_dec(self.item, dec, common) for _ in range(n)]

    def describe(self) -> str:
        return f"[{self.item.describe()}]"

    def to_data(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "lengths": self.lengths.to_data(),
            "item": self.item.to_data(),
            **self._counts(),
        }


class Map(Escaping):
    """Objects whose keys are data (member names, ids): the number of entries, then each key
    through ``key`` and its value through ``value`` (format 4)."""

    kind = "map"

    def __init__(self, count: Node, key: Node, value: Node, esc: int, hits: int) -> None:
        self.count, self.key, self.value = count, key, value
        self.esc, self.total = esc, esc + hits

    def fits(self, v: Any) -> bool:
        return type(v) is dict

    def encode_common(self, v: Any, enc: Any) -> None:
        raise Off  # never on the common path

    def decode_common(self, dec: Any) -> Any:
        return Node.decode_common(self, dec)

    def put(self, v: Any, enc: Encoder, common: bool = False) -> None:
        self.count.encode(len(v), enc)
        for k, x in v.items():
            self.key.encode(k, enc)
            self.value.encode(x, enc)

    def get(self, dec: Decoder, common: bool = False) -> Any:
        n = self.count.decode(dec)
        if type(n) is not int or not 0 <= n <= Array.MAX_LENGTH:
            raise DecodeError("map size out of range")
        out: dict[str, Any] = {}
        for _ in range(n):
            k = self.key.decode(dec)
            if type(k) is not str or k in out:
                raise DecodeError("a map key is not a new string")
            out[k] = self.value.decode(dec)
        return out

    def describe(self) -> str:
        return f"{{{self.key.describe()}: {self.value.describe()}}}"

    def to_data(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "count": self.count.to_data(),
            "key": self.key.to_data(),
            "value": self.value.to_data(),
            **self._counts(),
        }


_START = itemgetter(0)  # a chars table row's start (rows are bisected by it)
END = 256  # chars: the symbol after a string's last byte, and the context before its first
BYTES = END + 1  # chars: the alphabet of a uniform symbol (a byte or the end)


class CharTable:
    """One table of a ``chars`` node: symbols (bytes and the end, increasing), their counts and
    an escape; symbol ``symbols[i]`` has the slots from ``esc + counts[0] + ... + counts[i-1]``."""

    __slots__ = ("esc", "rows", "starts", "symbols", "total")

    def __init__(self, esc: int, symbols: list[int], counts: list[int]) -> None:
        self.esc, self.symbols = esc, symbols
        self.starts: dict[int, tuple[int, int]] = {}
        self.rows: list[tuple[int, int, int]] = []
        pos = esc
        for x, f in zip(symbols, counts, strict=True):
            self.starts[x] = (pos, f)
            self.rows.append((pos, f, x))
            pos += f
        self.total = pos

    @classmethod
    def learn(cls, counts: Counter[int]) -> CharTable:
        """Symbols as seen; the escape weighs the symbols seen once (Good-Turing, as categoricals)."""
        symbols = sorted(counts)
        return cls(max(1, sum(1 for c in counts.values() if c == 1)), symbols, [counts[x] for x in symbols])

    def find(self, slot: int) -> tuple[int, int, int]:
        """(start, freq, symbol) of the symbol whose slots hold ``slot`` (``slot >= esc``)."""
        return self.rows[bisect_right(self.rows, slot, key=_START) - 1]

    def to_data(self) -> dict[str, Any]:
        return {"esc": self.esc, "symbols": self.symbols, "counts": [f for _s, f, _x in self.rows]}


def utf8(v: str) -> bytes | None:
    """A string's UTF-8, or None when it has none (lone surrogates)."""
    try:
        return v.encode()
    except UnicodeEncodeError:
        return None


class Chars(Escaping):
    """Strings byte by byte (format 7): each byte of the UTF-8, then the end, through the table
    of the byte before it (an order-1 context model) or, without one, through ``base``; a byte a
    table lacks escapes to ``base``, and one ``base`` lacks is uniform of 257. What a vocabulary
    has not seen (usernames, email local parts, names) then costs a few bits a character in
    the coder instead of a trip through the compressed side stream."""

    kind = "chars"

    def __init__(self, tables: dict[int, CharTable], base: CharTable, esc: int, hits: int) -> None:
        self.tables, self.base = tables, base
        self.esc, self.total = esc, esc + hits

    @classmethod
    def learn(cls, values: list[str]) -> Chars:
        """Counts of each symbol after each symbol in the strings that have UTF-8; the others
        escape to JSON text."""
        pairs: Counter[tuple[int, int]] = Counter()
        fitting = 0
        for v in values:
            data = utf8(v) if type(v) is str else None
            if data is None:
                continue
            fitting += 1
            symbols = (END, *data, END)
            pairs.update(pairwise(symbols))  # (context, symbol), counted in C
        by: dict[int, Counter[int]] = {}
        base: Counter[int] = Counter()
        for (before, x), count in pairs.items():
            by.setdefault(before, Counter())[x] = count
            base[x] += count
        tables = {c: CharTable.learn(counts) for c, counts in sorted(by.items())}
        return cls(
            tables, CharTable.learn(base or Counter({END: 1})), len(values) - fitting + 1, max(fitting, 1)
        )

    def fits(self, v: Any) -> bool:
        return type(v) is str and (v.isascii() or utf8(v) is not None)

    def put(self, v: Any, enc: Encoder, common: bool = False) -> None:
        tables, base = self.tables, self.base
        before = END
        for x in (*v.encode(), END):
            table = tables.get(before)
            before = x
            if table is not None:
                hit = table.starts.get(x)
                if hit is not None:
                    enc.put(hit[0], hit[1], table.total)
                    continue
                enc.put(0, table.esc, table.total)
            hit = base.starts.get(x)
            if hit is not None:
                enc.put(hit[0], hit[1], base.total)
            else:
                enc.put(0, base.esc, base.total)
                enc.put(x, 1, BYTES)

    def get(self, dec: Decoder, common: bool = False) -> Any:
        out = bytearray()
        before = END
        base = self.base
        while True:
            table = self.tables.get(before)
            if table is not None:
                slot = dec.peek(table.total)
                if slot >= table.esc:
                    start, freq, x = table.find(slot)
                    dec.take(start, freq, table.total)
                    if x == END:
                        break
                    out.append(x)
                    before = x
                    continue
                dec.take(0, table.esc, table.total)
            slot = dec.peek(base.total)
            if slot >= base.esc:
                start, freq, x = base.find(slot)
                dec.take(start, freq, base.total)
            else:
                dec.take(0, base.esc, base.total)
                x = dec.uniform(BYTES)
                if x in base.starts:
                    raise DecodeError("chars: an escape to a byte its table lists")
            if table is not None and x in table.starts:
                raise DecodeError("chars: an escape to a byte its table lists")
            if x == END:
                break
            out.append(x)
            before = x
        try:
            return out.decode()
        except UnicodeDecodeError as exc:
            raise DecodeError("chars: the bytes are not UTF-8") from exc

    def symbols(self) -> int:
        """Table entries (``_format.MAX_ENTRIES`` counts each table's symbols)."""
        return len(self.base.symbols) + sum(len(t.symbols) for t in self.tables.values())

    def describe(self) -> str:
        return f"chars({len(self.tables)} contexts)"

    def to_data(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "tables": [{"context": c, **t.to_data()} for c, t in self.tables.items()],
            "base": self.base.to_data(),
            **self._counts(),
        }


def parts(node: Node) -> Iterator[Node]:
    """The nodes directly under a node."""
    for name in ("fallback", "other", "inner", "count", "rest", "lengths", "item", "buckets", "key", "value"):
        sub = getattr(node, name, None)
        if isinstance(sub, Node):
            yield sub
    yield from getattr(node, "children", None) or getattr(node, "words", None) or ()


def walk(node: Node) -> Iterator[Node]:
    """The node and every node under it."""
    yield node
    for sub in parts(node):
        yield from walk(sub)


def entries(node: Node) -> int:
    """Table entries under ``node`` (categorical values, rule pairs, object keys, chars symbols), as
    ``_format.MAX_ENTRIES`` counts them."""
    count = 0
    for n in walk(node):
        table = getattr(n, "values", None) if isinstance(n, Categorical) else getattr(n, "table", None)
        count += len(table) if isinstance(n, (Categorical, Given, Prefixed)) and table is not None else 0
        count += len(n.keys) if isinstance(n, Object) else 0
        count += n.symbols() if isinstance(n, Chars) else 0
    return count


def loops(node: Node) -> int:
    """The most ``array`` and ``words`` nodes nested one inside another under ``node``: the loops
    its generated code nests (Python compiles at most 20 nested blocks)."""
    return isinstance(node, (Array, Words)) + max(map(loops, parts(node)), default=0)
