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
"""

from __future__ import annotations

import math
from array import array
from bisect import bisect_right
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from zeroc import _fieldmodel as fm
from zeroc._arith import FLAG_TOTAL, MAX_SYMBOLS, check
from zeroc._errors import DecodeError


def _sign(v: float) -> float:
    return math.copysign(1.0, v)


class _Gen:
    def __init__(self) -> None:
        self.ns: dict[str, Any] = {
            "_bisect": bisect_right,
            "_key": fm._key,
            "_sign": _sign,
            "_copy": fm._copy,
            "DecodeError": DecodeError,
        }
        self.lines: list[str] = []
        self.depth = 1
        self.n = 0
        self.pending = 1  # totals of straight-line symbols, multiplied into ``den`` at once
        self.opened: list[int] = []  # line counts where the open blocks began
        self.ints: set[str] = set()  # variables known to hold ints (lengths)
        self.slots = SLOT_BUDGET  # slot-table entries this model may still spend

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

    def flush(self) -> None:
        if self.pending != 1:
            self.emit(f"den *= {self.pending}")
            self.pending = 1

    def indent(self, head: str) -> None:
        self.flush()
        self.emit(head)
        self.depth += 1
        self.opened.append(len(self.lines))

    def dedent(self) -> None:
        self.flush()
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
        """A loop run ``count`` times: when its body's symbols have fixed totals, their product
        goes into ``den`` once after the loop (as ``factor ** count``), not once per pass."""
        self.indent(head)
        start = len(self.lines)
        yield
        if self.pending != 1 and not any("den *=" in line for line in self.lines[start:]):
            factor, self.pending = self.pending, 1
            if self.opened.pop() == len(self.lines):
                self.emit("pass")
            self.depth -= 1
            self.emit(f"den *= {factor} ** {count}")
        else:
            self.dedent()

    # -- the coder's operations on the locals low/rng/den (encode) and x/R/den (decode) -------
    def den(self, total: int) -> None:
        self.pending *= total

    def put(self, start: str, freq: str, total: int) -> None:
        self.emit(f"low = low * {total} + rng * {start}" if start != "0" else f"low = low * {total}")
        if freq != "1":
            self.emit(f"rng *= {freq}")
        self.den(total)

    def take(self, start: str, freq: str, total: int) -> None:
        """Take a symbol after ``xT = x * total`` was computed (decode)."""
        self.emit(f"x = xT - {start} * R" if start != "0" else "x = xT")
        if freq != "1":
            self.emit(f"R *= {freq}")
        self.den(total)

    def uniform(self, total: int) -> str:
        v = self.tmp("u")
        self.emit(f"xT = x * {total}")
        self.emit(f"{v} = xT // R")
        self.take(v, "1", total)
        return v


DIRECT = 1 << 14  # categoricals with at most this many slots get a slot -> entry list
SLOT_BUDGET = 1 << 22  # slot-table entries per model (~32 MB at most; past it, binary search)


def _raw(node: fm.Node | None) -> bool:
    return node is None or isinstance(node, fm.Raw)


def _cat_tables(node: fm.Categorical, g: _Gen) -> tuple[str, str, int, str, str, str]:
    """(lookup dict, key kind, total, starts, freqs, values). When the categorical escapes to
    JSON text (off the common path), its values are coded given a hit: no escape mass."""
    kinds = {type(v) for v in node.values}
    kind = "str" if kinds == {str} else "int" if kinds == {int} else "key"
    shift = node.esc if _raw(node.fallback) else 0
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


def _plain(v: Any) -> bool:
    return type(v) in (str, int, bool, type(None)) or (type(v) is float and v == v and v != 0.0)


def _lookup(g: _Gen, table: dict[Any, Any], source: str) -> str:
    """An expression looking ``source`` up in a table keyed by ``_key``: by the raw value when
    every key is a str (or every key an int), which skips building the key."""
    kinds = {k[0] for k in table}
    if len(kinds) == 1 and kinds <= {"str", "int"}:
        raw = {k[1]: v for k, v in table.items()}
        return f"({g.const(raw)}.get({source}) if type({source}) is {kinds.pop()} else None)"
    return f"{g.const(table)}.get(_key({source}))"


def _prediction(node: fm.Predicted | fm.Prefixed, g: _Gen, ctx: list[str]) -> str:
    """An expression for the predicted value (or prefix), ``None`` or ``_MISS`` when there is none."""
    if isinstance(node, fm.Given):
        # Only scalar predictions that ``==`` tells apart exactly (not 0.0/-0.0, not containers).
        return _lookup(g, {k: v for k, v in node.table.items() if _plain(v)}, ctx[node.source])
    if isinstance(node, fm.Prefixed):
        return _lookup(g, node.table, ctx[node.source])
    return f"{g.const(node.compute)}({ctx[node.source]})"


def _holds(node: fm.Predicted | fm.Prefixed, var: str, p: str) -> str:
    """The condition under which ``var`` is what the rule predicts (``p``)."""
    if isinstance(node, fm.Prefixed):
        return f"{p} is not None and type({var}) is str and {var}.startswith({p})"
    if isinstance(node, fm.SumOf):  # ``and p``: a zero total might be -0.0, which == cannot tell
        return f"type({var}) is type({p}) and {var} == {p} and {p}"
    return f"{p} is not None and type({var}) is type({p}) and {var} == {p}"


def _enc(node: fm.Node, g: _Gen, var: str, ctx: list[str]) -> None:
    """Emit code coding ``var`` on ``node``'s common path, returning ``None`` off it."""
    if not var.isidentifier():
        t = g.tmp("e")
        g.emit(f"{t} = {var}")
        if var.startswith("len("):
            g.ints.add(t)  # no type check needed
        var = t
    if isinstance(node, fm.Categorical):
        if len(node.values) == 1 and _raw(node.fallback):
            if var in g.ints and type(node.values[0]) is int:
                g.emit(f"if {var} != {node.values[0]}: return None")
            else:
                g.emit(f"if _key({var}) != {g.const(node.keys[0])}: return None")
            return
        d, kind, total, _s, _f, _v = _cat_tables(node, g)
        h = g.tmp("h")
        if kind == "key":
            g.emit(f"{h} = {d}.get(_key({var}))")
        elif kind == "str" or var in g.ints:  # a non-str never equals a str key (an unhashable
            g.emit(f"{h} = {d}.get({var})")  # value raises TypeError: off the path)
        else:
            g.emit(f"{h} = {d}.get({var}) if type({var}) is {kind} else None")
        if _raw(node.fallback):
            g.emit(f"if {h} is None: return None")
            g.put(f"{h}[0]", f"{h}[1]", total)
            return
        with g.block(f"if {h} is None:"):
            g.put("0", str(node.esc), total)
            _enc(node.fallback, g, var, [])
        with g.block("else:"):
            g.put(f"{h}[0]", f"{h}[1]", total)
    elif isinstance(node, fm.IntRange):
        d = g.tmp("d")
        g.emit(f"if type({var}) is not int: return None")
        g.emit(f"{d} = {var} - {node.lo}")
        g.emit(f"if not 0 <= {d} < {node.span}: return None")
        g.put(d, "1", node.span)
    elif isinstance(node, fm.Decimal):
        t, m = g.tmp("i"), str(10**node.scale)
        g.emit(f"if type({var}) is not float or {var} - {var} != 0.0: return None")
        g.emit(f"{t} = round({var} * {m})")
        g.emit(f"if {t} / {m} != {var} or (not {t} and _sign({var}) < 0): return None")
        _enc(node.inner, g, t, [])
    elif isinstance(node, fm.Template):
        t = g.tmp("i")
        g.emit(f"if type({var}) is not str or {g.const(node.pattern.match)}({var}) is None: return None")
        g.emit(f"{t} = int({var}[{len(node.prefix)}:])")
        _enc(node.inner, g, t, [])
    elif isinstance(node, fm.Words):
        ws, w, i = g.tmp("ws"), g.tmp("w"), g.tmp("i")
        if node.tokens:
            g.emit(f"if type({var}) is not str or not {var}: return None")
            g.emit(f"{ws} = {g.const(fm._TOKEN.findall)}({var})")
            g.emit(f"if len({ws}) > {MAX_SYMBOLS}: return None")
        else:
            g.emit(f"if type({var}) is not str or not {var} or {var}[0] == ' ' or {var}[-1] == ' ':")
            g.emit("    return None")
            g.emit(f"if '  ' in {var}: return None")
            g.emit(f"{ws} = {var}.split(' ')")
        g.emit(f"if len({ws}) > {MAX_SYMBOLS}: return None")
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
        g.emit(f"if type({var}) is not dict or tuple({var}) != {g.const(node.keys)}: return None")
        names = [g.tmp("v") for _ in node.keys]
        if names:
            g.emit(f"{', '.join(names)}{',' if len(names) == 1 else ''} = {var}.values()")
        for j, (child, name) in enumerate(zip(node.children, names, strict=True)):
            _enc(child, g, name, names[:j])
    elif isinstance(node, fm.Array):
        it = g.tmp("it")
        g.emit(f"if type({var}) is not list or len({var}) > {MAX_SYMBOLS}: return None")
        _enc(node.lengths, g, f"len({var})", [])
        with g.loop(f"for {it} in {var}:", f"len({var})"):
            _enc(node.item, g, it, [])
    elif isinstance(node, (fm.Predicted, fm.Prefixed)):
        p = g.tmp("p")
        g.emit(f"{p} = {_prediction(node, g, ctx)}")
        holds = _holds(node, var, p)
        total = node.total
        with g.block(f"if {holds}:"):
            if not _raw(node.other):
                g.put(str(node.esc), str(node.total - node.esc), total)
            if isinstance(node, fm.Prefixed):
                _enc(node.rest, g, f"{var}[len({p}):]", [])
        with g.block("else:"):
            if _raw(node.other):
                g.emit("return None")
            else:
                assert node.other is not None
                g.put("0", str(node.esc), total)
                _enc(node.other, g, var, [])
    else:  # Raw and anything new: never on the common path
        g.emit("return None")


