"""Column encodings: each column of a table becomes a small header (JSON) and a payload.

Per column the encoder tries what the data allows and keeps the smallest (REFERENCE.md section 2):
integers through pcodec or zstd-19 on deltas, on differences or on the values in 1, 2 or 4
bytes (a payload under brotli instead where that is smaller, outside portable blocks); floats
that print as short decimals as scaled integers (kept only if every value prints back
identically); other floats as float64 through pcodec or zstd; strings as a constant, prefix +
integer (``test0, test1, ...``), a dictionary of distinct values, references to an earlier
column, or lengths + text under zstd-19; booleans as bitmaps. pcodec is the well-kept
numeric codec that gets within 0.4% of the entropy of uniform integers here, where zstd on bytes
cannot; zstd-19 wins short and repetitive streams, so both are tried.
"""

from __future__ import annotations

import bisect
import functools
import re
from collections import Counter
from contextvars import ContextVar
from datetime import datetime, timedelta
from typing import Any

import brotli
import numpy as np
import zstandard as zstd

from zeroc import _json
from zeroc._errors import DecodeError, LimitExceeded

ZSTD_LEVEL = 19
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1
_DIGITS = re.compile(r"^(.*?)(0|[1-9][0-9]{0,17})$", re.S)


# Whether the block being written is portable (spec/TABULAR_FORMAT.md §1.2): no pcodec, so that
# readers without it (the browser package) read every column. A context variable, set by
# encode_block for the block it writes, rather than a parameter of every encoder: they call one
# another from a dozen places, and the choice belongs to the block, not to a column.
PORTABLE: ContextVar[bool] = ContextVar("portable", default=False)

BIG_STREAM = 32 * 1024  # zstd-19 costs ~150 ms per 160 KB column; level 9 is close in size there


def _zstd(data: bytes) -> bytes:
    # A compressor per call: zstandard's objects are not thread-safe, and without a dictionary
    # one costs microseconds next to compressing a column.
    return zstd.ZstdCompressor(level=ZSTD_LEVEL if len(data) < BIG_STREAM else 9).compress(data)


def _packed(data: bytes, frame: bytes | None = None) -> bytes:
    """A column's payload: zstd's frame (``frame``, where it is made already) or, outside
    portable blocks and up to BROTLI_PAYLOAD bytes, a brotli text where that is smaller
    (spec/TABULAR_FORMAT.md §1.2)."""
    frame = _zstd(data) if frame is None else frame
    if PORTABLE.get() or len(data) > BROTLI_PAYLOAD or len(frame) > BROTLI_WORTH * len(data):
        return frame
    return _smaller_brotli(data, frame)


def unzstd(data: bytes, limit: int) -> bytes:
    """Decompress one zstd frame of at most ``limit`` bytes. The declared size is checked first:
    zstandard allocates it up front, so a forged header would otherwise exhaust memory."""
    try:
        size = zstd.frame_content_size(data)
        if size < 0:
            raise DecodeError("zstd frame does not declare its size")
        if size > limit:
            raise LimitExceeded(f"zstd frame declares {size} bytes, over the limit of {limit}")
        return zstd.ZstdDecompressor().decompress(data, max_output_size=max(size, 1))
    except zstd.ZstdError as exc:
        raise DecodeError(f"corrupt zstd data: {exc}") from exc


# -- a block's text: its head and pool (spec/TABULAR_FORMAT.md §1) ----------------------------
BROTLI_TEXT = b"b"  # then uint32 S and a brotli stream of S bytes; a zstd frame begins with 28
# Head and pool larger than this go to zstd alone: brotli at quality 11 codes ~1 MB a second;
# so do payloads past BROTLI_PAYLOAD, of which a block has many (a 100,000-row table's columns).
BROTLI_MAX = 1 << 20
BROTLI_PAYLOAD = 1 << 16
# Nor does brotli try a payload that zstd -19 left above this share of its bytes: nearly random
# bytes leave its context models nothing to find (the generated tables' random walks: 30 bytes
# saved of 50 KB, for 60-80 ms a column).
BROTLI_WORTH = 0.6


def pack_text(raw: bytes, portable: bool) -> bytes:
    """A block's head and pool as zstd -19's frame or, outside portable blocks, as a brotli
    text where that is smaller. brotli at quality 11 (context modelling, with a window that
    fits the text) took the corpora's containers 2-13% below zstd -19 (spec change log)."""
    frame = zstd.ZstdCompressor(level=ZSTD_LEVEL).compress(raw)
    if portable or len(raw) > BROTLI_MAX:
        return frame
    return _smaller_brotli(raw, frame)


def _smaller_brotli(raw: bytes, frame: bytes) -> bytes:
    """``raw`` as a brotli text (§1) where that is smaller than its zstd ``frame``, else the frame."""
    window = min(24, max(10, (len(raw) - 1).bit_length()))
    text: bytes = brotli.compress(raw, quality=11, lgwin=window)
    if 5 + len(text) >= len(frame):
        return frame
    return BROTLI_TEXT + len(raw).to_bytes(4, "little") + text


