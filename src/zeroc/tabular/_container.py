"""The seekable container (``.zct``, spec/TABULAR_FORMAT.md): rows in independently compressed
chunks with an index in a footer, so readers stream, stop early, read any row range by
decompressing only its chunks, and writers append without rewriting the file."""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterable, Iterator
from typing import IO, Any, BinaryIO

import zstandard as zstd

from zeroc._errors import DecodeError, UsageError
from zeroc.tabular._columns import unzstd
from zeroc.tabular._table import decode_block, encode_block

MAGIC = b"ZRCT"
VERSION = 1
HEADER = MAGIC + bytes([VERSION, 0, 0, 0])
TRAILER = 8  # uint32 footer length + magic
CHUNK_ROWS = 65_536  # ~1 MB of JSON per chunk for typical rows: seek granularity vs. ratio
MAX_FOOTER = 64 * 1024 * 1024

Progress = Callable[[int], None]


class ContainerWriter:
    """Write rows chunk by chunk; ``close()`` writes the skeleton (if any) and the footer.

    Holds at most one chunk of rows in memory. ``path`` is where the rows sit in the document
    (``None``: the container holds one whole document as its only row); ``skeleton`` — the
    document without its rows — may be set any time before ``close()``.
    """

    def __init__(
        self,
        file: BinaryIO,
        *,
        path: list[str] | None = None,
        chunk_rows: int = CHUNK_ROWS,
        _footer: dict[str, Any] | None = None,
    ) -> None:
        if chunk_rows < 1:
            raise UsageError("chunk_rows must be at least 1")
        self.file = file
        self.chunk_rows = chunk_rows
        self.buffer: list[Any] = []
        self.skeleton: Any = None
        if _footer is None:
            file.write(HEADER)
            _footer = {"format": VERSION, "path": path, "rows": 0, "chunks": [], "skeleton": None}
        self.footer = _footer

    def _put(self, block: bytes) -> list[int]:
        offset = self.file.tell()
        self.file.write(block)
        return [offset, len(block)]

    def write(self, row: Any) -> None:
        self.buffer.append(row)
        if len(self.buffer) >= self.chunk_rows:
            self.flush()

    def write_many(self, rows: Iterable[Any]) -> None:
        for row in rows:
            self.write(row)

    def flush(self) -> None:
        if self.buffer:
            offset, length = self._put(encode_block(self.buffer))
            self.footer["chunks"].append([offset, length, len(self.buffer)])
            self.footer["rows"] += len(self.buffer)
            self.buffer = []

    def close(self) -> None:
        self.flush()
        if self.footer["path"] and self.skeleton is not None:
            self.footer["skeleton"] = self._put(encode_block(self.skeleton))
        raw = json.dumps(self.footer, separators=(",", ":")).encode()
        packed = zstd.ZstdCompressor(level=19).compress(raw)
        data = packed if len(packed) < len(raw) else raw  # a raw footer starts with "{"
        self.file.write(data + len(data).to_bytes(4, "little") + MAGIC)
        self.file.flush()


