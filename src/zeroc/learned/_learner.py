"""Learning a model: for every field, the cheapest node its values allow (leave-one-out
pricing; side-stream text priced with probe dictionaries trained on each half of the samples)."""

from __future__ import annotations

import math
import os
from collections import Counter
from collections.abc import Callable
from itertools import pairwise
from typing import Any

import zstandard as zstd

from zeroc import _json
from zeroc._compression import ZstdEngine
from zeroc.learned._format import MAX_LOOPS, MAX_SPAN
from zeroc.learned._nodes import (
    DIGITS,
    MAX_BITS,
    MAX_CATEGORIES,
    NUMBER,
    SURE,
    TEMPLATE,
    Affix,
    Array,
    Categorical,
    Chars,
    Decimal,
    Given,
    IntRange,
    Magnitude,
    Map,
    Node,
    Object,
    Prefixed,
    Raw,
    Shape,
    SumOf,
    Template,
    Words,
    as_key,
    from_key,
    url_quote,
)

PRICED_VALUES = 1024
# Levels of nesting a model learns; below, values are JSON text. Each level may take two nodes
# (a union's table, then the model of the rest), and models may be 64 deep.
LEARNED_DEPTH = 24
MAX_SHAPES = 16  # key orders an object's chain of shapes may hold
CHARS_VALUES = 4096  # strings a chars node learns from (an even spread)
SHORT = 16  # digit codes a few-valued table spells out when a new one comes (see _learn)
MAP_SHAPES = 8  # objects of this many key sets, and 4x more keys than an object holds, may be maps


class _Tally:
    """Fields learned of the top-level object's chain of key orders, for a progress callback."""

    def __init__(self, say: Callable[[int, int], None], total: int) -> None:
        self.say, self.done, self.total = say, 0, total

    def step(self) -> None:
        self.say(min(self.done, self.total - 1), self.total)
        self.done += 1


