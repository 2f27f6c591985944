"""Packed CBOR (draft-ietf-cbor-packed-19, Basic Packed CBOR) as an import and export format.

Unpacking follows the draft: table setup by tags 113 (one table for shared items and arguments)
and 1113 (split tables); shared item references (simple values 0-15, tag 6 with an integer);
argument references (tags 128-135 straight, 136-143 inverted, tag 6 with ``[N, rump]``);
concatenation of strings, arrays and maps (with `undefined` removing a map entry); the function
tags 106 (join), 105 (ijoin) and 114 (record). An index outside its table is an error (the
draft's first alternative, not tag 1112); references chase at most ``MAX_CHASE`` levels (a
loop is an error) and what unpacking builds is counted against a budget, so a small hostile
item cannot blow up. Tags this module does not know are an error: the JSON data model is what
Zeroc's tables hold. The stand-in items and the splicing tag 1115 are application-defined and
not used.

Packing writes the forms the CBOR tabular study compares: every object whose key list recurs is
a record (an argument ``114([keys])`` and a straight reference holding the values), and strings
and numbers worth it are shared items, the most frequent taking the one-byte references.
cbor2 (the CBOR library the bench already uses) reads and writes the CBOR itself.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import cbor2

from zeroc._errors import DecodeError, EncodeError, LimitExceeded

MAX_CHASE = 32  # nested references followed at most (the draft compares symbolic-link limits)
MAX_BUILT = 1 << 24  # values plus string bytes one unpacking builds, by default
_SHARED, _STRAIGHT, _INVERTED = 16, 128, 136
_SCALARS = frozenset({int, float, bool, type(None)})
# What no map key may be: a function tag left unapplied is one (cbor2 cannot hash its array).
_NOT_KEYS = (list, dict, cbor2.CBORTag)
_FROZEN = type(cbor2.loads(cbor2.dumps(cbor2.CBORTag(200, {}))).value)  # cbor2's frozendict


class _Scope:
    """The active tables: shared items and arguments, each entry with the scope it is read in."""

    def __init__(
        self, shared: list[tuple[Any, _Scope | None]], args: list[tuple[Any, _Scope | None]]
    ) -> None:
        self.shared, self.args = shared, args
        self.memo: dict[tuple[bool, int], tuple[Any, int]] = {}


_EMPTY = _Scope([], [])


class _Unpacker:
    def __init__(self, budget: int) -> None:
        self.budget, self.limit = budget, budget

    def spend(self, n: int) -> None:
        self.budget -= n
        if self.budget < 0:
            raise LimitExceeded(f"unpacking would build more than {self.limit} values and bytes (max_built)")

    def value(self, item: Any, scope: _Scope, depth: int = 0) -> Any:
        """The unpacked value of ``item``; function tags stay tags (their caller applies them)."""
        t = type(item)
        if t in _SCALARS:
            self.spend(1)
            return item
        if t is str or t is bytes:
            self.spend(1 + len(item) // 16)
            return item
        if t is list or t is tuple:
            self.spend(1 + len(item))  # each item once, here: scalars come back as they are
            return [x if type(x) in _SCALARS else self._nested(x, scope, depth) for x in item]
        if t is dict or t is _FROZEN:  # cbor2 gives maps inside a tag as its frozendict
            self.spend(1)
            out = {}
            for k, v in item.items():
                key = self.value(k, scope, depth)
                if isinstance(key, _NOT_KEYS):
                    raise DecodeError("a map key that is an array, a map or a tag (not JSON's)")
                out[key] = self.value(v, scope, depth)
            return out
        if isinstance(item, cbor2.CBORSimpleValue):
            if item.value < _SHARED:
                return self.shared(item.value, scope, depth)
            raise DecodeError(f"simple value {item.value} is not in the JSON data model")
        if isinstance(item, cbor2.CBORTag):
            return self.tag(item.tag, item.value, scope, depth)
        if item is cbor2.undefined:
            return item
        raise DecodeError(f"{t.__name__} (a CBOR tag cbor2 decodes) is not in the JSON data model")

    def _nested(self, x: Any, scope: _Scope, depth: int) -> Any:
        """An array item that is not a scalar: its value, which counts itself (so the one its
        array counted for it is given back)."""
        self.budget += 1
        return self.value(x, scope, depth)

    def tag(self, number: int, content: Any, scope: _Scope, depth: int) -> Any:
        if number == 113 or number == 1113:
            parts = 2 if number == 113 else 3
            if not isinstance(content, (list, tuple)) or len(content) != parts:
                raise DecodeError(f"tag {number} holds an array of {parts}")
            tables = content[:-1]
            if not all(isinstance(x, (list, tuple)) for x in tables):
                raise DecodeError(f"tag {number}'s tables are not arrays")
            inner = _Scope([], [])  # items of the new tables are read in the new number space
            shared, args = (tables[0], tables[0]) if number == 113 else tables
            inner.shared = [(x, inner) for x in shared] + scope.shared
            inner.args = [(x, inner) for x in args] + scope.args
            return self.value(content[-1], inner, depth)
        if number == 6:
            if type(content) is int:
                return self.shared(
                    _SHARED + 2 * content if content >= 0 else _SHARED - 2 * content - 1, scope, depth
                )
            if isinstance(content, (list, tuple)) and len(content) == 2 and type(content[0]) is int:
                n, rump = content
                if n >= 0:
                    return self.argument(8 + n, rump, True, scope, depth)
                return self.argument(8 - n - 1, rump, False, scope, depth)
            raise DecodeError("tag 6 holds an integer or [integer, rump]")
        if _STRAIGHT <= number < _INVERTED + 8:
            straight = number < _INVERTED
            return self.argument(
                number - (_STRAIGHT if straight else _INVERTED), content, straight, scope, depth
            )
        if number in (105, 106, 114):  # function tags: applied by the reference that finds them
            return cbor2.CBORTag(number, self.value(content, scope, depth))
        raise DecodeError(f"tag {number} is not Packed CBOR and not in the JSON data model")

    def _entry(self, table: bool, index: int, scope: _Scope, depth: int) -> Any:
        entries = scope.shared if table else scope.args
        if index >= len(entries):
            kind = "shared item" if table else "argument"
            raise DecodeError(f"{kind} {index} is outside its table of {len(entries)}")
        if depth >= MAX_CHASE:
            raise DecodeError(f"references nested deeper than {MAX_CHASE} (a reference loop?)")
        key = (table, index)
        if key in scope.memo:  # each reference still counts what it stands for
            value, cost = scope.memo[key]
            self.spend(cost)
            return value
        item, home = entries[index]
        before = self.budget
        value = self.value(item, home or _EMPTY, depth + 1)
        scope.memo[key] = (value, before - self.budget)
        return value

    def shared(self, index: int, scope: _Scope, depth: int) -> Any:
        return self._entry(True, index, scope, depth)

    def argument(self, index: int, rump: Any, straight: bool, scope: _Scope, depth: int) -> Any:
        arg = self._entry(False, index, scope, depth)
        rump = self.value(rump, scope, depth)
        left, right = (arg, rump) if straight else (rump, arg)
        if isinstance(left, cbor2.CBORTag):  # a function tag: its number says what to do
            return self.apply(left.tag, left.value, right)
        return self.concat(left, right, rump_right=straight)

    def apply(self, function: int, left: Any, right: Any) -> Any:
        if function == 106:
            return self.join(left, right)
        if function == 105:
            return self.join(right, left)
        if function == 114:
            if not isinstance(left, list) or not isinstance(right, list) or len(right) > len(left):
                raise DecodeError("record: keys must be an array at least as long as the values")
            if any(isinstance(k, _NOT_KEYS) for k in left):
                raise DecodeError("record: a key that is an array, a map or a tag")
            out = dict(zip(left, right, strict=False))  # values past the last are absent
            if len(out) != len(right):
                raise DecodeError("record: a key repeated")
            if any(v is cbor2.undefined for v in right):  # undefined: the entry is absent
                out = {k: v for k, v in out.items() if v is not cbor2.undefined}
            return out
        raise DecodeError(f"tag {function} is not a function tag")

    def join(self, joiner: Any, items: Any) -> Any:
        if not isinstance(items, list):
            raise DecodeError("join: the right-hand side is not an array")
        if not items:
            return type(joiner)() if isinstance(joiner, (str, bytes, list, dict)) else _invalid("join")
        out = items[0]
        for x in items[1:]:
            out = self.concat(self.concat(out, joiner, rump_right=False), x, rump_right=False)
        return out

    def concat(self, left: Any, right: Any, *, rump_right: bool) -> Any:
        if isinstance(left, list) and isinstance(right, list):
            self.spend(len(left) + len(right))
            return left + right
        if isinstance(left, dict) and isinstance(right, dict):
            self.spend(len(left) + len(right))
            out = dict(left)
            for k, v in right.items():
                if v is cbor2.undefined:
                    out.pop(k, None)
                else:
                    out[k] = v
            return out
        strings = (str, bytes)
        if isinstance(left, strings) and isinstance(right, strings):
            rump = right if rump_right else left
            raw = _bytes(left) + _bytes(right)
            self.spend(len(raw) // 16 + 1)
            if isinstance(rump, bytes):
                return raw
            try:
                return raw.decode("utf-8")
            except UnicodeDecodeError:
                raise DecodeError("a concatenated text string is not UTF-8") from None
        if isinstance(left, strings) and isinstance(right, list):
            return self.join(left, right)
        if isinstance(left, list) and isinstance(right, strings):
            return self.join(right, left)
        return _invalid("concatenation")


def _bytes(s: str | bytes) -> bytes:
    return s.encode("utf-8", "surrogatepass") if isinstance(s, str) else s


def _invalid(what: str) -> Any:
    raise DecodeError(f"{what} of items it does not define")


def _json_only(value: Any) -> Any:
    """Refuse what the JSON data model lacks (undefined left over, byte strings, odd keys)."""
    stack = [value]
    while stack:
        v = stack.pop()
        if isinstance(v, dict):
            if not all(type(k) is str for k in v):
                raise DecodeError("a map key that is not a text string (not in the JSON data model)")
            stack.extend(v.values())
        elif isinstance(v, list):
            stack.extend(v)
        elif v is cbor2.undefined or isinstance(v, (bytes, cbor2.CBORTag)):
            raise DecodeError(f"{type(v).__name__} is not in the JSON data model")
    return value


def unpack_item(item: Any, *, max_built: int = MAX_BUILT) -> Any:
    """The unpacked data item of a decoded Packed CBOR item (tags and simple values as cbor2
    gives them), function tags left as they are."""
    try:
        return _Unpacker(max_built).value(item, _EMPTY)
    except RecursionError:
        raise DecodeError("packed item nested too deeply") from None


def unpack(data: bytes, *, max_built: int = MAX_BUILT) -> Any:
    """The JSON value a Packed CBOR document (bytes) stands for. A shared array or map comes
    back as one object wherever it is referenced (as cbor2 gives shared values): copy before
    changing one place alone."""
    try:
        item = cbor2.loads(data)
    except (cbor2.CBORDecodeError, ValueError, TypeError, RecursionError, OverflowError, MemoryError) as exc:
        raise DecodeError(f"not CBOR: {exc}") from None
    return _json_only(unpack_item(item, max_built=max_built))


# -- packing --------------------------------------------------------------------------------------
def _ref_size(index: int) -> int:
    """Bytes of the cheapest reference to shared item ``index``."""
    if index < _SHARED:
        return 1
    n = (index - _SHARED) // 2
    return 1 + (1 if n < 24 else 2 if n < 256 else 3 if n < 65536 else 5)


def _straight(index: int, rump: Any) -> cbor2.CBORTag:
    if index < 8:
        return cbor2.CBORTag(_STRAIGHT + index, rump)
    return cbor2.CBORTag(6, [index - 8, rump])


def _shared_ref(index: int) -> Any:
    if index < _SHARED:
        return cbor2.CBORSimpleValue(index)
    n = index - _SHARED
    return cbor2.CBORTag(6, n // 2 if n % 2 == 0 else -(n // 2) - 1)


def _key(v: str | int | float) -> tuple[type, Any]:
    """A scalar's identity: its type and value (0.0 and -0.0 apart, NaN one value)."""
    t = type(v)
    if t is float and (v == 0 or v != v):  # equal to each other, or not even to itself
        return (float, repr(v))
    return (t, v)