class ContainerReader:
    """Read a container: ``len(reader)`` rows, ``reader.rows(a, b)``, ``iter(reader)``,
    ``reader.document()``. Only the chunks a request covers are read and decompressed."""

    def __init__(self, file: BinaryIO, *, max_chunk_bytes: int = 1 << 28) -> None:
        self.file = file
        self.max_chunk_bytes = max_chunk_bytes
        self.footer, self.footer_offset = _read_footer(file)
        starts, total = [], 0
        for entry in self.footer["chunks"]:
            starts.append(total)
            total += entry[2]
        self.starts = starts
        if total != self.footer["rows"]:
            raise DecodeError("container footer's row counts disagree")

    def __len__(self) -> int:
        return int(self.footer["rows"])

    def _chunk(self, i: int) -> list[Any]:
        offset, length, n = self.footer["chunks"][i]
        rows = decode_block(self._read(offset, length))
        if not isinstance(rows, list) or len(rows) != n:
            raise DecodeError(f"chunk {i} does not hold its {n} rows")
        return rows

    def _read(self, offset: int, length: int) -> bytes:
        if length > self.max_chunk_bytes:
            raise DecodeError(f"a {length}-byte chunk exceeds the limit")
        self.file.seek(offset)
        data = self.file.read(length)
        if len(data) != length:
            raise DecodeError("container is truncated inside a chunk")
        return data

    def iter_rows(self, start: int = 0, stop: int | None = None) -> Iterator[Any]:
        """Rows start..stop, decompressing one chunk at a time (stop early at no extra cost)."""
        stop = len(self) if stop is None else min(stop, len(self))
        start = max(start, 0)
        for i, first in enumerate(self.starts):
            n = self.footer["chunks"][i][2]
            if first + n <= start:
                continue
            if first >= stop:
                return
            rows = self._chunk(i)
            yield from rows[max(start - first, 0) : stop - first]

    __iter__ = iter_rows

    def columns(self, start: int = 0, stop: int | None = None) -> dict[str, Any]:
        """Rows start..stop as columns (numpy arrays where the values are numbers or booleans),
        decoding only the chunks they live in and never building a dict per row."""
        import numpy as np

        from zeroc.tabular._table import decode_columns

        stop = len(self) if stop is None else min(stop, len(self))
        pieces: list[dict[str, Any]] = []
        for i, first in enumerate(self.starts):
            offset, length, n = self.footer["chunks"][i]
            if first + n <= start or first >= stop:
                continue
            cols = decode_columns(self._read(offset, length))
            lo, hi = max(start - first, 0), min(stop - first, n)
            pieces.append({k: v[lo:hi] for k, v in cols.items()})
        names = list(dict.fromkeys(k for p in pieces for k in p))
        out: dict[str, Any] = {}
        for k in names:
            parts = [p.get(k) for p in pieces]
            if all(isinstance(x, np.ndarray) for x in parts):
                out[k] = np.concatenate(parts) if len(parts) > 1 else parts[0]  # type: ignore[arg-type]
            else:
                out[k] = [v for x in parts for v in (x.tolist() if isinstance(x, np.ndarray) else x or [])]
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
        """Rows start..stop as a pyarrow Table."""
        import pyarrow as pa

        return pa.table(self.columns(start, stop))

    def close(self) -> None:
        self.file.close()

    def __enter__(self) -> ContainerReader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def rows(self, start: int, stop: int) -> list[Any]:
        return list(self.iter_rows(start, stop))

    def row(self, i: int) -> Any:
        if not 0 <= i < len(self):
            raise IndexError(f"row {i} is outside 0..{len(self) - 1}")
        return self.rows(i, i + 1)[0]

    def document(self) -> Any:
        """The whole document: the skeleton with the table put back at its path."""
        rows = list(self.iter_rows())
        path = self.footer["path"]
        if path is None:
            if len(rows) != 1:
                raise DecodeError("a container without a table path holds one document")
            return rows[0]
        if not path:
            return rows
        where = self.footer.get("skeleton")
        if not (isinstance(where, list) and len(where) == 2 and all(isinstance(x, int) for x in where)):
            raise DecodeError("container footer lacks the document skeleton")
        skeleton = decode_block(self._read(*where))
        holder = skeleton
        for key in path[:-1]:
            holder = holder[key]
        holder[path[-1]] = rows
        return skeleton