class Learner:
    """Chooses, for every field, the cheapest model among the candidates its values allow.

    ``text`` prices side-stream bytes: their size once compressed with the trained dictionary
    when there is one (so free text that zstd compresses well is left to zstd). ``progress``
    hears (fields learned, fields) as the top-level object's fields are learned, those of
    every key order in its chain counted."""

    def __init__(
        self,
        text: Callable[[bytes], float] | None = None,
        progress: Callable[[int, int], None] | None = None,
    ) -> None:
        self.text = text
        self.progress = progress
        self.depth = self.loops = 0  # of the values being learned

    def cost(self, node: Node, values: list[Any]) -> float:
        """Bits ``node`` costs for ``values``: priced on an even spread of at most
        ``PRICED_VALUES`` of them and scaled up. Candidates are only ranked, and pricing every
        value took two thirds of learning (cProfile, 20,000 faker records)."""
        n = len(values)
        if n <= PRICED_VALUES:
            return node.cost(values, self.text)
        spread = values[:: -(-n // PRICED_VALUES)]
        return node.cost(spread, self.text) * n / len(spread)

    def learn(self, values: list[Any]) -> Node:
        """The cheapest node for ``values``; past LEARNED_DEPTH levels of nesting (or MAX_LOOPS
        arrays, words counted in) the values' JSON text, so that a model always loads."""
        if self.depth >= LEARNED_DEPTH:
            return Raw()
        self.depth += 1
        try:
            return self._learn(values)
        finally:
            self.depth -= 1

    def _learn(self, values: list[Any]) -> Node:
        n = len(values)
        types = {type(v) for v in values}
        candidates: list[Node] = [Raw()]
        if types == {dict}:
            return self._dicts(values)
        if types == {list}:
            if self.loops >= MAX_LOOPS - 1:  # a words node may still sit under the last array
                return Raw()
            self.loops += 1
            try:
                lengths = self.learn([len(v) for v in values])
                return Array(lengths, self.learn([x for v in values for x in v]), 1, n)
            finally:
                self.loops -= 1
        union = self._union(values, types)
        if union is not None:
            candidates.append(union)
        distinct = len(set(map(as_key, values)))
        # Few distinct values: a table of them. In a small sample they may be few and still
        # mostly distinct: integers then weigh the table against ranges and magnitudes, and
        # strings against templates and shapes (dates) -- not against word models, whose
        # vocabularies a sample this small prices as if they were complete.
        few = distinct <= 64
        spread = few and distinct * 4 > n and types in ({int}, {str})
        if len(types) == 1 and (types <= {bool, type(None)} or (few and not spread)):
            if types == {str} and all(len(v) <= SHORT and v.isascii() and v.isdigit() for v in values):
                # Digit codes (a date's day, an hour): a new one is short too, and spelt out it
                # costs a few bytes in the coder, less than JSON text and the side stream it opens.
                # (Not words: a batch of messages repeats a new word, which zstd then finds.)
                return Categorical.learn(values, fallback=_chars(values))
            return Categorical.learn(values)
        if types == {int}:
            lo, width = min(values), max(values) - min(values) + 1
            # Values that grow along the samples (ids, counters, epoch times) go on growing past
            # the largest one seen: a range would send every later one to JSON text.
            if abs(lo) <= MAX_SPAN and width <= MAX_SPAN and not growing(values):  # as the reader allows
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
            scale = decimal_scale(values)
            if scale is not None:
                ints = [round(v * 10**scale) for v in values]
                candidates.append(Decimal(scale, self.learn(ints), 1, n))
        elif types == {str}:
            m = TEMPLATE.match(values[0])
            if m and all(
                len(v) == len(values[0]) and v.startswith(m.group(1)) and DIGITS.match(v, len(m.group(1)))
                for v in values
            ):
                digits = [int(v[len(m.group(1)) :]) for v in values]
                candidates.append(Template(m.group(1), len(m.group(2)), self.learn(digits), 1, n))
            elif m and all(v.startswith(m.group(1)) and NUMBER.match(v, len(m.group(1))) for v in values):
                numbers = [int(v[len(m.group(1)) :]) for v in values]  # of any length: width 0
                candidates.append(Template(m.group(1), 0, self.learn(numbers), 1, n))
            words: list[Words] = []
            if any(" " in v for v in values) and not spread:
                words += [Words.learn(self.learn, values, positional) for positional in (False, True)]
            if distinct > len(values) // 4 and not spread:  # mostly distinct: try it as tokens
                words += [Words.learn(self.learn, values, p, True) for p in (False, True)]
            for node in words:
                self._spell(node)
            candidates += words
            shape = Shape.learn(self.learn, values)
            if shape is not None:
                candidates.append(shape)
            if not spread and distinct > 1:
                candidates.append(_chars(values))
        # A shape must save 1%: within that, the word and template models code faster.
        return min(candidates, key=lambda c: self._price(c, values) * (1.01 if isinstance(c, Shape) else 1))

    def _price(self, node: Node, values: list[Any]) -> float:
        """A candidate's cost; a chars node's as if the values were new (:meth:`_unseen`)."""
        return self._unseen(values) if type(node) is Chars else self.cost(node, values)

    def _unseen(self, values: list[Any]) -> float:
        """Bits a chars model costs for values it has not seen: each half priced by a model of
        the other half (a model priced on what it learned from looks better than it will be)."""
        halves = values[0::2], values[1::2]
        if not halves[1]:
            return math.inf
        return sum(self.cost(_chars(other), half) for half, other in zip(halves, halves[::-1], strict=True))

    def _spell(self, node: Words) -> None:
        """Give each vocabulary of ``node`` a chars fallback where the words it has not seen
        cost less spelt out than as JSON text: priced on the vocabulary's distinct words, each
        half by a model of the other."""
        for vocab in node.words:
            fresh = [v for v in vocab.values if type(v) is str]
            if len(fresh) >= 2 and self._unseen(fresh) < self.cost(vocab.fallback, fresh):
                vocab.fallback = _chars(fresh)

    def _union(self, values: list[Any], types: set[type]) -> Categorical | None:
        """Values of several types (null or an object, a number or a string): the scalars that
        repeat as a table, and the rest through the model they call for -- an object's, an
        integer's -- as the table's fallback."""
        if len(types) < 2:
            return None
        counts = Counter(as_key(v) for v in values if type(v) not in (dict, list))
        table = {k: c for k, c in counts.items() if c >= 2}
        rest = [v for v in values if type(v) in (dict, list) or as_key(v) not in table]
        if not rest or len(rest) == len(values) or len({type(v) for v in rest}) == len(types):
            return None  # nothing repeats, or the rest mixes as many types: no simpler than before
        top = sorted(table.items(), key=lambda kc: -kc[1])[:MAX_CATEGORIES]
        return Categorical([from_key(k) for k, _ in top], [c for _, c in top], len(rest), self.learn(rest))

    def _dicts(self, values: list[dict[str, Any]]) -> Object | Map:
        """Objects: a chain of key orders or, where the keys are data (many key sets), a map
        of key and value models -- whichever costs less."""
        node = self._object(values)
        keys = {k for v in values for k in v}
        if len({tuple(v) for v in values}) < MAP_SHAPES or len(keys) * len(values) <= 4 * sum(
            map(len, values)
        ):
            return node  # few key sets, or few keys for their number: a record, not a map
        entries = [(k, x) for v in values for k, x in v.items()]
        names = self.learn([k for k, _ in entries])
        items = self.learn([x for _, x in entries])
        candidate = Map(self.learn([len(v) for v in values]), names, items, 1, len(values))
        return candidate if self.cost(candidate, values) < self.cost(node, values) else node

    def _object(self, values: list[dict[str, Any]], shapes: int = 1, tally: _Tally | None = None) -> Object:
        """The most common key order's object; the others escape to the next most common's
        (at most ``MAX_SHAPES`` in a chain, each seen at least twice) where that codes its own
        objects for less than their JSON text (priced on those alone, so that the chain costs
        one pass over the values, not one per link)."""
        n = len(values)
        ranked = Counter(tuple(v) for v in values).most_common(MAX_SHAPES)
        shape, count = ranked[0]
        if self.progress is not None:  # the top-level object reports; nested ones do not
            chain = [s for i, (s, c) in enumerate(ranked) if i == 0 or c >= 2]
            tally, self.progress = _Tally(self.progress, sum(map(len, chain))), None
        rows = [v for v in values if tuple(v) == shape]
        columns = [[r[k] for r in rows] for k in shape]
        children = []
        for j in range(len(shape)):
            if tally is not None:
                tally.step()
            children.append(self._child(columns, j))
        node = Object(shape, children, n - count + 1, count)
        rest = [v for v in values if tuple(v) != shape]
        if rest and shapes < MAX_SHAPES and Counter(tuple(v) for v in rest).most_common(1)[0][1] >= 2:
            other = self._object(rest, shapes + 1, tally)
            own = [v for v in rest if other.fits(v)]
            if self.cost(other, own) < self.cost(Raw(), own):
                node.other = other
        return node

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
                ka = as_key(a)
                if ka in table and as_key(table[ka]) != as_key(b):
                    clash.add(ka)
                table.setdefault(ka, b)
            for ka in clash:
                del table[ka]
            rest = [
                b
                for a, b in zip(columns[i], target, strict=True)
                if not (as_key(a) in table and as_key(table[as_key(a)]) == as_key(b))
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
                groups.setdefault(as_key(a), []).append(b)
            if len(groups) > max(64, n // 50):
                continue
            table = {k: os.path.commonprefix(vs) for k, vs in groups.items() if len(vs) >= 5}  # noqa: RUF071 - character-wise is meant
            table = {k: p for k, p in table.items() if p}
            if not table:
                continue
            pairs = list(zip(columns[i], target, strict=True))
            hits = [b[len(table[as_key(a)]) :] for a, b in pairs if as_key(a) in table]
            misses = [b for a, b in pairs if as_key(a) not in table]
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
                    mid = url_quote(a) if quoted else a
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
        scale = decimal_scale([v for v in target if type(v) is float]) or 0
        for i in range(j):
            first = columns[i][0]
            if not (type(first) is list and first and type(first[0]) is dict):
                continue
            numeric = [k for k, v in first[0].items() if type(v) in (int, float)]
            for ai, a in enumerate(numeric):
                for b in numeric[ai:]:
                    rule = SumOf(i, a, b, scale, Raw(), 1, n)
                    rest = [
                        t
                        for s, t in zip(columns[i], target, strict=True)
                        if as_key(rule.compute(s)) != as_key(t)
                    ]
                    if len(rest) * 20 <= n:
                        other = self.learn(rest) if rest else self.learn(target)
                        total = SumOf(i, a, b, scale, other, len(rest) + 1, n)
                        total.sure = not isinstance(other, Raw) and len(rest) * SURE <= n
                        return total
        return None


def _chars(values: list[Any]) -> Chars:
    """A chars node learned from an even spread of at most CHARS_VALUES strings: order-1 tables
    need no more, and learning from every sample was a third of a 50,000-record training."""
    return Chars.learn(values[:: -(-len(values) // CHARS_VALUES)])


def growing(values: list[int]) -> bool:
    """Whether integers rise along the samples (8 values or more): from one to the next (at least
    90% of steps), or, where the samples are batches of consecutive messages (windows that each
    rise and overlap; 32 values or more), from the first quarter to the last (all but a tenth of
    the last above all but a tenth of the first)."""
    steps = len(values) - 1
    if steps < 7:
        return False
    if sum(b > a for a, b in pairwise(values)) >= 0.9 * steps:
        return True
    quarter = len(values) // 4
    if quarter < 8:  # two values of each end could rise by chance
        return False
    first, last = sorted(values[:quarter]), sorted(values[-quarter:])
    return last[quarter // 10] > first[-1 - quarter // 10]


def decimal_scale(values: list[float]) -> int | None:
    longest = 0
    for v in values:
        r = repr(v)
        if "e" in r or "n" in r:
            return None
        longest = max(longest, len(r) - r.index(".") - 1)
    return longest if longest <= 6 else None


def text_pricer(samples: list[Any], side: Any, size: int) -> Callable[[bytes], float] | None:
    """Bits a value's JSON text costs in a compressed side stream, as if the value were new.

    The trained dictionary has seen every training value, so pricing training values with it
    would make JSON text look nearly free. Instead two probe dictionaries are trained, one on
    each half of the samples, and a text costs the larger of its two prices: the price from the
    half that did not see it (unless both did, and then it is common and cheap indeed)."""
    texts = [_json.owned(_json.dumps(v)) for v in samples]
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
            bits = prices[_json.owned(data)] = 8 * min(len(data), max(packed, 1))  # see owned()
        return bits

    return text
