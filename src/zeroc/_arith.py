"""An exact arithmetic coder over Python integers, with a side stream for raw bytes.

The coded interval is kept as exact fractions low/den .. (low+rng)/den; each symbol
[start, start+freq) of ``total`` narrows it. The output names, in the fewest big-endian bytes,
a number inside the final interval (a whole sub-interval when escaped bytes follow) — so a message costs its
information plus ~1-2 bits, rounded up to whole bytes, with no header or state words
(REFERENCE.md: `constriction` costs ~2.4 B more per tiny message; a plain big-integer rANS wastes
up to log2(total) bits on its first symbols).

Raw bytes (escaped values) do not go through the arithmetic: they follow it as a side stream,
whose length is coded first. Because then the named sub-interval lies inside the final interval, a
decoder may read the whole payload as the fraction: the side bytes change nothing it decodes.
"""

from __future__ import annotations

from zeroc._errors import DecodeError

_FLAG_TOTAL = 1 << 16  # "has a side stream": ~0 bits when absent


def _code_length(n: int) -> list[tuple[int, int, int]]:
    width = n.bit_length()
    ops = [(width, 1, 64)]
    if width > 1:
        ops.append((n - (1 << (width - 1)), 1, 1 << (width - 1)))
    return ops


def _shortest(low: int, rng: int, den: int, *, contained: bool) -> tuple[int, int]:
    """The fewest bytes n and the k such that k / 256^n lies in [low/den, (low+rng)/den) — and,
    when side bytes follow, such that all of [k/256^n, (k+1)/256^n) does (the side bytes extend
    the number, and must not move it out of the interval). The first rule saves ~2 bits."""
    n = 0
    while True:
        scale = 1 << (8 * n)
        k = -(-low * scale // den)
        if (k + contained) * den <= (low + rng) * scale - (0 if contained else 1):
            return n, k
        n += 1


class Encoder:
    __slots__ = ("ops", "side")

    def __init__(self) -> None:
        self.ops: list[tuple[int, int, int]] = []
        self.side: list[bytes] = []

    def put(self, start: int, freq: int, total: int) -> None:
        """Code the symbol occupying [start, start + freq) out of ``total``."""
        self.ops.append((start, freq, total))

    def put_bytes(self, data: bytes) -> None:
        """Raw bytes, to the side stream (their length is the caller's to code)."""
        self.side.append(data)

    def finish(self) -> bytes:
        side = b"".join(self.side)
        if side:
            head = [(0, 1, _FLAG_TOTAL), *_code_length(len(side))]
        else:
            head = [(1, _FLAG_TOTAL - 1, _FLAG_TOTAL)]
        low, rng, den = 0, 1, 1
        for start, freq, total in head + self.ops:
            low = low * total + rng * start
            rng *= freq
            den *= total
        n, k = _shortest(low, rng, den, contained=bool(side))
        return (k.to_bytes(n, "big") if n else b"") + side


class Decoder:
    """Decodes symbols in the order they were put. ``budget`` bounds the symbols one payload may
    yield, so a forged payload cannot make a model loop for long."""

    __slots__ = ("budget", "data", "den", "low", "num", "rng", "scale", "side", "side_pos")

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.num = int.from_bytes(data, "big")  # the value is num / scale
        self.scale = 1 << (8 * len(data))
        self.low, self.rng, self.den = 0, 1, 1
        self.budget = 100_000 + 64 * len(data)
        has_side = self.peek(_FLAG_TOTAL) < 1
        self.take(0, 1, _FLAG_TOTAL) if has_side else self.take(1, _FLAG_TOTAL - 1, _FLAG_TOTAL)
        size = 0
        if has_side:
            width = self.uniform(64)
            size = (
                0 if width == 0 else 1 if width == 1 else (1 << (width - 1)) + self.uniform(1 << (width - 1))
            )
        if size > len(data):
            raise DecodeError("side stream is longer than the payload")
        self.side, self.side_pos = len(data) - size, len(data) - size

    def peek(self, total: int) -> int:
        """The slot in [0, total) of the next symbol; then call :meth:`take`."""
        slot = ((self.num * self.den - self.low * self.scale) * total) // (self.rng * self.scale)
        if not 0 <= slot < total:
            raise DecodeError("learned-model payload lies outside its interval")
        return slot

    def take(self, start: int, freq: int, total: int) -> None:
        self.budget -= 1
        if self.budget < 0:
            raise DecodeError("learned-model payload asks for more symbols than it can hold")
        self.low = self.low * total + self.rng * start
        self.rng *= freq
        self.den *= total

    def uniform(self, n: int) -> int:
        v = self.peek(n)
        self.take(v, 1, n)
        return v

    def take_bytes(self, n: int) -> bytes:
        if n < 0 or self.side_pos + n > len(self.data):
            raise DecodeError("escaped bytes run past the payload")
        out = self.data[self.side_pos : self.side_pos + n]
        self.side_pos += n
        return out

    def finish(self) -> None:
        """The payload must be exactly what the encoder writes for these symbols."""
        if self.side_pos != len(self.data):
            raise DecodeError("learned-model payload has unread escaped bytes")
        n, k = _shortest(self.low, self.rng, self.den, contained=self.side != len(self.data))
        if n != self.side or (n and int.from_bytes(self.data[:n], "big") != k):
            raise DecodeError("learned-model payload is not in canonical form (corrupt or wrong model)")
