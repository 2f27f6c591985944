"""Golden vectors from spec/vectors: exact frame bytes, decoded serializations, and errors."""

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest
import zstandard as zstd

import zeroc
from zeroc import Codec, Dictionary, _json

VECTORS = Path(__file__).resolve().parents[1] / "spec" / "vectors"
DOC = json.loads((VECTORS / "vectors.json").read_text())
STREAMS_2 = json.loads((VECTORS / "streams-2.json").read_text())  # checksummed streams
SESSIONS_1 = json.loads((VECTORS / "sessions-1.json").read_text())  # session records and streams
SESSIONS_2 = json.loads((VECTORS / "sessions-2.json").read_text())  # learned session records (form 3)
SESSION_RECORDS = [(doc, v) for doc in (SESSIONS_1, SESSIONS_2) for v in doc["sessions"]]


def dictionary(name: str | None) -> Dictionary | None:
    if name is None:
        return None
    d = Dictionary.load(VECTORS / name)
    raw = (VECTORS / name.replace(".zcd", ".dict")).read_bytes()
    assert d.content == raw and d.sha256 == hashlib.sha256(raw).digest()
    return d


def serialization(v: dict[str, Any]) -> bytes:
    if "serialization_repeat" in v:
        rep = v["serialization_repeat"]
        return bytes.fromhex(rep["hex"]) * rep["times"]
    return bytes.fromhex(v["serialization_hex"])


@pytest.mark.parametrize("v", DOC["valid"], ids=lambda v: v["name"])
def test_valid_frame(v: dict[str, Any]) -> None:
    settings = dict(v["codec"])
    codec = Codec(dictionary(v["dictionary"]), serialization=v["serialization"], **settings)
    frame = bytes.fromhex(v["frame_hex"])
    data = serialization(v)
    assert codec.decode_payload(frame) == data
    value = data if v["serialization"] == "bytes" else v["input"]
    assert codec.decode(frame) == value
    assert codec.encode(value) == frame  # this encoder still writes the released bytes


@pytest.mark.parametrize("v", DOC["streams"] + STREAMS_2["streams"], ids=lambda v: v["name"])
def test_valid_stream(v: dict[str, Any]) -> None:
    codec = Codec(dictionary(v["dictionary"]))
    data = bytes.fromhex(v["stream_hex"])
    assert codec.decode_stream(data) == v["inputs"]
    checked = data[4] == 2  # this encoder still writes the released bytes
    assert Codec(dictionary(v["dictionary"]), checksum=checked).encode_stream(v["inputs"]) == data


@pytest.mark.parametrize(("doc", "v"), SESSION_RECORDS, ids=lambda x: x.get("name", ""))
def test_session_records(doc: dict[str, Any], v: dict[str, Any]) -> None:
    """Each record decodes, in order, to its batch; this encoder still writes the released
    records at the vector's level and window."""
    codec = Codec(dictionary(v["dictionary"]), checksum=v["checksum"])
    records = [bytes.fromhex(r) for r in v["records_hex"]]
    decoder = codec.session_decoder()
    assert [decoder.decode_many(r) for r in records] == v["batches"]
    encoder = codec.session_encoder(**doc["encoder"])
    written = []
    for i, batch in enumerate(v["batches"]):
        if i == v.get("reset_at"):
            encoder.reset()
        written.append(encoder.encode_many(batch))
    assert written == records
    if "reset_at" in v:  # a reader may start at a record that resets
        late = codec.session_decoder()
        assert [late.decode_many(r) for r in records[v["reset_at"] :]] == v["batches"][v["reset_at"] :]


@pytest.mark.parametrize("v", SESSIONS_1["streams"] + SESSIONS_2["streams"], ids=lambda v: v["name"])
def test_session_stream(v: dict[str, Any]) -> None:
    assert Codec(dictionary(v["dictionary"])).decode_stream(bytes.fromhex(v["stream_hex"])) == v["inputs"]


@pytest.mark.parametrize(
    "v",
    DOC["invalid"] + STREAMS_2["invalid"] + SESSIONS_1["invalid"] + SESSIONS_2["invalid"],
    ids=lambda v: v["name"],
)
def test_invalid_input_raises_the_named_error(v: dict[str, Any]) -> None:
    codec = Codec(dictionary(v["dictionary"]))
    error = getattr(zeroc, v["error"])
    data = bytes.fromhex(v["data_hex"])
    with pytest.raises(error):
        if v["kind"] == "stream":
            codec.decode_stream(data)
        else:
            codec.decode(data)