def unpack_text(data: bytes, limit: int) -> bytes:
    """A block's head and pool from its zstd frame or brotli text, of at most ``limit`` bytes."""
    if data[:1] != BROTLI_TEXT:
        return unzstd(data, limit)
    if len(data) < 5:
        raise DecodeError("brotli text is shorter than its header")
    size = int.from_bytes(data[1:5], "little")
    if size > limit:
        raise LimitExceeded(f"brotli text declares {size} bytes, over the limit of {limit}")
    dec = brotli.Decompressor()
    try:  # output_buffer_limit stops a bomb near the declared size (brotli adds at most a block)
        out: bytes = dec.process(data[5:], output_buffer_limit=size + 1)
    except brotli.error as exc:  # a corrupt stream, or bytes after its end
        raise DecodeError(f"corrupt brotli text: {exc}") from exc
    if len(out) != size or not dec.is_finished():
        held = "more" if len(out) > size else "less"
        raise DecodeError(f"brotli text holds {held} than the {size} bytes it declares")
    return out


_unzstd = unpack_text  # a payload: its zstd frame, or its brotli text (spec §1.2)


# -- the value stream (spec/TABULAR_FORMAT.md §1.2) --------------------------------------------
STREAMED = ("varint", "varint-except")  # the encodings whose values are in the value stream
MAX_NUMBER = 9  # bytes of one LEB128 number at most: 63 bits
# Short columns of numbers below this go to the value stream: larger ones are ids and times,
# whose decimal digits share prefixes that the text's matches find (tweets' container, its ids
# as bytes too: 5% larger); below it, bytes code smaller (instruments' container: 8% smaller).
STREAM_BELOW = 1 << 28


class Streamed(dict[str, Any]):
    """The head of a column in the value stream, holding its bytes (``data``) until the block's
    writer takes them, in head order, as it writes the head (``take_streamed``): a candidate
    encoding that is not chosen leaves nothing behind. JSON sees the head alone."""

    data = b""


def _number(out: bytearray, v: int) -> None:
    while v >= 0x80:
        out.append(v & 0x7F | 0x80)
        v >>= 7
    out.append(v)


def stream_values(values: list[int]) -> Streamed:
    """Values (none negative, all below 2^63) as a column of the value stream: the commonest
    and the others' positions where it holds half or more of them (``varint-except``), else
    every value (``varint``)."""
    out = bytearray()
    common, count = Counter(values).most_common(1)[0]
    if 2 * count < len(values):
        for v in values:
            _number(out, v)
        head = Streamed(enc="varint")
    else:
        others = [(i, v) for i, v in enumerate(values) if v != common]
        _number(out, common)
        _number(out, len(others))
        after = 0  # the position after the previous exception
        for i, v in others:
            _number(out, i - after)
            _number(out, v)
            after = i + 1
        head = Streamed(enc="varint-except")
    head.data = bytes(out)
    return head


def streamed_bytes(head: Any) -> int:
    """The value-stream bytes of an encoding head and those nested in it."""
    if not isinstance(head, dict):
        return 0
    own = len(head.data) if isinstance(head, Streamed) else 0
    return own + sum(streamed_bytes(v) for v in head.values())


def take_streamed(head: Any, out: bytearray) -> None:
    """An encoding head's value-stream bytes, nested ones included, appended to ``out`` in the
    order a reader takes them: depth first, in the order of the head's members."""
    if isinstance(head, dict):
        if isinstance(head, Streamed):
            out += head.data
        for v in head.values():
            take_streamed(v, out)


class ValueReader:
    """A block's value stream, read column by column in head order."""

    def __init__(self, data: bytes) -> None:
        self.data, self.pos = data, 0

    def number(self) -> int:
        data, at = self.data, self.pos
        v = 0
        for j in range(MAX_NUMBER):
            if at + j >= len(data):
                raise DecodeError("the value stream ends inside a number")
            b = data[at + j]
            v |= (b & 0x7F) << (7 * j)
            if b < 0x80:
                if b == 0 and j:
                    raise DecodeError("a number of the value stream is longer than it needs")
                self.pos = at + j + 1
                return v
        raise DecodeError(f"a number of the value stream runs past {MAX_NUMBER} bytes")

    def column(self, head: dict[str, Any], n: int) -> list[int]:
        """The ``n`` values of a ``varint`` or ``varint-except`` column."""
        number = self.number
        if head["enc"] == "varint":
            return [number() for _ in range(n)]
        common, count = number(), number()
        if count > n:
            raise DecodeError(f"a column of {n} values lists {count} exceptions")
        out = [common] * n
        at = 0
        for _ in range(count):
            at += number()
            if at >= n:
                raise DecodeError("an exception of the value stream is past its column's end")
            out[at] = v = number()
            if v == common:
                raise DecodeError("an exception of the value stream holds the commonest value")
            at += 1
        return out


def _streamed(head: dict[str, Any], n: int, values: ValueReader | None) -> list[int]:
    if values is None:
        raise DecodeError(f"a {head['enc']} encoding where no column reads the value stream")
    return values.column(head, n)


# -- integers ---------------------------------------------------------------------------------
INLINE = 256  # columns this short go into the block head, compressed together with it


