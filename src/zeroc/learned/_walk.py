"""The general rules of a format-5 model, walked in C (``_native.Program``).

A message off the model's common path (an unseen key order, text in the side stream, a value of
another type) is coded node by node by the general rules (spec/LEARNED_MODEL.md §3). The nodes'
own ``encode``/``decode`` methods do that in Python; here a loaded model's nodes are flattened
into a program of C structs — each categorical's entries as a C array and dicts by value class,
ranges, shapes and word splitting in C — which ``_native`` walks on format 5's block coder in
limbs. A node the program leaves to Python (rules, which read earlier fields; integer ranges
past 64 bits) keeps its Python node, called with the native coder, which offers the Python
coder's methods. The symbols, and so the payload, are the Python walk's (tests hold both to it).
"""

from __future__ import annotations

from typing import Any

from zeroc import _json
from zeroc._errors import DecodeError, LimitExceeded
from zeroc._frame import Method
from zeroc.learned import _nodes as fm
from zeroc.learned._coder import MAX_SYMBOLS, PER_BYTE, _number, check, finish

try:
    from zeroc.learned import _native
except ImportError:  # built without a C compiler: the nodes walk in Python
    _native = None  # type: ignore[assignment]

# Kinds of program nodes (_native.c's K_*).
PY, RAW, CAT, RANGE, MAG, DEC, TEMPLATE, SHAPE, WORDS, OBJECT, ARRAY, MAP = range(12)
DIRECT = 1 << 12  # categoricals with at most this many slots get a slot -> entry array

_I64 = 1 << 63


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
    _native.bind(_json.dumps, _json.loads, fm.as_key, fm.copy_value, _number, _block_end, _side, DecodeError)


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
        if type(node) is fm.Raw:
            kind = RAW
        elif type(node) is fm.Categorical:
            kind, other = CAT, self.add(node.fallback)
            by: tuple[dict[Any, int], dict[Any, int], dict[Any, int]] = ({}, {}, {})
            for i, key in enumerate(node.keys):
                cls = 0 if key[0] == "str" else 1 if key[0] == "int" else 2
                by[cls][key[1] if cls < 2 else key] = i
            freqs = [f for _s, f, _v in node.table]
            direct = node.total - node.esc <= DIRECT
            table = _native.Table(freqs, node.values, node.total, node.esc, None, direct)
            extra = (*by, table, node.mutable)
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
            extra = (tuple(node.keys), tuple(isinstance(c, fm.Rule) for c in node.children))
        elif type(node) is fm.Array:
            kind, a, b = ARRAY, self.add(node.lengths), self.add(node.item)
        elif type(node) is fm.Map:
            kind, a, b, c = MAP, self.add(node.count), self.add(node.key), self.add(node.value)
        if kind in (PY, RAW):
            esc = total = 0
            other = -1
        return (kind, node, esc, total, other, a, b, c, kids, extra)


class Walk:
    """A model's general rules walked in C: ``encode(value)`` and ``decode(payload)`` of the
    payloads off the common path (their flag ``off`` out of ``flag_total``; the common path's
    flag is below ``common + 1``), the side stream compressed with ``side``."""

    def __init__(
        self, root: fm.Node, off: tuple[int, int, int], flag_total: int, common: int, side: Any
    ) -> None:
        flat = _Flat()
        flat.add(root)
        self.program = _native.Program(tuple(flat.rows))
        self.off, self.flag_total, self.common, self.side = off, flag_total, common, side

    def encode(self, value: Any) -> bytes:
        enc = _native.WalkEncoder()
        enc.put(*self.off)
        self.program.encode(value, enc)
        first, done, low, rng, den, data, count = enc.parts()
        payload = finish(low, rng, den, data, self.side, first, done)
        if count > MAX_SYMBOLS + PER_BYTE * len(payload):
            raise LimitExceeded(f"value needs {count} learned-model symbols, more than its payload may hold")
        return payload

    def decode(self, data: bytes, max_size: int) -> Any:
        dec = _native.WalkDecoder(data, self.side, max_size)
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