def test_vectors_cover_every_method_and_reference() -> None:
    from zeroc._frame import parse

    headers = [parse(bytes.fromhex(v["frame_hex"])) for v in DOC["valid"]]
    assert {h.method.name for h in headers} == {"STORED", "ZSTD_BLOCK", "ZSTD_FRAME", "DEFLATE"}
    assert {h.ref.name for h in headers} == {"NONE", "CONTEXT", "SHORT_ID", "SHA256"}
    assert any(h.checksum is not None for h in headers)


LEARNED_SETS = {
    name: json.loads((VECTORS / name).read_text(encoding="utf-8"))
    for name in (
        "learned.json",
        "learned-2.json",
        "learned-3.json",
        "learned-4.json",
        "learned-5.json",
        "learned-6.json",
        "learned-7.json",
        "learned-8.json",
    )
}
LEARNED = LEARNED_SETS["learned.json"]


def learned_dictionary(doc: dict[str, Any] = LEARNED) -> Dictionary:
    d = Dictionary.load(VECTORS / doc["dictionary"])
    raw = (VECTORS / doc["dictionary"].replace(".zcd", ".dict")).read_bytes()
    assert d.content == raw and d.sha256.hex() == doc["content_sha256"] and d.id == doc["identity"]
    assert d.model is not None and d.codec["method"] == "learned"
    return d


def _learned(kind: str) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    return [(doc, v) for doc in LEARNED_SETS.values() for v in doc[kind]]


@pytest.mark.parametrize(("doc", "v"), _learned("valid"), ids=lambda x: x.get("name", x.get("dictionary")))
def test_learned_frame(doc: dict[str, Any], v: dict[str, Any]) -> None:
    codec = Codec(learned_dictionary(doc), **v["codec"])
    frame = bytes.fromhex(v["frame_hex"])
    assert codec.decode(frame) == v["input"]
    assert codec.encode(v["input"]) == frame  # this encoder still writes the released bytes


@pytest.mark.parametrize(("doc", "v"), _learned("invalid"), ids=lambda x: x.get("name", x.get("dictionary")))
def test_learned_invalid_frame(doc: dict[str, Any], v: dict[str, Any]) -> None:
    with pytest.raises(getattr(zeroc, v["error"])):
        Codec(learned_dictionary(doc)).decode(bytes.fromhex(v["frame_hex"]))


def test_learned_model_formats() -> None:
    """Set 1's model is format 1 (no sure nodes); set 2's is format 2, and its frames put the
    broken sure rules off the common path; set 3's is format 3, with magnitudes of zero, one and
    63 bits, a date's shape and a suite number never seen on the common path, and an unseen
    bucket, a 65-bit integer, a broken id_str, dates of another shape or with unseen fields and
    a number with a leading zero off it."""
    from zeroc.learned._model import Model

    sets = (
        ("learned.json", 1),
        ("learned-2.json", 2),
        ("learned-3.json", 3),
        ("learned-4.json", 4),
        ("learned-5.json", 5),
        ("learned-6.json", 6),
        ("learned-7.json", 7),
        ("learned-8.json", 8),
    )
    for name, version in sets:
        d = learned_dictionary(LEARNED_SETS[name])
        assert d.model is not None
        model = Model.from_bytes(d.model)
        assert _json.loads(zstd.ZstdDecompressor().decompress(d.model))["format"] == version
        if version == 2:
            valid = {v["name"]: v for v in LEARNED_SETS[name]["valid"]}
            off = [model._fast_encode(valid[n]["input"]) for n in ("sure-sum-broken", "sure-given-broken")]
            assert off == [None, None] and model._fast_encode(valid["common-path"]["input"]) is not None
        if version == 3:
            valid = {v["name"]: v for v in LEARNED_SETS[name]["valid"]}
            on = ("common-path", "zero-and-one-bit", "bucket-of-63-bits", "suite-number-unseen")
            off_path = (
                "unseen-bucket-json-text",
                "past-64-bits-json-text",
                "id-str-not-the-id",
                "date-of-another-shape",
                "date-with-unseen-fields",
                "suite-number-leading-zero",
            )
            assert all(model._fast_encode(valid[n]["input"]) is not None for n in on)
            assert all(model._fast_encode(valid[n]["input"]) is None for n in off_path)
        if version == 4:  # the most common key order is the common path; maps and others are not
            valid = {v["name"]: v for v in LEARNED_SETS[name]["valid"]}
            assert model._fast_encode(valid["labels-empty"]["input"]) is None
            assert all(
                model._fast_encode(valid[n]["input"]) is None
                for n in ("optional-keys-absent", "key-order-never-seen", "parent-of-another-type")
            )
        if version == 8:  # every key order of a chain is on the common path; others are not
            valid = {v["name"]: v for v in LEARNED_SETS[name]["valid"]}
            on = ("chain-first-order", "chain-later-order", "chain-last-order", "nested-chain-other-order")
            assert all(model._fast_encode(valid[n]["input"]) is not None for n in on)
            off_path = ("key-order-not-in-the-chain", "chained-object-field-off-the-path")
            assert all(model._fast_encode(valid[n]["input"]) is None for n in off_path)


