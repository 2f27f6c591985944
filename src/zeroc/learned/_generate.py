"""Specialised code for a learned model's common path, generated when the model is loaded.

A message is on its model's *common path* when every field takes its usual branch and nothing
goes to the side stream: the object has the usual keys in the usual order, integers lie in their
ranges, and every escape leads to a learned fallback rather than to JSON text
(spec/LEARNED_MODEL.md §3 has the exact rules). One flag symbol (``Model.common``) says so; the
values are then coded without the escape symbols that cannot occur (and categoricals that escape
to JSON text without their escape mass), by straight-line code with the coder's integers as
locals (REFERENCE.md measured 2-3× from generating code, and 1.5-2.5× from the flag). The
generated encoder returns the payload, or ``None`` for a message off the path, which the model's
general walker then codes after the other flag value; the generated decoder returns the value, or
``OFF`` for a payload it must leave to the walker, and checks the canonical form itself.

Only identifiers made here and integer literals reach the generated source; every table (value
lists, dicts, strings) is passed in the namespace, so a model file can only ever supply data.

Where the C extension ``zeroc.learned._native`` is built (``NATIVE``), the generated code leaves the
coder's integers to it: the encoder puts each straight-line run of symbols with one call and the
native coder writes the payload; the decoder takes each symbol with one call, a categorical's
slot table being a C array. The payloads are the same bytes either way (tests hold both to it);
without the extension, the code keeps the integers as Python locals and merges symbols so that
each run costs two operations on them.
"""

from __future__ import annotations

import math
from array import array
from bisect import bisect_right
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, NamedTuple

from zeroc._errors import DecodeError, InvalidDictionary
from zeroc.learned import _nodes as fm
from zeroc.learned._coder import (
    BLOCK_BITS,
    BLOCK_BYTES,
    FLAG_TOTAL,
    LEGACY_BYTES,
    MAX_SYMBOLS,
    beyond_block,
    check,
)

try:
    from zeroc.learned import _native
except ImportError:  # built without a C compiler: the generated code keeps its own integers
    _native = None  # type: ignore[assignment]

NATIVE = _native is not None  # tests switch it off to hold the pure-Python code to the same bytes
_ESC = object()  # what a native table gives for its escape's slots


def _sign(v: float) -> float:
    return math.copysign(1.0, v)


class _Gen:
    def __init__(self, native: bool = False) -> None:
        self.native = native
        self.tables: dict[int, str] = {}  # native tables made, by categorical node
        self.ns: dict[str, Any] = {
            "_bisect": bisect_right,
            "as_key": fm.as_key,
            "_sign": _sign,
            "copy_value": fm.copy_value,
            "DecodeError": DecodeError,
        }
        self.lines: list[str] = []
        self.depth = 1
        self.n = 0
        # Per open block, the totals of the symbols coded at its level, multiplied into ``den``
        # once where the block ends (``den`` is only read at the end, and products commute).
        self.pending = [1]
        self.run: list[tuple[str, str, int]] = []  # straight-line symbols not yet put (encode)
        self.tail: list[tuple[str, str, int]] | None = None  # symbols put after a branch (below)
        self.opened: list[int] = []  # line counts where the open blocks began
        self.types: dict[str, type] = {}  # variables whose type is known once their node is done
        self.inlined_sum: set[str] = set()  # sum rules computed inline (never missing)
        # Sum rules over an array of the same object, added up while its items are coded:
        # item object -> [(accumulator, index of a, index of b)], sum rule -> accumulator.
        self.sums: dict[int, list[tuple[str, int, int]]] = {}
        self.acc: dict[int, str] = {}
        self.slots = SLOT_BUDGET  # slot-table entries this model may still spend
        self.unrolled = 0  # fixed-length arrays being unrolled around the code now written
        # Loop items bounded by the model itself (see _spending): how many at most, and the
        # most the loops around the code now written run (None: one of them is unbounded).
        self.static = 0
        self.outer: int | None = 1
        self.counting = True  # whether symbols' totals go into ``den`` (see _dec_escaping)

    def const(self, obj: Any) -> str:
        self.n += 1
        name = f"_c{self.n}"
        self.ns[name] = obj
        return name

    def tmp(self, stem: str = "t") -> str:
        self.n += 1
        return f"{stem}{self.n}"

    def emit(self, line: str) -> None:
        self.lines.append("    " * self.depth + line)

    def inline(self, var: str) -> str:
        """``var``, or the expression of the line just emitted if it only set ``var`` (which is
        then used once, here): ``o = {...}`` then ``out.append(o)`` becomes ``out.append({...})``."""
        head = "    " * self.depth + f"{var} = "
        if self.lines and self.lines[-1].startswith(head):  # at this depth: in this block
            expr = self.lines.pop()[len(head) :]
            return expr if expr.isidentifier() else f"({expr})"  # it may go inside an expression
        return var

    def flush(self) -> None:
        """Put the pending symbols and totals (at the end of the function)."""
        if self.run:
            self.emit_run()
        if self.pending[-1] != 1:
            self.emit(f"den *= {self.pending[-1]}")
            self.pending[-1] = 1

    def indent(self, head: str) -> None:
        if self.run:  # the interval must be settled before the code branches
            self.emit_run()
        self.emit(head)
        self.depth += 1
        self.opened.append(len(self.lines))
        self.pending.append(1)

    def dedent(self) -> None:
        self.flush()
        self.pending.pop()
        if self.opened.pop() == len(self.lines):
            self.emit("pass")  # a branch with nothing to code
        self.depth -= 1

    @contextmanager
    def block(self, head: str) -> Iterator[None]:
        self.indent(head)
        yield
        self.dedent()

    @contextmanager
    def loop(self, head: str, count: str) -> Iterator[None]:
        """A loop run ``count`` times: the totals coded at the level of its body go into ``den``
        once after the loop (as ``factor ** count``), not once per pass."""
        self.indent(head)
        yield
        if self.run:
            self.emit_run()  # the body's last symbols, inside the body
        factor = self.pending.pop()
        if self.opened.pop() == len(self.lines):
            self.emit("pass")
        self.depth -= 1
        if factor != 1:
            self.emit(f"den *= {factor} ** {count}")

    # -- the coder's operations on the locals low/rng/den (encode) and x/R/den (decode) -------
    def den(self, total: int) -> None:
        if not self.counting or self.native:  # the native coder counts each symbol it takes
            return
        self.pending[-1] *= total
        if self.pending[-1] >= 1 << 512:  # a literal of bounded size (a hostile model could
            self.emit(f"den *= {self.pending[-1]}")  # make it millions of digits)
            self.pending[-1] = 1

    def put(self, start: str, freq: str, total: int, counted: bool = False) -> None:
        """Put a symbol. Straight-line symbols are put together where the code branches (or
        returns the payload): k symbols ``(s_i, f_i, t_i)`` move the interval as one symbol
        ``(C, f_1...f_k, t_1...t_k)`` with ``C = C' * t_k + f_1...f_(k-1) * s_k`` -- the same
        integers, with the sums on small numbers and two operations on the big ones. A run
        holds at most two symbols whose frequency varies and totals up to 2^64, so that its
        sums stay small and short."""
        if self.tail is not None:  # checked here, put at the end of both branches of a field
            self.tail.append((start, freq, total))
            if not counted:
                self.den(total)
            return
        if (
            self.run
            and not self.native
            and (
                (freq != "1" and sum(f != "1" for _s, f, _t in self.run) >= 2)
                or math.prod(t for _s, _f, t in self.run) * total > 1 << 64
            )
        ):
            self.emit_run()
        self.run.append((start, freq, total))
        if not counted:  # ``counted``: both branches code a symbol of this total, counted before
            self.den(total)

    def hit(self, h: str, total: int, counted: bool = False) -> None:
        """Put the symbol of a categorical's entry ``h`` (from the table _cat_lookup reads)."""
        if self.native:
            self.put(h, "", total, counted)  # the entry is a native Sym
        else:
            self.put(f"{h}[0]", f"{h}[1]", total, counted)

    def emit_run(self) -> None:
        if self.native:  # one call: Syms, and (start, freq, total) triples
            args = []
            for s, f, t in self.run:
                if f == "":
                    args.append(s)
                elif s.isdigit() and f.isdigit():  # a constant symbol: a Sym made once
                    args.append(self.const(_native.Sym(int(s), int(f), t)))
                else:
                    args.append(f"{s}, {f}, {t}")
            self.emit(f"put({', '.join(args)})")
            self.run = []
            return
        start, freq, total = _horner(self.run)
        self.run = []
        self.emit(f"low = low * {total} + rng * ({start})" if start else f"low = low * {total}")
        if freq != "1":
            self.emit(f"rng *= {freq}")

    def take(self, start: str, freq: str, total: int, counted: bool = False) -> None:
        """Take a symbol after ``xT = x * total`` was computed (decode)."""
        self.emit(f"x = xT - {start} * R" if start != "0" else "x = xT")
        if freq != "1":
            self.emit(f"R *= {freq}")
        if not counted:
            self.den(total)

    def uniform(self, total: int) -> str:
        v = self.tmp("u")
        self.emit(f"xT = x * {total}")
        self.emit(f"{v} = xT // R")
        self.take(v, "1", total)
        return v


