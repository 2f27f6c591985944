"""Sessions: messages coded with the ones before them as history (spec/WIRE_FORMAT.md §4).

One zstd frame per context, kept open: each record's messages are compressed into it and
flushed, so a record decodes as soon as it arrives, with every earlier message of the session
(and the dictionary before them) as history. python-zstandard's compression and decompression
objects keep that state; they are zstd's own streaming API, so any zstd decoder can read a
session's data.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

import zstandard as zstd

from zeroc._errors import ChecksumMismatch, DecodeError, LimitExceeded, UsageError, ZerocError
from zeroc._frame import crc32, read_varint, varint

if TYPE_CHECKING:
    from zeroc._codec import Codec

# A live session (a WebSocket, an event stream) codes small messages as they come: level 3 costs
# a few µs a message, and a 1 MiB window bounds an encoder to about 3 MB and a decoder to 1 MB.
SESSION_LEVEL = 3
SESSION_WINDOW_LOG = 20
# A session stream in a file is written once and read many times: level 19 and an 8 MiB window
# (what every decoder accepts), records of about 1 MiB of content (a reader holds one at a time)
# and a new context every 16 MiB of content (where a reader may start).
FILE_LEVEL = 19
FILE_WINDOW_LOG = 23
RECORD_BYTES = 1 << 20
SYNC_BYTES = 16 << 20
# Bounded decompression: each zstd block (a 3-byte header, then at least one byte) yields at most
# 128 KiB, so data is fed in steps short enough that what a step yields stays within the limit.
BLOCK_MAX = 128 * 1024


OUTPUT_STEP = 16 * 1024
# A record's form (spec §4): its data as zstd wrote it, or its one block's content without the
# 3-byte block header (a compressed or a raw block), which the decoder puts back: 3 bytes of a
# 60-byte message, as the zstd-block frame method saves them; or its messages' learned-model
# payloads, outside the zstd context.
FORM_BLOCKS, FORM_COMPRESSED, FORM_RAW, FORM_LEARNED = 0, 1, 2, 3
# Learned records: where the payloads come to fewer bytes than zstd's rate in this session so far
# predicts for the record's content (once zstd has coded LEARNED_EVIDENCE bytes of it), and
# otherwise for want of evidence, since the model is the dictionary's choice. A record that would
# go learned goes through zstd instead now and then (a probe), so that the rate stays known: the
# LEARNED_PROBE-th such record, then twice as far on (up to LEARNED_PROBE_MAX) each time the
# probe came out larger than the model's payloads, and back to LEARNED_PROBE when it did not.
LEARNED_EVIDENCE = 2048
LEARNED_PROBE = 32
LEARNED_PROBE_MAX = 1024
FRAME_HEADER = 2  # a session frame's: descriptor 00 (no size, no checksum, no id), window byte


_BYTES = [bytes((i,)) for i in range(0x80)]  # one-byte varints, made once (a record's head is one)


def _strip(data: bytes, reset: bool) -> tuple[int, bytes]:
    """(form, data): data holding one compressed or raw block, not the last, without its header."""
    at = FRAME_HEADER if reset else 0
    if reset and data[:1] != b"\x00":
        return FORM_BLOCKS, data
    if len(data) < at + 3:
        return FORM_BLOCKS, data
    header = int.from_bytes(data[at : at + 3], "little")
    last, kind, size = header & 1, header >> 1 & 3, header >> 3
    if last or kind not in (0, 2) or at + 3 + size != len(data):
        return FORM_BLOCKS, data
    return (FORM_COMPRESSED if kind == 2 else FORM_RAW), data[:at] + data[at + 3 :] if at else data[3:]


def _unstrip(data: bytes, form: int, reset: int) -> bytes:
    """A record's data as zstd reads it: the block header put back."""
    if form == FORM_BLOCKS:
        return data
    at = FRAME_HEADER if reset else 0
    if len(data) < at + 1 or (reset and data[0] != 0):
        raise DecodeError("session record of one block is too short or its frame header is not 00 <window>")
    size = len(data) - at
    if size > BLOCK_MAX:
        raise DecodeError(f"session record's block of {size} bytes is past the 128 KiB a block may hold")
    kind = 2 if form == FORM_COMPRESSED else 0
    header = (size << 3 | kind << 1).to_bytes(3, "little")
    return header + data if not at else data[:at] + header + data[at:]