def test_format_5_writes_one_block_as_older_formats_and_larger_messages_in_blocks() -> None:
    """Set 5's messages of one block are the bytes the same model writes without blocks (formats
    1-4); its larger ones are blocks: each of the canonical length for its interval, read back
    one at a time."""
    from zeroc.learned._coder import BLOCK_BYTES
    from zeroc.learned._model import Model

    doc = LEARNED_SETS["learned-5.json"]
    d = learned_dictionary(doc)
    assert d.model is not None
    blocks = Model.from_bytes(d.model)
    legacy = Model(blocks.root, blocks.common, blocks.samples, None, version=4)
    assert blocks.blocks and not legacy.blocks
    valid = {v["name"]: v for v in doc["valid"]}
    small = valid["one-block-common-path-bare"]["input"]
    assert (
        blocks.encode(small)
        == legacy.encode(small)
        == bytes.fromhex(valid["one-block-common-path-bare"]["frame_hex"])
    )
    large = valid["common-path-value-of-many-blocks"]["input"]
    assert blocks._fast_encode(large) is None and legacy._fast_encode(large) is not None
    long = bytes.fromhex(valid["many-blocks-long-array"]["frame_hex"])[1:]
    assert len(long) > 4 * BLOCK_BYTES and legacy.decode(legacy.encode(large)) == large
    with pytest.raises(zeroc.LimitExceeded):  # past 4,096 symbols, formats 1-4 refuse
        legacy.encode(valid["many-blocks-long-array"]["input"])


def test_learned_vectors_cover_the_paths() -> None:
    names = {v["name"] for v in LEARNED["valid"]}
    methods = {
        bytes.fromhex(v["frame_hex"])[0] & 7 for v in LEARNED["valid"] if v["codec"].get("frame_id") != "bare"
    }
    assert methods == {1, 4} and {"bare-payload", "off-path-json-text", "side-stream-compressed"} <= names


def written_again(data: bytes, document: Any, **options: Any) -> None:
    """This writer's container of ``document`` reads back the same and is no larger than the
    released file ``data``. The released bytes stay as they were (they still read); what the
    writer writes moves on with the spec (spec/TABULAR_FORMAT.md's change log: since maps, a
    table's column entries no longer repeat its keys), and containers-maps.json pins it now."""
    import io

    from zeroc.tabular import ContainerReader, pack

    out = io.BytesIO()
    pack(document, out, **options)
    assert ContainerReader(io.BytesIO(out.getvalue())).document() == document
    assert len(out.getvalue()) <= len(data)


def blocks_of(data: bytes) -> bytes:
    """A container's blocks, all its bytes between the header and the footer: what this writer
    still writes of a released file, whose footer may since be compact (spec/TABULAR_FORMAT.md
    §2; containers-footer.json pins that)."""
    trailer = 12 if data[4] == 2 else 8
    return data[8 : len(data) - trailer - int.from_bytes(data[-8:-4], "little")]