def _horner(symbols: list[tuple[str, str, int]]) -> tuple[str, str, int]:
    """Symbols ``(s_i, f_i, t_i)`` taken one after the other as one symbol: expressions for
    ``C = C' * t_k + f_1...f_(k-1) * s_k`` and ``f_1...f_k``, and the product of the totals."""
    start, freq, total = "", "1", 1
    for s, f, t in symbols:
        terms = [f"({start}) * {t}" if t != 1 else start] if start else []
        if s != "0":
            terms.append(s if freq == "1" else f"{freq} * {s}")
        start = " + ".join(terms)
        freq = f if freq == "1" else freq if f == "1" else f"{freq} * {f}"
        total *= t
    return start, freq, total


DIRECT = 1 << 14  # categoricals with at most this many slots get a slot -> entry list
NATIVE_DIRECT = 1 << 16  # ... a slot -> entry array, on the native coder (else a binary search)
SLOT_BUDGET = 1 << 22  # slot-table entries per model (~32 MB at most; past it, binary search)


def _raw(node: fm.Node | None) -> bool:
    return node is None or isinstance(node, fm.Raw)


def _leaves(node: fm.Categorical | fm.Predicted | fm.Prefixed) -> bool:
    """Whether the node's escape leaves the common path (JSON text, or a *sure* node)."""
    if isinstance(node, fm.Categorical):
        return node.sure or _raw(node.fallback)
    return node.sure or _raw(node.other)


def _fixed(node: fm.Node) -> int | None:
    """The count a count/length node always gives on its common path, if it has only one."""
    if isinstance(node, fm.Categorical) and len(node.values) == 1 and _leaves(node):
        v = node.values[0]
        if type(v) is int and 0 <= v <= 16:
            return v
    return None


def _kind(node: fm.Node) -> type | None:
    """The one type every value on the node's common path has, if there is one."""
    kinds: set[type | None]
    if isinstance(node, fm.Categorical):
        kinds = {type(v) for v in node.values}
        if not _leaves(node):
            kinds.add(_kind(node.fallback))
    elif isinstance(node, (fm.Predicted, fm.Prefixed)):
        if isinstance(node, fm.Given):
            kinds = {type(v) for v in node.table.values() if _plain(v)}
        elif isinstance(node, (fm.Affix, fm.Prefixed)):
            kinds = {str}
        else:
            return None
        if not _raw(node.other) and (_tabled(node) or not _leaves(node)):  # ``other`` is reached
            assert node.other is not None
            kinds.add(_kind(node.other))
    else:
        simple: dict[type, type] = {
            fm.IntRange: int,
            fm.Magnitude: int,
            fm.Shape: str,
            fm.Decimal: float,
            fm.Template: str,
            fm.Words: str,
            fm.Object: dict,
            fm.Array: list,
        }
        return simple.get(type(node))
    return kinds.pop() if len(kinds) == 1 and None not in kinds else None


def _cat_tables(node: fm.Categorical, g: _Gen) -> tuple[str, str, int, str, str, str]:
    """(lookup dict, key kind, total, starts, freqs, values). When the categorical escapes to
    JSON text (off the common path), its values are coded given a hit: no escape mass."""
    kinds = {type(v) for v in node.values}
    kind = "str" if kinds == {str} else "int" if kinds == {int} else "key"
    shift = node.esc if _leaves(node) else 0
    lookup: dict[Any, tuple[int, int]] = {}
    starts, freqs = [], []
    for (start, freq, _v), k in zip(node.table, node.keys, strict=True):
        key = k[1] if kind != "key" else k
        lookup[key] = (start - shift, freq)
        starts.append(start - shift)
        freqs.append(freq)
    return (
        g.const(lookup),
        kind,
        node.total - shift,
        g.const(starts),
        g.const(freqs),
        g.const(list(node.values)),
    )


def _slots(node: fm.Categorical, g: _Gen, starts: str, freqs: str, values: str, slot: str) -> str:
    """An expression for the (start, freq, value) entry holding ``slot``: a direct index table
    when the total is small enough to afford one, else a binary search."""
    entries = g.const(list(zip(g.ns[starts], g.ns[freqs], g.ns[values], strict=True)))
    first = g.ns[starts][0]
    total = g.ns[starts][-1] + g.ns[freqs][-1]
    if total <= DIRECT and g.slots >= total:  # one list entry per slot: a lookup, no index step
        g.slots -= total
        table = [None] * first
        for entry in g.ns[entries]:
            table += [entry] * entry[1]
        return f"{g.const(table)}[{slot}]"
    if total <= 1 << 16 and len(g.ns[values]) <= 1 << 16 and g.slots >= total // 4:
        g.slots -= total // 4
        index = array("H" if len(g.ns[values]) > 256 else "B")
        for k, fr in enumerate(g.ns[freqs]):
            index.extend([k] * fr)
        if first:  # slots below the first start are the escape's, taken before this runs
            index = array(index.typecode, [0] * first) + index
        return f"{entries}[{g.const(index)}[{slot}]]"
    return f"{entries}[_bisect({starts}, {slot}) - 1]"


def _new_table(freqs: list[int], values: list[Any], total: int, esc: int, direct: bool = True) -> Any:
    try:
        return _native.Table(freqs, values, total, esc, _ESC, direct)
    except ValueError as e:  # the reader's checks make this unreachable; said plainly if not
        raise InvalidDictionary(f"learned model: a table does not fit its total ({e})") from e


def _table(node: fm.Categorical, g: _Gen) -> str:
    """The categorical's native table: its entries' slots after the escape's (none when the
    escape leaves the common path: the common path codes a hit given a hit, as above)."""
    name = g.tables.get(id(node))
    if name is None:
        _d, _k, total, _s, freqs, values = _cat_tables(node, g)
        esc = 0 if _leaves(node) else node.esc
        slots = total - esc
        direct = slots <= NATIVE_DIRECT and g.slots >= slots // 2  # 4 bytes a slot, not 8
        if direct:
            g.slots -= slots // 2
        table = _new_table(g.ns[freqs], g.ns[values], total, esc, direct)
        for unused in (_d, _s, freqs, values):  # the Table holds its own copies
            del g.ns[unused]
        name = g.const(table)
        g.tables[id(node)] = name
    return name


def _plain(v: Any) -> bool:
    return type(v) in (str, int, bool, type(None)) or (type(v) is float and v == v and v != 0.0)


_NOPRED = object()  # format 2: the table has no entry for the source (no symbol is coded)
_NOTPLAIN = object()  # ... an entry the common path cannot test with == (0.0, NaN, containers)


def _tabled(node: fm.Predicted | fm.Prefixed) -> bool:
    """A table rule of format 2: without an entry for the source it codes no symbol."""
    return isinstance(node, (fm.Given, fm.Prefixed)) and not node.legacy