def _spend(g: _Gen, n: str) -> None:
    """Loops draw on the payload's budget: a forged payload cannot make a loop run long."""
    g.emit(f"budget -= {n}")  # a count that is not an int raises TypeError: a DecodeError
    g.emit("if budget < 0: raise DecodeError('learned-model payload asks for more items than it can hold')")


def _dec(node: fm.Node, g: _Gen, ctx: list[str]) -> str:
    """Emit code decoding ``node``'s common path; returns the variable holding the value."""
    out = g.tmp("o")
    if isinstance(node, fm.Categorical):
        if len(node.values) == 1 and _raw(node.fallback):
            g.emit(f"{out} = _copy({g.const(node.values[0])})")
            return out
        _d, _k, total, starts, freqs, values = _cat_tables(node, g)
        s = g.tmp("s")
        g.emit(f"xT = x * {total}")
        g.emit(f"{s} = xT // R")
        escapes = not _raw(node.fallback)
        if escapes:
            with g.block(f"if {s} < {node.esc}:"):
                g.take("0", str(node.esc), total)
                g.emit(f"{out} = {_dec(node.fallback, g, [])}")
            g.indent("else:")
        st, fr = g.tmp("st"), g.tmp("fr")
        g.emit(f"{st}, {fr}, {out} = {_slots(node, g, starts, freqs, values, s)}")
        g.take(st, fr, total)
        if node.mutable:
            g.emit(f"{out} = _copy({out})")
        if escapes:
            g.dedent()
    elif isinstance(node, fm.IntRange):
        g.emit(f"{out} = {node.lo} + {g.uniform(node.span)}")
    elif isinstance(node, fm.Decimal):
        g.emit(f"{out} = {_dec(node.inner, g, [])} / {10**node.scale}")
    elif isinstance(node, fm.Template):
        g.emit(f"{out} = {g.const(node.prefix)} + format({_dec(node.inner, g, [])}, '0{node.width}d')")
    elif isinstance(node, fm.Words):
        n, i, parts = g.tmp("n"), g.tmp("i"), g.tmp("ws")
        g.emit(f"{n} = {_dec(node.count, g, [])}")
        _spend(g, n)
        g.emit(f"{parts} = []")
        with g.loop(f"for {i} in range({n}):", n):
            if len(node.words) == 1:
                g.emit(f"{parts}.append({_dec(node.words[0], g, [])})")
            else:
                for pos, model in enumerate(node.words):
                    last = pos == len(node.words) - 1
                    with g.block("else:" if last else f"{'if' if pos == 0 else 'elif'} {i} == {pos}:"):
                        g.emit(f"{parts}.append({_dec(model, g, [])})")
        g.emit(f"{out} = {g.const(node.sep)}.join({parts})")
    elif isinstance(node, fm.Object):
        names: list[str] = []
        for child in node.children:
            names.append(_dec(child, g, names))
        keys = [g.const(k) for k in node.keys]
        g.emit(f"{out} = {{{', '.join(f'{k}: {v}' for k, v in zip(keys, names, strict=True))}}}")
    elif isinstance(node, fm.Array):
        n = g.tmp("n")
        g.emit(f"{n} = {_dec(node.lengths, g, [])}")
        _spend(g, n)
        g.emit(f"{out} = []")
        with g.loop(f"for _ in range({n}):", n):
            g.emit(f"{out}.append({_dec(node.item, g, [])})")
    elif isinstance(node, (fm.Predicted, fm.Prefixed)):
        p, s, total = g.tmp("p"), g.tmp("s"), node.total
        g.emit(f"{p} = {_prediction(node, g, ctx)}")
        escapes = not _raw(node.other)
        if escapes:
            assert node.other is not None
            g.emit(f"xT = x * {total}")
            g.emit(f"{s} = xT // R")
            with g.block(f"if {s} < {node.esc}:"):
                g.take("0", str(node.esc), total)
                g.emit(f"{out} = {_dec(node.other, g, [])}")
            g.indent("else:")
            g.take(str(node.esc), str(node.total - node.esc), total)
        miss = g.const(fm._MISS)
        g.emit(f"if {p} is None or {p} is {miss}: raise DecodeError('a predicted field has no prediction')")
        if isinstance(node, fm.Prefixed):
            g.emit(f"{out} = {p} + {_dec(node.rest, g, [])}")
        else:
            g.emit(f"{out} = {p}")
        if escapes:
            g.dedent()
    else:
        g.emit("raise DecodeError('learned-model payload takes a branch its common path lacks')")
    return out


