"""Learned field models (issue 6, first part): per-field statistics learned from samples,
coded with the exact arithmetic coder in ``_arith``. Not yet a frame method: this module learns a model
and codes values with it; integration with ``train``/``Codec`` and the frame format is to come.

Every node accepts any JSON value: what its statistics do not cover goes through an escape
symbol to a fallback that writes the value's JSON text, so decoding is always exact.
"""

from __future__ import annotations

import math
import os
import re
from collections import Counter
from typing import Any

from zeroc import _json
from zeroc._arith import Decoder, Encoder, _code_length
from zeroc._errors import DecodeError

MAX_CATEGORIES = 4096
_TEMPLATE = re.compile(r"^(\D*?)(\d+)$")


def _bits(p: float) -> float:
    return -math.log2(p)


class Node:
    """A model of one field: ``encode(value, enc)`` and ``decode(dec)``."""

    def encode(self, v: Any, enc: Encoder) -> None:
        raise NotImplementedError

    def decode(self, dec: Decoder) -> Any:
        raise NotImplementedError

    def cost(self, values: list[Any]) -> float:
        """Bits these values cost under this model (for choosing between candidates)."""
        enc = Encoder()
        for v in values:
            self.encode(v, enc)
        return sum(math.log2(total / freq) for _s, freq, total in enc.ops) + 8 * sum(map(len, enc.side))

    def describe(self) -> str:
        return type(self).__name__


# -- the escape path: any JSON value as its text -------------------------------------------------
def put_raw(v: Any, enc: Encoder) -> None:
    data = _json.dumps(v)
    for op in _code_length(len(data)):
        enc.put(*op)
    enc.put_bytes(data)


def get_raw(dec: Decoder) -> Any:
    width = dec.uniform(64)
    n = 0 if width == 0 else 1 if width == 1 else (1 << (width - 1)) + dec.uniform(1 << (width - 1))
    return _json.loads(dec.take_bytes(n))


class Raw(Node):
    def encode(self, v: Any, enc: Encoder) -> None:
        put_raw(v, enc)

    def decode(self, dec: Decoder) -> Any:
        return get_raw(dec)


class Escaping(Node):
    """A node with an escape symbol: slot 0..esc-1 means "not modelled", and the value then goes
    through ``other`` (its JSON text unless a subclass sets a better fallback)."""

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


class Categorical(Node):
    """Seen values with their counts, plus an escape whose weight is the number of values seen
    once (Good-Turing: how often a new value turns up)."""

    def __init__(self, values: list[Any], fallback: Node | None = None) -> None:
        self.fallback = fallback or Raw()  # where unseen values go (a range for integers)
        counts = Counter(_key(v) for v in values)
        self.values = [_unkey(k) for k, _ in counts.most_common(MAX_CATEGORIES)]
        self.keys = [_key(v) for v in self.values]
        freqs = [counts[k] for k in self.keys]
        self.esc = max(1, sum(1 for c in counts.values() if c == 1))
        self.starts = {}
        pos = self.esc
        for k, f in zip(self.keys, freqs, strict=True):
            self.starts[k] = (pos, f)
            pos += f
        self.total = pos
        self.table = [(s, f, v) for (s, f), v in zip(self.starts.values(), self.values, strict=True)]

    def encode(self, v: Any, enc: Encoder) -> None:
        hit = self.starts.get(_key(v))
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
        return value

    def cost(self, values: list[Any]) -> float:
        """Leave-one-out: a value seen once in training would have been new, so it costs an
        escape; scoring the training values as seen would always pick the categorical."""
        bits, escaped = 0.0, []
        for v in values:
            hit = self.starts.get(_key(v))
            if hit is None or hit[1] <= 1:
                bits += math.log2(self.total / self.esc)
                escaped.append(v)
            else:
                bits += math.log2(self.total / (hit[1] - 1))
        return bits + (self.fallback.cost(escaped) if escaped else 0.0)

    def describe(self) -> str:
        return f"categorical({len(self.values)} values)"