def _lookup(g: _Gen, table: dict[Any, Any], source: str, default: str = "None") -> str:
    """An expression looking ``source`` up in a table keyed by ``as_key``: by the raw value when
    every key is a str (or every key an int), which skips building the key."""
    kinds = {k[0] for k in table}
    if len(kinds) == 1 and kinds <= {"str", "int"}:
        raw = {k[1]: v for k, v in table.items()}
        kind = kinds.pop()
        get = f"{g.const(raw)}.get({source}, {default})"
        if g.types.get(source) is (str if kind == "str" else int):  # known from an earlier field
            return get
        return f"({get} if type({source}) is {kind} else {default})"
    return f"{g.const(table)}.get(as_key({source}), {default})"


def _predict(node: fm.Predicted | fm.Prefixed, g: _Gen, ctx: list[str], p: str) -> None:
    """Emit code setting ``p`` to the predicted value (or prefix), ``None`` or ``MISSING`` when
    there is none."""
    source = ctx[node.source]
    if _tabled(node):
        table: dict[Any, Any] = node.table  # type: ignore[union-attr] # a Given or a Prefixed
        if isinstance(node, fm.Given):
            table = {k: v if _plain(v) else _NOTPLAIN for k, v in table.items()}
        g.emit(f"{p} = {_lookup(g, table, source, g.const(_NOPRED))}")
    elif isinstance(node, fm.Given):
        # Only scalar predictions that ``==`` tells apart exactly (not 0.0/-0.0, not containers).
        g.emit(f"{p} = {_lookup(g, {k: v for k, v in node.table.items() if _plain(v)}, source)}")
    elif isinstance(node, fm.Prefixed):
        g.emit(f"{p} = {_lookup(g, node.table, source)}")
    elif isinstance(node, fm.SumOf) and id(node) in g.acc:  # added up with the items
        acc = g.acc[id(node)]
        g.inlined_sum.add(p)
        g.emit(f"{p} = round({acc}, {node.scale}) if type({acc}) is float else {acc}")
    else:
        g.emit(f"{p} = {g.const(node.compute)}({source})")


Hooks = dict[int, list[tuple[str, int, int]]]


def _plan_sums(node: fm.Object, g: _Gen) -> Hooks:
    """Start an accumulator for every sum rule of this object over an earlier array field;
    returns, per array field, what its items add (see ``_summing``)."""
    plan: Hooks = {}
    for child in node.children:
        if isinstance(child, fm.SumOf) and child.source < len(node.children):
            array = node.children[child.source]
            if _numeric_items(array, child.a, child.b):
                assert isinstance(array, fm.Array) and isinstance(array.item, fm.Object)
                acc = g.tmp("acc")
                g.emit(f"{acc} = 0")
                keys = array.item.keys
                plan.setdefault(child.source, []).append((acc, keys.index(child.a), keys.index(child.b)))
                g.acc[id(child)] = acc
    return plan


@contextmanager
def _summing(g: _Gen, node: fm.Object, j: int, plan: Hooks) -> Iterator[None]:
    """While field ``j``'s code is written, its items add to the sums planned over it (and only
    then: a learned tree may share one item node between arrays)."""
    child = node.children[j]
    if j not in plan or not isinstance(child, fm.Array):
        yield
        return
    key = id(child.item)
    saved = g.sums.get(key)
    g.sums[key] = plan[j]
    try:
        yield
    finally:
        if saved is None:
            del g.sums[key]
        else:
            g.sums[key] = saved


def _add_sums(node: fm.Object, g: _Gen, names: list[str]) -> None:
    """An item's share of the sums over its array: added in item order, as SumOf.compute does."""
    for acc, a, b in g.sums.get(id(node), []):
        g.emit(f"{acc} += {names[a]} * {names[b]}")


def _numeric_items(node: fm.Node | None, a: str, b: str) -> bool:
    if not isinstance(node, fm.Array) or not isinstance(node.item, fm.Object):
        return False
    kinds = dict(zip(node.item.keys, map(_kind, node.item.children), strict=True))
    return kinds.get(a) in (int, float) and kinds.get(b) in (int, float)


def _holds(node: fm.Predicted | fm.Prefixed, var: str, p: str) -> str:
    """The condition under which ``var`` is what the rule predicts (``p``)."""
    if isinstance(node, fm.Prefixed):
        if _tabled(node):  # ``p`` is a prefix
            return f"type({var}) is str and {var}.startswith({p})"
        return f"{p} is not None and type({var}) is str and {var}.startswith({p})"
    if _tabled(node):  # ``p`` is a value, _NOTPLAIN (no ``==``-equal value has its type) or None
        return f"type({var}) is type({p}) and {var} == {p}"
    if isinstance(node, fm.SumOf):  # ``and p``: a zero total might be -0.0, which == cannot tell
        return f"type({var}) is type({p}) and {var} == {p} and {p}"
    return f"{p} is not None and type({var}) is type({p}) and {var} == {p}"


def _enc(node: fm.Node, g: _Gen, var: str, ctx: list[str]) -> None:
    """Emit code coding ``var`` on ``node``'s common path, returning ``None`` off it."""
    _enc_node(node, g, var, ctx)
    kind = _kind(node)
    if kind is not None and var.isidentifier():
        g.types[var] = kind  # checked by now: rules reading it need not check again


