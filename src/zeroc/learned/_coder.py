"""The learned codec's coders and side stream: model format 6's range coder (``RangeEncoder``,
``RangeDecoder``, at the end of this module: spec/LEARNED_MODEL.md §1.2) and, for formats 1-5,
an exact arithmetic coder over Python integers, described here.

The coded interval is kept as exact fractions low/den .. (low+rng)/den; each symbol
[start, start+freq) of ``total`` narrows it (three integer operations). The output names, in
the fewest big-endian bytes (searched from a bound computed from the interval's width), a
number inside the final interval — a whole sub-interval when side bytes follow — so a message
costs its information plus ~1-2 bits, rounded up to whole bytes, with no header or state words
(REFERENCE.md: `constriction` costs ~2.4 B more per tiny message; a plain big-integer rANS
wastes up to log2(total) bits on its first symbols).

Raw bytes (escaped values) do not go through the arithmetic: they follow it as a side stream,
whose presence and length are coded first. Because the named sub-interval then lies inside the
final interval, a decoder may read the whole payload as the fraction: the side bytes change
nothing it decodes.

The decoder keeps ``x / R``, the payload's position inside the current interval, as two
integers: ``slot = x * total // R`` names the next symbol and ``x = x * total - start * R``,
``R *= freq`` takes it. It needs no bound checks: ``0 <= x < R`` holds by construction.

From model format 5 the body is coded in *blocks* (``blocks=True``): once a block's symbols
carry more than 2^2048 of information (``den > rng << BLOCK_BITS``), it is written as the
shortest number whose whole unit lies in its interval and the next block starts afresh. The
integers never outgrow one block, so a symbol costs the same at any message size, and a decoder
reads at most ``BLOCK_BYTES`` of the payload as a number at a time. A message of one block is
the same bytes as before.
"""

from __future__ import annotations

from typing import Any

from zeroc._errors import DecodeError, LimitExceeded
from zeroc._frame import Method

FLAG_TOTAL = 1 << 16  # "has a side stream": ~0 bits when absent
NO_SIDE = (1, FLAG_TOTAL - 1, FLAG_TOTAL)
SIDE_MODES = 3  # the side stream as is (0), or a zstd-block (1) or magicless zstd frame (2)
SIDE_RAW = 0
# Symbols one payload may hold. The exact coder's integers grow with every symbol, so a message's
# cost grows with the square of its symbols: past this, encoders refuse (a codec then uses zstd)
# and decoders reject, which bounds the work any payload can cause.
MAX_SYMBOLS = 4096
# Format 5's blocks: a block ends after the symbol that takes its information past BLOCK_BITS,
# so its canonical number is at most BLOCK_BYTES long (2,048 bits, one more symbol of at most
# 128 bits, the head's 90, two bytes of rounding). Its payloads may yield MAX_SYMBOLS +
# PER_BYTE symbols per payload byte; older formats' arithmetic parts are at most LEGACY_BYTES.
BLOCK_BITS = 2048
BLOCK_BYTES = 288
PER_BYTE = 16
LEGACY_BYTES = 65552


def code_length(n: int) -> list[tuple[int, int, int]]:
    """A length as symbols: its bit width (uniform of 64), then the bits below the top one."""
    width = n.bit_length()
    ops = [(width, 1, 64)]
    if width > 1:
        ops.append((n - (1 << (width - 1)), 1, 1 << (width - 1)))
    return ops


def read_head(dec: Any, data: bytes) -> tuple[int, int]:
    """A payload's head (spec §1.1) read by ``dec``: the side stream's (size, mode), (0, raw)
    without one."""
    if dec.peek(FLAG_TOTAL) >= 1:
        dec.take(*NO_SIDE)
        return 0, SIDE_RAW
    dec.take(0, 1, FLAG_TOTAL)
    width = dec.uniform(64)
    size = width if width < 2 else (1 << (width - 1)) + dec.uniform(1 << (width - 1))
    mode = dec.uniform(SIDE_MODES)
    if size > len(data):
        raise DecodeError("side stream is longer than the payload")
    return size, mode


