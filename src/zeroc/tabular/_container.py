"""The seekable container (``.zct``, spec/TABULAR_FORMAT.md): rows in independently compressed
chunks with an index in a footer, so readers stream, stop early, read any row range by
decompressing only its chunks, and writers append without rewriting the file."""

from __future__ import annotations

import itertools
import json
import os
from collections.abc import Callable, Iterable, Iterator
from typing import IO, Any, BinaryIO
from zlib import crc32

import zstandard as zstd

from zeroc._errors import ChecksumMismatch, DecodeError, UsageError
from zeroc._frame import read_varint, varint
from zeroc.tabular._columns import unzstd
from zeroc.tabular._table import (
    MAX_BUILT,
    MAX_COLUMNS,
    decode_block,
    decode_columns,
    decode_rows,
    describe_block,
    encode_block,
)

MAGIC = b"ZRCT"
VERSION = 2  # checksummed (spec/TABULAR_FORMAT.md §2); version 1 is read, and written on request
HEADERS = {v: MAGIC + bytes([v, 0, 0, 0]) for v in (1, 2)}
HEADER = HEADERS[VERSION]
TRAILERS = {1: 8, 2: 12}  # (version 2: CRC-32 of the footer) + uint32 footer length + magic
TRAILER = TRAILERS[1]
CHUNK_ROWS = 65_536  # ~1 MB of JSON per chunk for typical rows: seek granularity vs. ratio
MAX_FOOTER = 64 * 1024 * 1024
COMPACT_FOOTER = b"\x01"  # the footer as bytes (spec §2); a JSON one starts with "{", zstd's with 28
FOOTER_VARINT_BYTES = 9  # a compact footer's integers: below 2^63
# A chunk also ends once its rows hold this many values (objects, arrays and scalars), so that a
# reader's default bound on what one chunk builds (MAX_BUILT, twice this) never refuses it.
CHUNK_VALUES = MAX_BUILT // 2


def _values(v: Any) -> int:
    """The values in ``v``, itself included."""
    if isinstance(v, dict):
        return 1 + sum(map(_values, v.values()))
    if isinstance(v, list):
        return 1 + sum(map(_values, v))
    return 1


Progress = Callable[[int], None]