def _key(v: Any) -> Any:
    """A hashable key that tells 1 from 1.0 and True (categories keep the exact JSON value)."""
    return (type(v).__name__, v if not isinstance(v, (dict, list)) else _json.dumps(v))


def _unkey(k: Any) -> Any:
    kind, v = k
    return _json.loads(v) if kind in ("dict", "list") else v


class IntRange(Escaping):
    """Integers uniform in [lo, hi] (ids, timestamps)."""

    def __init__(self, lo: int, hi: int, n: int) -> None:
        self.lo, self.span = lo, hi - lo + 1
        self.esc, self.total = 1, n + 1

    def fits(self, v: Any) -> bool:
        return type(v) is int and 0 <= v - self.lo < self.span

    def put(self, v: Any, enc: Encoder) -> None:
        enc.put(v - self.lo, 1, self.span)

    def get(self, dec: Decoder) -> Any:
        return self.lo + dec.uniform(self.span)

    def describe(self) -> str:
        return f"int range({self.lo}, +{self.span})"


class Decimal(Escaping):
    """Floats that are integers / 10^k, coded through an integer model."""

    def __init__(self, scale: int, inner: Node, n: int) -> None:
        self.scale, self.inner = scale, inner
        self.esc, self.total = 1, n + 1

    def fits(self, v: Any) -> bool:
        if type(v) is not float or not math.isfinite(v):
            return False
        i = round(v * 10**self.scale)
        return i / 10**self.scale == v and math.copysign(1, v) == math.copysign(1, i or 1.0)

    def put(self, v: Any, enc: Encoder) -> None:
        self.inner.encode(round(v * 10**self.scale), enc)

    def get(self, dec: Decoder) -> Any:
        i = self.inner.decode(dec)
        if type(i) is not int:
            raise DecodeError("decimal field decoded to a non-integer")
        return i / 10**self.scale

    def describe(self) -> str:
        return f"decimal(/10^{self.scale}, {self.inner.describe()})"


class Template(Escaping):
    """Strings prefix + fixed-width digits (``ORD-0012345``), digits through an integer model."""

    def __init__(self, prefix: str, width: int, inner: Node, n: int) -> None:
        self.prefix, self.width, self.inner = prefix, width, inner
        self.esc, self.total = 1, n + 1
        self.pattern = re.compile(re.escape(prefix) + r"\d{" + str(width) + r"}\Z")

    def fits(self, v: Any) -> bool:
        return type(v) is str and self.pattern.match(v) is not None

    def put(self, v: Any, enc: Encoder) -> None:
        self.inner.encode(int(v[len(self.prefix) :]), enc)

    def get(self, dec: Decoder) -> Any:
        i = self.inner.decode(dec)
        if type(i) is not int or not 0 <= i < 10**self.width:
            raise DecodeError("template digits out of range")
        return f"{self.prefix}{i:0{self.width}d}"

    def describe(self) -> str:
        return f"template({self.prefix!r} + {self.width} digits, {self.inner.describe()})"


class Words(Escaping):
    """Space-separated words from a vocabulary: a count, then each word — from one shared
    vocabulary (search queries), or one per position (``144 Cedar Ln``: number, name, kind)."""

    MAX_POSITIONS = 8

    def __init__(self, values: list[str], n: int, positional: bool = False) -> None:
        split = [v.split(" ") for v in values]
        self.count = learn([len(w) for w in split])
        if positional:
            longest = min(max(map(len, split)), self.MAX_POSITIONS)
            self.words = [Categorical([ws[i] for ws in split if len(ws) > i]) for i in range(longest)]
        else:
            self.words = [Categorical([w for ws in split for w in ws])]
        self.esc, self.total = 1, n + 1

    def _model(self, i: int) -> Categorical:
        return self.words[min(i, len(self.words) - 1)]

    def fits(self, v: Any) -> bool:
        return type(v) is str and v != "" and "  " not in v and v.strip(" ") == v

    def put(self, v: Any, enc: Encoder) -> None:
        words = v.split(" ")
        self.count.encode(len(words), enc)
        for i, w in enumerate(words):
            self._model(i).encode(w, enc)

    def get(self, dec: Decoder) -> Any:
        n = self.count.decode(dec)
        if type(n) is not int or not 0 < n <= 10_000:
            raise DecodeError("word count out of range")
        words = [self._model(i).decode(dec) for i in range(n)]
        if not all(type(w) is str for w in words):
            raise DecodeError("a word decoded to a non-string")
        return " ".join(words)

    def describe(self) -> str:
        kind = "by position" if len(self.words) > 1 else "shared"
        return f"words({kind}, {self.words[0].describe()})"