# Levels 3-4 take zstd's lazy matcher with 4 searches instead of their double-fast one: on a
# relay's chat lines, records were 11% smaller (119.8 -> 107.0 KB for 2,000 lines) for ~1.1x the
# time, which brings a live session below permessage-deflate with context takeover (109.5 KB).
SHORT_MESSAGES = {"strategy": zstd.STRATEGY_LAZY, "search_log": 2}
# Records of one message shorter than this, continuing an open context, take
# SessionEncoder.encode's inline path; the head of one such message in one compressed block.
SMALL_RECORD = 16 * 1024
_ONE_COMPRESSED = _BYTES[1 << 3 | FORM_COMPRESSED << 1]
_FLUSH_BLOCK = zstd.COMPRESSOBJ_FLUSH_BLOCK
# A record at least this long (a relay's buffer dump) starts a new context coded with zstd's own
# parameters for the level (double-fast at 3-4), and the record after it starts another: on a
# 2.3 MB dump the lazy matcher costs more than the history before it saves. Only where the
# parameters differ (levels 3-4); the format is unchanged (any record may reset).
LARGE_RECORD = 256 * 1024


def _params(level: int, window_log: int, short: bool = True) -> zstd.ZstdCompressionParameters:
    return zstd.ZstdCompressionParameters.from_level(
        level,
        window_log=window_log,
        format=zstd.FORMAT_ZSTD1_MAGICLESS,
        write_content_size=False,
        write_checksum=False,
        write_dict_id=False,
        **(SHORT_MESSAGES if short and level in (3, 4) else {}),
    )


class SessionModel:
    """What a session needs of its dictionary's learned model: ``payload(value)``, a message's
    model payload (None where the model cannot code it); ``value(payload, max_size)``, the
    message back; ``text(value)``, the JSON text a learned record's checksum covers."""

    def __init__(
        self,
        payload: Callable[[Any], bytes | None],
        value: Callable[[bytes, int], Any],
        text: Callable[[Any], bytes],
    ) -> None:
        self.payload, self.value, self.text = payload, value, text


def _length(n: int) -> bytes:
    return _BYTES[n] if n < 0x80 else varint(n)