class ContainerWriter:
    """Write rows chunk by chunk; ``close()`` writes the skeleton (if any) and the footer.

    Holds at most one chunk of rows in memory. ``path`` is where the rows sit in the document
    (``None``: the container holds one whole document as its only row); ``skeleton`` — the
    document without its rows — may be set any time before ``close()``, which writes the rows
    and the skeleton as one block where no chunk was written before (the document block, spec
    §2; ``flush()`` ends a chunk). ``portable`` writes no pcodec encodings and no brotli texts
    (readable in browsers, spec/TABULAR_FORMAT.md §1.2).
    """

    def __init__(
        self,
        file: BinaryIO,
        *,
        path: list[str] | None = None,
        chunk_rows: int = CHUNK_ROWS,
        checksum: bool = True,
        portable: bool = False,
        _footer: dict[str, Any] | None = None,
    ) -> None:
        if chunk_rows < 1:
            raise UsageError("chunk_rows must be at least 1")
        self.file = file
        self.chunk_rows = chunk_rows
        self.buffer: list[Any] = []
        self.values = 0  # in the buffered rows: a chunk ends before readers' max_values
        self.skeleton: Any = None
        if _footer is None:
            version = VERSION if checksum else 1
            file.write(HEADERS[version])
            _footer = {"format": version, "path": path, "rows": 0, "chunks": [], "skeleton": None}
            if portable:
                _footer["portable"] = True
        self.footer = _footer
        self.portable = _footer.get("portable") is True
        self.checksummed = _footer["format"] == 2

    def _put(self, block: bytes) -> list[int]:
        """Write a block; its index entry: offset, length (and CRC-32 in version 2)."""
        offset = self.file.tell()
        self.file.write(block)
        return [offset, len(block), crc32(block)] if self.checksummed else [offset, len(block)]

    def write(self, row: Any) -> None:
        # A full chunk is written when the next row comes, so that rows which end exactly at a
        # chunk's end still make the document block at close() (spec §2).
        if len(self.buffer) >= self.chunk_rows or self.values >= CHUNK_VALUES:
            self.flush()
        self.buffer.append(row)
        self.values += _values(row)

    def write_many(self, rows: Iterable[Any]) -> None:
        for row in rows:
            self.write(row)

    def flush(self) -> None:
        if self.buffer:
            self._chunk(self._put(encode_block(self.buffer, portable=self.portable)))

    def _chunk(self, entry: list[int]) -> None:
        """Index the buffered rows as the block just put at ``entry``."""
        self.footer["chunks"].append([*entry[:2], len(self.buffer), *entry[2:]])
        self.footer["rows"] += len(self.buffer)
        self.buffer, self.values = [], 0

    def close(self) -> None:
        """Write the last chunk, the skeleton and the footer; where the rows are one chunk's at
        most (none was written before), the document block instead (spec §2): the document as
        one block, both the first chunk and the skeleton, with the rows' column first (one
        stream and one head: 16-120 B less than two blocks on every document of the corpora,
        the benchmark and the vectors)."""
        path, skeleton = self.footer["path"], self.skeleton
        document = _placed(skeleton, path, self.buffer) if self.buffer and not self.footer["chunks"] else None
        if document is not None:
            entry = self._put(encode_block(document, portable=self.portable, first=path[0]))
            self._chunk(entry)
            self.footer["skeleton"] = entry
        else:
            self.flush()
            if path and skeleton is not None:
                self.footer["skeleton"] = self._put(encode_block(skeleton, portable=self.portable))
        data = _compact_footer(self.footer)
        if data is None:  # a path the compact footer cannot hold: JSON, zstd's where smaller
            raw = json.dumps(self.footer, separators=(",", ":")).encode()
            packed = zstd.ZstdCompressor(level=19).compress(raw)
            data = packed if len(packed) < len(raw) else raw  # a raw footer starts with "{"
        check = crc32(data).to_bytes(4, "little") if self.checksummed else b""
        self.file.write(data + check + len(data).to_bytes(4, "little") + MAGIC)
        self.file.flush()