def chunk_then_skeleton(document: dict[str, Any], chunk_rows: int, portable: bool) -> bytes:
    """``document`` as a writer told to end its rows' chunk before the skeleton writes it: the
    layout of the released files whose rows fill one chunk exactly, which this writer now makes
    the document block (spec/TABULAR_FORMAT.md §2)."""
    import io

    from zeroc.tabular import ContainerWriter

    out = io.BytesIO()
    w = ContainerWriter(out, path=["rows"], chunk_rows=chunk_rows, portable=portable)
    w.skeleton = {**document, "rows": None}
    w.write_many(document["rows"])
    w.flush()
    w.close()
    return out.getvalue()


CONTAINERS = json.loads((VECTORS / "containers.json").read_text())


@pytest.mark.parametrize("v", CONTAINERS["valid"], ids=lambda v: v["file"])
def test_container_vector_reads_and_is_written_again(v: dict[str, Any]) -> None:
    import io

    from zeroc.tabular import ContainerReader

    data = (VECTORS / v["file"]).read_bytes()
    assert data[4] == v["version"]
    assert ContainerReader(io.BytesIO(data)).document() == CONTAINERS["document"]
    written_again(data, CONTAINERS["document"], chunk_rows=v["chunk_rows"], checksum=v["version"] == 2)


PORTABLE = json.loads((VECTORS / "containers-portable.json").read_text())


@pytest.mark.parametrize("v", PORTABLE["valid"], ids=lambda v: v["file"])
def test_portable_container_vector_has_no_pcodec_and_is_written_again(
    v: dict[str, Any], tmp_path: Path
) -> None:
    """A portable file (spec/TABULAR_FORMAT.md §1.2) reads back, names no pcodec encoding, says
    so in its footer, keeps to it when rows are appended, and is written again no larger."""
    import io

    from zeroc.tabular import ContainerReader, append, pack

    data = (VECTORS / v["file"]).read_bytes()
    reader = ContainerReader(io.BytesIO(data))
    assert reader.document() == PORTABLE["document"] and reader.footer["portable"] is True
    assert b"pco" not in data
    written_again(data, PORTABLE["document"], chunk_rows=v["chunk_rows"], portable=True)
    default = io.BytesIO()
    pack(PORTABLE["document"], default, chunk_rows=v["chunk_rows"])
    assert b"pco" in default.getvalue()  # without the profile, pcodec wins some columns
    path = tmp_path / "appended.zct"
    path.write_bytes(data)
    rows = PORTABLE["document"]["rows"]
    append(path, rows[:300], chunk_rows=v["chunk_rows"])
    grown = path.read_bytes()
    assert b"pco" not in grown
    assert ContainerReader(io.BytesIO(grown)).rows(500, 800) == rows[:300]


STAMPS = json.loads((VECTORS / "containers-stamps.json").read_text())


@pytest.mark.parametrize("v", STAMPS["valid"], ids=lambda v: v["file"])
def test_stamp_container_vector_reads_and_is_written_again(v: dict[str, Any]) -> None:
    """Times in Twitter's form, RFC 2822's, with slashes and with month names (spec §1.2,
    `stamp`) read back exactly, and this writer writes them again no larger."""
    import io

    from zeroc.tabular import ContainerReader

    data = (VECTORS / v["file"]).read_bytes()
    assert ContainerReader(io.BytesIO(data)).document() == STAMPS["document"]
    written_again(data, STAMPS["document"], chunk_rows=v["chunk_rows"], portable=True)


MAPS = json.loads((VECTORS / "containers-maps.json").read_text())


@pytest.mark.parametrize("v", MAPS["valid"], ids=lambda v: v["file"])
def test_map_container_vector_reads_and_is_written_again(v: dict[str, Any]) -> None:
    """Records of several key sets (a sparse table) whose ``members`` are keyed by names (a map,
    spec §1.1) read back exactly, whole and by range, and this writer writes them again no
    larger (since compact heads, containers-compact.json pins the writer's bytes)."""
    import io

    from zeroc.tabular import ContainerReader

    data = (VECTORS / v["file"]).read_bytes()
    reader = ContainerReader(io.BytesIO(data))
    assert reader.document() == MAPS["document"]
    assert reader.rows(50, 60) == MAPS["document"]["rows"][50:60]
    written_again(data, MAPS["document"], chunk_rows=v["chunk_rows"], portable=True)


