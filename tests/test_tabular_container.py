"""The .zct container: CLI round trips on the real corpora, range reads that touch only their
chunks, appends, streaming in bounded memory, and hostile files."""

import io
import json
import random
import subprocess
import sys
import tempfile
import tracemalloc
from pathlib import Path
from typing import Any

import orjson
import pytest
import zstandard
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.conftest import DATA, damaged
from tests.strategies import json_values, keyed
from tests.test_json import same
from zeroc import DecodeError, LimitExceeded, ZerocError
from zeroc.tabular import ContainerReader, ContainerWriter, append, pack, pack_file, unpack

ZEROC = str(Path(sys.executable).with_name("zeroc"))
CORPORA = ["apache_builds.json", "github_events.json", "twitter.json", "canada.json"]


def run(*args: str) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run([ZEROC, *args], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    return proc


@pytest.mark.parametrize("name", CORPORA)
def test_cli_pack_unpack_round_trips_and_beats_json_zstd19(name: str, tmp_path: Path) -> None:
    src = DATA / "json" / name
    if not src.is_file():
        pytest.fail(f"corpus {src} is missing")
    run("pack", str(src), "-o", str(tmp_path / "c.zct"))
    run("unpack", str(tmp_path / "c.zct"), "-o", str(tmp_path / "back.json"))
    doc = json.loads(src.read_bytes())
    assert json.loads((tmp_path / "back.json").read_bytes()) == doc
    ours = (tmp_path / "c.zct").stat().st_size
    theirs = len(zstandard.ZstdCompressor(level=19).compress(orjson.dumps(doc)))
    print(f"{name}: container {ours} B vs JSON + zstd-19 {theirs} B ({ours / theirs:.3f})")
    assert ours < theirs


class CountingFile(io.BytesIO):
    def __init__(self, data: bytes) -> None:
        super().__init__(data)
        self.bytes_read = 0

    def read(self, size: int | None = -1) -> bytes:
        out = super().read(size)
        self.bytes_read += len(out)
        return out


def test_range_read_of_a_million_rows_reads_only_its_chunks() -> None:
    def row(i: int) -> dict[str, Any]:
        r = random.Random(i)  # every row reproducible on its own, values random
        return {"i": i, "v": round(r.uniform(0, 100), 2), "s": f"row{i}", "ok": r.random() < 0.5}

    out = io.BytesIO()
    w = ContainerWriter(out, path=[], chunk_rows=50_000)
    w.write_many(row(i) for i in range(1_000_000))
    w.close()
    data = out.getvalue()
    f = CountingFile(data)
    reader = ContainerReader(f)
    after_footer = f.bytes_read
    rows = reader.rows(612_340, 612_360)
    assert rows == [row(i) for i in range(612_340, 612_360)]
    chunk = reader.footer["chunks"][612_340 // 50_000]
    assert f.bytes_read - after_footer == chunk[1]  # exactly one chunk, of 20
    print(f"1,000,000 rows in {len(data):,} B; reading 20 rows read {f.bytes_read:,} B")
    assert f.bytes_read < len(data) / 15
    assert reader.row(999_999) == row(999_999) and len(reader) == 1_000_000
    cols = reader.columns(10, 20)
    assert cols["i"].tolist() == list(range(10, 20)) and cols["s"][0] == "row10"


def test_early_stop_decodes_one_chunk() -> None:
    out = io.BytesIO()
    pack([{"n": i} for i in range(10_000)], out, chunk_rows=1_000)
    f = CountingFile(out.getvalue())
    reader = ContainerReader(f)
    before = f.bytes_read
    first = next(iter(reader))
    assert first == {"n": 0} and f.bytes_read - before == reader.footer["chunks"][0][1]


def test_append_keeps_earlier_rows_and_the_document(tmp_path: Path) -> None:
    doc = {"metadata": {"source": "test"}, "data": [{"k": i} for i in range(1000)], "tail": True}
    path = tmp_path / "t.zct"
    with open(path, "wb") as f:
        pack(doc, f, chunk_rows=300)
    size = path.stat().st_size
    assert append(path, [{"k": i} for i in range(1000, 1500)], chunk_rows=300) == 500
    with open(path, "rb") as f:
        reader = ContainerReader(f)
        assert len(reader) == 1500 and reader.row(1200) == {"k": 1200}
        chunks = reader.footer["chunks"]
        assert chunks[0][0] == 8 and all(c[0] < size for c in chunks[:4])  # old chunks stayed put
        back = reader.document()
    assert back == {**doc, "data": [{"k": i} for i in range(1500)]}
    run("append", str(path), str(_ndjson(tmp_path, [{"k": -1}])))
    assert json.loads(run("rows", str(path), "--range", "1500:").stdout) == {"k": -1}


def _ndjson(tmp_path: Path, rows: list[Any]) -> Path:
    p = tmp_path / "more.ndjson"
    p.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return p


def test_streaming_pack_and_unpack_in_bounded_memory(tmp_path: Path) -> None:
    rng = random.Random(3)
    src = tmp_path / "big.json"
    with open(src, "wb") as f:  # ~36 MB of JSON, written without holding it
        f.write(b'{"metadata":{"rows":300000},"data":[')
        for i in range(300_000):
            row = {
                "id": i,
                "name": f"sensor{i % 500}",
                "t": 1_700_000_000_000 + i * 1000,
                "value": round(rng.uniform(-50, 50), 2),
                "note": "ok" if i % 9 else None,
            }
            f.write((b"," if i else b"") + orjson.dumps(row))
        f.write(b'],"tail":"end"}')
    tracemalloc.start()
    with open(src, "rb") as s, open(tmp_path / "big.zct", "wb") as out:
        assert pack_file(s, out, chunk_rows=20_000) == 300_000
    with open(tmp_path / "big.zct", "rb") as f, open(tmp_path / "back.json", "wb") as out:
        unpack(ContainerReader(f), out)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    print(f"{src.stat().st_size:,} B of JSON -> {(tmp_path / 'big.zct').stat().st_size:,} B; peak {peak:,} B")
    assert peak < 40 * 1024 * 1024  # the 300,000 rows as Python objects take several times that
    assert (tmp_path / "back.json").read_bytes() == src.read_bytes()


def test_hostile_containers_raise_only_zeroc_errors() -> None:
    out = io.BytesIO()
    pack({"meta": 1, "rows": [{"a": i, "b": f"x{i}"} for i in range(3000)]}, out, chunk_rows=500)
    data = out.getvalue()
    rng = random.Random(9)
    for _ in range(1500):
        try:
            reader = ContainerReader(io.BytesIO(damaged(rng, data, changes=3, cut=0.2)))
            reader.rows(490, 510)  # parts of two chunks: only those rows are built
            reader.document()
        except ZerocError:
            pass
    with pytest.raises(DecodeError, match="magic"):
        ContainerReader(io.BytesIO(b"not a container at all"))


def test_cli_errors_are_one_line(tmp_path: Path) -> None:
    (tmp_path / "bad.json").write_text('{"x": [1, 2')
    for args in (
        ["pack", str(tmp_path / "bad.json"), "-o", str(tmp_path / "o.zct")],
        ["rows", str(tmp_path / "bad.json")],
        ["unpack", str(tmp_path / "bad.json"), "-o", str(tmp_path / "x.json")],
    ):
        proc = subprocess.run([ZEROC, *args], capture_output=True, text=True, timeout=60)
        assert proc.returncode == 1 and proc.stderr.count("\n") == 1, proc.stderr
        assert proc.stderr.startswith("zeroc: error:")


def test_repeated_protobuf_messages() -> None:
    from zeroc.tabular import pack_messages
    from zeroc.workloads import Order, generate

    orders = [Order(**m) for m in generate("order", 3000, seed=2)]
    out = io.BytesIO()
    assert pack_messages(orders, out, chunk_rows=1000) == 3000
    reader = ContainerReader(io.BytesIO(out.getvalue()))
    assert list(reader.messages(Order, 1500, 1510)) == orders[1500:1510]
    assert reader.row(7)["order_id"] == orders[7].order_id
    serialized = sum(len(o.SerializeToString()) for o in orders)
    print(f"3,000 Orders: {len(out.getvalue()):,} B packed vs {serialized:,} B of protobuf")
    assert len(out.getvalue()) < serialized / 2


def test_forged_footers_are_refused() -> None:
    """Issue 14: the reader trusted its footer: overlapping chunks came back twice, a footer
    without ``path`` raised KeyError, a deep one RecursionError."""
    out = io.BytesIO()  # version 1: no CRC, so that only the footer's structure stands guard
    pack({"meta": 1, "rows": [{"a": i} for i in range(40)]}, out, chunk_rows=10, checksum=False)
    data = out.getvalue()
    length = int.from_bytes(data[-8:-4], "little")
    body = data[: -8 - length]
    footer = ContainerReader(io.BytesIO(data)).footer  # written as JSON below, which readers read too
    assert ContainerReader(io.BytesIO(data)).document()["rows"][39] == {"a": 39}

    def with_footer(f: Any) -> bytes:
        text = f if isinstance(f, bytes) else json.dumps(f).encode()
        return body + text + len(text).to_bytes(4, "little") + b"ZRCT"

    overlapping = dict(footer, chunks=[footer["chunks"][0]] * 4)
    pathless = {k: v for k, v in footer.items() if k != "path"}
    bools = dict(footer, chunks=[[c[0], c[1], True] for c in footer["chunks"]])
    outside = dict(footer, skeleton=[len(body), 10])
    bad_path = dict(footer, path=[["rows"]])
    deep = b'{"format": 1, "x": ' + b"[" * 100_000 + b"]" * 100_000 + b"}"
    for forged in (overlapping, pathless, bools, outside, bad_path, deep):
        with pytest.raises(DecodeError):
            ContainerReader(io.BytesIO(with_footer(forged))).document()
    # A skeleton that does not hold the table's path.
    wrong = dict(footer, path=["elsewhere", "deeper"])
    with pytest.raises(DecodeError, match="path"):
        ContainerReader(io.BytesIO(with_footer(wrong))).document()


def test_a_chunk_builds_at_most_max_values() -> None:
    out = io.BytesIO()
    pack([{"a": i, "b": [i, i]} for i in range(1000)], out, chunk_rows=1000)
    reader = ContainerReader(io.BytesIO(out.getvalue()), max_values=2000)
    with pytest.raises(LimitExceeded, match="max_values"):
        reader.rows(0, 1)
    assert ContainerReader(io.BytesIO(out.getvalue()), max_values=10_000).rows(999, 1000) == [
        {"a": 999, "b": [999, 999]}
    ]


def test_wide_rows_make_smaller_chunks_that_the_default_reader_takes() -> None:
    """A chunk ends at CHUNK_VALUES values as well as at chunk_rows rows, so that no container
    the writer makes is refused by a reader's default max_values."""
    from zeroc.tabular._container import CHUNK_VALUES

    row = {f"k{j}": [j, {"x": j}] for j in range(100)}  # 401 values a row
    rows = 2 * CHUNK_VALUES // 401 + 10
    out = io.BytesIO()
    w = ContainerWriter(out, path=[])
    w.write_many(row for _ in range(rows))
    w.close()
    reader = ContainerReader(io.BytesIO(out.getvalue()))
    sizes = [c[2] for c in reader.footer["chunks"]]
    assert len(sizes) == 3 and max(sizes) * 401 <= CHUNK_VALUES + 401
    assert reader.rows(rows - 1, rows) == [row]


def test_cli_rows_take_python_slices_and_inspect_reads_containers(tmp_path: Path) -> None:
    """Issue 14: ``--range=-2:`` printed every row and ``-5:-2`` none, though the help says a
    Python slice; ``inspect`` called a .zct an unsupported frame and an empty file an empty frame."""
    (tmp_path / "t.json").write_text(json.dumps([{"i": i} for i in range(10)]))
    subprocess.run([ZEROC, "pack", str(tmp_path / "t.json"), "-o", str(tmp_path / "t.zct")], check=True)
    rows = list(range(10))
    spans = (("-2:", rows[-2:]), ("-5:-2", rows[-5:-2]), (":3", rows[:3]), ("-1", [9]), ("4", [4]))
    for span, expected in spans:
        out = subprocess.run(
            [ZEROC, "rows", str(tmp_path / "t.zct"), f"--range={span}"], capture_output=True, check=True
        ).stdout
        assert [json.loads(line)["i"] for line in out.splitlines()] == expected, span
    with ContainerReader(open(tmp_path / "t.zct", "rb")) as reader:
        assert [r["i"] for r in reader.rows(-3)] == rows[-3:]
    inspect = [ZEROC, "inspect", "--json", str(tmp_path / "t.zct")]
    shown = json.loads(subprocess.run(inspect, capture_output=True, check=True).stdout)
    assert {k: shown[k] for k in ("kind", "rows", "chunks", "path", "version", "portable")} == {
        "kind": "table container",
        "rows": 10,
        "chunks": 1,
        "path": [],
        "version": 2,
        "portable": False,
    }
    # where the bytes go: header, one block (its payload size and text), footer, trailer
    (block,) = shown["blocks"]
    size = (tmp_path / "t.zct").stat().st_size
    assert shown["bytes"] == 8 + block["bytes"] + shown["footer_bytes"] + 12 == size
    assert block["bytes"] == 4 + block["payload_bytes"] + block["text_bytes"] and block["rows"] == 10
    # the rows' array: its length a constant, its items' one column a series 0..9; no text
    assert block["encodings"] == {"const": 1, "series": 1} and block["pool_bytes"] == 0
    shown_text = subprocess.run(inspect[:2] + inspect[3:], capture_output=True, text=True, check=True).stdout
    assert "block at 8 (10 rows)" in shown_text and "encodings: const 1, series 1" in shown_text
    (tmp_path / "empty.zcd").write_bytes(b"")
    empty = subprocess.run([ZEROC, "inspect", str(tmp_path / "empty.zcd")], capture_output=True, text=True)
    assert empty.returncode == 1 and "the file is empty" in empty.stderr and empty.stderr.count("\n") == 1
    # A reader that leaves early (`| head`) ends the command quietly, as it ends cat: no error line.
    (tmp_path / "long.json").write_text(json.dumps([{"i": i, "pad": "x" * 50} for i in range(100_000)]))
    subprocess.run([ZEROC, "pack", str(tmp_path / "long.json"), "-o", str(tmp_path / "long.zct")], check=True)
    piped = subprocess.run(
        f"{ZEROC} rows {tmp_path / 'long.zct'} | head -c 100 >/dev/null; echo ${{PIPESTATUS[0]}}",
        shell=True,
        executable="/bin/bash",
        capture_output=True,
        text=True,
    )
    assert piped.stderr == "" and piped.stdout.strip() == "141"


def test_to_arrow_takes_every_container_pack_writes() -> None:
    """Issue 14: to_arrow() raised pyarrow's errors on valid containers (a column mixing lists
    and objects; lone surrogates). Such columns now come as JSON text."""
    rows = [
        {"n": 1, "mixed": [1, 2], "s": "ok", "big": 2**70},
        {"n": 2, "mixed": {"a": 1}, "s": "\ud800 lone", "big": 1},
        {"n": 3, "mixed": None, "s": "x", "big": None},
    ]
    out = io.BytesIO()
    pack(rows, out)
    table = ContainerReader(io.BytesIO(out.getvalue())).to_arrow()
    assert table.column("n").to_pylist() == [1, 2, 3]

    def back(name: str) -> list[Any]:
        return [None if v is None else json.loads(v) for v in table.column(name).to_pylist()]

    assert back("mixed") == [[1, 2], {"a": 1}, None]
    assert back("s")[1] == "\ud800 lone" and back("big") == [2**70, 1, None]


@pytest.mark.parametrize("name", [*CORPORA, "instruments.json", "aws"])
def test_to_arrow_pandas_and_polars_lose_nothing(name: str) -> None:
    """Every column of every real document (and of irregular AWS API shapes with maps) comes
    out of to_arrow() exactly, in its own Arrow type or as JSON text (issue 16); pandas and
    Polars get the same table."""
    from zeroc.bench._tabular import aws_shapes
    from zeroc.tabular._container import _exact

    doc = aws_shapes(1500) if name == "aws" else json.loads((DATA / "json" / name).read_bytes())
    out = io.BytesIO()
    pack(doc, out, chunk_rows=500)
    reader = ContainerReader(io.BytesIO(out.getvalue()))
    columns = reader.columns()
    table = reader.to_arrow()
    assert table.column_names == list(columns) and table.num_rows == len(reader)
    texts = 0
    for name_, values in columns.items():
        got = table.column(name_).to_pylist()
        want = values.tolist() if hasattr(values, "tolist") else values
        if not _exact(got, want):
            texts += 1
            assert _exact([None if v is None else json.loads(v) for v in got], want), name_
    if name in ("aws", "twitter.json"):
        assert texts  # keys that vary, ints beside floats: the columns Arrow cannot hold exactly
    frame = reader.to_pandas()
    assert list(frame.columns) == table.column_names and len(frame) == table.num_rows
    polars_frame = reader.to_polars()
    assert polars_frame.columns == table.column_names and polars_frame.height == table.num_rows


@pytest.mark.parametrize("chunk_rows", [5, 100])
def test_no_single_bit_flip_of_a_checksummed_container_decodes(chunk_rows: int) -> None:
    """Issue 14: single-bit flips of a .zct written with the defaults (version 2: CRC-32 of every
    chunk, the skeleton and the footer) all raise Zeroc's errors; none reads as other data; in
    three chunks and a skeleton, and in the document block (one chunk: spec §2). Version 1
    (``checksum=False``) has no such guard, and some flips slip through."""
    doc = {"meta": {"n": 1}, "rows": [{"a": i, "s": f"x{i}", "f": i / 4} for i in range(12)]}

    def slipped(checksum: bool) -> tuple[int, int]:
        out = io.BytesIO()
        pack(doc, out, chunk_rows=chunk_rows, checksum=checksum)
        data = out.getvalue()
        assert data[4] == (2 if checksum else 1)
        assert ContainerReader(io.BytesIO(data)).document_block == (chunk_rows > len(doc["rows"]))
        assert ContainerReader(io.BytesIO(data)).document() == doc
        count = 0
        for i in range(len(data) * 8):
            flipped = bytearray(data)
            flipped[i // 8] ^= 1 << (i % 8)
            try:
                count += ContainerReader(io.BytesIO(bytes(flipped))).document() != doc
            except ZerocError:
                pass
        return count, len(data) * 8

    count, flips = slipped(checksum=True)
    print(f"{flips} single-bit flips of a {flips // 8}-byte checksummed container: {count} slipped")
    assert count == 0
    assert slipped(checksum=False)[0] > 0


def test_columns_of_chunks_with_other_keys_are_filled_with_nulls() -> None:
    """Found by the fuzz harness's long run: chunks whose rows have other keys gave columns of
    different lengths, which to_arrow() refused with pyarrow's error."""
    rows = [{"a": i, "b": i} for i in range(8)] + [{"a": i, "c": str(i)} for i in range(8, 12)]
    out = io.BytesIO()
    pack(rows, out, chunk_rows=8)
    reader = ContainerReader(io.BytesIO(out.getvalue()))
    cols = reader.columns()
    assert {k: len(v) for k, v in cols.items()} == {"a": 12, "b": 12, "c": 12}
    assert list(cols["b"][:8]) == list(range(8)) and list(cols["b"][8:]) == [None] * 4
    table = reader.to_arrow()
    assert table.num_rows == 12 and table.column("c").to_pylist() == [None] * 8 + ["8", "9", "10", "11"]


def test_a_block_of_two_to_the_26_empty_arrays_is_refused_before_it_is_built() -> None:
    """The hostile-inputs file's ".zct with 2^26 empty arrays" (213 B, 187 s in rows(0, 10)):
    its block declares 2^26 rows, each an empty array; the values budget refuses it at once."""
    from zeroc.tabular._table import decode_block

    empty = {"kinds": {"arr": {"lengths": {"enc": "const", "value": 0}, "items": {"kinds": {}}}}}
    head = {"root": {"kinds": {"arr": {"lengths": {"enc": "const", "value": 1 << 26}, "items": empty}}}}
    text = json.dumps(head, separators=(",", ":")).encode()
    block = bytes(4) + zstandard.ZstdCompressor().compress(len(text).to_bytes(4, "little") + text)
    assert len(block) < 250
    with pytest.raises(LimitExceeded, match="max_values"):
        decode_block(block)


_rowsets = st.one_of(
    st.lists(json_values, max_size=25),
    keyed,
    st.lists(st.dictionaries(st.sampled_from("abcdef"), json_values, max_size=5), max_size=25),
)
_documents = st.one_of(
    _rowsets, json_values, st.builds(lambda rows, meta: {"meta": meta, "rows": rows}, _rowsets, json_values)
)


def _columns_exactly(cols: dict[str, Any]) -> dict[str, Any]:
    """Columns as comparable values: a numpy array as its dtype and values, lists as they are."""
    return {k: (str(v.dtype), v.tolist()) if hasattr(v, "dtype") else v for k, v in cols.items()}


@settings(max_examples=100)
@given(_rowsets, json_values, st.booleans(), st.data())
def test_the_document_block_reads_as_two_blocks_do(
    rows: list[Any], meta: Any, portable: bool, data: st.DataObject
) -> None:
    """A document whose rows end in one chunk is one block (spec §2), its rows' column first:
    its rows over any range, its columns (numpy arrays of the same dtypes) and the document read
    exactly as from the two blocks the writer makes when the chunk ends before the skeleton is
    known."""
    doc = {"meta": meta, "rows": rows}
    files = []
    for flush in (False, True):
        files.append(io.BytesIO())
        w = ContainerWriter(files[-1], path=["rows"], portable=portable)
        w.skeleton = {"meta": meta, "rows": None}
        w.write_many(rows)
        if flush:
            w.flush()
        w.close()
    a, b = (ContainerReader(io.BytesIO(f.getvalue())) for f in files)
    assert a.document_block == bool(rows) and not b.document_block
    assert same(a.document(), doc) and same(b.document(), doc)
    lo = data.draw(st.integers(0, len(rows)))
    hi = data.draw(st.integers(lo, len(rows) + 2))
    assert same(a.rows(lo, hi), rows[lo:hi]) and same(b.rows(lo, hi), rows[lo:hi])
    assert same(_columns_exactly(a.columns(lo, hi)), _columns_exactly(b.columns(lo, hi)))


@settings(max_examples=50)
@given(st.integers(1, 8), st.integers(0, 2), json_values)
def test_rows_that_fill_one_chunk_exactly_are_the_document_block(
    chunk_rows: int, extra: int, meta: Any
) -> None:
    """A document whose rows are one chunk's at most is one block (spec §2), also where they
    fill the chunk exactly; one row more, and the rows take two chunks and the skeleton a block
    of its own. Each reads back exactly."""
    rows = [{"n": i, "s": f"r{i}"} for i in range(chunk_rows + extra - 1)]
    doc = {"meta": meta, "rows": rows}
    out = io.BytesIO()
    w = ContainerWriter(out, path=["rows"], chunk_rows=chunk_rows)
    w.skeleton = {"meta": meta, "rows": None}
    w.write_many(rows)
    w.close()
    reader = ContainerReader(io.BytesIO(out.getvalue()))
    chunks = reader.footer["chunks"]
    assert reader.document_block == (0 < len(rows) <= chunk_rows)
    assert [c[2] for c in chunks] == [len(rows[i : i + chunk_rows]) for i in range(0, len(rows), chunk_rows)]
    assert same(reader.document(), doc) and same(reader.rows(0, len(rows)), rows)


@settings(max_examples=100)
@given(_documents, st.integers(1, 6), st.booleans(), st.booleans(), _rowsets, st.data())
def test_any_document_packs_reads_by_range_and_appends_exactly(
    doc: Any, chunk_rows: int, checksum: bool, portable: bool, more: list[Any], data: st.DataObject
) -> None:
    """Any JSON document in chunks of 1-6 rows, checksummed or not, portable or not: the whole
    document, its table's rows over any range (across chunk boundaries) by rows, iter_rows and
    row, and after rows are appended, all read back exactly."""
    out = io.BytesIO()
    pack(doc, out, chunk_rows=chunk_rows, checksum=checksum, portable=portable)
    reader = ContainerReader(io.BytesIO(out.getvalue()))
    assert same(reader.document(), doc)
    path = reader.footer["path"]
    if path is None:  # one whole document, its only row
        assert len(reader) == 1 and same(reader.rows(0, 5), [doc])
        return
    table = doc
    for key in path:
        table = table[key]
    n = len(reader)
    assert n == len(table)
    a = data.draw(st.integers(0, n))
    b = data.draw(st.integers(a, n + 2))
    assert same(reader.rows(a, b), table[a:b]) and same(list(reader.iter_rows(a, b)), table[a:b])
    if n:
        i = data.draw(st.integers(0, n - 1))
        assert same(reader.row(i), table[i])
    with tempfile.TemporaryDirectory() as folder:  # (pytest's tmp_path is one for all examples)
        file = Path(folder) / "t.zct"
        file.write_bytes(out.getvalue())
        assert append(file, more, chunk_rows=chunk_rows) == len(more)
        with ContainerReader(open(file, "rb")) as grown:
            assert len(grown) == n + len(more) and same(grown.rows(0, n + len(more)), table + more)
            whole = grown.document()
    for key in path:
        whole = whole[key]
    assert same(whole, table + more)


@pytest.mark.parametrize("name", [*CORPORA, "instruments.json"])
def test_every_real_document_packs_to_at_most_four_fifths_of_json_and_zstd_19(name: str) -> None:
    """Issue 16's bar on the corpora, as `zeroc bench tabular` measures it: the container (the
    writer's defaults) against zstd -19 of the document's compact JSON, and read back exactly."""
    doc = json.loads((DATA / "json" / name).read_bytes())
    out = io.BytesIO()
    pack(doc, out)
    compact = json.dumps(doc, separators=(",", ":"), ensure_ascii=False).encode()
    baseline = zstandard.ZstdCompressor(level=19).compress(compact)
    assert len(out.getvalue()) <= 0.8 * len(baseline)
    assert same(ContainerReader(io.BytesIO(out.getvalue())).document(), doc)