def encode_ints(values: np.ndarray) -> tuple[dict[str, Any], bytes]:
    """An integer column's encoding and payload; outside portable blocks, a short column of
    small numbers, none negative, goes to the value stream (spec §1.2)."""
    n = len(values)
    if n == 0:
        return {"enc": "empty"}, b""
    first = int(values[0])
    if (values == first).all():
        return {"enc": "const", "value": first}, b""
    diffs = np.diff(values)
    if (diffs == diffs[0]).all() and -(2**62) < int(diffs[0]) < 2**62:
        return {"enc": "series", "start": first, "step": int(diffs[0])}, b""
    if n <= INLINE:
        if not PORTABLE.get() and 0 <= int(values.min()) and int(values.max()) < STREAM_BELOW:
            return stream_values(values.tolist()), b""
        return {"enc": "inline", "values": values.tolist()}, b""
    candidates: list[tuple[dict[str, Any], bytes]] = []
    raws: dict[int, bytes] = {}  # each zstd candidate's bytes, by candidate
    if not PORTABLE.get():
        from pcodec import ChunkConfig, standalone

        candidates.append(({"enc": "pco"}, standalone.simple_compress(values, ChunkConfig())))
    with np.errstate(over="ignore"):
        delta = np.concatenate(([values[0]], diffs)).astype("<i8")
    raws[len(candidates)] = delta.tobytes()
    candidates.append(({"enc": "zstd-delta"}, _zstd(raws[len(candidates)])))
    low, high = int(diffs.min()), int(diffs.max())
    for width, dtype in ((1, "<i1"), (2, "<i2"), (4, "<i4")):
        if -(1 << (8 * width - 1)) <= low and high < 1 << (8 * width - 1):
            # Differences in as few bytes as they need: zstd then sees each as one or two
            # symbols, not eight bytes of which six are sign (a time series' timestamps).
            narrow = diffs.astype(dtype).tobytes()
            raws[len(candidates)] = narrow
            candidates.append(({"enc": "zstd-narrow", "first": first, "width": width}, _zstd(narrow)))
            break
    low, high = int(values.min()), int(values.max())
    for width, dtype in ((1, "<i1"), (2, "<i2"), (4, "<i4")):
        if -(1 << (8 * width - 1)) <= low and high < 1 << (8 * width - 1):
            # The values themselves, as narrow: codes and ids (a dictionary's codes, a table's
            # shape ids), whose differences are as scattered as they are and twice as wide.
            raws[len(candidates)] = values.astype(dtype).tobytes()
            candidates.append(({"enc": "zstd-bytes", "width": width}, _zstd(raws[len(candidates)])))
            break
    # brotli, ten times zstd's time, tries only zstd's best (AWS shapes: packed in 1.2 s, not
    # 2.0 s trying each, and 99 bytes smaller, on a head that compresses a little better), and
    # only where that is within BROTLI_REACH of the best (pcodec's, on random numbers: trying
    # brotli on them took the generated 100,000-row tables' encode from 0.2 s to 0.5 s).
    best = min(raws, key=lambda i: _cost(candidates[i]))
    if _cost(candidates[best]) <= BROTLI_REACH * _cost(min(candidates, key=_cost)):
        candidates[best] = (candidates[best][0], _packed(raws[best], candidates[best][1]))
    return min(candidates, key=_cost)


BROTLI_REACH = 1.15  # brotli rarely codes a payload more than this much smaller than zstd -19


def _cost(candidate: tuple[dict[str, Any], bytes]) -> int:
    """A column encoding's bytes: its payload and its head's JSON (which the block's text frame
    then compresses, so this overstates it a little): a narrow column's longer head must earn
    its place on short columns."""
    head, payload = candidate
    return len(payload) + len(_json.dumps(head)) + streamed_bytes(head)


def _i64(v: Any, what: str) -> int:
    """An integer of a column head, which must be a signed 64-bit one (a forged head may hold
    anything JSON can)."""
    if type(v) is not int or not -(1 << 63) <= v < 1 << 63:
        raise DecodeError(f"{what} is not a 64-bit integer")
    return v


def decode_ints(
    head: dict[str, Any], payload: bytes, n: int, values: ValueReader | None = None
) -> np.ndarray:
    """An integer column's ``n`` values; ``values``: the block's value stream, where the column
    may read it (spec §1.2)."""
    enc = head["enc"]
    if enc in STREAMED:
        return np.asarray(_streamed(head, n, values), dtype=np.int64)
    if enc == "empty":
        return np.zeros(0, dtype=np.int64)
    if enc == "const":
        return np.full(n, _i64(head["value"], "a constant column's value"), dtype=np.int64)
    if enc == "series":
        start, step = _i64(head["start"], "a series' start"), _i64(head["step"], "a series' step")
        if n and not -(1 << 63) <= start + step * (n - 1) < 1 << 63:
            raise DecodeError("an integer series runs past 64 bits")
        series: np.ndarray = start + step * np.arange(n, dtype=np.int64)
        return series
    if enc == "inline":
        values = head["values"]
        if not isinstance(values, list):
            raise DecodeError("inline integer column is not a list")
        out = np.asarray([_i64(v, "an inline integer") for v in values], dtype=np.int64)
        if out.shape != (n,):
            raise DecodeError("inline integer column has the wrong length")
        return out
    if enc == "pco":
        from pcodec import standalone

        try:
            out = standalone.simple_decompress(payload)
        except Exception as exc:  # pcodec raises its own RuntimeError/ValueError kinds
            raise DecodeError(f"corrupt integer column: {exc}") from exc
    elif enc == "zstd-delta":
        raw = _unzstd(payload, n * 8)
        out = np.cumsum(np.frombuffer(raw, dtype="<i8"), dtype=np.int64)
    elif enc == "zstd-bytes":
        width = head["width"]
        if width not in (1, 2, 4) or type(width) is not int:
            raise DecodeError(f"integer column of width {str(width)[:20]}")
        raw = _unzstd(payload, n * width)
        if len(raw) != n * width:
            raise DecodeError(f"integer column holds {len(raw) // width} values, expected {n}")
        out = np.frombuffer(raw, dtype=f"<i{width}").astype(np.int64)
    elif enc == "zstd-narrow":
        width = head["width"]
        if width not in (1, 2, 4) or type(width) is not int or n < 1:
            raise DecodeError(f"narrow integer column of width {str(width)[:20]} and {n} values")
        first = _i64(head["first"], "a narrow column's first value")
        raw = _unzstd(payload, (n - 1) * width)
        if len(raw) != (n - 1) * width:
            raise DecodeError(f"integer column holds {len(raw) // width + 1} values, expected {n}")
        diffs = np.frombuffer(raw, dtype=f"<i{width}").astype(np.int64)
        with np.errstate(over="ignore"):
            out = np.cumsum(np.concatenate(([first], diffs)).astype(np.int64), dtype=np.int64)
    else:
        raise DecodeError(f"unknown integer encoding {enc!r}")
    if len(out) != n:
        raise DecodeError(f"integer column holds {len(out)} values, expected {n}")
    return out.astype(np.int64, copy=False)