BROTLI = json.loads((VECTORS / "containers-brotli.json").read_text())


@pytest.mark.parametrize("v", BROTLI["valid"], ids=lambda v: v["file"])
def test_brotli_text_container_vector_reads_and_is_written_again(v: dict[str, Any]) -> None:
    """Blocks whose head and pool are a brotli text (spec §1) read back exactly, whole and by
    range, and are written again no larger; the portable profile writes zstd frames instead."""
    import io

    from zeroc.tabular import ContainerReader, pack

    data = (VECTORS / v["file"]).read_bytes()
    reader = ContainerReader(io.BytesIO(data))
    rows = BROTLI["document"]["rows"]
    assert reader.document() == BROTLI["document"] and not reader.footer.get("portable")
    assert reader.rows(50, 70) == rows[50:70]
    texts = [data[at + 4 + int.from_bytes(data[at : at + 4], "little")] for at, *_ in reader.footer["chunks"]]
    assert texts == [ord("b")] * len(texts)
    written_again(data, BROTLI["document"], chunk_rows=v["chunk_rows"])
    portable = io.BytesIO()
    pack(BROTLI["document"], portable, chunk_rows=v["chunk_rows"], portable=True)
    footer = ContainerReader(io.BytesIO(portable.getvalue())).footer
    out = portable.getvalue()
    assert {out[at + 4 + int.from_bytes(out[at : at + 4], "little")] for at, *_ in footer["chunks"]} == {0x28}
    assert len(out) > len(data)


COMPACT = json.loads((VECTORS / "containers-compact.json").read_text())


@pytest.mark.parametrize("v", COMPACT["valid"], ids=lambda v: v["file"])
def test_compact_head_container_vector_reads_and_is_written_again(v: dict[str, Any]) -> None:
    """Blocks with compact heads (spec §1.3) over every kind of column a portable block has read
    back exactly, whole, by range and as columns, and are written again no larger (since
    ``zstd-bytes``, its codes go in bytes: containers-ints.json pins the writer's bytes)."""
    import io

    from zeroc.tabular import ContainerReader

    data = (VECTORS / v["file"]).read_bytes()
    reader = ContainerReader(io.BytesIO(data))
    rows = COMPACT["document"]["rows"]
    assert reader.document() == COMPACT["document"]
    assert reader.rows(100, 140) == rows[100:140]
    assert list(reader.columns(0, 10)["price"]) == [r["price"] for r in rows[:10]]
    written_again(data, COMPACT["document"], chunk_rows=v["chunk_rows"], portable=True)


REFS = json.loads((VECTORS / "containers-refs.json").read_text())


@pytest.mark.parametrize("v", REFS["valid"], ids=lambda v: v["file"])
def test_reference_column_container_vector_reads_and_this_writer_writes_it(v: dict[str, Any]) -> None:
    """Columns of references to earlier string columns (spec §1.2 ``ref``): the members' types
    in the names, with a text of the values the names lack, and ``required`` in the members'
    keys, written after them and named in the head. They read back exactly, whole and by range
    (a range builds only its rows, yet its sources are whole), and this writer still writes the
    blocks."""
    import io

    from zeroc.tabular import ContainerReader

    data = (VECTORS / v["file"]).read_bytes()
    reader = ContainerReader(io.BytesIO(data))
    rows = REFS["document"]["rows"]
    assert reader.document() == REFS["document"]
    for a, b in ((0, 1), (150, 155), (299, 300)):
        assert reader.rows(a, b) == rows[a:b]
    written = chunk_then_skeleton(REFS["document"], v["chunk_rows"], portable=True)
    assert blocks_of(written) == blocks_of(data) and len(written) <= len(data)
    types = {m["type"] for r in rows for m in r["members"].values()}
    stray = {"String", "Integer"}  # what no record is called: the column's own text
    assert stray & types and types - stray <= {r["name"] for r in rows}
    assert all(set(r["required"]) <= set(r["members"]) for r in rows)


INTS = json.loads((VECTORS / "containers-ints.json").read_text())