def _value(key: tuple[type, Any]) -> Any:
    return float(key[1]) if key[0] is float and type(key[1]) is str else key[1]


def _size(v: str | int | float) -> int:
    """Bytes of ``v`` as cbor2 writes it (floats at 64 bits)."""
    if isinstance(v, float):
        return 9
    if isinstance(v, str):
        n = len(v.encode("utf-8", "surrogatepass"))  # a lone surrogate fails later, in dumps
        return _head(n) + n
    m = v if v >= 0 else -1 - v
    return len(cbor2.dumps(v)) if m >= 1 << 64 else _head(m)  # past 64 bits: a bignum


def _head(n: int) -> int:
    """Bytes of a CBOR head carrying ``n``."""
    return 1 + (0 if n < 24 else 1 if n < 256 else 2 if n < 65536 else 4 if n < 1 << 32 else 8)


def pack(doc: Any) -> bytes:
    """``doc`` (a JSON value) as Packed CBOR: records for objects whose key lists recur, shared
    items for the strings and numbers that save bytes, in one table setup (tag 1113, or 113
    when nothing is a record)."""
    shapes: Counter[tuple[str, ...]] = Counter()
    scalars: Counter[Any] = Counter()
    stack = [doc]
    while stack:
        v = stack.pop()
        if isinstance(v, dict):
            shapes[tuple(v)] += 1
            scalars.update((str, k) for k in v)
            stack.extend(v.values())
        elif isinstance(v, list):
            stack.extend(v)
        elif type(v) in (str, float) or (type(v) is int and not -24 <= v < 24):
            scalars[_key(v)] += 1
    records = {shape: i for i, shape in enumerate(s for s, n in shapes.most_common() if n > 1 and s)}
    for shape, n in shapes.items():  # a record's keys are in its template, written once
        if shape in records:
            for k in shape:
                scalars[(str, k)] -= n - 1
    shared: dict[tuple[type, Any], int] = {}
    for key, n in scalars.most_common():
        size = _size(_value(key))
        if n * (size - _ref_size(len(shared))) > size:  # references save more than the entry costs
            shared[key] = len(shared)

    def item(v: Any) -> Any:
        t = type(v)
        if t is dict:
            shape = tuple(v)
            if shape in records:
                return _straight(records[shape], [item(x) for x in v.values()])
            return {item(k): item(x) for k, x in v.items()}
        if t is list:
            return [item(x) for x in v]
        i = shared.get(_key(v)) if t in (str, float, int) else None
        return v if i is None else _shared_ref(i)

    rump = item(doc)
    table = [_value(k) for k in shared]
    templates = [cbor2.CBORTag(114, [item(k) for k in shape]) for shape in records]
    setup = cbor2.CBORTag(1113, [table, templates, rump]) if records else cbor2.CBORTag(113, [table, rump])
    try:
        return bytes(cbor2.dumps(setup))
    except UnicodeEncodeError:
        raise EncodeError("CBOR text is UTF-8: a lone surrogate cannot be written") from None