class ContainerReader:
    """Read a container: ``len(reader)`` rows, ``reader.rows(a, b)``, ``iter(reader)``,
    ``reader.document()``. Only the chunks a request covers are read and decompressed."""

    def __init__(
        self, file: BinaryIO, *, max_chunk_bytes: int = 1 << 28, max_values: int = MAX_BUILT
    ) -> None:
        self.file = file
        self.max_chunk_bytes = max_chunk_bytes
        self.max_values = max_values  # values one chunk may build (LimitExceeded past it)
        self.footer, self.footer_offset = _read_footer(file)
        chunks, skeleton = self.footer["chunks"], self.footer.get("skeleton")
        self.document_block = bool(skeleton and chunks and chunks[0][:2] == skeleton[:2])  # spec §2
        starts, total = [], 0
        for entry in self.footer["chunks"]:
            starts.append(total)
            total += entry[2]
        self.starts = starts
        if total != self.footer["rows"]:
            raise DecodeError("container footer's row counts disagree")

    def __len__(self) -> int:
        return int(self.footer["rows"])

    def _chunk(self, i: int, lo: int = 0, hi: int | None = None) -> list[Any]:
        """Chunk i's rows lo..hi (all by default), building only those."""
        offset, length, n, *check = self.footer["chunks"][i]
        data = self._read(offset, length, *check)
        key = self.footer["path"][0] if i == 0 and self.document_block else None
        part = None
        if (lo, hi) != (0, None) or key is not None:  # the document block's rows: read first
            part = decode_rows(data, lo, n if hi is None else hi, max_values=self.max_values, key=key)
        if part is not None:
            if part[0] != n:
                raise DecodeError(f"chunk {i} does not hold its {n} rows")
            return part[1]
        rows = decode_block(data, max_values=self.max_values)
        if key is not None:  # a document block written otherwise: all of it, then the rows
            return self._document_rows(rows)[lo:hi]
        if not isinstance(rows, list) or len(rows) != n:
            raise DecodeError(f"chunk {i} does not hold its {n} rows")
        return rows[lo:hi]

    def _document_rows(self, document: Any) -> list[Any]:
        """The first chunk's rows in the document block's value (spec §2): the array at the path."""
        n = self.footer["chunks"][0][2]
        rows = document.get(self.footer["path"][0]) if isinstance(document, dict) else None
        if not isinstance(rows, list) or len(rows) != n:
            raise DecodeError(f"the document block does not hold its {n} rows at the table's path")
        return rows

    def _read(self, offset: int, length: int, check: int | None = None) -> bytes:
        """A block's bytes, checked against its CRC-32 where the index holds one."""
        if length > self.max_chunk_bytes:
            raise DecodeError(f"a {length}-byte chunk exceeds the limit")
        self.file.seek(offset)
        data = self.file.read(length)
        if len(data) != length:
            raise DecodeError("container is truncated inside a chunk")
        if check is not None and crc32(data) != check:
            raise ChecksumMismatch(f"the block at byte {offset} fails its CRC-32")
        return data

    def describe(self) -> dict[str, Any]:
        """Where the container's bytes go: its footer, and each block's (``describe_block``)
        with the rows it holds, the skeleton last (``rows`` None), unless it is the document
        block, the first chunk (``document`` true)."""
        entries = [(offset, length, rows, check) for offset, length, rows, *check in self.footer["chunks"]]
        if self.footer.get("skeleton") and not self.document_block:
            offset, length, *check = self.footer["skeleton"]
            entries.append((offset, length, None, check))
        blocks = [
            {
                "offset": offset,
                "rows": rows,
                "document": i == 0 and self.document_block,
                **describe_block(self._read(offset, length, *check)),
            }
            for i, (offset, length, rows, check) in enumerate(entries)
        ]
        self.file.seek(0, os.SEEK_END)
        trailer = TRAILERS[self.footer["format"]]
        return {
            "version": self.footer["format"],
            "portable": bool(self.footer.get("portable")),
            "header_bytes": len(HEADER),
            "footer_bytes": self.file.tell() - trailer - self.footer_offset,
            "trailer_bytes": trailer,
            "blocks": blocks,
        }

    def iter_rows(self, start: int | None = 0, stop: int | None = None) -> Iterator[Any]:
        """Rows start..stop as a Python slice reads them (negative counts from the end, None
        is the end), decompressing one chunk at a time (stop early at no extra cost)."""
        start, stop, _ = slice(start, stop).indices(len(self))
        for i, first in enumerate(self.starts):
            n = self.footer["chunks"][i][2]
            if first + n <= start:
                continue
            if first >= stop:
                return
            lo, hi = max(start - first, 0), min(stop - first, n)
            yield from self._chunk(i, lo, hi) if (lo, hi) != (0, n) else self._chunk(i)

    __iter__ = iter_rows

    def columns(self, start: int = 0, stop: int | None = None) -> dict[str, Any]:
        """Rows start..stop as columns (numpy arrays where the values are numbers or booleans),
        decoding only the chunks they live in and never building a dict per row. A key a row
        lacks reads as None; rows that are not all objects are one column, ``value``."""
        import numpy as np

        stop = len(self) if stop is None else min(stop, len(self))
        pieces: list[tuple[int, dict[str, Any]]] = []  # rows of each chunk taken, its columns
        for i, first in enumerate(self.starts):
            offset, length, n, *check = self.footer["chunks"][i]
            if first + n <= start or first >= stop:
                continue
            key = self.footer["path"][0] if i == 0 and self.document_block else None
            cols = decode_columns(self._read(offset, length, *check), max_values=self.max_values, key=key)
            if any(len(v) != n for v in cols.values()):
                raise DecodeError(f"chunk {i} does not hold its {n} rows")
            lo, hi = max(start - first, 0), min(stop - first, n)
            pieces.append((hi - lo, {k: v[lo:hi] for k, v in cols.items()}))
        names = list(dict.fromkeys(k for _, p in pieces for k in p))
        out: dict[str, Any] = {}
        for k in names:
            # A chunk without this key (rows whose keys change along the table) gives nulls.
            parts = [p.get(k, [None] * count) for count, p in pieces]
            if all(isinstance(x, np.ndarray) for x in parts):
                out[k] = np.concatenate(parts) if len(parts) > 1 else parts[0]
            else:
                out[k] = [v for x in parts for v in (x.tolist() if isinstance(x, np.ndarray) else x)]
        return out

    def messages(self, schema: Any, start: int = 0, stop: int | None = None) -> Iterator[Any]:
        """Rows start..stop as protobuf messages of ``schema`` (a class, Schema or name)."""
        from zeroc._schema import resolve

        sch = resolve(schema)
        if sch is None:
            raise UsageError("messages() needs a protobuf schema")
        for row in self.iter_rows(start, stop):
            yield sch.loads_message(sch.dumps(row))

    def to_arrow(self, start: int = 0, stop: int | None = None) -> Any:
        """Rows start..stop as a pyarrow Table, without loss: a column takes the Arrow type
        pyarrow infers for it where that type gives every value back exactly (numbers, booleans,
        text, lists and objects of one layout); otherwise — ints mixed with floats, objects whose
        keys vary, lists mixed with objects, integers past 64 bits, lone surrogates — it holds
        each value's JSON text. A key a row lacks reads as null, as in :meth:`columns`."""
        import numpy as np
        import pyarrow as pa

        arrays = {}
        for name, values in self.columns(start, stop).items():
            if isinstance(values, np.ndarray):
                arrays[name] = pa.array(values)
                continue
            try:
                arr = pa.array(values)
                exact = _exact(values, arr.to_pylist())
            except (pa.ArrowException, UnicodeError, OverflowError):
                exact = False
            if not exact:
                text = [None if v is None else json.dumps(v) for v in values]  # ASCII: surrogates escaped
                arr = pa.array(text, type=pa.string())
            arrays[name] = arr
        return pa.table(arrays)

    def to_pandas(self, start: int = 0, stop: int | None = None) -> Any:
        """Rows start..stop as a pandas DataFrame, through :meth:`to_arrow` (needs pandas)."""
        _need("pandas")
        return self.to_arrow(start, stop).to_pandas()

    def to_polars(self, start: int = 0, stop: int | None = None) -> Any:
        """Rows start..stop as a Polars DataFrame, through :meth:`to_arrow` (needs polars)."""
        polars = _need("polars")
        return polars.from_arrow(self.to_arrow(start, stop))

    def close(self) -> None:
        self.file.close()

    def __enter__(self) -> ContainerReader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def rows(self, start: int | None = 0, stop: int | None = None) -> list[Any]:
        """Rows start..stop, as ``rows[start:stop]`` would be."""
        return list(self.iter_rows(start, stop))

    def row(self, i: int) -> Any:
        if not 0 <= i < len(self):
            raise IndexError(f"row {i} is outside 0..{len(self) - 1}")
        return self.rows(i, i + 1)[0]

    def _skeleton(self) -> Any:
        """The skeleton block's value: the document without its rows, or, where it is the
        document block, with the first chunk's."""
        where = self.footer.get("skeleton")
        if where is None:
            raise DecodeError("container footer lacks the document skeleton")
        return decode_block(self._read(*where), max_values=self.max_values)

    def document(self) -> Any:
        """The whole document: the skeleton with the table put back at its path."""
        path = self.footer["path"]
        if not path:
            rows = list(self.iter_rows())
            if path is None and len(rows) != 1:
                raise DecodeError("a container without a table path holds one document")
            return rows if path is not None else rows[0]
        skeleton = self._skeleton()
        first = self._document_rows(skeleton) if self.document_block else []
        rows = [*first, *self.iter_rows(len(first))]
        try:
            holder = skeleton
            for key in path[:-1]:
                holder = holder[key]
            holder[path[-1]] = rows
        except (KeyError, TypeError, IndexError) as exc:
            raise DecodeError(f"the table's path is not in the document skeleton: {exc}") from exc
        return skeleton