def _enc_node(node: fm.Node, g: _Gen, var: str, ctx: list[str]) -> None:
    if not var.isidentifier():
        t = g.tmp("e")
        g.emit(f"{t} = {var}")
        if var.startswith("len("):
            g.types[t] = int  # no type check needed
        var = t
    if isinstance(node, fm.Categorical):
        if len(node.values) == 1 and _leaves(node):
            if g.types.get(var) is int and type(node.values[0]) is int:
                g.emit(f"if {var} != {node.values[0]}: return None")
            else:
                g.emit(f"if as_key({var}) != {g.const(node.keys[0])}: return None")
            return
        h, total = _cat_lookup(node, g, var)
        if _leaves(node):
            g.emit(f"if {h} is None: return None")
            g.hit(h, total)
            return
        _cat_branches(node, g, var, h, total, [])
    elif isinstance(node, fm.IntRange):
        bounds = f"not {node.lo} <= {var} < {node.lo + node.span}"
        g.emit(
            f"if {bounds}: return None"
            if g.types.get(var) is int
            else f"if type({var}) is not int or {bounds}: return None"
        )
        g.put(var if node.lo == 0 else f"({var} - {node.lo})", "1", node.span)
    elif isinstance(node, fm.Magnitude):
        _enc_magnitude(node, g, var)
    elif isinstance(node, fm.Shape):
        m = g.tmp("m")
        typed = "" if g.types.get(var) is str else f"type({var}) is not str or "
        g.emit(f"if {typed}({m} := {g.const(node.pattern.fullmatch)}({var})) is None: return None")
        fields = [g.tmp("f") for _ in node.children]
        g.emit(f"{', '.join(fields)}{',' if len(fields) == 1 else ''} = {m}.groups()")
        for child, field in zip(node.children, fields, strict=True):
            g.types[field] = str
            _enc(child, g, field, [])
    elif isinstance(node, fm.Decimal):
        t, m = g.tmp("i"), str(10**node.scale)
        g.emit(f"if type({var}) is not float or {var} * {m} - {var} * {m} != 0.0: return None")  # finite
        g.emit(f"{t} = round({var} * {m})")
        g.emit(f"if {t} / {m} != {var} or (not {t} and _sign({var}) < 0): return None")
        g.types[t] = int
        _enc(node.inner, g, t, [])
    elif isinstance(node, fm.Template):
        t = g.tmp("i")
        typed = "" if g.types.get(var) is str else f"type({var}) is not str or "
        g.emit(f"if {typed}{g.const(node.pattern.match)}({var}) is None: return None")
        g.emit(f"{t} = int({var}[{len(node.prefix)}:])" if node.prefix else f"{t} = int({var})")
        g.types[t] = int
        _enc(node.inner, g, t, [])
    elif isinstance(node, fm.Words):
        ws = g.tmp("ws")
        if node.tokens:
            g.emit(f"if type({var}) is not str or not {var}: return None")
            g.emit(f"{ws} = {g.const(fm.TOKEN.findall)}({var})")
        else:
            # An empty, leading, trailing or double space gives an empty part, which no
            # vocabulary holds (words are non-empty): the lookups below turn it away.
            g.emit(f"if type({var}) is not str: return None")
            g.emit(f"{ws} = {var}.split(' ')")
        fixed = _fixed(node.count)
        if fixed is not None:  # a fixed number of words: no loop, no position tests
            g.emit(f"if len({ws}) != {fixed}: return None")
            words = [g.tmp("w") for _ in range(fixed)]
            if words:
                g.emit(f"{', '.join(words)}{',' if fixed == 1 else ''} = {ws}")
            for pos, w in enumerate(words):
                _enc(node.words[min(pos, len(node.words) - 1)], g, w, [])
            return
        w, i = g.tmp("w"), g.tmp("i")
        with _spending(g, f"len({ws})", node.count, "return None"):
            _enc(node.count, g, f"len({ws})", [])
            if len(node.words) == 1:
                with g.loop(f"for {w} in {ws}:", f"len({ws})"):
                    _enc(node.words[0], g, w, [])
            else:
                with g.loop(f"for {i}, {w} in enumerate({ws}):", f"len({ws})"):
                    for pos, model in enumerate(node.words):
                        last = pos == len(node.words) - 1
                        with g.block("else:" if last else f"{'if' if pos == 0 else 'elif'} {i} == {pos}:"):
                            _enc(model, g, w, [])
    elif isinstance(node, fm.Object):
        names = [g.tmp("v") for _ in node.keys]
        unpack = f"{', '.join(names)}{',' if len(names) == 1 else ''} = " if names else ""
        if g.native:  # the same test, and the values, in one call (TypeError: off the path)
            g.emit(f"{unpack}_fields({var}, {g.const(node.keys)})")
        else:
            g.emit(f"if type({var}) is not dict or tuple({var}) != {g.const(node.keys)}: return None")
            if names:
                g.emit(f"{unpack}{var}.values()")
        plan = _plan_sums(node, g)
        j = 0
        while j < len(names):
            child = node.children[j]
            k = j + 1
            if isinstance(child, fm.Categorical) and not _leaves(child) and len(child.values) > 1:
                while k < len(names) and _straight(node.children[k]):  # the run it heads
                    k += 1
            if k > j + 1:
                assert isinstance(child, fm.Categorical)  # only such a child heads a run
                _enc_escaping(child, g, names, j, k, node.children)
            else:
                with _summing(g, node, j, plan):
                    _enc(child, g, names[j], names[:j])
                k = j + 1
            j = k
        _add_sums(node, g, names)
    elif isinstance(node, fm.Array):
        fixed = _fixed(node.lengths) if not g.unrolled else None
        if fixed is not None:  # a fixed length: the items one after the other
            g.emit(f"if type({var}) is not list or len({var}) != {fixed}: return None")
            items = [g.tmp("it") for _ in range(fixed)]
            if items:
                g.emit(f"{', '.join(items)}{',' if fixed == 1 else ''} = {var}")
            g.unrolled += 1  # one level only: nested fixed arrays must not multiply the code
            for it in items:
                _enc(node.item, g, it, [])
            g.unrolled -= 1
            return
        it = g.tmp("it")
        g.emit(f"if type({var}) is not list: return None")
        with _spending(g, f"len({var})", node.lengths, "return None"):
            _enc(node.lengths, g, f"len({var})", [])
            with g.loop(f"for {it} in {var}:", f"len({var})"):
                _enc(node.item, g, it, [])
    elif isinstance(node, (fm.Predicted, fm.Prefixed)):
        p = g.tmp("p")
        _predict(node, g, ctx, p)
        if not _tabled(node):
            _enc_rule(node, g, var, p)
            return
        assert node.other is not None
        if _raw(node.other):  # no entry: off the path
            g.emit(f"if {p} is {g.const(_NOPRED)}: return None")
            _enc_rule(node, g, var, p)
            return
        with g.block(f"if {p} is {g.const(_NOPRED)}:"):  # no symbol: the value through ``other``
            _enc(node.other, g, var, [])
        with g.block("else:"):
            _enc_rule(node, g, var, p)
    else:  # Raw and anything new: never on the common path
        g.emit("return None")


def _enc_magnitude(node: fm.Magnitude, g: _Gen, var: str) -> None:
    """The bucket's symbol, then the offset's: uniform over ``2^(k-1)`` for a bucket of ``k``
    bits, a total known only here (so ``den`` takes it here, as a shift)."""
    bound = 1 << fm.MAX_BITS
    check = f"not {-bound} < {var} < {bound}"
    typed = "" if g.types.get(var) is int else f"type({var}) is not int or "
    g.emit(f"if {typed}{check}: return None")
    a, k, b = g.tmp("a"), g.tmp("k"), g.tmp("b")
    g.emit(f"{a} = -{var} if {var} < 0 else {var}")
    g.emit(f"{k} = {a}.bit_length()")
    g.emit(f"{b} = {k} if {var} >= 0 else -{k}")
    g.types[b] = int
    _enc(node.buckets, g, b, [])
    with g.block(f"if {k} > 1:"):  # the bucket's symbol is put before the code branches
        if g.native:
            g.emit(f"put({a} - (1 << ({k} - 1)), 1, 1 << ({k} - 1))")
        else:
            g.emit(f"low = (low << ({k} - 1)) + rng * ({a} - (1 << ({k} - 1)))")
            g.emit(f"den <<= {k} - 1")


def _runs(node: fm.Node, kind: str) -> bool:
    """Whether a shape field's common path gives only runs of its kind (letters ``a``, digits
    ``9``), as every learned model's does: then the decoder need not test them."""
    if isinstance(node, fm.Categorical) and _leaves(node):
        return all(
            type(v) is str and v.isascii() and (v.isalpha() if kind == "a" else v.isdigit())
            for v in node.values
        )
    # A template's digits are a run, unless a negative integer gives a minus sign.
    return kind == "9" and isinstance(node, fm.Template) and not node.prefix and _naturals(node.inner)


def _naturals(node: fm.Node | None) -> bool:
    """Whether a node's common path gives only integers >= 0."""
    if isinstance(node, fm.IntRange):
        return node.lo >= 0
    if isinstance(node, fm.Categorical):
        ints = all(type(v) is int and v >= 0 for v in node.values)
        return ints and (_leaves(node) or _naturals(node.fallback))
    return False


def _straight(node: fm.Node) -> bool:
    """Whether the node's common path is checks and symbols only, with no branch."""
    if isinstance(node, (fm.Decimal, fm.Template)):
        return isinstance(node.inner, fm.IntRange)
    return isinstance(node, fm.IntRange) or (isinstance(node, fm.Categorical) and _leaves(node))


def _cat_lookup(node: fm.Categorical, g: _Gen, var: str) -> tuple[str, int]:
    """Emit the table lookup of ``var`` (its entry, or None); returns the entry's variable and
    the total to code it with."""
    d, kind, total, _s, _f, _v = _cat_tables(node, g)
    if g.native:  # the entries as the native coder's symbols (the Python tables are not used)
        syms = {k: _native.Sym(st, fr, total) for k, (st, fr) in g.ns[d].items()}
        for name in (d, _s, _f, _v):
            del g.ns[name]
        d = g.const(syms)
    h = g.tmp("h")
    if kind == "key":
        g.emit(f"{h} = {d}.get(as_key({var}))")
    elif kind == "str" or g.types.get(var) is int:  # a non-str never equals a str key (an
        g.emit(f"{h} = {d}.get({var})")  # unhashable value raises TypeError: off the path)
    else:
        g.emit(f"{h} = {d}.get({var}) if type({var}) is {kind} else None")
    return h, total


