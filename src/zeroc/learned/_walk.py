"""A model's nodes walked in C (``_native.Program``): the general rules of formats 5 and 6, and
format 6's common path.

The nodes' own ``encode``/``decode`` (general rules) and ``encode_common``/``decode_common``
(the common path, spec/LEARNED_MODEL.md §3) do this in Python; here a loaded model's nodes are
flattened into a program of C structs — each categorical's entries as a C array and dicts by
value class, chars tables as bitmaps and rows, ranges, shapes and word splitting in C — which
``_native`` walks on the model's coder: the range coder of formats 6 and 7, or format 5's block
coder in limbs. A node the program leaves to
Python (integer ranges past 64 bits, sums C cannot add exactly) keeps its Python node,
called with the native coder, which offers the Python coder's methods. The symbols, and so the
payload, are the Python walk's (tests hold both to it).
"""

from __future__ import annotations

import sys
from typing import Any

import orjson

from zeroc import _json
from zeroc._errors import DecodeError, LimitExceeded
from zeroc._frame import Method
from zeroc.learned import _nodes as fm
from zeroc.learned._coder import MAX_SYMBOLS, PER_BYTE, _number, check, finish
from zeroc.learned._nodes import Off

try:
    from zeroc.learned import _native
except ImportError:  # built without a C compiler: the nodes walk in Python
    _native = None  # type: ignore[assignment]

# Kinds of program nodes (_native.c's K_*).
PY, RAW, CAT, RANGE, MAG, DEC, TEMPLATE, SHAPE, WORDS = range(9)
OBJECT, ARRAY, MAP, GIVEN, PREFIXED, CHARS, AFFIX, SUM = range(9, 17)
DIRECT = 1 << 12  # categoricals with at most this many slots get a slot -> entry array

_I64 = 1 << 63


def _by_class(keys: list[Any]) -> tuple[dict[Any, int], dict[Any, int], dict[Any, int]]:
    """Entries by ``as_key``, as the program looks them up: str values, int values, the rest."""
    by: tuple[dict[Any, int], dict[Any, int], dict[Any, int]] = ({}, {}, {})
    for i, key in enumerate(keys):
        cls = 0 if key[0] == "str" else 1 if key[0] == "int" else 2
        by[cls][key[1] if cls < 2 else key] = i
    return by


def _block_end(num: int, den: int, x: int, R: int, nbytes: int) -> bytes:
    """The bytes an encoder writes for a block that has just ended (Decoder._next_block)."""
    shift = 8 * nbytes
    return _number((num * den - x) >> shift, R >> shift, den, True)


def _side(engine: Any, mode: int, data: bytes, max_size: int) -> bytes:
    """A compressed side stream, decompressed and checked (Decoder.__init__)."""
    if engine is None:
        raise DecodeError("side stream is compressed and this model has no dictionary")
    out: bytes = engine.decompress(Method(mode), data, max_size)
    if len(out) <= len(data):
        raise DecodeError("compressed side stream is not smaller than its content")
    return out


if _native is not None:
    _native.bind(
        _json.dumps,
        _json.loads,
        fm.as_key,
        fm.copy_value,
        _number,
        _block_end,
        _side,
        DecodeError,
        Off,
        LimitExceeded,
        orjson.loads,  # texts _json.loads would give it too: no exact mark, far below its bound
    )


def _table(t: fm.CharTable) -> tuple[int, tuple[int, ...], tuple[int, ...]]:
    """A chars table as the program takes it: (esc, symbols, counts)."""
    return t.esc, tuple(t.symbols), tuple(f for _s, f, _x in t.rows)