def _placed(skeleton: Any, path: list[str] | None, rows: list[Any]) -> dict[str, Any] | None:
    """The document: ``skeleton`` with ``rows`` in the place left for them at ``path``; None
    where it has none (the document block needs ``path`` to be one key, spec §2, and its
    object a table, which has at most MAX_COLUMNS keys)."""
    if not (path and len(path) == 1 and isinstance(skeleton, dict) and len(skeleton) <= MAX_COLUMNS):
        return None
    if skeleton.get(path[0], False) is not None:
        return None
    return {k: rows if k == path[0] else v for k, v in skeleton.items()}


def _exact(a: Any, b: Any) -> bool:
    """Whether ``b`` is ``a`` value for value: the same types (1 is not 1.0, a bool is not an
    int) and, for objects, the same keys in the same order."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return list(a) == list(b) and all(_exact(v, b[k]) for k, v in a.items())
    if isinstance(a, list):
        return len(a) == len(b) and all(map(_exact, a, b))
    return bool(a == b) or (a != a and b != b)  # NaN is NaN


def _need(module: str) -> Any:
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError:
        raise UsageError(f"this needs {module} (pip install {module})") from None


def _read_footer(file: BinaryIO) -> tuple[dict[str, Any], int]:
    file.seek(0, os.SEEK_END)
    size = file.tell()
    file.seek(0)
    head = file.read(8)
    version = next((v for v, h in HEADERS.items() if h == head), None)
    if version is None or size < len(HEADER) + TRAILERS[version]:
        raise DecodeError("not a Zeroc container (.zct): bad magic or version")
    trailer = TRAILERS[version]
    file.seek(size - trailer)
    tail = file.read(trailer)
    if tail[-4:] != MAGIC:
        raise DecodeError("container is truncated: no footer magic at the end")
    length = int.from_bytes(tail[-8:-4], "little")
    offset = size - trailer - length
    if length > MAX_FOOTER or offset < len(HEADER):
        raise DecodeError("container footer length is invalid")
    file.seek(offset)
    data = file.read(length)
    if version == 2 and crc32(data) != int.from_bytes(tail[:4], "little"):
        raise ChecksumMismatch("the container's footer fails its CRC-32")
    try:
        if data[:1] == COMPACT_FOOTER:
            footer = _read_compact_footer(data, version)
        else:
            footer = json.loads(data if data[:1] == b"{" else unzstd(data, MAX_FOOTER))
    except (zstd.ZstdError, ValueError, RecursionError) as exc:
        raise DecodeError(f"corrupt container footer: {exc}") from exc
    path = footer.get("path") if isinstance(footer, dict) else None
    if not (
        isinstance(footer, dict)
        and footer.get("format") == version
        and isinstance(footer.get("chunks"), list)
        and type(footer.get("rows")) is int
        and (path is None or (isinstance(path, list) and all(isinstance(k, str) for k in path)))
        and "path" in footer
    ):
        raise DecodeError("container footer lacks its index")
    checked = version == 2  # each entry ends with its block's CRC-32
    end = len(HEADER)  # chunks follow one another: none overlaps another or the footer
    for entry in footer["chunks"]:
        if not (
            isinstance(entry, list)
            and len(entry) == 3 + checked
            and all(type(x) is int and x >= 0 for x in entry)
            and entry[0] >= end
            and entry[0] + entry[1] <= offset
        ):
            raise DecodeError("container index entry is invalid (out of the file or overlapping)")
        end = entry[0] + entry[1]
    skeleton = footer.get("skeleton")
    if skeleton is not None and not (
        isinstance(skeleton, list)
        and len(skeleton) == 2 + checked
        and all(type(x) is int and x >= 0 for x in skeleton)
        and skeleton[0] >= len(HEADER)
        and skeleton[0] + skeleton[1] <= offset
    ):
        raise DecodeError("container footer's skeleton entry is invalid")
    chunks = footer["chunks"]
    if skeleton is not None and chunks and chunks[0][:2] == skeleton[:2]:  # the document block
        if chunks[0][3:] != skeleton[2:] or not (isinstance(path, list) and len(path) == 1):
            raise DecodeError("container footer's document block is invalid")
    elif skeleton is not None and any(c[0] < sum(skeleton[:2]) and skeleton[0] < c[0] + c[1] for c in chunks):
        raise DecodeError("container footer's skeleton overlaps a chunk")
    return footer, offset


def _compact_footer(footer: dict[str, Any]) -> bytes | None:
    """The footer as bytes (spec §2), or None where its path is not null, [] or one key."""
    path, chunks, skeleton = footer["path"], footer["chunks"], footer["skeleton"]
    kind = 0 if path is None else 1 if path == [] else 2 if len(path) == 1 else None
    if kind is None:
        return None
    key = b""
    if kind == 2:
        try:
            key = path[0].encode()
        except UnicodeEncodeError:  # a lone surrogate: JSON holds it
            return None
    document = bool(skeleton and chunks and chunks[0][:2] == skeleton[:2])
    flags = bool(footer.get("portable")) | (skeleton is not None) << 1 | document << 2 | kind << 3

    def crc(check: int) -> bytes:  # version 2's CRC-32 of a block
        return check.to_bytes(4, "little")

    out = [COMPACT_FOOTER, varint(footer["format"]), varint(flags)]
    if kind == 2:
        out += [varint(len(key)), key]
    out.append(varint(len(chunks)))
    end = len(HEADER)
    for offset, length, rows, *check in chunks:
        out += [varint(offset - end), varint(length), varint(rows), *map(crc, check)]
        end = offset + length
    if skeleton is not None and not document:
        out += [varint(skeleton[0]), varint(skeleton[1]), *map(crc, skeleton[2:])]
    return b"".join(out)


def _read_compact_footer(data: bytes, version: int) -> dict[str, Any]:
    """A compact footer (spec §2) as the JSON footer it stands for, its entries unchecked."""
    at = 1

    def integer() -> int:  # at most 9 bytes: below 2^63
        nonlocal at
        n, at = read_varint(data, at, FOOTER_VARINT_BYTES)
        return n

    def take(n: int) -> bytes:
        nonlocal at
        if at + n > len(data):
            raise DecodeError("compact footer is cut short")
        at += n
        return data[at - n : at]

    def crc() -> list[int]:  # version 2's CRC-32 of a block
        return [int.from_bytes(take(4), "little")] if version == 2 else []

    fmt, flags = integer(), integer()
    kind = flags >> 3
    if kind > 2 or (flags & 4 and not (flags & 2 and kind == 2)):
        raise DecodeError(f"compact footer has unknown flags {flags:#x}")
    path: list[str] | None = None if kind == 0 else []
    if kind == 2:
        try:
            path = [take(integer()).decode()]
        except UnicodeDecodeError:
            raise DecodeError("compact footer's key is not UTF-8") from None
    count = integer()
    if count > len(data):  # each chunk takes 3 bytes at least
        raise DecodeError("compact footer is cut short")
    chunks, end = [], len(HEADER)
    for _ in range(count):
        offset = end + integer()
        length, rows = integer(), integer()
        chunks.append([offset, length, rows, *crc()])
        end = offset + length
    skeleton = None
    if flags & 4:
        if not chunks:
            raise DecodeError("compact footer names a document block but no chunk")
        skeleton = [*chunks[0][:2], *chunks[0][3:]]
    elif flags & 2:
        skeleton = [integer(), integer(), *crc()]
    if at != len(data):
        raise DecodeError(f"{len(data) - at} bytes after the compact footer")
    rows = sum(c[2] for c in chunks)
    footer = {"format": fmt, "path": path, "rows": rows, "chunks": chunks, "skeleton": skeleton}
    if flags & 1:
        footer["portable"] = True
    return footer


# -- documents ----------------------------------------------------------------------------------
def table_path(doc: Any) -> list[str] | None:
    """Where the rows are: [] for a top-level array, [key] for the longest array under a key."""
    if isinstance(doc, list):
        return []
    if isinstance(doc, dict):
        best = max(((len(v), k) for k, v in doc.items() if isinstance(v, list)), default=(0, ""))
        if best[0] >= 2:
            return [best[1]]
    return None


def pack(
    doc: Any, file: BinaryIO, *, chunk_rows: int = CHUNK_ROWS, checksum: bool = True, portable: bool = False
) -> int:
    """Write an in-memory document as a container (checksummed, version 2, unless told not;
    ``portable``: no pcodec, no brotli, for browsers); the rows written."""
    path = table_path(doc)
    w = ContainerWriter(file, path=path, chunk_rows=chunk_rows, checksum=checksum, portable=portable)
    if path is None:
        w.write(doc)
    elif not path:
        w.write_many(doc)
    else:
        w.skeleton = {k: (None if k == path[0] else v) for k, v in doc.items()}
        w.write_many(doc[path[0]])
    w.close()
    return int(w.footer["rows"])


def pack_file(
    source: IO[bytes],
    file: BinaryIO,
    *,
    chunk_rows: int = CHUNK_ROWS,
    progress: Progress | None = None,
    checksum: bool = True,
    portable: bool = False,
) -> int:
    """Stream a JSON file of any size into a container in bounded memory: one pass over
    ``source`` (which must be seekable) finds the table, a second moves its rows chunk by chunk
    while the rest of the document is built as the skeleton. Returns the number of rows."""
    import ijson

    try:
        return _pack_file(source, file, chunk_rows, progress, checksum, portable)
    except ijson.JSONError as exc:
        raise DecodeError("input is not valid JSON: " + " ".join(str(exc).split())) from None


def _pack_file(
    source: IO[bytes],
    file: BinaryIO,
    chunk_rows: int,
    progress: Progress | None,
    checksum: bool,
    portable: bool,
) -> int:
    import ijson

    key = _find_table_key(source)
    source.seek(0)
    options: dict[str, Any] = {"chunk_rows": chunk_rows, "checksum": checksum, "portable": portable}
    if key is None:
        w = ContainerWriter(file, **options)
        w.write(next(ijson.items(source, "", use_float=True)))
        w.close()
        return 1
    w = ContainerWriter(file, path=[] if key == "" else [key], **options)
    skeleton = ijson.ObjectBuilder()
    table_depth = 1 if key == "" else 2  # depth of the table array's items' container
    depth, current, in_table = 0, None, False
    item: Any = None
    item_depth = count = 0
    for _prefix, event, value in ijson.parse(source, use_float=True):
        if in_table:
            if item is not None:  # inside one row
                item.event(event, value)
                if event in ("start_map", "start_array"):
                    item_depth += 1
                elif event in ("end_map", "end_array"):
                    item_depth -= 1
                if item_depth == 0:
                    w.write(item.value)
                    item, count = None, count + 1
                    if progress is not None and count % chunk_rows == 0:
                        progress(count)
            elif event in ("start_map", "start_array"):
                item, item_depth = ijson.ObjectBuilder(), 1
                item.event(event, value)
            elif event == "end_array":  # the table ends
                in_table, depth = False, depth - 1
                if key != "":
                    skeleton.event("null", None)
            else:  # a scalar row
                w.write(value)
                count += 1
            continue
        if event in ("start_map", "start_array"):
            depth += 1
            if event == "start_array" and depth == table_depth and (key == "" or current == key):
                in_table = True
                continue
        elif event in ("end_map", "end_array"):
            depth -= 1
        elif event == "map_key" and depth == 1:
            current = value
        skeleton.event(event, value)
    if key != "":
        w.skeleton = skeleton.value
    w.close()
    return count


def pack_messages(
    messages: Iterable[Any], file: BinaryIO, *, chunk_rows: int = CHUNK_ROWS, checksum: bool = True
) -> int:
    """Repeated protobuf messages as a table: each message becomes its JSON value (the schema's
    generated reader, no JSON text in between), the schema's name goes into the skeleton, and
    :meth:`ContainerReader.messages` gives messages back."""
    from zeroc._schema import Schema

    w = ContainerWriter(file, path=["rows"], chunk_rows=chunk_rows, checksum=checksum)
    schema: Schema | None = None
    n = 0
    for message in messages:
        if schema is None:
            schema = Schema(type(message))
        w.write(schema.to_dict(message))
        n += 1
    w.skeleton = {"schema": schema.full_name if schema else None, "rows": None}
    w.close()
    return n


def _find_table_key(source: IO[bytes]) -> str | None:
    """'' for a top-level array, the root key with the longest array, or None."""
    import ijson

    counts: dict[str, int] = {}
    depth = 0
    key = None
    for _prefix, event, value in ijson.parse(source, use_float=True):
        if event in ("start_map", "start_array"):
            if depth == 0 and event == "start_array":
                return ""
            if depth == 2 and key is not None and key in counts:
                counts[key] += 1
            depth += 1
            if depth == 2 and event == "start_array" and key is not None:
                counts[key] = 0
        elif event in ("end_map", "end_array"):
            depth -= 1
        elif event == "map_key" and depth == 1:
            key = value
        elif depth == 2 and key in counts:
            counts[key] += 1  # a scalar item
    best = max(counts.items(), key=lambda kv: kv[1], default=None)
    return best[0] if best is not None and best[1] >= 2 else None


def read_document(path: str | os.PathLike[str]) -> Any:
    with open(path, "rb") as f:
        return ContainerReader(f).document()


def open_container(path: str | os.PathLike[str], **limits: int) -> ContainerReader:
    """Open a ``.zct`` for reading; ``max_chunk_bytes`` and ``max_values`` (values one chunk may
    build) bound what a chunk may cost."""
    return ContainerReader(open(path, "rb"), **limits)


def append(path: str | os.PathLike[str], rows: Iterable[Any], *, chunk_rows: int = CHUNK_ROWS) -> int:
    """Append rows to a container: the old footer is cut off and rewritten after the new chunks."""
    with open(path, "r+b") as f:
        footer, offset = _read_footer(f)
        if footer["path"] is None:
            raise UsageError("this container holds one document, not a table: nothing to append to")
        f.seek(offset)
        f.truncate()
        w = ContainerWriter(f, chunk_rows=chunk_rows, _footer=footer)
        n = 0
        for row in rows:
            w.write(row)
            n += 1
        w.close()
    return n


def unpack(reader: ContainerReader, out: IO[bytes]) -> None:
    """Write the document as compact JSON, streaming the rows chunk by chunk."""
    from zeroc import _json

    path = reader.footer["path"]
    if path is None:
        out.write(_json.dumps(reader.document()))
        return

    def rows(first: list[Any]) -> None:
        out.write(b"[")
        for i, row in enumerate(itertools.chain(first, reader.iter_rows(len(first)))):
            if i:
                out.write(b",")
            out.write(_json.dumps(row))
        out.write(b"]")

    if not path:
        rows([])
        return
    skeleton = reader._skeleton()
    first = reader._document_rows(skeleton) if reader.document_block else []
    if not isinstance(skeleton, dict) or path[0] not in skeleton:
        raise DecodeError("container skeleton does not hold the table's key")
    out.write(b"{")
    for i, (k, v) in enumerate(skeleton.items()):
        out.write((b"," if i else b"") + _json.dumps(k) + b":")
        if k == path[0]:
            rows(first)
        else:
            out.write(_json.dumps(v))
    out.write(b"}")