def _cat_branches(
    node: fm.Categorical, g: _Gen, var: str, h: str, total: int, tail: list[tuple[str, str, int]]
) -> None:
    """A categorical with a learned fallback: the escape and the fallback, or the value's
    symbol; then in both branches the ``tail`` symbols, so each branch puts them as one."""
    g.den(total)
    with g.block(f"if {h} is None:"):
        g.put("0", str(node.esc), total, counted=True)
        _enc(node.fallback, g, var, [])
        for sym in tail:
            g.put(*sym, counted=True)
    with g.block("else:"):
        g.hit(h, total, counted=True)
        for sym in tail:
            g.put(*sym, counted=True)


def _enc_escaping(
    head: fm.Categorical, g: _Gen, names: list[str], j: int, k: int, children: list[fm.Node]
) -> None:
    """Field ``j`` (a categorical with a learned fallback) then the straight fields up to ``k``:
    their checks first, then the head's branch, with the straight fields' symbols at the end of
    both branches (so each branch puts its symbols as one)."""
    var = names[j]
    h, total = _cat_lookup(head, g, var)
    g.tail = []
    for i in range(j + 1, k):
        _enc(children[i], g, names[i], names[:i])
    tail, g.tail = g.tail, None
    _cat_branches(head, g, var, h, total, tail)
    kind_of = _kind(head)
    if kind_of is not None:
        g.types[var] = kind_of


def _enc_rest(node: fm.Prefixed, g: _Gen, var: str, p: str) -> None:
    """The remainder after the prefix ``p`` (a string, since the value starts with ``p``)."""
    rest = g.tmp("e")
    g.emit(f"{rest} = {var}[len({p}):]")
    g.types[rest] = str
    _enc(node.rest, g, rest, [])


def _enc_rule(node: fm.Predicted | fm.Prefixed, g: _Gen, var: str, p: str) -> None:
    """A rule with a prediction ``p``: the hit symbol (none when sure) or the escape."""
    holds = _holds(node, var, p)
    if _leaves(node):  # nothing to code when the rule holds
        g.emit(f"if not ({holds}): return None")
        if isinstance(node, fm.Prefixed):
            _enc_rest(node, g, var, p)
        return
    assert node.other is not None
    g.den(node.total)
    with g.block(f"if {holds}:"):
        g.put(str(node.esc), str(node.total - node.esc), node.total, counted=True)
        if isinstance(node, fm.Prefixed):
            _enc_rest(node, g, var, p)
    with g.block("else:"):
        g.put("0", str(node.esc), node.total, counted=True)
        _enc(node.other, g, var, [])


_OVER = "raise DecodeError('learned-model payload asks for more items than it can hold')"


def _most(count: fm.Node) -> int | None:
    """The largest count a count node gives on its common path, if the model bounds it."""
    if isinstance(count, fm.Categorical) and _leaves(count):
        counts = [v for v in count.values if type(v) is int]
        if len(counts) == len(count.values):
            return max(0, *counts)
    return None


@contextmanager
def _spending(g: _Gen, n: str, count: fm.Node, over: str) -> Iterator[None]:
    """A loop of ``n`` items, written inside: loops share the payload's item budget, so that a
    forged payload cannot make a loop run long, nor loops inside loops multiply (even where the
    model bounds each count), and a message of many small arrays inside arrays leaves the
    encoder's common path instead of growing the coder's integers without bound. Where the
    model bounds the count (and the loops around it), the items are counted here once and for
    all, off the budget the code starts with: no test per message."""
    most, outer = _most(count), g.outer
    if most is not None and outer is not None and g.static + most * outer <= MAX_SYMBOLS:
        g.static += most * outer
        g.outer = most * outer
    else:
        g.emit(f"budget -= {n}")  # decoding, a count that is not an int raises TypeError
        g.emit(f"if budget < 0: {over}")
        g.outer = None
    try:
        yield
    finally:
        g.outer = outer


def _uniform(node: fm.Node, g: _Gen) -> tuple[int, Callable[[str], str]] | None:
    """(span, value expression of the slot) for a node whose common path is one uniform symbol."""
    inner = node.inner if isinstance(node, (fm.Decimal, fm.Template)) else node
    if not isinstance(inner, fm.IntRange):
        return None
    lo = inner.lo
    if isinstance(node, fm.Decimal):
        return inner.span, lambda u: f"({lo} + {u}) / {10**node.scale}"
    if isinstance(node, fm.Template):
        prefix = g.const(node.prefix)
        return inner.span, lambda u: f"{prefix} + str({lo} + {u}).zfill({node.width})"
    return inner.span, lambda u: f"{lo} + {u}"


class _Sym(NamedTuple):
    """One symbol of a straight-line group: a uniform (its value from the slot) or a categorical
    whose escape leaves the common path."""

    total: int
    uniform: Callable[[str], str] | None = None
    cat: fm.Categorical | None = None


class _Member(NamedTuple):
    """A field decoded inside a group: its symbols, and its value from their values and the
    earlier fields (``direct``: the value is its one symbol's)."""

    node: fm.Node
    syms: list[_Sym]
    value: Callable[[list[str], list[str]], str]
    direct: bool = False


def _member(node: fm.Node, g: _Gen) -> _Member | None:
    """The field as a group member, if its common path is straight-line symbols."""
    u = _uniform(node, g)
    if u is not None:
        return _Member(node, [_Sym(u[0], u[1])], lambda vs, ctx: vs[0], True)
    if isinstance(node, fm.Categorical) and _leaves(node):
        if len(node.values) == 1:  # no symbol at all
            const = node.values[0]
            return None if node.mutable else _Member(node, [], lambda vs, ctx: g.const(const))
        return _Member(node, [_Sym(node.total - node.esc, cat=node)], lambda vs, ctx: vs[0], True)
    if isinstance(node, fm.Words):
        fixed = _fixed(node.count)
        models = [node.words[min(pos, len(node.words) - 1)] for pos in range(fixed or 0)]
        if not fixed or any(len(m.values) == 1 or not _leaves(m) for m in models):
            return None
        sep = g.const(node.sep)
        syms = [_Sym(m.total - m.esc, cat=m) for m in models]
        return _Member(node, syms, lambda vs, ctx: f"{sep}.join(({', '.join(vs)},))")
    if isinstance(node, (fm.Given, fm.Prefixed)) and _tabled(node) and _raw(node.other):
        # A table rule whose missing entry leaves the path: no symbol of its own (a prefix rule
        # adds its remainder's), its value once the fields it reads are known.
        rest = _member(node.rest, g) if isinstance(node, fm.Prefixed) else None
        if isinstance(node, fm.Prefixed) and (rest is None or not rest.syms):
            return None

        def value(vs: list[str], ctx: list[str]) -> str:
            p = g.tmp("p")
            _predict(node, g, ctx, p)
            nopred = g.const(_NOPRED)
            g.emit(f"if {p} is {nopred}: raise DecodeError('a table rule has no entry for this field')")
            if rest is not None:
                return f"{p} + ({rest.value(vs, ctx)})"
            if not all(map(_plain, node.table.values())):
                g.emit(
                    f"if {p} is {g.const(_NOTPLAIN)}: raise DecodeError('a predicted field cannot hold here')"
                )
            return p

        return _Member(node, rest.syms if rest is not None else [], value)
    return None


def _dec_group(members: list[_Member], g: _Gen, base: list[str]) -> list[str]:
    """Decode straight-line symbols with one division: symbols ``(s_i, f_i, t_i)`` taken in turn
    are one symbol over the product of the totals, and its slot ``s`` gives theirs in turn,
    ``slot_i = s // T`` (``T`` the totals after ``i``) then ``s = (s - s_i * T) // f_i``, on small
    numbers (the same symbols as one at a time, by the identity ``floor(floor(a) / b) =
    floor(a / b)``); then the interval moves once."""
    syms = [sym for m in members for sym in m.syms]
    total = math.prod(sym.total for sym in syms)
    s = g.tmp("s")
    g.emit(f"xT = x * {total}")
    g.emit(f"{s} = xT // R")
    values, taken = _peel(syms, s, total, g)
    _move(taken, g)
    g.den(total)
    return _outs(members, values, g, base)