@pytest.mark.parametrize("v", INTS["valid"], ids=lambda v: v["file"])
def test_integer_code_container_vector_reads_and_this_writer_writes_it(v: dict[str, Any]) -> None:
    """Codes and ids as values in 1, 2 or 4 bytes (spec §1.2 ``zstd-bytes``), under zstd in the
    portable file and as brotli texts in the other, read back exactly, whole and by range, and
    this writer still writes the blocks."""
    import io

    from zeroc.tabular import ContainerReader

    data = (VECTORS / v["file"]).read_bytes()
    reader = ContainerReader(io.BytesIO(data))
    rows = INTS["document"]["rows"]
    assert reader.document() == INTS["document"] and bool(reader.footer.get("portable")) == v["portable"]
    assert reader.rows(390, 400) == rows[390:400]
    assert reader.columns(0, 400)["kind"].tolist() == [r["kind"] for r in rows]
    written = chunk_then_skeleton(INTS["document"], v["chunk_rows"], portable=v["portable"])
    assert blocks_of(written) == blocks_of(data) and len(written) <= len(data)


DOCUMENT = json.loads((VECTORS / "containers-document.json").read_text())


@pytest.mark.parametrize("v", DOCUMENT["valid"], ids=lambda v: v["file"])
def test_document_block_container_vector_reads_and_this_writer_writes_it(
    v: dict[str, Any], tmp_path: Path
) -> None:
    """A small document as one block, the first chunk and the skeleton at once (spec §2), the
    rows' column first: it reads back whole, by range and as typed columns, the rows read alone
    as a chunk's are; rows appended go to a chunk after it; this writer still writes the bytes,
    and they are fewer than the two blocks it writes when told to end the chunk first."""
    import io

    from zeroc.tabular import ContainerReader, ContainerWriter, append, pack
    from zeroc.tabular._table import decode_rows

    data = (VECTORS / v["file"]).read_bytes()
    reader = ContainerReader(io.BytesIO(data))
    rows = DOCUMENT["document"]["patterns"]
    offset, length, n, _crc = reader.footer["chunks"][0]
    assert reader.document_block and reader.footer["skeleton"][:2] == [offset, length]
    assert decode_rows(data[offset : offset + length], 0, n, key="patterns") == (n, rows)
    assert reader.document() == DOCUMENT["document"]
    assert reader.rows(5, 12) == rows[5:12] and reader.rows(-1) == rows[-1:]
    assert reader.columns(0, 10)["rows"].tolist() == [r["rows"] for r in rows[:10]]
    assert [b["document"] for b in reader.describe()["blocks"]] == [True]
    out = io.BytesIO()
    pack(DOCUMENT["document"], out, portable=True)
    assert out.getvalue() == data
    path = tmp_path / "grown.zct"
    path.write_bytes(data)
    append(path, rows[:3])
    grown = ContainerReader(io.BytesIO(path.read_bytes()))
    assert len(grown.footer["chunks"]) == 2 and grown.document_block
    assert grown.rows(len(rows) - 1) == rows[-1:] + rows[:3]
    assert grown.document() == {**DOCUMENT["document"], "patterns": rows + rows[:3]}
    two = io.BytesIO()  # the chunk ended before the skeleton is known: two blocks
    w = ContainerWriter(two, path=["patterns"], portable=True)
    w.skeleton = {**DOCUMENT["document"], "patterns": None}
    w.write_many(rows)
    w.flush()
    w.close()
    second = ContainerReader(io.BytesIO(two.getvalue()))
    assert not second.document_block and second.document() == DOCUMENT["document"]
    assert len(two.getvalue()) > len(data)


FOOTER = json.loads((VECTORS / "containers-footer.json").read_text())