# -- floats -----------------------------------------------------------------------------------
MAX_SCALE = 9  # decimal columns: the most digits after the point a writer uses (and a reader takes)


def _decimal_scale(values: list[float]) -> int | None:
    """The smallest k such that every value is exactly an integer / 10^k and prints back the same."""
    longest = 0
    for v in values[:2000]:
        r = repr(v)
        if "e" in r or "n" in r:  # exponent, nan, inf
            return None
        longest = max(longest, len(r) - r.index(".") - 1 if "." in r else 0)
    if longest > MAX_SCALE:
        return None
    return longest


def encode_floats(values: list[float]) -> tuple[dict[str, Any], bytes]:
    arr = np.asarray(values, dtype="<f8")
    k = _decimal_scale(values)
    if k is not None:
        scale = 10**k
        ints = np.round(arr * scale)
        if np.isfinite(ints).all() and np.abs(ints).max(initial=0) < 2**53:
            as_int = ints.astype(np.int64)
            back = as_int / scale  # exactly what the decoder will compute
            # Lossless only if every value is the same float again, sign of zero included.
            if np.array_equal(back, arr) and np.array_equal(np.signbit(back), np.signbit(arr)):
                head, payload = encode_ints(as_int)
                return {"enc": "decimal", "scale": k, "ints": head}, payload
    if len(values) <= INLINE:
        return {"enc": "inline", "values": [repr(v) for v in values]}, b""
    candidates = []
    if np.isfinite(arr).all() and not PORTABLE.get():
        from pcodec import ChunkConfig, standalone

        candidates.append(({"enc": "f64-pco"}, standalone.simple_compress(arr, ChunkConfig())))
    if not candidates or arr.nbytes < BIG_STREAM:  # on big float columns pcodec wins (REFERENCE.md)
        raw = arr.tobytes()
        frame = _zstd(raw)
        if not candidates or len(frame) <= BROTLI_REACH * len(candidates[0][1]):
            frame = _packed(raw, frame)
        candidates.append(({"enc": "f64-zstd"}, frame))
    return min(candidates, key=lambda c: len(c[1]))


def decode_floats(
    head: dict[str, Any], payload: bytes, n: int, values: ValueReader | None = None
) -> np.ndarray:
    enc = head["enc"]
    if enc == "decimal":
        scale = head["scale"]
        if type(scale) is not int or not 0 <= scale <= MAX_SCALE:  # 10**scale is computed
            raise DecodeError(f"decimal scale {str(scale)[:20]} is outside 0..{MAX_SCALE}")
        return decode_ints(head["ints"], payload, n, values) / float(10**scale)
    if enc == "inline":
        try:
            out = np.asarray([float(x) for x in head["values"]], dtype=np.float64)
        except (TypeError, ValueError) as exc:
            raise DecodeError(f"bad inline float: {exc}") from exc
    elif enc == "f64-zstd":
        out = np.frombuffer(_unzstd(payload, n * 8), dtype="<f8")
    elif enc == "f64-pco":
        from pcodec import standalone

        try:
            out = standalone.simple_decompress(payload)
        except Exception as exc:
            raise DecodeError(f"corrupt float column: {exc}") from exc
    else:
        raise DecodeError(f"unknown float encoding {enc!r}")
    if len(out) != n:
        raise DecodeError(f"float column holds {len(out)} values, expected {n}")
    return np.asarray(out, dtype=np.float64)