def _peel(
    syms: list[_Sym], s: str, total: int, g: _Gen, into: list[str | None] | None = None
) -> tuple[list[str], list[tuple[str, str, int]]]:
    """The symbols' values from their joint slot ``s`` (in ``[0, total)``), and the symbols;
    ``into`` names the variables to hold them, where given."""
    rest, values, taken = total, [], []
    for i, sym in enumerate(syms):
        rest //= sym.total
        last = i == len(syms) - 1
        v = (into[i] if into else None) or g.tmp("o")
        if sym.uniform is not None:
            slot = s
            if not last:
                slot, nxt = g.tmp("u"), g.tmp("s")
                g.emit(f"{slot}, {nxt} = divmod({s}, {rest})")
                s = nxt
            g.emit(f"{v} = {sym.uniform(slot)}")
            taken.append((slot, "1", sym.total))
        else:
            assert sym.cat is not None
            _d, _k, _t, starts, freqs, table = _cat_tables(sym.cat, g)
            slot = s if last else g.tmp("u")
            if not last:
                g.emit(f"{slot} = {s} // {rest}")
            st, fr = g.tmp("st"), g.tmp("fr")
            g.emit(f"{st}, {fr}, {v} = {_slots(sym.cat, g, starts, freqs, table, slot)}")
            if sym.cat.mutable:  # the caller may change it; the table must not change
                g.emit(f"{v} = copy_value({v})")
            if not last:
                nxt = g.tmp("s")
                g.emit(f"{nxt} = ({s} - {st} * {rest}) // {fr}")
                s = nxt
            taken.append((st, fr, sym.total))
        values.append(v)
    return values, taken


def _move(taken: list[tuple[str, str, int]], g: _Gen) -> None:
    """Move the interval past symbols taken together (``xT = x * their totals``)."""
    start, freq, _total = _horner(taken)
    g.emit(f"x = xT - ({start}) * R")
    if freq != "1":
        g.emit(f"R *= {freq}")


def _outs(
    members: list[_Member], values: list[str], g: _Gen, base: list[str], names: list[str] | None = None
) -> list[str]:
    """The members' values from their symbols' values and the fields before them (``base``,
    then the members'), into ``names`` when given."""
    outs: list[str] = []
    for j, m in enumerate(members):
        mine, values = values[: len(m.syms)], values[len(m.syms) :]
        out = m.value(mine, base + outs)
        if names is not None:
            if out != names[j]:
                g.emit(f"{names[j]} = {out}")
            out = names[j]
        elif not out.isidentifier():
            out, expr = g.tmp("o"), out
            g.emit(f"{out} = {expr}")
        kind = _kind(m.node)
        if kind is not None:
            g.types[out] = kind
        outs.append(out)
    return outs


def _dec_escaping(head: fm.Categorical, members: list[_Member], g: _Gen, base: list[str]) -> list[str]:
    """A categorical with a learned fallback, then straight-line symbols, with one division
    when the categorical hits; on its escape, the fallback and the rest one at a time."""
    _d, _k, total, starts, freqs, table = _cat_tables(head, g)
    syms = [sym for m in members for sym in m.syms]
    rest = math.prod(sym.total for sym in syms)
    s, u = g.tmp("s"), g.tmp("u")
    g.emit(f"xT = x * {total * rest}")
    g.emit(f"{s} = xT // R")
    g.emit(f"{u} = {s} // {rest}")
    g.den(total * rest)  # both branches take these symbols
    out, names = g.tmp("o"), [g.tmp("o") for _ in members]
    with g.block(f"if {u} < {head.esc}:"):
        g.emit(f"x = x * {total}")
        g.emit(f"R *= {head.esc}")
        g.emit(f"{out} = {g.inline(_dec(head.fallback, g, []))}")
        g.counting = False  # the straight fields' totals are counted above, for both branches
        for j, (m, name) in enumerate(zip(members, names, strict=True)):
            g.emit(f"{name} = {g.inline(_dec(m.node, g, [*base, out, *names[:j]]))}")
        g.counting = True
    with g.block("else:"):
        st, fr = g.tmp("st"), g.tmp("fr")
        g.emit(f"{st}, {fr}, {out} = {_slots(head, g, starts, freqs, table, u)}")
        if head.mutable:
            g.emit(f"{out} = copy_value({out})")
        nxt = g.tmp("s")
        g.emit(f"{nxt} = ({s} - {st} * {rest}) // {fr}")
        into: list[str | None] = []
        for m, name in zip(members, names, strict=True):  # a field that is its one symbol: direct
            into += [name] if m.direct else [None] * len(m.syms)
        values, taken = _peel(syms, nxt, rest, g, into)
        _move([(st, fr, total), *taken], g)
        _outs(members, values, g, [*base, out], names)
    kind = _kind(head)
    if kind is not None:
        g.types[out] = kind
    return [out, *names]


def _dec_items(node: fm.Array, g: _Gen, n: str, out: str) -> None:
    """The items of an array whose length ``n`` is decoded."""
    with _spending(g, n, node.lengths, _OVER):
        g.emit(f"{out} = []")
        with g.loop(f"for _ in range({n}):", n):
            item = _dec(node.item, g, [])
            g.emit(f"{out}.append({g.inline(item)})")


def _dec_count(node: fm.Node, g: _Gen) -> str:
    """A variable holding the decoded count of a words text or an array."""
    n = g.inline(_dec(node, g, []))
    if not n.isidentifier():
        n, expr = g.tmp("n"), n
        g.emit(f"{n} = {expr}")
    return n


def _dec_words(node: fm.Words, g: _Gen, n: str, out: str) -> None:
    """The words of a text whose word count ``n`` is decoded."""
    i, parts = g.tmp("i"), g.tmp("ws")
    with _spending(g, n, node.count, _OVER):
        g.emit(f"{parts} = []")
        with g.loop(f"for {i} in range({n}):", n):
            if len(node.words) == 1:
                word = _dec(node.words[0], g, [])
                g.emit(f"{parts}.append({g.inline(word)})")
            else:
                for pos, model in enumerate(node.words):
                    last = pos == len(node.words) - 1
                    with g.block("else:" if last else f"{'if' if pos == 0 else 'elif'} {i} == {pos}:"):
                        g.emit(f"{parts}.append({_dec(model, g, [])})")
    g.emit(f"{out} = {g.const(node.sep)}.join({parts})")


def _count_of(node: fm.Node) -> fm.Categorical | None:
    """The count of an array or words text, when it is one symbol of a categorical with no
    escape (and more than one count): it can end a group of straight-line symbols."""
    count = node.lengths if isinstance(node, fm.Array) else node.count if isinstance(node, fm.Words) else None
    if isinstance(count, fm.Categorical) and _leaves(count) and len(count.values) > 1:
        return count
    return None


def _dec(node: fm.Node, g: _Gen, ctx: list[str]) -> str:
    """Emit code decoding ``node``'s common path; returns the variable holding the value."""
    out = _dec_node(node, g, ctx)
    kind = _kind(node)
    if kind is not None:
        g.types[out] = kind
    return out