class Object(Escaping):
    """Objects with one key order: each key's value through its own model."""

    def __init__(self, keys: tuple[str, ...], children: list[Node], n: int, misses: int) -> None:
        self.keys, self.children = keys, children
        self.esc, self.total = misses + 1, n + misses + 1

    def fits(self, v: Any) -> bool:
        return type(v) is dict and tuple(v) == self.keys

    def put(self, v: Any, enc: Encoder) -> None:
        context: list[Any] = []
        for child, value in zip(self.children, v.values(), strict=True):
            if isinstance(child, (Predicted, Prefixed)):
                child.context = context
            child.encode(value, enc)
            context.append(value)

    def get(self, dec: Decoder) -> Any:
        context: list[Any] = []
        for child in self.children:
            if isinstance(child, (Predicted, Prefixed)):
                child.context = context
            context.append(child.decode(dec))
        return dict(zip(self.keys, context, strict=True))

    def describe(self) -> str:
        inner = ", ".join(f"{k}: {c.describe()}" for k, c in zip(self.keys, self.children, strict=True))
        return "{" + inner + "}"


_MISS = object()


class Predicted(Escaping):
    """A field computed from earlier fields of its object, with an escape to ``other`` for the
    values that break the rule: one flag symbol when the prediction holds."""

    def __init__(self, other: Node, n: int, misses: int) -> None:
        self.other = other
        self.esc, self.total = misses + 1, n + misses + 1
        self.context: list[Any] = []  # the object's earlier values, set by Object

    def predict(self) -> Any:
        raise NotImplementedError

    def fits(self, v: Any) -> bool:
        predicted = self.predict()
        return predicted is not _MISS and _key(predicted) == _key(v)

    def put(self, v: Any, enc: Encoder) -> None:
        pass  # the prediction is the value

    def get(self, dec: Decoder) -> Any:
        predicted = self.predict()
        if predicted is _MISS:
            raise DecodeError("a predicted field has no prediction")
        return predicted


class Given(Predicted):
    """A field set by an earlier one (price given product, country given city): a table."""

    def __init__(self, source: int, table: dict[Any, Any], other: Node, n: int, misses: int) -> None:
        super().__init__(other, n, misses)
        self.source, self.table = source, table

    def predict(self) -> Any:
        return self.table.get(_key(self.context[self.source]), _MISS)

    def describe(self) -> str:
        return f"given(field {self.source}, {len(self.table)} entries; else {self.fallback_name()})"


class SumOf(Predicted):
    """A total: round(sum(item[a] * item[b]) over the items of an earlier array field, k)."""

    def __init__(
        self, source: int, a: str, b: str, scale: int, other: Node, n: int, misses: int, label: str
    ) -> None:
        super().__init__(other, n, misses)
        self.source, self.a, self.b, self.scale, self.label = source, a, b, scale, label

    def predict(self) -> Any:
        try:
            total = sum(x[self.a] * x[self.b] for x in self.context[self.source])
        except (TypeError, KeyError, IndexError):
            return _MISS
        return round(total, self.scale) if isinstance(total, float) else total

    def describe(self) -> str:
        return f"{self.label}; else {self.fallback_name()}"


