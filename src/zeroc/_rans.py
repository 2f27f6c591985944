"""An exact range-ANS coder whose whole state is one Python integer.

No renormalisation and no fixed-width words: each symbol multiplies the state by total/freq, so
a message costs ceil(information / 8) bytes — no per-message overhead beyond rounding, which
is what tiny messages need (REFERENCE.md: `constriction` costs ~2.4 B more per message here).
Symbols are pushed in order and coded last-in-first-out, so decoding reads them in order.
"""

from __future__ import annotations

from zeroc._errors import DecodeError


class Encoder:
    __slots__ = ("ops",)

    def __init__(self) -> None:
        self.ops: list[tuple[int, int, int]] = []

    def put(self, start: int, freq: int, total: int) -> None:
        """Code the symbol occupying [start, start + freq) out of ``total``."""
        self.ops.append((start, freq, total))

    def finish(self) -> bytes:
        x = 0
        for start, freq, total in reversed(self.ops):
            x = (x // freq) * total + start + x % freq
        return x.to_bytes((x.bit_length() + 7) // 8, "little")


class Decoder:
    """Decodes in push order. ``budget`` bounds the symbols one payload may yield, so a forged
    payload cannot make a model loop for long (zero-cost symbols decode from a zero state)."""

    __slots__ = ("budget", "x")

    def __init__(self, data: bytes) -> None:
        self.x = int.from_bytes(data, "little")
        self.budget = 100_000 + 64 * len(data)

    def _spend(self) -> None:
        self.budget -= 1
        if self.budget < 0:
            raise DecodeError("learned-model payload asks for more symbols than it can hold")

    def peek(self, total: int) -> int:
        """The slot in [0, total) of the next symbol; then call :meth:`take`."""
        return self.x % total

    def take(self, start: int, freq: int, total: int) -> None:
        self._spend()
        x = self.x
        self.x = freq * (x // total) + x % total - start

    def uniform(self, n: int) -> int:
        self._spend()
        v = self.x % n
        self.x //= n
        return v

    def finish(self) -> None:
        if self.x != 0:
            raise DecodeError("learned-model payload has bits left over (corrupt or wrong model)")