def _dec_node(node: fm.Node, g: _Gen, ctx: list[str]) -> str:
    out = g.tmp("o")
    if isinstance(node, fm.Categorical):
        if len(node.values) == 1 and _leaves(node):
            if not node.mutable:
                return g.const(node.values[0])
            g.emit(f"{out} = copy_value({g.const(node.values[0])})")
            return out
        if g.native:
            g.emit(f"{out} = sym({_table(node, g)})")
            if not _leaves(node):
                with g.block(f"if {out} is _ESC:"):
                    g.emit(f"{out} = {g.inline(_dec(node.fallback, g, []))}")
                if node.mutable:
                    with g.block("else:"):
                        g.emit(f"{out} = copy_value({out})")
            elif node.mutable:
                g.emit(f"{out} = copy_value({out})")
            return out
        _d, _k, total, starts, freqs, values = _cat_tables(node, g)
        s = g.tmp("s")
        g.emit(f"xT = x * {total}")
        g.emit(f"{s} = xT // R")
        escapes = not _leaves(node)
        g.den(total)
        if escapes:
            with g.block(f"if {s} < {node.esc}:"):
                g.take("0", str(node.esc), total, counted=True)
                g.emit(f"{out} = {g.inline(_dec(node.fallback, g, []))}")
            g.indent("else:")
        st, fr = g.tmp("st"), g.tmp("fr")
        g.emit(f"{st}, {fr}, {out} = {_slots(node, g, starts, freqs, values, s)}")
        g.take(st, fr, total, counted=True)
        if node.mutable:
            g.emit(f"{out} = copy_value({out})")
        if escapes:
            g.dedent()
    elif isinstance(node, fm.IntRange):
        g.emit(f"{out} = {node.lo} + {f'uni({node.span})' if g.native else g.uniform(node.span)}")
    elif isinstance(node, fm.Magnitude):
        b = _dec(node.buckets, g, [])  # the reader holds buckets to integers within +-MAX_BITS
        k, u = g.tmp("k"), g.tmp("u")
        g.emit(f"{k} = {b} if {b} >= 0 else -{b}")
        with g.block(f"if {k} > 1:"):
            if g.native:
                g.emit(f"{u} = bits({k} - 1)")
            else:
                g.emit(f"xT = x << ({k} - 1)")
                g.emit(f"{u} = xT // R")
                g.emit(f"x = xT - {u} * R")
                g.emit(f"den <<= {k} - 1")
            g.emit(f"{out} = (1 << ({k} - 1)) + {u}")
            g.emit(f"if {b} < 0: {out} = -{out}")
        with g.block("else:"):
            g.emit(f"{out} = {b}")
    elif isinstance(node, fm.Shape):
        parts = [g.const(node.literals[0])] if node.literals[0] else []
        for child, lit in zip(node.children, node.literals[1:], strict=True):
            parts.append(_dec(child, g, []))
            if lit:
                parts.append(g.const(lit))
        g.emit(f"{out} = {' + '.join(parts)}")
        if not all(map(_runs, node.children, node.kinds)):  # a hostile model's fields may not be
            fits = f"{g.const(node.pattern.fullmatch)}({out})"
            g.emit(f"if {fits} is None: raise DecodeError('a shape field is not of its kind')")
    elif isinstance(node, fm.Decimal):
        g.emit(f"{out} = {g.inline(_dec(node.inner, g, []))} / {10**node.scale}")
    elif isinstance(node, fm.Template):
        inner = g.inline(_dec(node.inner, g, []))
        g.emit(f"{out} = {g.const(node.prefix)} + str({inner}).zfill({node.width})")
    elif isinstance(node, fm.Words):
        fixed = _fixed(node.count)
        if fixed is not None:
            words = [_dec(node.words[min(pos, len(node.words) - 1)], g, []) for pos in range(fixed)]
            g.emit(f"{out} = {g.const(node.sep)}.join(({', '.join(words)}{',' if fixed == 1 else ''}))")
            return out
        _dec_words(node, g, _dec_count(node.count, g), out)
    elif isinstance(node, fm.Object):
        names: list[str] = []
        kids = node.children
        plan = _plan_sums(node, g)
        while g.native and len(names) < len(kids):  # a call per symbol: nothing to merge
            with _summing(g, node, len(names), plan):
                names.append(_dec(kids[len(names)], g, names))
        while len(names) < len(kids):
            group: list[_Member] = []
            product = 1
            head = kids[len(names)]
            escaping = isinstance(head, fm.Categorical) and not _leaves(head) and len(head.values) > 1
            for child in kids[len(names) + escaping :]:
                m = _member(child, g)
                size = math.prod(sym.total for sym in m.syms) if m is not None else 0
                if m is None or (group and product * size > 1 << 96):
                    break
                group.append(m)
                product *= size
            if escaping and group and any(m.syms for m in group):
                assert isinstance(head, fm.Categorical)
                names += _dec_escaping(head, group, g, names)
            elif not escaping and sum(len(m.syms) for m in group) > 0:  # one division
                after = len(names) + len(group)
                array = kids[after] if after < len(kids) else None
                count = _count_of(array) if array is not None else None
                if count is not None:  # the array's or text's count ends the group
                    sym = _Sym(count.total - count.esc, cat=count)
                    group.append(_Member(count, [sym], lambda vs, ctx: vs[0], True))
                    *outs, n = _dec_group(group, g, names)
                    listed = g.tmp("o")
                    if isinstance(array, fm.Array):
                        with _summing(g, node, after, plan):
                            _dec_items(array, g, n, listed)
                        g.types[listed] = list
                    else:
                        assert isinstance(array, fm.Words)
                        _dec_words(array, g, n, listed)
                        g.types[listed] = str
                    names += [*outs, listed]
                elif sum(len(m.syms) for m in group) > 1:
                    names += _dec_group(group, g, names)
                else:
                    with _summing(g, node, len(names), plan):
                        names.append(_dec(kids[len(names)], g, names))
            else:
                with _summing(g, node, len(names), plan):
                    names.append(_dec(kids[len(names)], g, names))
        _add_sums(node, g, names)
        keys = [g.const(k) for k in node.keys]
        g.emit(f"{out} = {{{', '.join(f'{k}: {v}' for k, v in zip(keys, names, strict=True))}}}")
    elif isinstance(node, fm.Array):
        fixed = _fixed(node.lengths) if not g.unrolled else None
        if fixed is not None:  # one level only, as in encoding
            g.unrolled += 1
            items = [_dec(node.item, g, []) for _ in range(fixed)]
            g.unrolled -= 1
            g.emit(f"{out} = [{', '.join(items)}]")
            return out
        _dec_items(node, g, _dec_count(node.lengths, g), out)
    elif isinstance(node, (fm.Predicted, fm.Prefixed)):
        p = out if isinstance(node, fm.Predicted) else g.tmp("p")  # the prediction, kept as the value
        _predict(node, g, ctx, p)
        if not _tabled(node):
            _dec_rule(node, g, p, out)
            return out
        assert node.other is not None
        if _raw(node.other):
            nopred = g.const(_NOPRED)
            g.emit(f"if {p} is {nopred}: raise DecodeError('a table rule has no entry for this field')")
            _dec_rule(node, g, p, out)
            return out
        with g.block(f"if {p} is {g.const(_NOPRED)}:"):  # no symbol: the value through ``other``
            g.emit(f"{out} = {g.inline(_dec(node.other, g, []))}")
        with g.block("else:"):
            _dec_rule(node, g, p, out)
    else:
        g.emit("raise DecodeError('learned-model payload takes a branch its common path lacks')")
    return out


def _dec_rule(node: fm.Predicted | fm.Prefixed, g: _Gen, p: str, out: str) -> None:
    """A rule with a prediction ``p``: the hit symbol (none when sure) or the escape."""
    s, total = g.tmp("s"), node.total
    escapes = not _leaves(node)
    if escapes and g.native:
        assert node.other is not None
        hit = g.const(_new_table([total - node.esc], [True], total, node.esc))
        with g.block(f"if sym({hit}) is _ESC:"):
            g.emit(f"{out} = {g.inline(_dec(node.other, g, []))}")
        g.indent("else:")
    elif escapes:
        assert node.other is not None
        g.emit(f"xT = x * {total}")
        g.emit(f"{s} = xT // R")
        g.den(total)
        with g.block(f"if {s} < {node.esc}:"):
            g.take("0", str(node.esc), total, counted=True)
            g.emit(f"{out} = {g.inline(_dec(node.other, g, []))}")
        g.indent("else:")
        g.take(str(node.esc), str(node.total - node.esc), total, counted=True)
    if isinstance(node, fm.Given) and _tabled(node):
        if not all(map(_plain, node.table.values())):  # a prediction the common path cannot hold
            g.emit(f"if {p} is {g.const(_NOTPLAIN)}: raise DecodeError('a predicted field cannot hold here')")
    elif isinstance(node, fm.SumOf) and p in g.inlined_sum:
        pass  # computed inline: always a number
    elif not _tabled(node):
        miss = g.const(fm.MISSING)
        g.emit(f"if {p} is None or {p} is {miss}: raise DecodeError('a predicted field has no prediction')")
    if isinstance(node, fm.Prefixed):
        g.emit(f"{out} = {p} + {g.inline(_dec(node.rest, g, []))}")
    elif p != out:
        g.emit(f"{out} = {p}")
    if escapes:
        g.dedent()