class Prefixed(Escaping):
    """A string whose prefix is set by an earlier field (postal code given city): the prefix
    from a table, the rest through its own model; an escape to ``other`` for the rest."""

    def __init__(
        self, source: int, table: dict[Any, str], rest: Node, other: Node, n: int, misses: int
    ) -> None:
        self.source, self.table, self.rest, self.other = source, table, rest, other
        self.esc, self.total = misses + 1, n + misses + 1
        self.context: list[Any] = []

    def _prefix(self) -> str | None:
        return self.table.get(_key(self.context[self.source]))

    def fits(self, v: Any) -> bool:
        prefix = self._prefix()
        return prefix is not None and type(v) is str and v.startswith(prefix)

    def put(self, v: Any, enc: Encoder) -> None:
        self.rest.encode(v[len(self._prefix() or "") :], enc)

    def get(self, dec: Decoder) -> Any:
        prefix, rest = self._prefix(), self.rest.decode(dec)
        if prefix is None or type(rest) is not str:
            raise DecodeError("a prefixed field cannot be rebuilt")
        return prefix + rest

    def describe(self) -> str:
        return f"prefix given field {self.source} + {self.rest.describe()}; else {self.fallback_name()}"


def _prefix_rule(columns: list[list[Any]], j: int) -> Prefixed | None:
    """Column j (strings) = a prefix fixed by an earlier low-cardinality column + a rest."""
    target = columns[j]
    n = len(target)
    if not all(type(v) is str for v in target):
        return None
    alone = learn(target).cost(target)
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
        hits = [
            (b[len(table[_key(a)]) :]) for a, b in zip(columns[i], target, strict=True) if _key(a) in table
        ]
        misses = [b for a, b in zip(columns[i], target, strict=True) if _key(a) not in table]
        rest = learn(hits)
        other = learn(misses) if misses else Raw()
        flag = n * math.log2((n + len(misses) + 1) / max(len(hits), 1))
        cost = flag + rest.cost(hits) + (other.cost(misses) if misses else 0.0)
        if cost < alone:
            best, alone = Prefixed(i, table, rest, other, len(hits), len(misses)), cost
    return best


def _sum_rule(columns: list[list[Any]], keys: tuple[str, ...], j: int) -> SumOf | None:
    """Column j == round(sum(item[a] * item[b]) over the items of an earlier array column)."""
    target = columns[j]
    n = len(target)
    if not all(type(v) in (int, float) for v in target):
        return None
    scale = _scale([v for v in target if type(v) is float]) or 0
    rows = [list(r) for r in zip(*columns, strict=True)]
    for i in range(j):
        first = columns[i][0]
        if not (type(first) is list and first and type(first[0]) is dict):
            continue
        numeric = [k for k, v in first[0].items() if type(v) in (int, float)]
        for ai, a in enumerate(numeric):
            for b in numeric[ai:]:
                rule = SumOf(i, a, b, scale, Raw(), n, 0, f"sum({keys[i]}: {a} x {b})")
                misses = []
                for row, t in zip(rows, target, strict=True):
                    rule.context = row
                    if _key(rule.predict()) != _key(t):
                        misses.append(t)
                if len(misses) * 20 <= n:
                    other = learn(misses) if misses else learn(target)
                    return SumOf(i, a, b, scale, other, n, len(misses), rule.label)
    return None


def _dependency(columns: list[list[Any]], j: int) -> Given | None:
    """Column j as a function of an earlier column, when that is cheaper than modelling it alone."""
    target = columns[j]
    n = len(target)
    best: Given | None = None
    alone = learn(target)
    best_cost = alone.cost(target)
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
        hits = sum(
            1
            for a, b in zip(columns[i], target, strict=True)
            if _key(a) in table and _key(table[_key(a)]) == _key(b)
        )
        if hits < n * 0.5 or len(table) > n // 2:
            continue
        misses = n - hits
        # Cost: the flag for every value, the fallback for the misses, and the table itself.
        flag = n * math.log2((n + misses + 1) / n) + misses * math.log2((n + misses + 1) / (misses + 1))
        rest = [
            b
            for a, b in zip(columns[i], target, strict=True)
            if not (_key(a) in table and _key(table[_key(a)]) == _key(b))
        ]
        other = learn(rest) if rest else alone
        cost = flag + (other.cost(rest) if rest else 0)
        if cost < best_cost:
            best, best_cost = Given(i, table, other, n, misses), cost
    return best