# -- strings ----------------------------------------------------------------------------------
class Pool:
    """Text of every string column of a block, compressed as one zstd frame with the block's
    head: URLs, names and messages repeat across columns, which separate frames cannot see.
    Segments are read back in the order they were written, so only their sizes are stored.
    ``sources`` are the block's string columns so far (spec/TABULAR_FORMAT.md §1.2), which a
    later one may refer to (``ref``)."""

    def __init__(self) -> None:
        self.parts: list[bytes] = []
        self.sources: list[list[str]] = []
        self.referable: list[int] = []  # the last REF_SOURCES sources written as text
        self._sets: dict[int, set[str]] = {}

    def add(self, data: bytes) -> None:
        self.parts.append(data)

    def register(self, values: list[str], head: dict[str, Any]) -> None:
        """A string column just written: the next source. Only one written as text (plain,
        a dictionary's or references) may be referred to, and only the last REF_SOURCES of
        them, so that looking a column up costs a few sets however wide the table is."""
        if head["enc"] in ("text", "dict", "ref") and len(values) >= REF_SOURCE:
            self.referable = [*self.referable, len(self.sources)][-REF_SOURCES:]
            self._sets = {i: v for i, v in self._sets.items() if i in self.referable}
        self.sources.append(values)

    def distinct(self, source: int) -> set[str]:
        found = self._sets.get(source)
        if found is None:
            found = self._sets[source] = set(self.sources[source])
        return found


class PoolReader:
    def __init__(self, data: bytes, values: ValueReader | None = None) -> None:
        self.data, self.pos = data, 0
        self.sources: list[list[str]] = []  # the block's string columns so far (``ref``)
        self.values = values  # the block's value stream, which nested integers may read

    def take(self, size: Any) -> bytes:
        if not isinstance(size, int) or size < 0 or self.pos + size > len(self.data):
            raise DecodeError("string text runs past the block's pool")
        out = self.data[self.pos : self.pos + size]
        self.pos += size
        return out


def _text(values: list[str], pool: Pool) -> tuple[dict[str, Any], bytes]:
    raw = [s.encode("utf-8", "surrogatepass") for s in values]
    if not any(b"\x00" in r for r in raw):  # the usual case: NUL-separated, no lengths needed
        blob = b"\x00".join(raw)
        pool.add(blob)
        return {"enc": "text", "size": len(blob)}, b""
    lengths_head, lengths = encode_ints(np.fromiter(map(len, raw), dtype=np.int64, count=len(raw)))
    blob = b"".join(raw)
    pool.add(blob)
    return {"enc": "text", "lengths": lengths_head, "size": len(blob)}, lengths


def encode_strings(values: list[str], pool: Pool) -> tuple[dict[str, Any], bytes]:
    if not values:
        return {"enc": "empty"}, b""
    first = values[0]
    if all(v == first for v in values):
        return {"enc": "const", "value": first}, b""
    m = _DIGITS.match(first)
    if m is not None:
        split = _prefix_ints(values, m.group(1))
        if split is not None:
            head, payload = encode_ints(split)
            return {"enc": "prefix-int", "prefix": m.group(1), "ints": head}, payload
    stamp = _encode_datetimes(values) or _encode_stamps(values)
    if stamp is not None:
        return stamp
    referred = _reference(values, pool)
    if referred is None:
        return _distinct_or_text(values, pool)
    own = Pool()
    plain = _distinct_or_text(values, own)
    (head, payload), text = referred
    before = _compressed(pool.parts)
    # A reference column must promise a tenth less than the plain one: the block's brotli or
    # zstd -19 codes text better than this estimate does, and a near tie went the wrong way
    # (tweets' user mentions: 272 against 273 estimated, 44 bytes more in the container).
    if 10 * _text_cost(head, payload, text.parts, before) < 9 * _text_cost(*plain, own.parts, before):
        pool.parts += text.parts
        return head, payload
    pool.parts += own.parts
    return plain


# A column of fewer strings than this is not written as references (its integers would go
# into the head, and its text costs little), nor does one refer to a column of fewer distinct
# values than REF_SOURCE (a dictionary of its own costs as little).
REF_MIN = 64
REF_SOURCE = 16
REF_SAMPLE = 256  # values of a column checked against each earlier column to choose the source
REF_SOURCES = 16  # the last columns of text a column may refer to