@pytest.mark.parametrize("v", FOOTER["valid"], ids=lambda v: v["file"])
def test_compact_footer_container_vector_reads_and_this_writer_writes_it(
    v: dict[str, Any], tmp_path: Path
) -> None:
    """The compact footer (spec §2) of chunks, a skeleton and a chunk appended after it: it reads
    back as the JSON footer it stands for, whole and by range; this writer writes it again, and
    its JSON form is longer."""
    import io

    from zeroc.tabular import ContainerReader, append, pack
    from zeroc.tabular._container import _compact_footer

    data = (VECTORS / v["file"]).read_bytes()
    reader = ContainerReader(io.BytesIO(data))
    rows = FOOTER["document"]["rows"]
    chunks, skeleton = reader.footer["chunks"], reader.footer["skeleton"]
    assert reader.footer["portable"] and reader.footer["path"] == ["rows"] and len(chunks) == 5
    assert chunks[-1][0] == skeleton[0] + skeleton[1]  # the appended chunk, after the skeleton
    assert reader.document() == FOOTER["document"] and reader.rows(28, 33) == rows[28:33]
    compact = _compact_footer(reader.footer)
    assert compact is not None and data.endswith(compact + data[-12:])
    assert len(json.dumps(reader.footer, separators=(",", ":"))) > 3 * len(compact)
    out = io.BytesIO()
    pack({**FOOTER["document"], "rows": rows[:30]}, out, chunk_rows=v["chunk_rows"], portable=True)
    path = tmp_path / "again.zct"
    path.write_bytes(out.getvalue())
    append(path, rows[30:], chunk_rows=v["chunk_rows"])
    assert path.read_bytes() == data


STREAM = json.loads((VECTORS / "containers-stream.json").read_text())


@pytest.mark.parametrize("v", STREAM["valid"], ids=lambda v: v["file"])
def test_value_stream_container_vector_reads_and_this_writer_writes_it(v: dict[str, Any]) -> None:
    """Short columns of numbers in the block text's value stream (spec §1.2 ``varint``,
    ``varint-except``): tags, ints, bools, lengths of lists and of maps, shape ids, a
    dictionary's codes, a decimal's and a prefixed string's integers. The file reads back
    exactly, whole, by range and as typed columns, and this writer writes the same bytes; a
    portable file of the document has no value stream."""
    import io

    from zeroc.tabular import ContainerReader, pack
    from zeroc.tabular._table import describe_block

    data = (VECTORS / v["file"]).read_bytes()
    reader = ContainerReader(io.BytesIO(data))
    rows = STREAM["document"]["rows"]
    assert reader.document() == STREAM["document"] and not reader.footer.get("portable")
    assert reader.rows(7, 19) == rows[7:19] and reader.rows(-2) == rows[-2:]
    assert list(reader.columns(0, 60)["qty"]) == [r["qty"] for r in rows]
    offset, length = reader.footer["chunks"][0][:2]
    described = describe_block(data[offset : offset + length])
    encodings = described["encodings"]
    assert encodings["varint"] and encodings["varint-except"] and "inline" not in encodings
    assert described["value_bytes"] > 0 and described["pool_bytes"] > 0
    out = io.BytesIO()
    pack(STREAM["document"], out)
    assert out.getvalue() == data
    portable = io.BytesIO()
    pack(STREAM["document"], portable, portable=True)
    offset, length = ContainerReader(io.BytesIO(portable.getvalue())).footer["chunks"][0][:2]
    assert "varint" not in describe_block(portable.getvalue()[offset : offset + length])["encodings"]


@pytest.mark.parametrize(
    "v",
    [
        *CONTAINERS["invalid"],
        *BROTLI["invalid"],
        *REFS["invalid"],
        *INTS["invalid"],
        *DOCUMENT["invalid"],
        *FOOTER["invalid"],
        *STREAM["invalid"],
    ],
    ids=lambda v: v["file"],
)
def test_invalid_container_vector_raises_the_named_error(v: dict[str, Any]) -> None:
    """Every invalid container vector: a flipped bit, brotli texts declaring a byte more than
    they hold or more than any limit, a reference column naming itself as its source and one
    pointing past its source's end, brotli payloads declaring a byte more than their column
    holds and a byte fewer than their stream holds, and footers that break the document block's
    rules (a row count its array lacks, a skeleton overlapping it, a path to a string, a CRC-32
    that is not the chunk's), compact footers cut short, with a byte after their end, a flag
    no version defines, an integer of 10 bytes or a key that is not UTF-8, and value streams
    holding a number of 10 bytes, a number longer than it needs, a byte no column takes, and a
    byte too few."""
    import io

    from zeroc.tabular import ContainerReader

    with pytest.raises(getattr(zeroc, v["error"])):
        ContainerReader(io.BytesIO((VECTORS / v["file"]).read_bytes())).document()