class Array(Escaping):
    """Arrays: a length, then each item through one shared model."""

    def __init__(self, lengths: Node, item: Node, n: int) -> None:
        self.lengths, self.item = lengths, item
        self.esc, self.total = 1, n + 1

    def fits(self, v: Any) -> bool:
        return type(v) is list

    def put(self, v: Any, enc: Encoder) -> None:
        self.lengths.encode(len(v), enc)
        for x in v:
            self.item.encode(x, enc)

    def get(self, dec: Decoder) -> Any:
        n = self.lengths.decode(dec)
        if type(n) is not int or not 0 <= n <= 1_000_000:
            raise DecodeError("array length out of range")
        return [self.item.decode(dec) for _ in range(n)]

    def describe(self) -> str:
        return f"[{self.item.describe()}]"


# -- learning ---------------------------------------------------------------------------------------
def learn(values: list[Any]) -> Node:
    """The cheapest model of these values among the candidates their types allow."""
    n = len(values)
    types = {type(v) for v in values}
    candidates: list[Node] = [Raw()]
    if types == {dict}:
        shape, count = Counter(tuple(v) for v in values).most_common(1)[0]
        rows = [v for v in values if tuple(v) == shape]
        columns = [[r[k] for r in rows] for k in shape]
        children = [
            _sum_rule(columns, shape, j)
            or _dependency(columns, j)
            or _prefix_rule(columns, j)
            or learn(columns[j])
            for j in range(len(shape))
        ]
        return Object(shape, children, count, n - count)
    if types == {list}:
        return Array(learn([len(v) for v in values]), learn([x for v in values for x in v]), n)
    if len(types) == 1 and (types <= {bool, type(None)} or len(set(map(_key, values))) <= 64):
        return Categorical(values)
    distinct = len(set(map(_key, values)))
    if types == {int}:
        span = IntRange(min(values), max(values), n)
        candidates.append(span)
        if distinct <= MAX_CATEGORIES:
            candidates.append(Categorical(values, fallback=span))
    elif distinct <= MAX_CATEGORIES:
        candidates.append(Categorical(values))
    if types == {float}:
        scale = _scale(values)
        if scale is not None:
            ints = [round(v * 10**scale) for v in values]
            candidates.append(Decimal(scale, learn(ints), n))
    elif types == {str}:
        m = _TEMPLATE.match(values[0])
        if m and all(
            len(v) == len(values[0]) and v.startswith(m.group(1)) and v[len(m.group(1)) :].isdigit()
            for v in values
        ):
            digits = [int(v[len(m.group(1)) :]) for v in values]
            candidates.append(Template(m.group(1), len(m.group(2)), learn(digits), n))
        if any(" " in v for v in values):
            candidates += [Words(values, n), Words(values, n, positional=True)]
    return min(candidates, key=lambda c: c.cost(values))


def _scale(values: list[float]) -> int | None:
    longest = 0
    for v in values:
        r = repr(v)
        if "e" in r or "n" in r:
            return None
        longest = max(longest, len(r) - r.index(".") - 1)
    return longest if longest <= 6 else None


class Model:
    """A learned model of a message: ``encode(value) -> bytes``, ``decode(bytes) -> value``."""

    def __init__(self, root: Node) -> None:
        self.root = root

    @classmethod
    def learn(cls, samples: list[Any]) -> Model:
        return cls(learn(samples))

    def encode(self, value: Any) -> bytes:
        enc = Encoder()
        self.root.encode(value, enc)
        return enc.finish()

    def decode(self, data: bytes) -> Any:
        dec = Decoder(data)
        try:
            value = self.root.decode(dec)
        except (RecursionError, UnicodeDecodeError, ValueError) as exc:
            if isinstance(exc, DecodeError):
                raise
            raise DecodeError(f"learned-model payload does not decode: {exc}") from exc
        dec.finish()
        return value

    def describe(self) -> str:
        return self.root.describe()