def _reference(values: list[str], pool: Pool) -> tuple[tuple[dict[str, Any], bytes], Pool] | None:
    """The column as references to the earlier string column holding most of a sample of its
    values (spec §1.2 ``ref``), each the position nearest the one before; the values found
    nowhere go to its own text. None where no earlier column holds half the sample."""
    if len(values) < REF_MIN or not pool.referable:
        return None
    sample = values[:: max(1, len(values) // REF_SAMPLE)]
    best, hits = -1, len(sample) // 2
    for i in pool.referable:
        distinct = pool.distinct(i)
        if len(distinct) < REF_SOURCE:
            continue
        found = sum(v in distinct for v in sample)
        if found > hits:
            best, hits = i, found
    if best < 0:
        return None
    where: dict[str, list[int]] = {}
    for i, v in enumerate(pool.sources[best]):
        where.setdefault(v, []).append(i)
    positions, missed, last = [], [], 0
    for v in values:
        at = where.get(v)
        if at is None:
            positions.append(-1)
            missed.append(v)
            continue
        j = bisect.bisect_left(at, last)
        if j == len(at) or (j and last - at[j - 1] <= at[j] - last):
            j -= 1
        last = at[j]
        positions.append(last)
    ints_head, payload = encode_ints(np.asarray(positions, dtype=np.int64))
    head: dict[str, Any] = {"enc": "ref", "source": best, "ints": ints_head}
    text = Pool()
    if missed:
        head["text"], lengths = _text(missed, text)
        if lengths:  # text with NULs: its lengths in the head, as a dictionary's table has them
            head["text"]["lengths"] = {
                "enc": "inline",
                "values": [len(v.encode("utf-8", "surrogatepass")) for v in missed],
            }
    return (head, payload), text


REF_CONTEXT = 1 << 20  # the end of the pool a reference column's text is priced against


def _compressed(parts: list[bytes]) -> tuple[bytes, int]:
    """The pool so far (its last REF_CONTEXT bytes, so that a wide table's many columns cost
    what a few do) and its size under a fast zstd."""
    tail: list[bytes] = []
    size = 0
    for part in reversed(parts):
        if size >= REF_CONTEXT:
            break
        tail.append(part)
        size += len(part)
    context = b"".join(reversed(tail))[-REF_CONTEXT:]
    return context, len(zstd.ZstdCompressor(level=3).compress(context))


def _text_cost(head: dict[str, Any], payload: bytes, text: list[bytes], before: tuple[bytes, int]) -> int:
    """What a string column adds to the block: its payload, its head, and what its text adds to
    the pool so far under a fast zstd (text that repeats the pool's costs little there: a
    column of names that another column holds too)."""
    context, size = before
    added = len(zstd.ZstdCompressor(level=3).compress(context + b"".join(text))) - size if text else 0
    return len(payload) + len(_json.dumps(head)) + streamed_bytes(head) + added


def _distinct_or_text(values: list[str], pool: Pool) -> tuple[dict[str, Any], bytes]:
    """A dictionary of the distinct values where they are few, else the text itself."""
    distinct = dict.fromkeys(values)
    if len(distinct) <= max(16, len(values) // 4) and 2 * len(distinct) <= len(values):
        index = {v: i for i, v in enumerate(distinct)}
        codes_head, codes = encode_ints(
            np.fromiter((index[v] for v in values), dtype=np.int64, count=len(values))
        )
        table, _ = _text(list(distinct), pool)
        if "lengths" in table:  # text with NULs: keep the dictionary's few lengths in the head
            table["lengths"] = {
                "enc": "inline",
                "values": [len(v.encode("utf-8", "surrogatepass")) for v in distinct],
            }
            table["count"] = len(distinct)
        return {"enc": "dict", "codes": codes_head, "table": table}, codes
    return _text(values, pool)


def _prefix_ints(values: list[str], prefix: str) -> np.ndarray | None:
    """The integers n with value == prefix + str(n) for every value, else None (checked by
    rebuilding every string, so signs, spaces and leading zeros never slip through)."""
    cut = len(prefix)
    try:
        nums = np.fromiter(map(int, [v[cut:] for v in values]), dtype=np.int64, count=len(values))
    except (ValueError, OverflowError):
        return None
    if [f"{prefix}{n}" for n in nums.tolist()] != values:
        return None
    return nums


_ISO = re.compile(r"\d{4}-\d\d-\d\d(T\d\d:\d\d:\d\d(\.\d{3}|\.\d{6})?)?Z?\Z")
_ISO_UNITS = {10: "D", 19: "s", 23: "ms", 26: "us"}


def _encode_datetimes(values: list[str]) -> tuple[dict[str, Any], bytes] | None:
    """ISO-8601 timestamps (``2013-09-29T14:17:00Z``, with ms or µs, or dates) as integer
    counts of their unit, kept only if numpy renders every one back to the identical string."""
    first = values[0]
    if len(values) < 2 or not _ISO.match(first):
        return None
    z = first.endswith("Z")
    unit = _ISO_UNITS.get(len(first) - z)
    if unit is None:
        return None
    try:
        bare = np.array([v[:-1] if z else v for v in values], dtype="U")
        stamps = bare.astype(f"datetime64[{unit}]")
        back = np.datetime_as_string(stamps, unit=unit)  # type: ignore[call-overload]
    except (ValueError, TypeError):
        return None
    if z and not all(v.endswith("Z") for v in values):
        return None
    if not (back == bare).all():
        return None
    head, payload = encode_ints(stamps.astype(np.int64))
    return {"enc": "datetime", "unit": unit, "z": z, "ints": head}, payload


# Timestamps in other textual forms (spec/TABULAR_FORMAT.md §1.2, `stamp`): the formats a column
# is tried in, a zone in braces standing for the literal zone the first value names.
STAMP_FORMATS = (
    "%a %b %d %H:%M:%S {zone} %Y",  # Twitter's created_at
    "%a, %d %b %Y %H:%M:%S {zone}",  # RFC 2822 and HTTP dates
    "%a, %e %b %Y %H:%M:%S {zone}",
    "%Y/%m/%d %H:%M:%S",
    "%Y/%m/%d %H:%M",
    "%Y-%m-%d %H:%M:%S",
    "%Y-%m-%d %H:%M",
    "%d/%m/%Y %H:%M:%S",
    "%m/%d/%Y %H:%M:%S",
    "%d/%m/%Y",
    "%m/%d/%Y",
    "%b %e %Y",
    "%b %d %Y",
    "%b %e, %Y",
    "%d %b %Y",
    "%e %b %Y",
)
_ZONE = re.compile(r"[+-][0-9]{4}|GMT|UTC")
_MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")
_WEEKDAYS = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")  # date.weekday() order
_STAMP_UNITS = {"s": 1, "min": 60, "D": 86_400}
_STAMP_DIRECTIVE = re.compile(r"%[YmdeHMSba%]")
_STAMP_FIELDS = {
    "%Y": "([0-9]{4})",
    "%m": "([0-9]{2})",
    "%d": "([0-9]{2})",
    "%e": "([1-9]|[12][0-9]|3[01])",
    "%H": "([0-9]{2})",
    "%M": "([0-9]{2})",
    "%S": "([0-9]{2})",
    "%b": "(" + "|".join(_MONTHS) + ")",
    "%a": "(" + "|".join(_WEEKDAYS) + ")",
}
_EPOCH = datetime(1970, 1, 1)


def render_stamp(fmt: str, seconds: int) -> str:
    """``fmt`` written for the UTC time ``seconds`` after the epoch (years 1-9999)."""
    try:
        t = _EPOCH + timedelta(seconds=seconds)
    except OverflowError:
        raise DecodeError("a stamp outside years 1-9999") from None
    fields = {
        "%Y": f"{t.year:04d}",
        "%m": f"{t.month:02d}",
        "%d": f"{t.day:02d}",
        "%e": str(t.day),
        "%H": f"{t.hour:02d}",
        "%M": f"{t.minute:02d}",
        "%S": f"{t.second:02d}",
        "%b": _MONTHS[t.month - 1],
        "%a": _WEEKDAYS[t.weekday()],
        "%%": "%",
    }
    return _STAMP_DIRECTIVE.sub(lambda m: fields[m.group()], fmt)


@functools.lru_cache(maxsize=256)
def _stamp_pattern(fmt: str) -> re.Pattern[str]:
    """The strings ``fmt`` writes (compiled once a format: every string column of every block
    is tried against the formats)."""
    parts, at = [], 0
    for m in _STAMP_DIRECTIVE.finditer(fmt):
        parts.append(re.escape(fmt[at : m.start()]))
        parts.append("%" if m.group() == "%%" else _STAMP_FIELDS[m.group()])
        at = m.end()
    parts.append(re.escape(fmt[at:]))
    return re.compile("".join(parts) + r"\Z")


def _encode_stamps(values: list[str]) -> tuple[dict[str, Any], bytes] | None:
    """Timestamps in one of STAMP_FORMATS as integer seconds (or minutes), kept only if every
    value is written back identically (a weekday that disagrees with its date, another zone or
    an impossible date leaves the column as text)."""
    first = values[0]
    if len(values) < 2 or not first or not first[0].isalnum():
        return None
    zone = _ZONE.search(first)
    for template in STAMP_FORMATS:
        if "{zone}" in template:
            if zone is None:
                continue
            fmt = template.replace("{zone}", zone.group())
        else:
            fmt = template
        pattern = _stamp_pattern(fmt)
        if pattern.match(first) is None:
            continue
        stamps = _parse_stamps(values, fmt, pattern)
        if stamps is None:  # another format may fit them all (a day of one digit: %e, not %d)
            continue
        unit = "s" if "%S" in fmt else "min" if "%M" in fmt else "D"
        ints = np.asarray([v // _STAMP_UNITS[unit] for v in stamps], dtype=np.int64)
        head, payload = encode_ints(ints)
        return {"enc": "stamp", "format": fmt, "unit": unit, "ints": head}, payload
    return None


def _parse_stamps(values: list[str], fmt: str, pattern: re.Pattern[str]) -> list[int] | None:
    names = [m.group() for m in _STAMP_DIRECTIVE.finditer(fmt) if m.group() != "%%"]
    out = []
    for v in values:
        m = pattern.match(v)
        if m is None:
            return None
        f = dict(zip(names, m.groups(), strict=True))
        try:
            t = datetime(
                int(f.get("%Y", "1970")),
                _MONTHS.index(f["%b"]) + 1 if "%b" in f else int(f.get("%m", "1")),
                int(f.get("%d") or f.get("%e") or "1"),
                int(f.get("%H", "0")),
                int(f.get("%M", "0")),
                int(f.get("%S", "0")),
            )
        except ValueError:
            return None
        seconds = (t - _EPOCH) // timedelta(seconds=1)
        if render_stamp(fmt, seconds) != v:
            return None
        out.append(seconds)
    return out


def decode_strings(head: dict[str, Any], payload: bytes, n: int, pool: PoolReader) -> list[str]:
    enc = head["enc"]
    if enc == "empty":
        return []
    if enc == "const":
        if type(head["value"]) is not str:
            raise DecodeError("a constant string column's value is not a string")
        return [head["value"]] * n
    if enc == "stamp":
        fmt, unit = head["format"], head["unit"]
        if unit not in _STAMP_UNITS or not isinstance(fmt, str) or _STAMP_DIRECTIVE.sub("", fmt).count("%"):
            raise DecodeError(f"stamp column of unit {str(unit)[:20]!r} or format {str(fmt)[:40]!r}")
        scale = _STAMP_UNITS[unit]
        return [
            render_stamp(fmt, v * scale) for v in decode_ints(head["ints"], payload, n, pool.values).tolist()
        ]
    if enc == "datetime":
        unit = head["unit"]
        if unit not in _ISO_UNITS.values():
            raise DecodeError(f"unknown datetime unit {unit!r}")
        stamps = decode_ints(head["ints"], payload, n, pool.values).astype(f"datetime64[{unit}]")
        text = np.datetime_as_string(stamps, unit=unit).tolist()
        return [t + "Z" for t in text] if head["z"] else text
    if enc == "prefix-int":
        prefix = head["prefix"]
        if type(prefix) is not str:
            raise DecodeError("a prefix is not a string")
        return [f"{prefix}{i}" for i in decode_ints(head["ints"], payload, n, pool.values).tolist()]
    if enc == "dict":
        table_head = head["table"]
        codes = decode_ints(head["codes"], payload, n, pool.values)
        count = table_head.get("count", -1)  # -1: as many as the NUL-separated text holds
        if type(count) is not int or count > n:  # distinct values: no more than the column's
            raise DecodeError("string dictionary has a bad size")
        table = decode_strings(table_head, b"", count, pool)
        if n and (codes.min() < 0 or codes.max() >= len(table)):
            raise DecodeError("string dictionary codes out of range")
        return [table[c] for c in codes.tolist()]
    if enc == "ref":
        source = head["source"]
        if type(source) is not int or not 0 <= source < len(pool.sources):
            raise DecodeError("a reference column names no earlier string column")
        values = pool.sources[source]
        positions = decode_ints(head["ints"], payload, n, pool.values)
        if n and (positions.min() < -1 or positions.max() >= len(values)):
            raise DecodeError("a reference points outside its source column")
        misses = int(np.count_nonzero(positions == -1)) if n else 0
        if ("text" in head) != (misses > 0):
            raise DecodeError("a reference column's text does not match its misses")
        if not misses:
            return [values[i] for i in positions.tolist()]
        missed = decode_strings(head["text"], b"", misses, pool)
        if len(missed) != misses:
            raise DecodeError("a reference column's text holds the wrong number of values")
        rest = iter(missed)
        return [values[i] if i >= 0 else next(rest) for i in positions.tolist()]
    if enc == "text":
        blob = pool.take(head["size"])
        size = len(blob)
        if "lengths" not in head:  # NUL-separated
            # Decoded whole, then split: in UTF-8 a 00 byte is only ever U+0000, so this is each
            # piece decoded alone (and fails where one of them would), in two calls.
            items = blob.decode("utf-8", "surrogatepass").split("\x00") if n else []
            if n < 0:
                n = len(items)
            if len(items) != n:
                raise DecodeError("string column holds the wrong number of values")
            return items
        lengths = decode_ints(head["lengths"], payload, n, pool.values).tolist()
        if sum(lengths) != size or (lengths and min(lengths) < 0):
            raise DecodeError("string lengths do not match the text")
        out, pos = [], 0
        for ln in lengths:
            out.append(blob[pos : pos + ln].decode("utf-8", "surrogatepass"))
            pos += ln
        return out
    raise DecodeError(f"unknown string encoding {enc!r}")


# -- booleans ---------------------------------------------------------------------------------
def encode_bools(values: list[bool]) -> tuple[dict[str, Any], bytes]:
    """A boolean column's encoding and payload (a short one in the value stream, outside
    portable blocks)."""
    if all(values) or not any(values):
        return {"enc": "const", "value": bool(values[0]) if values else False}, b""
    if len(values) <= INLINE:
        if not PORTABLE.get():
            return stream_values([int(v) for v in values]), b""
        return {"enc": "inline", "values": [int(v) for v in values]}, b""
    return {"enc": "bits"}, _packed(np.packbits(np.asarray(values, dtype=bool)).tobytes())


def decode_bools(
    head: dict[str, Any], payload: bytes, n: int, values: ValueReader | None = None
) -> np.ndarray:
    if head["enc"] in STREAMED:
        numbers = _streamed(head, n, values)
        if any(v > 1 for v in numbers):
            raise DecodeError("a boolean of the value stream is neither 0 nor 1")
        return np.asarray(numbers, dtype=bool)
    if head["enc"] == "const":
        return np.full(n, head["value"], dtype=bool)
    if head["enc"] == "inline":
        out = np.asarray(head["values"], dtype=bool)
        if out.shape != (n,):
            raise DecodeError("inline boolean column has the wrong length")
        return out
    if head["enc"] != "bits":
        raise DecodeError(f"unknown boolean encoding {head['enc']!r}")
    bits = np.unpackbits(np.frombuffer(_unzstd(payload, (n + 7) // 8), dtype=np.uint8))
    if len(bits) < n:
        raise DecodeError("boolean column is short")
    return bits[:n].astype(bool)


# -- anything else: JSON text per value ----------------------------------------------------------
def encode_json(values: list[Any], pool: Pool) -> tuple[dict[str, Any], bytes]:
    head, payload = _text([_json.dumps(v).decode("utf-8", "surrogatepass") for v in values], pool)
    return {"enc": "json", "text": head}, payload


def decode_json(head: dict[str, Any], payload: bytes, n: int, pool: PoolReader) -> list[Any]:
    return [
        _json.loads(s.encode("utf-8", "surrogatepass"))
        for s in decode_strings(head["text"], payload, n, pool)
    ]


def fits_int64(v: int) -> bool:
    return INT64_MIN <= v <= INT64_MAX
