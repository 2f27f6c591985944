"""A learned model of a message: encode and decode through the generated common path or the
general walker, and the model section of a dictionary file."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import zstandard as zstd

from zeroc import _json
from zeroc._errors import DecodeError, InvalidDictionary, TrainingError
from zeroc.learned import _generate, _walk
from zeroc.learned._coder import NO_SIDE, Decoder, Encoder, RangeDecoder, RangeEncoder
from zeroc.learned._format import (
    CHARS_FORMAT,
    FORMAT,
    MAX_ENTRIES,
    MAX_LOOPS,
    MAX_MODEL_BYTES,
    MAX_TOTAL,
    RANGE_FORMAT,
    Reader,
)
from zeroc.learned._generate import generate
from zeroc.learned._learner import Learner, text_pricer
from zeroc.learned._nodes import (
    OFF,
    Array,
    Chars,
    IntRange,
    Magnitude,
    Map,
    Meter,
    Node,
    Object,
    Off,
    Rule,
    Shape,
    entries,
    loops,
    walk,
)

# Samples a model learns from. Learning takes ~1 ms a sample on varied records (40,000 faker
# users, orders and logs: 46 s) and what more samples add shrinks: learned on 20,000 of those,
# held-back records cost 65.4 B, on 40,000 63.8 B (on 10,000, 70.6 B).
LEARNED_SAMPLES = 20_000


class Model:
    """A learned model of a message: ``encode(value) -> bytes``, ``decode(bytes) -> value``.

    The first symbol says whether the message is on the model's common path (``_generate``);
    ``common`` of ``samples`` training messages were, which sets that symbol's probability.
    ``side`` (a zstd engine with the trained dictionary) compresses the side stream. ``version``
    is the model format it was written in, which says how it codes (formats 6 and 7: the range coder,
    the common path walked by the nodes; format 5: the exact coder in blocks; formats 1-5: the
    common path as generated code).
    """

    def __init__(
        self, root: Node, common: int = 0, samples: int = 0, side: Any = None, version: int | None = None
    ) -> None:
        self.root, self.common, self.samples, self.side = root, common, samples, side
        # Format 8 only where a chained object needs it and 7 where a chars node does, so that
        # older readers read the rest.
        nodes = list(walk(root))
        if version is None:
            version = (
                FORMAT
                if any(type(n) is Object and type(n.other) is Object for n in nodes)
                else CHARS_FORMAT
                if any(type(n) is Chars for n in nodes)
                else RANGE_FORMAT
            )
        self.version = version
        for n in nodes:  # format 8's common path runs through chains of key orders
            if type(n) is Object:
                n.chained = version >= FORMAT and type(n.other) is Object
        self.blocks = version == 5
        self._seen = self._bits = self._misses = 0  # drift figures, kept by Codec and encode
        self.flag_total = samples + 2
        self.on = (0, common + 1, self.flag_total)
        self.off = (common + 1, samples - common + 1, self.flag_total)
        # The nodes walked in C, where the extension is built (formats 5 and 6).
        native = version >= 6 or (
            version == 5 and not any(type(n) is IntRange and n.span >= 1 << 64 for n in walk(root))
        )
        native = native and _generate.NATIVE
        # Where most messages leave the common path, format 6 walks both paths at once; where
        # most stay on it, the common path alone first (writing both would cost them).
        both = version >= 6 and 2 * common < samples
        self._walk = _walk.Walk(root, (self.on, self.off), side, version, both) if native else None
        self._both = both and self._walk is not None
        # Format 6 and later, walked in C: a frame's head and payload in one call (Codec.encode).
        self._frame: Callable[[Any, bytes], bytes] | None = None  # (counts what it codes)
        if version >= 6:
            self._fast_encode: Callable[[Any], bytes | None] = (
                self._common_encode if self._walk is None else self._walk.encode_common
            )
            self._fast_decode: Callable[[bytes], Any] = (
                self._decode_range if self._walk is None else self._walk.decode
            )
            self._unframe: Callable[[bytes, int], Any] = (
                self._decode_range if self._walk is None else self._walk.program.unframe
            )
            if self._walk is not None:
                self._frame = self._walk.program.frame
            return
        # The fast path's head (no side stream, then the flag) folded into its starting interval.
        head = Encoder()
        head.put(*NO_SIDE)
        head.put(*self.on)
        self._fast_encode, self._fast_decode = generate(
            root, (head.low, head.rng, head.den), self.flag_total, common, blocks=self.blocks
        )

    def use_side(self, side: Any) -> None:
        """Compress side streams with ``side`` from now on (its ``decompress`` reads them)."""
        self.side = side
        if self._walk is not None:
            self._walk.use_side(side)

    @classmethod
    def learn(
        cls,
        samples: list[Any],
        side: Any = None,
        dictionary_size: int = 32 * 1024,
        progress: Callable[[int, int], None] | None = None,
    ) -> Model:
        """Learn from samples (an even spread of at most ``LEARNED_SAMPLES`` of them); with
        ``side`` (the engine that will compress the side stream), text is priced by what it
        compresses to (see :func:`text_pricer`). ``progress`` hears (fields learned, fields) of
        the top-level object."""
        samples = samples[:: -(-len(samples) // LEARNED_SAMPLES)] if samples else samples
        text = text_pricer(samples, side, dictionary_size) if side is not None else None
        root = Learner(text, progress).learn(samples)
        if entries(root) > MAX_ENTRIES:  # a model no reader would load: none is offered
            raise TrainingError(f"the learned model would hold more than {MAX_ENTRIES} table entries")
        probe = cls(root)
        common = sum(1 for v in samples if probe._fast_encode(v) is not None)
        return cls(root, common, len(samples), side)

    # Drift figures (Codec.drift): payloads coded, their bits, and those off the common path,
    # Python's counts plus the C frames' (Program counts those itself).
    def _framed(self) -> tuple[int, int, int]:
        p = self._walk.program if self._walk is not None else None
        return (p.seen, p.bits, p.misses) if p is not None else (0, 0, 0)

    @property
    def seen(self) -> int:
        return self._seen + self._framed()[0]

    @property
    def bits(self) -> int:
        return self._bits + self._framed()[1]

    @property
    def misses(self) -> int:
        return self._misses + self._framed()[2]

    def tally(self, payload: bytes) -> None:
        """Count a payload coded outside Program.frame for the drift figures."""
        self._seen += 1
        self._bits += 8 * len(payload)

    def encode(self, value: Any, common: bool = True) -> bytes:
        """The payload of ``value``; ``common=False`` when the caller has found it off the
        common path already (``_fast_encode`` gave None)."""
        if common and self._both and self._walk is not None:
            payload, on = self._walk.encode_both(value)
            self._misses += not on
            return payload
        fast = self._fast_encode(value) if common else None
        if fast is not None:
            return fast
        self._misses += 1
        if self._walk is not None:
            return self._walk.encode(value)
        if self.version >= 6:
            renc = RangeEncoder()
            renc.put(*self.off)
            self.root.encode(value, renc)  # type: ignore[arg-type] # the coder's methods
            return renc.finish(self.side)
        enc = Encoder(self.blocks)
        enc.put(*self.off)
        self.root.encode(value, enc)
        return enc.finish(self.side)

    def _common_encode(self, value: Any) -> bytes | None:
        """Format 6: the payload of a value on the common path, or None off it."""
        enc = RangeEncoder()
        enc.put(*self.on)
        try:
            self.root.encode_common(value, enc)
        except Off:
            return None
        return enc.finish(self.side)

    def _decode_range(self, data: bytes, max_size: int = 64 * 1024 * 1024) -> Any:
        """Format 6: the flag, then the common path or the general rules, then the check."""
        dec = RangeDecoder(data, self.side, max_size)
        if dec.peek(self.flag_total) <= self.common:
            dec.take(*self.on)
            value = self.root.decode_common(dec)
        else:
            dec.take(*self.off)
            value = self.root.decode(dec)  # type: ignore[arg-type] # the coder's methods
        dec.finish()
        return value

    def decode(self, data: bytes, max_size: int = 64 * 1024 * 1024) -> Any:
        try:
            if self.version >= 6:
                return self._unframe(data, max_size)
            value = self._fast_decode(data)  # the common case: no side stream, common path
            if value is not OFF:
                return value
            if self._walk is not None:
                return self._walk.decode(data, max_size)
            dec = Decoder(data, self.side, max_size, self.blocks)
            if dec.peek(self.flag_total) <= self.common:
                raise DecodeError(
                    "learned-model payload says common path but has a side stream or is too long for it"
                )
            dec.take(*self.off)
            value = self.root.decode(dec)
        except (
            RecursionError,
            UnicodeDecodeError,
            ValueError,
            KeyError,
            IndexError,
            TypeError,
            ArithmeticError,
        ) as exc:
            if isinstance(exc, DecodeError):
                raise
            raise DecodeError(f"learned-model payload does not decode: {exc}") from exc
        dec.finish()
        return value

    def describe(self) -> str:
        return self.root.describe()

    # -- the model section of a dictionary file ---------------------------------------------
    def to_bytes(self) -> bytes:
        root = self.root.to_data()
        doc = {"format": self._written(), "common": self.common, "samples": self.samples, "root": root}
        return zstd.ZstdCompressor(level=19).compress(_json.dumps(doc))

    def _written(self) -> int:
        """Format 5 for a model that codes in blocks; a model read from an older format keeps
        the lowest of formats 1-4 that has every node, as the writers of those formats did."""
        if self.version >= 5:
            return self.version
        nodes = list(walk(self.root))
        modern = any(getattr(n, "sure", False) or (isinstance(n, Rule) and not n.legacy) for n in nodes)
        latest = any(
            isinstance(n, (Magnitude, Shape)) or getattr(n, "numeric", False) or getattr(n, "width", 1) == 0
            for n in nodes
        )
        chained = any(isinstance(n, Map) or (isinstance(n, Object) and n.other is not None) for n in nodes)
        return 4 if chained else 3 if latest else 2 if modern else 1

    @classmethod
    def from_bytes(cls, data: bytes, side: Any = None) -> Model:
        try:
            size = zstd.get_frame_parameters(data).content_size
            if not 0 <= size <= MAX_MODEL_BYTES:  # checked before any allocation of that size
                raise InvalidDictionary(
                    f"learned model section declares {size} bytes (at most {MAX_MODEL_BYTES})"
                )
            text = zstd.ZstdDecompressor().decompress(data, max_output_size=MAX_MODEL_BYTES)
        except zstd.ZstdError as exc:
            raise InvalidDictionary(f"learned model section does not decompress: {exc}") from exc
        if len(text) > MAX_MODEL_BYTES:
            raise InvalidDictionary("learned model section is too large")
        try:
            doc = _json.loads(text)
        except (ValueError, RecursionError, UnicodeDecodeError) as exc:
            raise InvalidDictionary(f"learned model section is not JSON: {exc}") from exc
        formats = (1, 2, 3, 4, 5, RANGE_FORMAT, CHARS_FORMAT, FORMAT)
        if type(doc) is not dict or doc.get("format") not in formats:
            raise InvalidDictionary(
                f"learned model format {doc.get('format') if type(doc) is dict else '?'!r} is not supported"
            )
        samples, common = doc.get("samples"), doc.get("common")
        if type(samples) is not int or type(common) is not int or not 0 <= common <= samples <= MAX_TOTAL - 2:
            raise InvalidDictionary("learned model: common/samples must be integers 0 <= common <= samples")
        try:
            root = Reader(doc["format"]).node(doc.get("root"), 0)
        except RecursionError as exc:
            raise InvalidDictionary("learned model is nested too deeply") from exc
        if loops(root) > MAX_LOOPS:
            raise InvalidDictionary(f"learned model nests more than {MAX_LOOPS} arrays and words")
        return cls(root, common, samples, side, doc["format"])


def breakdown(node: Node, values: list[Any], messages: int, path: str = "$") -> list[dict[str, Any]]:
    """Where the bits go: for every field (JSONPath-like ``$.items[].price``), its model and the
    bits per message it costs, children included."""
    meter = Meter(loo=False)
    for v in values:
        node.encode(v, meter)
    rows = [{"field": path, "model": node.describe(), "bits": round(meter.bits / max(messages, 1), 3)}]
    if isinstance(node, Object):
        fitting = [v for v in values if node.fits(v)]
        for j, (key, child) in enumerate(zip(node.keys, node.children, strict=True)):
            column = [list(v.values())[j] for v in fitting]
            if isinstance(child, Rule):
                contexts = [list(v.values())[:j] for v in fitting]
                meter = Meter(loo=False)
                for ctx, v in zip(contexts, column, strict=True):
                    child.encode_in(v, meter, ctx)
                rows.append(
                    {
                        "field": f"{path}.{key}",
                        "model": child.describe(),
                        "bits": round(meter.bits / max(messages, 1), 3),
                    }
                )
            else:
                rows += breakdown(child, column, messages, f"{path}.{key}")
        if node.other is not None:  # the next key order, as a field of its own: $.user|2
            others = [v for v in values if not node.fits(v)]
            rows += breakdown(node.other, others, messages, f"{path}|{path.count('|') + 2}")
    elif isinstance(node, Map):
        entries = [(k, x) for v in values if type(v) is dict for k, x in v.items()]
        rows += breakdown(node.key, [k for k, _ in entries], messages, f"{path}{{key}}")
        rows += breakdown(node.value, [x for _, x in entries], messages, f"{path}{{value}}")
    elif isinstance(node, Array):
        items = [x for v in values if type(v) is list for x in v]
        rows += breakdown(node.item, items, messages, f"{path}[]")
    elif isinstance(node, Shape):  # its fields by position: $.created{0} is the weekday
        fields = [m.groups() for v in values if type(v) is str and (m := node.pattern.fullmatch(v))]
        for i, child in enumerate(node.children):
            rows += breakdown(child, [f[i] for f in fields], messages, f"{path}{{{i}}}")
    return rows