Fast = tuple[Callable[[Any], bytes | None], Callable[[bytes], Any]]


def generate(root: fm.Node, head: tuple[int, int, int], flag_total: int, common: int) -> Fast:
    """The common-path encoder ``value -> payload | None`` and decoder ``payload -> value | OFF``.

    ``head`` is the interval after the head and the flag symbol (no side stream, common path);
    the decoder checks both symbols itself and returns ``OFF`` when either says otherwise."""
    g = _Gen()
    g.emit(f"low, rng, den = {head[0]}, {head[1]}, {head[2]}")
    _enc(root, g, "value", [])
    g.flush()
    # The canonical payload (_arith.shortest), inline: this runs once per message.
    g.emit("n = (den.bit_length() - rng.bit_length()) // 8")
    g.emit("high = low + rng")
    with g.block("while True:"):
        g.emit("s = 8 * n")
        g.emit("k = -(-(low << s) // den)")
        g.emit("if k * den < high << s: return k.to_bytes(n, 'big')")
        g.emit("n += 1")
    body = "\n".join("    " + line for line in g.lines)
    # A TypeError means an unhashable value where a table key was expected: off the path.
    enc_src = f"def _encode(value):\n    try:\n{body}\n    except TypeError:\n        return None"
    g.lines = []
    # The head's "no side stream" and the flag's "common path", taken as one symbol: slots
    # [flag_total, flag_total + 65535 * (common + 1)) of 65536 * flag_total.
    g.emit("num = int.from_bytes(data, 'big')")
    g.emit("size = len(data)")
    g.emit("scale = 1 << (8 * size)")
    g.emit(f"x = num * {FLAG_TOTAL * flag_total}")
    g.emit(f"if x < {flag_total} * scale or x >= {flag_total + (FLAG_TOTAL - 1) * (common + 1)} * scale:")
    g.emit("    return _OFF  # a side stream, or the flag says: off the common path")
    g.emit(f"x -= {flag_total} * scale")
    g.emit(f"R = scale * {(FLAG_TOTAL - 1) * (common + 1)}")
    g.emit(f"den = {FLAG_TOTAL * flag_total}")
    g.emit(f"budget = {MAX_SYMBOLS}")
    out = _dec(root, g, [])
    g.flush()
    # The canonical-form check (_arith.check), inline for the common case.
    g.emit("n0 = (den.bit_length() - (R.bit_length() - 8 * size)) // 8")
    g.emit("if n0 > size or x >= den: _check(data, num, scale, x, R, den, size, False)")
    with g.block("if n0 < size:"):
        g.emit("neg = -num")
        with g.block("for n in range(n0, size):"):
            g.emit("if x + (neg & ((1 << (8 * (size - n))) - 1)) * den < R:")
            g.emit("    _check(data, num, scale, x, R, den, size, False)")
    g.emit(f"return {out}")
    dec_src = "def _decode(data):\n" + "\n".join(g.lines)
    ns = g.ns
    ns["_OFF"], ns["_check"] = fm.OFF, check
    exec(compile(enc_src + "\n\n" + dec_src, "<zeroc learned model>", "exec"), ns)  # noqa: S102 - our own source
    return ns["_encode"], ns["_decode"]