def _read_footer(file: BinaryIO) -> tuple[dict[str, Any], int]:
    file.seek(0, os.SEEK_END)
    size = file.tell()
    file.seek(0)
    if size < len(HEADER) + TRAILER or file.read(8) != HEADER:
        raise DecodeError("not a Zeroc container (.zct): bad magic or version")
    file.seek(size - TRAILER)
    tail = file.read(TRAILER)
    if tail[4:] != MAGIC:
        raise DecodeError("container is truncated: no footer magic at the end")
    length = int.from_bytes(tail[:4], "little")
    offset = size - TRAILER - length
    if length > MAX_FOOTER or offset < len(HEADER):
        raise DecodeError("container footer length is invalid")
    file.seek(offset)
    try:
        data = file.read(length)
        footer = json.loads(data if data[:1] == b"{" else unzstd(data, MAX_FOOTER))
    except (zstd.ZstdError, ValueError) as exc:
        raise DecodeError(f"corrupt container footer: {exc}") from exc
    if not (
        isinstance(footer, dict)
        and footer.get("format") == VERSION
        and isinstance(footer.get("chunks"), list)
        and isinstance(footer.get("rows"), int)
    ):
        raise DecodeError("container footer lacks its index")
    for entry in footer["chunks"]:
        if not (
            isinstance(entry, list)
            and len(entry) == 3
            and all(isinstance(x, int) and x >= 0 for x in entry)
            and entry[0] + entry[1] <= offset
        ):
            raise DecodeError("container index entry is invalid")
    return footer, offset


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


def pack(doc: Any, file: BinaryIO, *, chunk_rows: int = CHUNK_ROWS) -> None:
    """Write an in-memory document as a container."""
    path = table_path(doc)
    w = ContainerWriter(file, path=path, chunk_rows=chunk_rows)
    if path is None:
        w.write(doc)
    elif not path:
        w.write_many(doc)
    else:
        w.skeleton = {k: (None if k == path[0] else v) for k, v in doc.items()}
        w.write_many(doc[path[0]])
    w.close()


def pack_file(
    source: IO[bytes], file: BinaryIO, *, chunk_rows: int = CHUNK_ROWS, progress: Progress | None = None
) -> int:
    """Stream a JSON file of any size into a container in bounded memory: one pass over
    ``source`` (which must be seekable) finds the table, a second moves its rows chunk by chunk
    while the rest of the document is built as the skeleton. Returns the number of rows."""
    import ijson

    try:
        return _pack_file(source, file, chunk_rows, progress)
    except ijson.JSONError as exc:
        raise DecodeError("input is not valid JSON: " + " ".join(str(exc).split())) from None


def _pack_file(source: IO[bytes], file: BinaryIO, chunk_rows: int, progress: Progress | None) -> int:
    import ijson

    key = _find_table_key(source)
    source.seek(0)
    if key is None:
        w = ContainerWriter(file, chunk_rows=chunk_rows)
        w.write(next(ijson.items(source, "", use_float=True)))
        w.close()
        return 1
    w = ContainerWriter(file, path=[] if key == "" else [key], chunk_rows=chunk_rows)
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


def pack_messages(messages: Iterable[Any], file: BinaryIO, *, chunk_rows: int = CHUNK_ROWS) -> int:
    """Repeated protobuf messages as a table: each message becomes its JSON value (the schema's
    generated reader, no JSON text in between), the schema's name goes into the skeleton, and
    :meth:`ContainerReader.messages` gives messages back."""
    from zeroc._schema import Schema

    w = ContainerWriter(file, path=["rows"], chunk_rows=chunk_rows)
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


def open_container(path: str | os.PathLike[str]) -> ContainerReader:
    return ContainerReader(open(path, "rb"))


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

    def rows() -> None:
        out.write(b"[")
        for i, row in enumerate(reader.iter_rows()):
            if i:
                out.write(b",")
            out.write(_json.dumps(row))
        out.write(b"]")

    if not path:
        rows()
        return
    where = reader.footer.get("skeleton")
    if not (isinstance(where, list) and len(where) == 2):
        raise DecodeError("container footer lacks the document skeleton")
    skeleton = decode_block(reader._read(*where))
    if not isinstance(skeleton, dict) or path[0] not in skeleton:
        raise DecodeError("container skeleton does not hold the table's key")
    out.write(b"{")
    for i, (k, v) in enumerate(skeleton.items()):
        out.write((b"," if i else b"") + _json.dumps(k) + b":")
        if k == path[0]:
            rows()
        else:
            out.write(_json.dumps(v))
    out.write(b"}")