Fast = tuple[Callable[[Any], bytes | None], Callable[[bytes], Any]]

# The canonical payload of the interval low/rng/den (_coder.shortest, without side bytes),
# inline: this runs once per message. k = ceil(low * 256^n / den) = q + (r > 0) is inside the
# interval unless r > 0 and den - r >= rng * 256^n. Most payloads take the first length n0 or
# the next, so one division is made a byte past n0; n0's quotient and remainder follow from it
# (q = 256 q0 + t gives r0 = (t den + r) / 256, exactly), and each further byte from r << 8.
PAYLOAD = """\
n = (den.bit_length() - rng.bit_length()) // 8
q, r = divmod(low << 8 * n + 8, den)
w = rng << 8 * n
r0 = ((q & 255) * den + r) >> 8
if not r0 or den - r0 < w:
    return ((q >> 8) + (r0 > 0)).to_bytes(n, 'big')
n += 1
w <<= 8
while r and den - r >= w:
    q2, r = divmod(r << 8, den)
    q = (q << 8) + q2
    w <<= 8
    n += 1
return (q + (r > 0)).to_bytes(n, 'big')"""


def generate(
    root: fm.Node,
    head: tuple[int, int, int],
    flag_total: int,
    common: int,
    native: bool | None = None,
    blocks: bool = False,
) -> Fast:
    """The common-path encoder ``value -> payload | None`` and decoder ``payload -> value | OFF``.

    ``head`` is the interval after the head and the flag symbol (no side stream, common path);
    the decoder checks both symbols itself and returns ``OFF`` when either says otherwise.
    ``native`` (default ``NATIVE``) asks for code on the native coder, which takes totals and
    spans below 2^64: a model with a larger one gets the pure-Python code. With ``blocks``
    (format 5) the common path holds one block: a message that would end it leaves the path,
    and a payload of the common path that does is rejected."""
    start = (flag_total, (FLAG_TOTAL - 1) * (common + 1), FLAG_TOTAL * flag_total)
    if native is None:
        native = NATIVE
    if native and (
        max(*head, *start) >= 1 << 64
        or any(n.span >= 1 << 64 for n in fm.walk(root) if isinstance(n, fm.IntRange))
    ):
        native = False
    g = _Gen(native)
    if native:
        g.emit(f"e = _encoder({head[0]}, {head[1]}, {head[2]})")
        g.emit("put = e.put")
    else:
        g.emit(f"low, rng, den = {head[0]}, {head[1]}, {head[2]}")
    _enc(root, g, "value", [])
    if any("budget" in line for line in g.lines):
        g.lines.insert(1 + native, f"    budget = {MAX_SYMBOLS - g.static}")
    g.flush()
    if blocks:  # the body must not end its block (spec/LEARNED_MODEL.md §3)
        near = BLOCK_BITS - 1  # below it the body is surely in its block: no big integers built
        g.emit(
            f"if e.spread >= {near} and _beyond(e.rng, e.den): return None"
            if native
            else f"if den.bit_length() - rng.bit_length() >= {near} and _beyond(rng, den): return None"
        )
    if native:
        g.emit("return e.payload()")
    else:
        g.lines += ["    " * g.depth + line for line in PAYLOAD.splitlines()]
    body = "\n".join("    " + line for line in g.lines)
    # A TypeError means an unhashable value where a table key was expected, an ArithmeticError a
    # number past float range in a sum: off the path (the general rules deal with both).
    off = "except (TypeError, ArithmeticError):\n        return None"
    enc_src = f"def _encode(value):\n    try:\n{body}\n    {off}"
    g.lines = []
    g.sums, g.acc = {}, {}  # the decoder plans its own accumulators
    g.static, g.outer = 0, 1  # and counts its own loops
    # The head's "no side stream" and the flag's "common path", taken as one symbol: slots
    # [flag_total, flag_total + 65535 * (common + 1)) of 65536 * flag_total.
    # A common-path payload is one block, or in older formats at most LEGACY_BYTES long: a longer
    # one goes to the walker, which reads it a block at a time and rejects it.
    g.emit(f"if len(data) > {BLOCK_BYTES if blocks else LEGACY_BYTES}: return _OFF")
    if native:
        g.emit(f"d = _decoder(data, {start[0]}, {start[1]}, {start[2]})")
        g.emit("if d is None: return _OFF  # a side stream, or the flag says: off the common path")
        steps_at = len(g.lines)
        g.emit("sym, uni, bits = d.sym, d.uni, d.bits")
    else:
        g.emit("num = int.from_bytes(data, 'big')")
        g.emit("size = len(data)")
        g.emit("scale = 1 << (8 * size)")
        g.emit(f"x = num * {start[2]} - {start[0]} * scale")
        g.emit(f"R = scale * {start[1]}")
        g.emit("if not 0 <= x < R: return _OFF  # a side stream, or the flag says: off the common path")
        g.emit(f"den = {start[2]}")
    budget_at = len(g.lines)
    out = _dec(root, g, [])
    if any("budget" in line for line in g.lines[budget_at:]):
        g.lines.insert(budget_at, f"    budget = {MAX_SYMBOLS - g.static}")
    g.flush()
    # The canonical-form check (_coder.check), inline for the common case.
    # Usually the shortest possible length is the payload's or one byte less: those inline.
    if native:
        body = "\n".join(g.lines[steps_at + 1 :])
        steps = [f for f in ("sym", "uni", "bits") if f"{f}(" in body]  # the decoder's steps used
        g.lines[steps_at] = f"    {', '.join(steps)} = {', '.join(f'd.{f}' for f in steps)}" if steps else ""
        g.emit("if not d.end(): _check(data, d.num, 1 << 8 * len(data), d.x, d.R, d.den, len(data), False)")
        if blocks:
            g.emit(
                f"if d.spread + 8 * len(data) >= {BLOCK_BITS - 1}"
                " and _beyond(d.R, d.den, 1 << 8 * len(data)): raise DecodeError(_TWO)"
            )
    else:
        full = "_check(data, num, scale, x, R, den, size, False)"
        g.emit("n0 = (den.bit_length() - R.bit_length()) // 8 + size")
        g.emit("if n0 == size - 1:")
        g.emit(f"    if x >= den or x + (-num & 255) * den < R: {full}")
        g.emit(f"elif n0 != size or x >= den: {full}")
        if blocks:
            g.emit(
                f"if den.bit_length() - R.bit_length() + 8 * size >= {BLOCK_BITS - 1}"
                " and _beyond(R, den, scale): raise DecodeError(_TWO)"
            )
    g.emit(f"return {out}")
    dec_src = "def _decode(data):\n" + "\n".join(g.lines)
    ns = g.ns
    ns["_OFF"], ns["_check"], ns["_ESC"], ns["_beyond"] = fm.OFF, check, _ESC, beyond_block
    ns["_TWO"] = "learned-model payload is not in canonical form (a common-path body of two blocks)"
    if native:
        ns["_encoder"], ns["_decoder"], ns["_fields"] = _native.encoder, _native.decoder, _native.fields
    exec(compile(enc_src + "\n\n" + dec_src, "<zeroc learned model>", "exec"), ns)  # noqa: S102 - our own source
    return ns["_encode"], ns["_decode"]