def side_stream(data: bytes, size: int, mode: int, engine: Any, max_size: int) -> bytes:
    """The last ``size`` bytes of a payload as the side stream's content."""
    buf = data[len(data) - size :]
    if mode == SIDE_RAW:
        return buf
    if engine is None:
        raise DecodeError("side stream is compressed and this model has no dictionary")
    out: bytes = engine.decompress(Method(mode), buf, max_size)
    if len(out) <= size:
        raise DecodeError("compressed side stream is not smaller than its content")
    return out


def _take_bytes(dec: Any, n: int) -> bytes:
    """The next ``n`` bytes of a decoder's side stream (both decoders' ``take_bytes``)."""
    if n < 0 or dec.pos + n > len(dec.buf):
        raise DecodeError("escaped bytes run past the side stream")
    out: bytes = dec.buf[dec.pos : dec.pos + n]
    dec.pos += n
    return out


def shortest(low: int, rng: int, den: int, contained: bool) -> tuple[int, int]:
    """The canonical (n, k): k / 256^n lies in [low/den, (low+rng)/den) — all of
    [k/256^n, (k+1)/256^n) does when side bytes follow — with n the first that works counting
    up from ``(bitlen(den) - bitlen(rng)) // 8``, where a number in the interval may first exist
    (a shorter one needs luck that comes to fewer than 1 message in 128: not sought)."""
    n = (den.bit_length() - rng.bit_length()) // 8
    high = low + rng
    while True:
        shift = 8 * n
        k = -(-(low << shift) // den)
        if contained:
            if (k + 1) * den <= high << shift:
                return n, k
        elif k * den < high << shift:
            return n, k
        n += 1


def _number(low: int, rng: int, den: int, contained: bool) -> bytes:
    n, k = shortest(low, rng, den, contained)
    return k.to_bytes(n, "big") if n else b""


def beyond_block(rng: int, den: int, scale: int = 1) -> bool:
    """Whether a common-path body (head: no side stream, then the flag) has left its first
    block: ``den / 65536 > (rng / 65535 / scale) << BLOCK_BITS`` (``rng`` is the decoder's
    ``R``, scaled, when ``scale`` is given)."""
    if den.bit_length() - rng.bit_length() + 8 * (scale.bit_length() - 1) < BLOCK_BITS - 1:
        return False  # far from it (the common case): no big products
    return den * (FLAG_TOTAL - 1) * scale > (rng * FLAG_TOTAL) << BLOCK_BITS


def finish(
    low: int,
    rng: int,
    den: int,
    side: bytes,
    engine: Any = None,
    first: tuple[int, int, int] | None = None,
    blocks: tuple[bytes, ...] | list[bytes] = (),
) -> bytes:
    """The payload for a coded interval and its side bytes, which ``engine`` (a zstd engine with
    the model's dictionary) compresses when that makes them smaller. With blocks (format 5),
    ``first`` is the first block's interval and ``blocks`` the bytes of those between it and
    the last one (``low``/``rng``/``den``)."""
    if side:
        mode = SIDE_RAW
        if engine is not None:
            method, packed = engine.compress(side)
            if len(packed) < len(side):
                mode, side = method, packed
        head = Encoder()
        head.put(0, 1, FLAG_TOTAL)
        for op in code_length(len(side)):
            head.put(*op)
        head.put(mode, 1, SIDE_MODES)
        head_low, head_rng, head_den = head.low, head.rng, head.den
    else:
        head_low, head_rng, head_den = NO_SIDE
    if first is None:  # one block: the head interval, refined by the body's
        low, rng, den = head_low * den + head_rng * low, head_rng * rng, head_den * den
        return _number(low, rng, den, bool(side)) + side
    f_low, f_rng, f_den = first
    f_low, f_rng, f_den = head_low * f_den + head_rng * f_low, head_rng * f_rng, head_den * f_den
    return _number(f_low, f_rng, f_den, True) + b"".join(blocks) + _number(low, rng, den, bool(side)) + side


class Encoder:
    """Symbols in, payload out. Generated fast paths keep the same three integers as locals.
    ``blocks``: the block coder of format 5 (else at most MAX_SYMBOLS symbols, in one block)."""

    __slots__ = ("blocks", "count", "den", "done", "first", "low", "rng", "side")

    def __init__(self, blocks: bool = False) -> None:
        self.low, self.rng, self.den = 0, 1, 1
        self.side: list[bytes] = []
        self.count = 0
        self.blocks = blocks
        self.first: tuple[int, int, int] | None = None  # the first block, once it has ended
        self.done: list[bytes] = []  # the blocks after it that have ended, written

    def put(self, start: int, freq: int, total: int) -> None:
        """Code the symbol occupying [start, start + freq) out of ``total``."""
        self.count += 1
        self.low = self.low * total + self.rng * start
        self.rng *= freq
        self.den *= total
        if self.blocks:
            if self.den > self.rng << BLOCK_BITS:
                self.end_block()
        elif self.count > MAX_SYMBOLS:
            raise LimitExceeded(f"value needs more than {MAX_SYMBOLS} learned-model symbols")

    def end_block(self) -> None:
        if self.first is None:  # written at the end, when the head it starts with is known
            self.first = (self.low, self.rng, self.den)
        else:
            self.done.append(_number(self.low, self.rng, self.den, True))
        self.low, self.rng, self.den = 0, 1, 1

    def put_bytes(self, data: bytes) -> None:
        """Raw bytes, to the side stream (their length is the caller's to code)."""
        self.side.append(data)

    def finish(self, engine: Any = None) -> bytes:
        side = b"".join(self.side)
        payload = finish(self.low, self.rng, self.den, side, engine, self.first, self.done)
        if self.blocks and self.count > MAX_SYMBOLS + PER_BYTE * len(payload):
            raise LimitExceeded(
                f"value needs {self.count} learned-model symbols, more than its payload may hold"
            )
        return payload


class Decoder:
    """Decodes symbols in the order they were put. ``budget`` bounds the symbols one payload may
    yield, so a forged payload cannot make a model loop for long. ``blocks``: format 5's block
    coder (the payload is read one block at a time)."""

    __slots__ = (
        "R",
        "arith",
        "bden",
        "blocks",
        "brng",
        "budget",
        "buf",
        "data",
        "den",
        "num",
        "pos",
        "scale",
        "start",
        "x",
    )

    def __init__(
        self, data: bytes, engine: Any = None, max_size: int = 64 * 1024 * 1024, blocks: bool = False
    ) -> None:
        self.data = data
        self.blocks = False  # not while the head is read: its symbols are no block's
        self.arith = len(data)
        self._load(0, min(len(data), BLOCK_BYTES if blocks else LEGACY_BYTES))
        self.budget = MAX_SYMBOLS + 8 + (PER_BYTE * len(data) if blocks else 0)  # body and head
        size, mode = read_head(self, data)
        self.arith = len(data) - size
        if not blocks and self.arith > LEGACY_BYTES:
            raise DecodeError("learned-model payload is longer than any of its format")
        self.blocks, self.bden, self.brng = blocks, 1, 1
        self.buf, self.pos = side_stream(data, size, mode, engine, max_size), 0

    def _load(self, start: int, end: int) -> None:
        """Read the block starting at ``start`` as the fraction of bytes ``start..end``."""
        self.start = start
        self.num = int.from_bytes(self.data[start:end], "big")
        self.scale = 1 << (8 * (end - start))
        self.x, self.R, self.den = self.num, self.scale, 1
        self.bden = self.brng = 1

    def _next_block(self) -> None:
        """The block has ended: its bytes must be the ones an encoder writes; read the next."""
        low, rng = (self.num * self.den - self.x) // self.scale, self.R // self.scale
        end = self.start + len(written := _number(low, rng, self.den, True))
        if end > self.arith or self.data[self.start : end] != written:
            raise DecodeError("learned-model payload is not in canonical form (a block ends otherwise)")
        self._load(end, min(self.arith, end + BLOCK_BYTES))

    def peek(self, total: int) -> int:
        """The slot in [0, total) of the next symbol; then call :meth:`take`."""
        return self.x * total // self.R

    def take(self, start: int, freq: int, total: int) -> None:
        self.budget -= 1
        if self.budget < 0:
            raise DecodeError("learned-model payload asks for more symbols than it can hold")
        self.x = self.x * total - start * self.R
        self.R *= freq
        self.den *= total
        if self.blocks:
            self.bden *= total
            self.brng *= freq
            if self.bden > self.brng << BLOCK_BITS:
                self._next_block()

    def uniform(self, n: int) -> int:
        v = self.x * n // self.R
        self.take(v, 1, n)
        return v

    take_bytes = _take_bytes

    def finish(self) -> None:
        """The payload must be exactly what the encoder writes for these symbols."""
        if self.pos != len(self.buf):
            raise DecodeError("learned-model payload has unread escaped bytes")
        contained = self.arith != len(self.data)
        if not contained and self.scale != 1 << (8 * (self.arith - self.start)):
            raise DecodeError("learned-model payload is not in canonical form (longer than its last block)")
        check(
            self.data[self.start :],
            self.num,
            self.scale,
            self.x,
            self.R,
            self.den,
            self.arith - self.start,
            contained,
        )


def check(data: bytes, num: int, scale: int, x: int, R: int, den: int, arith: int, contained: bool) -> None:
    """Reject a payload that is not the canonical one for the symbols decoded from it: its first
    ``arith`` bytes must be the number the encoder chooses for the final interval."""
    if not contained:
        # The payload P = num/scale sits at x/R of the final interval. It is canonical when it is
        # the smallest number of its length there (x < den: below one unit of its last byte)
        # and no length from n0 up to it would do: the smallest number j bytes shorter is P
        # rounded up by delta = -num mod 256^j, inside the interval iff x + delta*den < R.
        n0 = (den.bit_length() - (R.bit_length() - 8 * arith)) // 8
        canonical = n0 <= arith and x < den
        if canonical:
            neg = -num
            for n in range(n0, arith):
                if x + (neg & ((1 << (8 * (arith - n))) - 1)) * den < R:
                    canonical = False
                    break
    else:
        low, rng = (num * den - x) // scale, R // scale
        n, k = shortest(low, rng, den, True)
        canonical = n == arith and (not n or int.from_bytes(data[:n], "big") == k)
    if not canonical:
        raise DecodeError("learned-model payload is not in canonical form (corrupt or wrong model)")


# -- the range coder of model format 6 (spec/LEARNED_MODEL.md §1.2) -------------------------------
TOP = 1 << 64
BOTTOM = 1 << 56  # range is renormalized to at least this: r = range // total keeps >= 2^16 slots
MASK = TOP - 1
MAX_DIRECT = 1 << 40  # larger totals are uniform symbols, coded as two
LOW32 = (1 << 32) - 1


def split(start: int, freq: int, total: int) -> list[tuple[int, int, int]]:
    """A symbol as the range coder codes it: as it is, or a uniform one past 2^40 as two."""
    if total <= MAX_DIRECT:
        return [(start, freq, total)]
    if freq != 1:
        raise ValueError(f"a symbol of total {total} (past 2^40) must be uniform")
    h = (total - 1) >> 32
    hi = start >> 32
    return [(hi, 1, h + 1), (start & LOW32, 1, 1 << 32 if hi < h else ((total - 1) & LOW32) + 1)]


def _carry(out: bytearray) -> None:
    i = len(out) - 1
    while out[i] == 0xFF:
        out[i] = 0
        i -= 1
    out[i] += 1


class RangeEncoder:
    """Symbols in, payload out (format 6). The value's symbols are kept until ``finish``, which
    codes the head (whose side-stream length it only then knows) and then them."""

    __slots__ = ("count", "side", "symbols")

    def __init__(self) -> None:
        self.symbols: list[tuple[int, int, int]] = []
        self.side: list[bytes] = []
        self.count = 0  # symbols, and the common path's items

    def put(self, start: int, freq: int, total: int) -> None:
        if total > MAX_DIRECT:
            self.symbols += split(start, freq, total)
        else:
            self.symbols.append((start, freq, total))

    def spend(self, items: int) -> None:
        """Array items and words on the common path, which count as symbols (§1.2)."""
        self.count += items

    def put_bytes(self, data: bytes) -> None:
        self.side.append(data)

    def finish(self, engine: Any = None) -> bytes:
        side = b"".join(self.side)
        head: list[tuple[int, int, int]] = [NO_SIDE]
        if side:
            mode = SIDE_RAW
            if engine is not None:
                if hasattr(type(engine), "compress_in"):  # the codec's side engine, as C asks it
                    method, packed = engine.compress_in(side, len(self.symbols))
                else:
                    method, packed = engine.compress(side)
                if len(packed) < len(side):
                    mode, side = method, packed
            head = [(0, 1, FLAG_TOTAL), *(s for op in code_length(len(side)) for s in split(*op))]
            head.append((mode, 1, SIDE_MODES))
        low, rng, out = 0, TOP - 1, bytearray()
        for start, freq, total in head + self.symbols:
            r = rng // total
            low += r * start
            if low >= TOP:
                low -= TOP
                _carry(out)
            rng = r * freq
            while rng < BOTTOM:
                out.append(low >> 56)
                low = (low << 8) & MASK
                rng <<= 8
        for m in range(9):
            u = 1 << (64 - 8 * m)
            k = -(-low // u)
            if ((k + 1) * u <= low + rng) if side else (k * u < low + rng):
                break
        if k >> (8 * m):
            _carry(out)
            k &= (1 << (8 * m)) - 1
        payload = bytes(out) + k.to_bytes(m, "big") + side
        count = self.count + len(head) + len(self.symbols)
        if count > MAX_SYMBOLS + PER_BYTE * len(payload):
            raise LimitExceeded(f"value needs {count} learned-model symbols, more than its payload may hold")
        return payload


class RangeDecoder:
    """Decodes a format-6 payload's symbols in the order they were put, head first."""

    __slots__ = ("arith", "budget", "buf", "data", "n", "pos", "rng", "side", "x")

    def __init__(self, data: bytes, engine: Any = None, max_size: int = 64 * 1024 * 1024) -> None:
        self.data = data
        self.x = int.from_bytes(data[:8].ljust(8, b"\0"), "big")
        self.rng, self.n = TOP - 1, 0
        self.budget = MAX_SYMBOLS + PER_BYTE * len(data)
        size, mode = read_head(self, data)
        self.side = size > 0
        self.arith = len(data) - size
        self.buf, self.pos = side_stream(data, size, mode, engine, max_size), 0

    def peek(self, total: int) -> int:
        s: int = self.x // (self.rng // total)
        if s >= total:
            raise DecodeError("learned-model payload is not one this model writes (a slot past the total)")
        return s

    def take(self, start: int, freq: int, total: int) -> None:
        self.budget -= 1
        if self.budget < 0:
            raise DecodeError("learned-model payload asks for more symbols than it can hold")
        r = self.rng // total
        self.x -= r * start
        self.rng = r * freq
        while self.rng < BOTTOM:
            at = 8 + self.n
            self.x = (self.x << 8) | (self.data[at] if at < len(self.data) else 0)
            self.rng <<= 8
            self.n += 1

    def uniform(self, n: int) -> int:
        if n <= MAX_DIRECT:
            v = self.peek(n)
            self.take(v, 1, n)
            return v
        (_, _, t1), _ = split(0, 1, n)
        hi = self.uniform(t1)
        h = (n - 1) >> 32
        lo = self.uniform(1 << 32 if hi < h else ((n - 1) & LOW32) + 1)
        return (hi << 32) | lo

    def spend(self, items: int) -> None:
        self.budget -= items
        if self.budget < 0:
            raise DecodeError("learned-model payload asks for more items than it can hold")

    take_bytes = _take_bytes

    def finish(self) -> None:
        if self.pos != len(self.buf):
            raise DecodeError("learned-model payload has unread escaped bytes")
        range_check(self.data, self.arith, self.n, self.x, self.rng, self.side)


def range_check(data: bytes, a: int, n: int, x: int, rng: int, contained: bool) -> None:
    """Reject a format-6 payload whose first ``a`` bytes are not the ones an encoder writes for
    the final interval (place ``x`` in the window after ``n`` bytes, width ``rng``)."""
    m = a - n
    canonical = 0 <= m <= 8
    if canonical:
        p = int.from_bytes(data[n:a].ljust(8, b"\0"), "big")
        xp = x - (int.from_bytes(data[n : n + 8].ljust(8, b"\0"), "big") - p)
        u = 1 << (64 - 8 * m)
        canonical = 0 <= xp < u and ((xp + u <= rng) if contained else (xp < rng))
        for mm in range(m if canonical else 0):
            uu = 1 << (64 - 8 * mm)
            y = xp + (-p & (uu - 1))
            if (y + uu <= rng) if contained else (y < rng):
                canonical = False
                break
    if not canonical:
        raise DecodeError("learned-model payload is not in canonical form (corrupt or wrong model)")