class SessionEncoder:
    """Codes the messages of one session into records (``Codec.session_encoder()``).

    Each :meth:`encode` (one message) or :meth:`encode_many` (several) returns one record,
    decodable as soon as it arrives by the session's :class:`SessionDecoder`, which must receive
    every record in order. :meth:`reset` makes the next record start a new context (a
    reconnecting or joining receiver can start there). Not for use by several threads at once.
    ``dumps`` serializes a message, ``lines`` says the serialization is JSON (newline-ended in
    the content), ``dictionary`` is the starting history (zstd dictionary bytes, or None);
    ``model``, the dictionary's learned model, lets records go as its payloads (form 3) where
    those are smaller.
    """

    def __init__(
        self,
        *,
        dumps: Callable[[Any], bytes],
        lines: bool,
        dictionary: bytes | None,
        level: int = SESSION_LEVEL,
        window_log: int = SESSION_WINDOW_LOG,
        checksum: bool = False,
        model: SessionModel | None = None,
    ) -> None:
        if not 10 <= window_log <= 23:  # up to the 8 MiB every decoder accepts
            raise UsageError(f"window_log {window_log} is outside 10..23")
        if not 1 <= level <= zstd.MAX_COMPRESSION_LEVEL:
            raise UsageError(f"session level {level} is outside 1..{zstd.MAX_COMPRESSION_LEVEL}")
        self._dumps, self._lines, self.checksum = dumps, lines, checksum
        self.dictionary = dictionary is not None  # whether the session starts from a dictionary
        data = zstd.ZstdCompressionDict(dictionary) if dictionary is not None else None
        self._cctx = zstd.ZstdCompressor(compression_params=_params(level, window_log), dict_data=data)
        self._level, self._window_log, self._dict = level, window_log, data
        self._large: zstd.ZstdCompressor | None = None  # made by the first large record (levels 3-4)
        self._obj: Any = None  # the open frame's compression object; None: the next record resets
        self._model = model if dictionary is not None else None  # a model needs its dictionary
        self._zin = self._zout = 0  # content and data bytes of this session's zstd records
        self._probe, self._every = 0, LEARNED_PROBE  # records gone learned since the last probe
        self._last = 0  # the last zstd record's data bytes

    def reset(self) -> None:
        """Start a new context with the next record (its history: the dictionary alone)."""
        self._obj = None

    def encode(self, value: Any) -> bytes:
        """One record holding ``value``."""
        if self._model is not None:
            return self.record_values([value])
        data = self._dumps(value)
        if self._lines:
            content = data + b"\n"
        else:
            n = len(data)
            content = (_BYTES[n] if n < 0x80 else varint(n)) + data
        obj = self._obj
        if obj is None or self.checksum or len(content) >= SMALL_RECORD:
            return self._record(content, 1)
        # A relay's common record, inline (a few µs a message are the session's whole cost): a
        # small message continuing the open context, unchecked, most often one compressed block
        # that goes without its header (form 1, see _strip).
        try:
            data = obj.compress(content)
            data = data + obj.flush(_FLUSH_BLOCK) if data else obj.flush(_FLUSH_BLOCK)
        except BaseException:
            self._obj = None  # the receiver cannot have what this one was going to send
            raise
        size = len(data) - 3
        if size > 0 and data[0] | data[1] << 8 | data[2] << 16 == size << 3 | 4:  # compressed, not last
            return _ONE_COMPRESSED + memoryview(data)[3:]
        form, data = _strip(data, False)
        return _BYTES[1 << 3 | form << 1] + data

    def encode_many(self, values: Iterable[Any]) -> bytes:
        """One record holding ``values`` (at least one), in order."""
        if self._model is not None:
            return self.record_values(list(values))
        return self.record([self.content(v) for v in values])

    def record_values(self, values: list[Any], contents: list[bytes] | None = None) -> bytes:
        """The record of ``values`` (their contents, when the caller has them): learned where
        the model's payloads are the smaller, else as :meth:`record`."""
        if not values:
            raise UsageError("a session record holds at least one message")
        if contents is None:
            contents = [self.content(v) for v in values]
        content = contents[0] if len(contents) == 1 else b"".join(contents)
        data, probe = self._learned(values, len(content)) if self._model is not None else (None, False)
        if data is None or probe:
            out = self._record(content, len(values))
            if probe and data is not None:  # zstd's bytes (as _record counted them) against the model's
                larger = self._last > len(data)
                self._every = min(2 * self._every, LEARNED_PROBE_MAX) if larger else LEARNED_PROBE
            return out
        model = self._model
        assert model is not None
        n = len(values) << 3 | FORM_LEARNED << 1 | (self._obj is None)  # no context: a reset
        head = _length(n)
        if self.checksum:
            head += crc32(b"".join(model.text(v) + b"\n" for v in values)).to_bytes(4, "little")
        return head + data

    def _learned(self, values: list[Any], size: int) -> tuple[bytes | None, bool]:
        """A learned record's data for ``values`` (``size`` bytes of content), or None where
        zstd codes them; and whether zstd codes them as a probe (see LEARNED_PROBE)."""
        model = self._model
        assert model is not None
        payloads: list[bytes] = []
        for v in values:
            p = model.payload(v)
            if p is None:
                return None, False
            payloads.append(p)
        # each payload after its length but the last, which is the rest of the record
        data = b"".join(part for p in payloads[:-1] for part in (_length(len(p)), p)) + payloads[-1]
        if self._zin >= LEARNED_EVIDENCE and len(data) * self._zin >= self._zout * size:
            return None, False
        self._probe += 1
        if self._probe >= self._every:
            self._probe = 0
            return data, True
        return data, False

    def content(self, value: Any) -> bytes:
        """``value``'s part of a record's content: its JSON text and a newline, or for protobuf
        and bytes its varint length and serialization."""
        data = self._dumps(value)
        if self._lines:
            return data + b"\n"
        n = len(data)
        return (_BYTES[n] if n < 0x80 else varint(n)) + data

    def record(self, contents: list[bytes]) -> bytes:
        """The record of these messages' contents (see :meth:`content`)."""
        if not contents:
            raise UsageError("a session record holds at least one message")
        return self._record(contents[0] if len(contents) == 1 else b"".join(contents), len(contents))

    def _record(self, content: bytes, count: int) -> bytes:
        obj = self._obj
        large = len(content) >= LARGE_RECORD and self._level in (3, 4)
        reset = obj is None or large
        if large:
            if self._large is None:  # most sessions never send one: no second context until then
                params = _params(self._level, self._window_log, short=False)
                self._large = zstd.ZstdCompressor(compression_params=params, dict_data=self._dict)
            obj, self._obj = self._large.compressobj(), None  # and the record after it resets too
        elif reset:
            obj = self._obj = self._cctx.compressobj()
        try:
            data: bytes = obj.compress(content) + obj.flush(zstd.COMPRESSOBJ_FLUSH_BLOCK)
        except BaseException:
            self._obj = None  # the receiver cannot have what this one was going to send
            raise
        form, data = _strip(data, reset)
        self._zin += len(content)
        self._zout += len(data)
        self._last = len(data)
        n = count << 3 | form << 1 | reset
        head = _BYTES[n] if n < 0x80 else varint(n)
        if self.checksum:
            head += crc32(content).to_bytes(4, "little")
        return head + data