class _Flat:
    """A node tree as the tuples ``_native.Program`` takes, node 0 the root; a node shared by
    two parents is flattened once."""

    def __init__(self) -> None:
        self.rows: list[Any] = []
        self.index: dict[int, int] = {}

    def add(self, node: fm.Node | None) -> int:
        if node is None:
            return -1
        at = self.index.get(id(node))
        if at is not None:
            return at
        at = self.index[id(node)] = len(self.rows)
        self.rows.append(None)
        self.rows[at] = self._row(node)
        return at

    def _row(self, node: fm.Node) -> tuple[Any, ...]:
        esc = getattr(node, "esc", 0)
        total = getattr(node, "total", 0)
        kind, a, b, c = PY, -1, -1, -1
        other = -1
        kids: tuple[int, ...] = ()
        extra: tuple[Any, ...] = ()
        if isinstance(node, fm.Escaping) and not isinstance(node, fm.Rule):
            other = self.add(node.other)
        if type(node) in (fm.Given, fm.Prefixed) and not node.legacy:  # type: ignore[attr-defined]
            return self._rule(node)  # type: ignore[arg-type]
        if type(node) is fm.Affix and not node.legacy:
            leaves = node.sure or type(node.other) is fm.Raw
            extra = (node.prefix, node.suffix, node.quoted, node.numeric, node.source, leaves)
            return (AFFIX, node, node.esc, node.total, self.add(node.other), -1, -1, -1, (), extra)
        if type(node) is fm.SumOf and not node.legacy:
            leaves = node.sure or type(node.other) is fm.Raw
            extra = (node.a, node.b, node.scale, node.source, leaves)
            return (SUM, node, node.esc, node.total, self.add(node.other), -1, -1, -1, (), extra)
        if type(node) is fm.Raw:
            kind = RAW
        elif type(node) is fm.Categorical:
            kind, other = CAT, self.add(node.fallback)
            by = _by_class(node.keys)
            freqs = [f for _s, f, _v in node.table]
            direct = node.total - node.esc <= DIRECT
            table = _native.Table(freqs, node.values, node.total, node.esc, None, direct)
            extra = (*by, table, node.mutable, node.leaves())
        elif type(node) is fm.IntRange and -_I64 <= node.lo < _I64 and node.span < 1 << 64:
            kind, extra = RANGE, (node.lo, node.span)
        elif type(node) is fm.Magnitude:
            kind, a = MAG, self.add(node.buckets)
        elif type(node) is fm.Decimal:
            kind, a, extra = DEC, self.add(node.inner), (node.scale,)
        elif type(node) is fm.Template:
            kind, a, extra = TEMPLATE, self.add(node.inner), (node.prefix, node.width)
        elif type(node) is fm.Shape:
            kind, kids, extra = SHAPE, tuple(map(self.add, node.children)), (tuple(node.literals), node.kinds)
        elif type(node) is fm.Words:
            kind, a, extra = WORDS, self.add(node.count), (node.tokens,)
            kids = tuple(map(self.add, node.words))
        elif type(node) is fm.Object:
            kind, kids = OBJECT, tuple(map(self.add, node.children))
            # Interned, as keys written in source code are: a message's keys are then often
            # the same objects.
            rules = tuple(isinstance(c, fm.Rule) for c in node.children)
            extra = (tuple(map(sys.intern, node.keys)), rules, node.chained)
        elif type(node) is fm.Array:
            kind, a, b = ARRAY, self.add(node.lengths), self.add(node.item)
        elif type(node) is fm.Map:
            kind, a, b, c = MAP, self.add(node.count), self.add(node.key), self.add(node.value)
        elif type(node) is fm.Chars:
            kind = CHARS
            extra = (
                tuple((ctx, *_table(t)) for ctx, t in node.tables.items()),
                _table(node.base),
            )
        if kind in (PY, RAW):
            esc = total = 0
            other = -1
        return (kind, node, esc, total, other, a, b, c, kids, extra)

    def _rule(self, node: fm.Given | fm.Prefixed) -> tuple[Any, ...]:
        """A table rule of format 2 on: its table by source value, its prediction (a value, or a
        prefix) per entry, where an escape goes, and (prefixed) the remainder's node."""
        keys = list(node.table)
        by = _by_class(keys)
        predictions = tuple(node.table[k] for k in keys)
        leaves = node.sure or type(node.other) is fm.Raw
        kind, rest = GIVEN, -1
        if isinstance(node, fm.Prefixed):
            kind, rest = PREFIXED, self.add(node.rest)
        extra = (*by, predictions, None, node.source, leaves)
        return (kind, node, node.esc, node.total, self.add(node.other), rest, -1, -1, (), extra)


class Walk:
    """A model's nodes walked in C: ``encode_common(value)`` (format 6: the payload on the
    common path, or None off it), ``encode(value)`` (the general rules, after the flag ``off``)
    and ``decode(payload)``; ``on``/``off`` are the flag's two symbols, ``common`` the last slot
    of ``on``, ``side`` the engine of the side stream, ``version`` the model format (5 or 6)."""

    def __init__(
        self,
        root: fm.Node,
        flags: tuple[tuple[int, int, int], tuple[int, int, int]],
        side: Any,
        version: int,
        both: bool = False,
    ) -> None:
        flat = _Flat()
        flat.add(root)
        self.program = _native.Program(tuple(flat.rows))
        (self.on, self.off), self.range, self.both = flags, version >= 6, both
        self.flag_total, self.common = self.on[2], self.on[1] - 1
        self.use_side(side)

    def use_side(self, side: Any) -> None:
        """Compress side streams with ``side`` from now on (format 6 and later: ``frame`` and
        ``unframe`` use it too)."""
        self.side = side
        if self.range:
            self.program.setup(self.on, self.off, side, self.both)

    def encode_common(self, value: Any) -> bytes | None:
        enc = _native.WalkEncoder(True)
        enc.put(*self.on)
        if not self.program.encode(value, enc, True):
            return None
        return enc.finish(self.side)

    def encode_both(self, value: Any) -> tuple[bytes, bool]:
        """Format 6: the payload of ``value``, and whether it is on the common path, from one
        walk that writes both paths' symbols until the value leaves the common one."""
        general, common = _native.WalkEncoder(True), _native.WalkEncoder(True)
        general.put(*self.off)
        common.put(*self.on)
        on = self.program.encode_both(value, general, common)
        return (common if on else general).finish(self.side), on

    def encode(self, value: Any) -> bytes:
        enc = _native.WalkEncoder(self.range)
        enc.put(*self.off)
        self.program.encode(value, enc)
        if self.range:
            return enc.finish(self.side)
        first, done, low, rng, den, data, count = enc.parts()
        payload = finish(low, rng, den, data, self.side, first, done)
        if count > MAX_SYMBOLS + PER_BYTE * len(payload):
            raise LimitExceeded(f"value needs {count} learned-model symbols, more than its payload may hold")
        return payload

    def decode(self, data: bytes, max_size: int = 64 * 1024 * 1024) -> Any:
        if self.range:  # the flag, the path it names, the final checks: in one call
            return self.program.unframe(data, max_size)
        dec = _native.WalkDecoder(data, self.side, max_size, self.range)
        if dec.peek(self.flag_total) <= self.common:
            raise DecodeError("learned-model payload says common path but has a side stream or is too long")
        dec.take(*self.off)
        value = self.program.decode(dec)
        whole, start, arith, pos, size, num, x, R, den, nbytes = dec.state()
        if pos != size:
            raise DecodeError("learned-model payload has unread escaped bytes")
        contained = arith != len(whole)
        if not contained and nbytes != arith - start:
            raise DecodeError("learned-model payload is not in canonical form (longer than its last block)")
        check(whole[start:], num, 1 << (8 * nbytes), x, R, den, arith - start, contained)
        return value