class SessionDecoder:
    """Decodes a session's records, in order (``Codec.session_decoder()``); ``loads``,
    ``lines`` and ``dictionary`` as the encoder's, bounded by ``max_decoded_size`` bytes of
    content a record and zstd windows of ``max_window_size``.

    After any error the context is lost: records are refused until one that resets.
    """

    def __init__(
        self,
        *,
        loads: Callable[[bytes], Any],
        lines: bool,
        dictionary: bytes | None,
        checksum: bool = False,
        max_decoded_size: int = 64 * 1024 * 1024,
        max_window_size: int = 8 * 1024 * 1024,
        model: SessionModel | None = None,
    ) -> None:
        self._loads, self._lines, self.checksum = loads, lines, checksum
        self._model = model if dictionary is not None else None  # learned records need both
        self.max_decoded_size = max_decoded_size
        data = zstd.ZstdCompressionDict(dictionary) if dictionary is not None else None
        self._dctx = zstd.ZstdDecompressor(
            dict_data=data, max_window_size=max_window_size, format=zstd.FORMAT_ZSTD1_MAGICLESS
        )
        self._obj: Any = None  # the open frame's decompression object
        self._live = False  # whether a record that reset came, and no error since

    def decode(self, record: bytes) -> Any:
        """The one message of ``record``."""
        values = self.decode_many(record)
        if len(values) != 1:
            raise DecodeError(f"session record holds {len(values)} messages, not one: use decode_many")
        return values[0]

    def decode_many(self, record: bytes) -> list[Any]:
        """Every message of ``record``, in order."""
        try:
            return self._decode(record)
        except ZerocError:
            self._obj, self._live = None, False
            raise

    def _decode(self, record: bytes) -> list[Any]:
        if record and record[0] < 0x80:  # a head of one byte: up to 15 messages
            head, pos = record[0], 1
        else:
            head, pos = read_varint(record, 0)
        count, form, reset = head >> 3, head >> 1 & 3, head & 1
        if count == 0:
            raise DecodeError("session record holds no message")
        if not reset and not self._live:
            raise DecodeError("session record continues a context this decoder does not hold (it must reset)")
        if form == FORM_LEARNED and self._model is None:
            raise DecodeError("session record of form 3 (learned) in a session without a learned model")
        crc = None
        if self.checksum:
            if len(record) < pos + 4:
                raise DecodeError("session record ends inside its checksum")
            crc = int.from_bytes(record[pos : pos + 4], "little")
            pos += 4
        if form == FORM_LEARNED:
            if reset:  # the context ends here: the next zstd record must start another
                self._obj, self._live = None, True
            return self._unlearn(record, pos, count, crc)
        if reset:  # output in 16 KiB pieces: zstd's 128 KiB default was an mmap and page faults a call
            self._obj, self._live = self._dctx.decompressobj(write_size=OUTPUT_STEP), True
        elif self._obj is None:
            raise DecodeError(
                "session record continues a context that a learned record ended (it must reset)"
            )
        content = self._inflate(_unstrip(record[pos:], form, reset))
        if crc is not None and crc32(content) != crc:
            raise ChecksumMismatch("session record checksum does not match its content")
        return [self._loads(m) for m in self._split(content, count)]

    def _unlearn(self, record: bytes, pos: int, count: int, crc: int | None) -> list[Any]:
        """A learned record's messages: ``count`` payloads from ``pos``, each after its length
        but the last, which is the rest of the record."""
        model = self._model
        assert model is not None
        values: list[Any] = []
        for _ in range(count - 1):
            if pos >= len(record):
                raise DecodeError(f"learned session record is not {count} complete payloads")
            n, pos = read_varint(record, pos)
            if pos + n > len(record):
                raise DecodeError(f"learned session record is not {count} complete payloads")
            values.append(model.value(record[pos : pos + n], self.max_decoded_size))
            pos += n
        values.append(model.value(record[pos:], self.max_decoded_size))
        if crc is not None and crc32(b"".join(model.text(v) + b"\n" for v in values)) != crc:
            raise ChecksumMismatch("session record checksum does not match its messages")
        return values

    def _inflate(self, data: bytes) -> bytes:
        """The record's content, fed to zstd in steps short enough that what one yields stays
        within the limit (most records are one step)."""
        limit = self.max_decoded_size
        view = memoryview(data) if len(data) > 3 * (limit // BLOCK_MAX) else data  # one step: no copy
        parts, size, pos = [], 0, 0
        while pos < len(data):
            step = max(4, 3 * ((limit - size) // BLOCK_MAX))
            try:
                piece: bytes = self._obj.decompress(view[pos : pos + step])
            except zstd.ZstdError as exc:
                raise DecodeError(f"corrupt session data: {exc}") from exc
            size += len(piece)
            if size > limit:
                raise LimitExceeded(f"session record decodes past the limit of {limit} bytes")
            parts.append(piece)
            pos += step
        return parts[0] if len(parts) == 1 else b"".join(parts)

    def _split(self, content: bytes, count: int) -> list[bytes]:
        if self._lines:
            messages = content.split(b"\n")
            if len(messages) != count + 1 or messages[-1]:
                raise DecodeError(f"session record content is not {count} complete messages")
            return messages[:-1]
        if count == 1 and content and content[0] < 0x80:  # one message shorter than 128 bytes
            if content[0] + 1 != len(content):
                raise DecodeError("session record content is not 1 complete message")
            return [content[1:]]
        out: list[bytes] = []
        pos = 0
        while pos < len(content) and len(out) < count:
            n, pos = read_varint(content, pos)
            if pos + n > len(content):
                break
            out.append(content[pos : pos + n])
            pos += n
        if len(out) != count or pos != len(content):
            raise DecodeError(f"session record content is not {count} complete messages")
        return out


def file_session(codec: Codec, values: Iterable[Any]) -> tuple[list[bytes], bool]:
    """``values`` as the records of a session stream in a file (see RECORD_BYTES, SYNC_BYTES),
    and whether they start from the codec's dictionary: the first record is coded every way and
    the smallest chosen — from the dictionary or not (on large inputs zstd -19 with a dictionary
    came out 2-6% larger than without: faker users, AWS operations; on small ones the dictionary
    saves 10-20%) and, where the codec codes with a learned model, as its payloads or not (zstd
    -19 with a whole file's history can beat a model that codes each message alone)."""
    ways = [(True, True), (True, False), (False, False)] if codec.dictionary is not None else [(False, False)]
    encoders = [
        codec.session_encoder(level=FILE_LEVEL, window_log=FILE_WINDOW_LOG, dictionary=d, learned=m)
        for d, m in ways
        if m is False or codec.method == "learned"
    ]
    records: list[bytes] = []
    batch: list[bytes] = []
    kept: list[Any] = []  # the batch's values, for a learned model's payloads
    size = since = 0

    def flush() -> None:
        nonlocal encoders
        tried = [e.record_values(kept, batch) for e in encoders]
        best = min(range(len(tried)), key=lambda i: len(tried[i]))
        encoders = [encoders[best]]
        records.append(tried[best])

    for value in values:
        batch.append(encoders[0].content(value))
        kept.append(value)
        size += len(batch[-1])
        if size >= RECORD_BYTES:
            flush()
            batch, kept, since, size = [], [], since + size, 0
            if since >= SYNC_BYTES:
                encoders[0].reset()
                since = 0
    if batch:
        flush()
    return records, encoders[0].dictionary
