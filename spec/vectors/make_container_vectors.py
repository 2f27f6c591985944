"""Write golden vectors of the .zct container (spec/TABULAR_FORMAT.md §2): the same document as
version 1 and as version 2 (checksummed), and a version-2 file with one flipped bit
(containers.json); a portable file of a time series, every kind of column but pcodec's
(containers-portable.json); timestamps as text (containers-stamps.json); maps and sparse
tables (containers-maps.json); compact heads over every kind of column a portable block has
(containers-compact.json); brotli block texts, outside portable files (containers-brotli.json);
a column of references to another (containers-refs.json); integers as values in 1, 2 or 4 bytes,
and payloads as brotli texts (containers-ints.json); a small document as one block
(containers-document.json); the compact footer (containers-footer.json); short columns of
numbers in the value stream (containers-stream.json).
Released vectors are never edited.

python spec/vectors/make_container_vectors.py        # writes the sets not yet written
"""

from __future__ import annotations

import io
import json
import random
import re
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from zeroc import DecodeError, LimitExceeded
from zeroc.tabular import ContainerReader, pack

HERE = Path(__file__).parent
DOCUMENT = {
    "source": "golden vector",
    "rows": [
        {"id": i, "name": f"item{i}", "price": round(i * 1.25, 2), "tags": ["a"] * (i % 3)} for i in range(30)
    ],
}


def series(n: int) -> dict[str, object]:
    """A time series of ``n`` readings: irregular ISO timestamps, prices of two decimals, counts,
    flags, a few labels and random 62-bit trace ids; long enough (over 256 rows) that a
    default file would use pcodec."""
    rng = random.Random(7)
    t, price, rows = 1_700_000_000, 100.0, []
    for i in range(n):
        t += rng.choice([1, 1, 2, 5, 60])
        price = round(price + rng.uniform(-0.5, 0.5), 2)
        rows.append(
            {
                "t": datetime.fromtimestamp(t, UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
                "price": price,
                "volume": rng.randrange(1, 10_000),
                "up": rng.random() < 0.5,
                "venue": rng.choice(["XNYS", "XNAS", "BATS", "ARCA"]),
                "seq": i,
                "trace": rng.getrandbits(62),  # past int32 differences, past 2^53
            }
        )
    return {"symbol": "ZRC", "rows": rows}


def _refused(
    name: str, forged: bytes, error: type[Exception], says: str, invalid: list[dict[str, str]]
) -> None:
    """Write ``forged`` as the invalid vector ``name`` once this reader refuses it with ``error``
    saying ``says``, and list it in ``invalid``."""
    try:
        ContainerReader(io.BytesIO(forged)).document()
    except error as exc:
        assert says in str(exc), exc
    else:
        raise AssertionError(f"{name} decodes")
    (HERE / name).write_bytes(forged)
    invalid.append({"file": name, "error": error.__name__})


def _write_set(out: Path, spec: str, document: Any, valid: list[Any], invalid: list[Any]) -> None:
    """Write a set's JSON document: the spec section, the document, its valid and invalid files."""
    doc = {"spec": spec, "document": document, "valid": valid, "invalid": invalid}
    out.write_text(json.dumps(doc, indent=1) + "\n")
    print(f"wrote {out}")


def portable_set(out_name: str, file_name: str, spec: str, document: Any, chunk_rows: int) -> bytes | None:
    """Write a set of one portable container (spec/TABULAR_FORMAT.md §1.2) of ``document``:
    its bytes, or None when the set exists (released vectors are never edited)."""
    out = HERE / out_name
    if out.exists():
        print(f"{out} exists: released vectors are never edited")
        return None
    buf = io.BytesIO()
    pack(document, buf, chunk_rows=chunk_rows, portable=True)
    (HERE / file_name).write_bytes(buf.getvalue())
    _write_set(
        out,
        spec,
        document,
        [{"file": file_name, "version": 2, "chunk_rows": chunk_rows, "portable": True}],
        [],
    )
    return buf.getvalue()


def portable() -> None:
    spec = "spec/TABULAR_FORMAT.md sections 1.2 (portable blocks) and 2"
    data = portable_set("containers-portable.json", "container-2-portable.zct", spec, series(500), 400)
    assert data is None or b"pco" not in data


def stamped(n: int) -> dict[str, object]:
    """``n`` events whose times are written in the textual forms the `stamp` encoding takes:
    Twitter's, RFC 2822, slashes with minutes, a month name and a day without padding."""
    rng = random.Random(11)
    t, rows = 1_398_238_962, []
    for i in range(n):
        t += rng.choice([7, 60, 3600, 86_400 + 13])
        d = datetime.fromtimestamp(t, UTC)
        rows.append(
            {
                "id": i,
                "created_at": d.strftime("%a %b %d %H:%M:%S +0000 %Y"),
                "sent": d.strftime("%a, %d %b %Y %H:%M:%S GMT"),
                "slot": d.strftime("%Y/%m/%d %H:%M"),
                "day": f"{d.strftime('%b')} {d.day} {d.year}",
            }
        )
    return {"source": "golden vector", "rows": rows}


def stamps() -> None:
    spec = "spec/TABULAR_FORMAT.md section 1.2 (stamp)"
    data = portable_set("containers-stamps.json", "container-2-stamps.zct", spec, stamped(300), 300)
    assert data is None or zstandard_text(data).count(b'"enc":"stamp"') == 4  # every time column


def shapes(n: int) -> dict[str, object]:
    """``n`` API shapes as botocore describes them: records of several key sets (a sparse
    table) whose ``members`` objects are keyed by member names (a map)."""
    rng = random.Random(13)
    names = [
        f"{a}{b}"
        for a in ("Max", "Next", "Bucket", "Key", "Tag", "Role")
        for b in ("Id", "Name", "Arn", "Token", "Count", "Type", "Status", "Time")
    ]
    rows: list[dict[str, object]] = []
    for i in range(n):
        kind = rng.choice(["structure", "structure", "string", "list"])
        row: dict[str, object] = {"name": f"Shape{i}", "type": kind}
        if kind == "structure":
            members = rng.sample(names, rng.randint(1, 3))
            row["members"] = {m: {"shape": rng.choice(["String", "Integer", m])} for m in members}
            if rng.random() < 0.5:
                row["required"] = members[:1]
        elif kind == "string":
            row["max"] = rng.choice([64, 256, 1024])
            if rng.random() < 0.3:
                row["pattern"] = "^[a-z]+$"
        else:
            row["member"] = {"shape": rng.choice(names)}
        rows.append(row)
    return {"source": "golden vector", "rows": rows}


def maps() -> None:
    spec = "spec/TABULAR_FORMAT.md section 1.1 (maps, sparse tables)"
    data = portable_set("containers-maps.json", "container-2-maps.zct", spec, shapes(120), 120)
    if data is not None:
        text = zstandard_text(data)
        assert b'"keys":' in text and b'"sparse":true' in text  # a map and a sparse table


def varied(n: int) -> dict[str, object]:
    """``n`` records with a column of every kind and portable encoding, so that their compact
    heads (spec/TABULAR_FORMAT.md §1.3) use every short name: a sparse table, a map, arrays,
    derived URLs, dictionary and free text, timestamps of both kinds, decimals and binary floats,
    bits, integers in series, narrow and wide, integers past 64 bits, nulls among strings."""
    rng = random.Random(17)
    words = ["alpha", "bravo", "charlie", "delta", "echo", "fox trot"]
    t, rows = 1_700_000_000, []
    for i in range(n):
        t += rng.choice([1, 2, 60])
        login = f"{rng.choice(words)}{rng.randrange(50)}"
        row: dict[str, object] = {
            "id": i,
            "kind": rng.choice(["push", "fork", "watch"]),
            "at": datetime.fromtimestamp(t, UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "sent": datetime.fromtimestamp(t, UTC).strftime("%a, %d %b %Y %H:%M:%S GMT"),
            "price": round(rng.uniform(0, 500), 2),
            "ratio": rng.random(),
            "up": rng.random() < 0.5,
            "count": rng.randrange(-300, 300),
            "wide": rng.getrandbits(40),
            "big": 2**70 + i if i % 7 == 0 else i,
            "user": f"user{i}",
            "login": login,
            "url": f"https://example.com/users/{login}/repos",
            "note": None if i % 5 == 0 else " ".join(rng.choices(words, k=rng.randint(1, 6))),
            "tags": rng.sample(words, rng.randint(0, 3)),
            "members": {
                f"m{rng.randrange(500)}": {"shape": rng.choice(["String", "Integer"])} for _ in range(2)
            },
            "same": "constant",
        }
        if i % 3 == 0:
            row["extra"] = {"depth": [{"x": i}, {"y": [i, None]}]}
        rows.append(row)
    return {"source": "golden vector", "rows": rows}


def compacted() -> None:
    spec = "spec/TABULAR_FORMAT.md section 1.3 (compact heads)"
    data = portable_set("containers-compact.json", "container-2-compact.zct", spec, varied(300), 300)
    if data is not None:
        text = zstandard_text(data)
        assert b'{"r":' in text and b'"root"' not in text
        for name in ("di", "dt", "st", "de", "fz", "bi", "se", "zn", "zd", "pi", "js"):
            assert f'"e":"{name}"'.encode() in text, name  # each named encoding, compacted


def notes(n: int) -> dict[str, object]:
    """``n`` short notes in English words: text that brotli codes smaller than zstd does."""
    rng = random.Random(17)
    words = (
        "the of and to in is that for it as with was on be at by this had not are but from or have "
        "an they which one you were her all she there would their we him been has when who will more "
        "no if out so said what up its about into than them can only other new some could time these "
        "two may then do first any my now such like our over man me even most made after also did "
        "many before must through back years where much your way well down should because each just"
    ).split()
    people = ["alice", "bob", "carol", "dave", "erin", "frank"]
    rows = [
        {"id": i, "author": rng.choice(people), "text": " ".join(rng.choices(words, k=rng.randint(4, 14)))}
        for i in range(n)
    ]
    return {"source": "golden vector", "rows": rows}


def _brotli_texts(data: bytes) -> list[int]:
    """Where each block's brotli text begins (its byte b), from the container's footer."""
    from zeroc.tabular import ContainerReader

    footer = ContainerReader(io.BytesIO(data)).footer
    starts = []
    for offset, *_ in [*footer["chunks"], *([footer["skeleton"]] if footer["skeleton"] else [])]:
        payloads = int.from_bytes(data[offset : offset + 4], "little")
        if data[offset + 4 + payloads : offset + 5 + payloads] == b"b":
            starts.append(offset + 4 + payloads)
    return starts


def _versions(document: Any, **options: Any) -> dict[int, bytes]:
    """``document`` packed as version 1 (no checksums) and version 2, by version."""
    files = {}
    for version in (1, 2):
        buf = io.BytesIO()
        pack(document, buf, checksum=version == 2, **options)
        files[version] = buf.getvalue()
    return files


def brotli_texts() -> None:
    """A container that is not portable, whose blocks hold brotli texts (spec/TABULAR_FORMAT.md
    §1), and two version-1 files (no checksums to catch them first) whose first brotli text
    declares one byte more than it holds (DecodeError) and more than any limit (LimitExceeded)."""
    out = HERE / "containers-brotli.json"
    if out.exists():
        print(f"{out} exists: released vectors are never edited")
        return
    document = notes(120)
    files = _versions(document, chunk_rows=60)
    (HERE / "container-2-brotli.zct").write_bytes(files[2])
    assert len(_brotli_texts(files[2])) == 2  # both chunks (the skeleton is smaller in zstd)
    at = _brotli_texts(files[1])[0] + 1  # the declared size S
    size = int.from_bytes(files[1][at : at + 4], "little")
    invalid = []
    for name, declared, error in (
        ("container-1-brotli-long.zct", size + 1, "DecodeError"),
        ("container-1-brotli-huge.zct", 0xFFFFFFFF, "LimitExceeded"),
    ):
        (HERE / name).write_bytes(files[1][:at] + declared.to_bytes(4, "little") + files[1][at + 4 :])
        invalid.append({"file": name, "error": error})
    _write_set(
        out,
        "spec/TABULAR_FORMAT.md section 1 (brotli text)",
        document,
        [{"file": "container-2-brotli.zct", "version": 2, "chunk_rows": 60, "portable": False}],
        invalid,
    )


def catalogue(n: int) -> dict[str, object]:
    """``n`` types of an API, each named, whose members (keyed by field names: a map) name
    other types of the catalogue (a string column of references to the ``name`` column) or a
    few it does not hold, and whose ``required`` lists some of its members' keys (written after
    them, as references to the map's key column)."""
    rng = random.Random(19)
    parts = ["Bucket", "Object", "Policy", "Tag", "Role", "Queue", "Topic", "Key", "Grant", "Rule"]
    ends = ["", "List", "Summary", "Request", "Output", "Filter", "Status", "Config", "Id", "Arn"]
    names = sorted({f"{rng.choice(parts)}{rng.choice(parts)}{rng.choice(ends)}" for _ in range(3 * n)})[:n]
    prefixes = ("max", "next", "owner", "parent", "item", "tag", "min", "last", "first", "base")
    fields = [f"{a}{b}" for a in prefixes for b in parts + ends[1:]]
    rows = []
    for name in names:
        members = {}
        for f in rng.sample(fields, rng.randint(1, 4)):
            members[f] = {
                "type": rng.choice(names) if rng.random() < 0.9 else rng.choice(["String", "Integer"])
            }
        required = [f for f in members if rng.random() < 0.6]
        rows.append({"name": name, "required": required, "members": members})
    return {"source": "golden vector", "rows": rows}


def references() -> None:
    """A portable container whose field types are a reference column (spec/TABULAR_FORMAT.md
    §1.2 ``ref``): the members' types as positions in the name column, with a text of those
    it lacks, and ``required`` (written after the members, so the head names it) as positions in
    the members' key column; and two version-1 files (no checksums to catch them first) whose
    head names the first reference column's own number as its source, and moves the second's
    positions past its source's end (DecodeError both)."""
    out = HERE / "containers-refs.json"
    if out.exists():
        print(f"{out} exists: released vectors are never edited")
        return
    document = catalogue(300)
    files = _versions(document, chunk_rows=300, portable=True)
    (HERE / "container-2-refs.zct").write_bytes(files[2])
    text = zstandard_text(files[1])
    types = b'{"e":"rf","sr":0,"i":{"e":"zb","w":2},"tx":'  # the name column is string column 0
    required = b'{"e":"rf","sr":1,"i":{"e":"zn","f":0,'  # the members' keys are string column 1
    assert text.count(types) == 1 and text.count(required) == 1 and b'["required",' in text
    invalid = []
    for name, edit, error in (  # the types are string column 2: after the names and the keys
        ("container-1-refs-own.zct", (types, types.replace(b'"sr":0', b'"sr":2')), "names no earlier"),
        (
            "container-1-refs-past.zct",
            (required, required.replace(b'"f":0', b'"f":100000')),
            "outside its source",
        ),
    ):
        forged = _edited(files[1], edit)
        _refused(name, forged, DecodeError, error, invalid)
    _write_set(
        out,
        "spec/TABULAR_FORMAT.md section 1.2 (ref)",
        document,
        [{"file": "container-2-refs.zct", "version": 2, "chunk_rows": 300, "portable": True}],
        invalid,
    )


def _edited(data: bytes, edit: tuple[bytes, bytes]) -> bytes:
    """A version-1 portable container with ``edit`` = (old, new) replaced once in its chunk's
    head (the zstd frame made again, the footer moved to match)."""
    import zstandard

    footer = ContainerReader(io.BytesIO(data)).footer
    ((offset, length, rows),) = footer["chunks"]
    block = data[offset : offset + length]
    p = int.from_bytes(block[:4], "little")
    text = zstandard.ZstdDecompressor().decompress(block[4 + p :])
    assert text.count(edit[0]) == 1
    size = int.from_bytes(text[:4], "little") + len(edit[1]) - len(edit[0])  # the head's
    text = size.to_bytes(4, "little") + text[4:].replace(*edit)
    block = block[: 4 + p] + zstandard.ZstdCompressor(level=19).compress(text)
    footer["chunks"] = [[offset, len(block), rows]]
    end = len(data) - 8 - int.from_bytes(data[-8:-4], "little")  # where the footer began
    if footer["skeleton"] is not None:  # after the chunk: it moves by as much as the chunk grew
        footer["skeleton"][0] += len(block) - length
    tail = json.dumps(footer).encode()
    rest = data[offset + length : end]
    return data[:offset] + block + rest + tail + len(tail).to_bytes(4, "little") + b"ZRCT"


def coded(n: int) -> dict[str, object]:
    """``n`` events whose integers are codes and ids (a retry count, a kind among 40, a user
    among 200): values that differences scatter, long enough (over 256 rows) for payloads. The
    retries come first: outside portable files theirs is the brotli payload, which a reader
    without brotli meets before the pcodec columns."""
    rng = random.Random(23)
    users = [rng.randrange(1, 30_000) for _ in range(200)]
    rows = []
    for _ in range(n):
        kind, user, retries = rng.choice(range(40)), rng.choice(users), min(rng.expovariate(1.0), 9) // 1
        rows.append({"retries": int(retries), "kind": kind, "user": user})
    return {"source": "golden vector", "rows": rows}


def _payloads(block: bytes) -> list[tuple[int, int]]:
    """(offset, size) of each payload of a column block, from the ``n`` members of its head."""
    from zeroc.tabular._columns import unpack_text

    p = int.from_bytes(block[:4], "little")
    text = unpack_text(block[4 + p :], 1 << 24)
    sizes = [int(m) for m in re.findall(rb'"n":(\d+)', text[4 : 4 + int.from_bytes(text[:4], "little")])]
    out, at = [], 4
    for size in sizes:
        out.append((at, size))
        at += size
    assert at == 4 + p
    return out


def integer_codes() -> None:
    """Integers as values in 1, 2 or 4 bytes (``zstd-bytes``, spec/TABULAR_FORMAT.md §1.2): a
    portable file, and one that is not, whose payloads are brotli texts; and a version-1 file
    whose first brotli payload declares one byte more than it holds (DecodeError)."""
    out = HERE / "containers-ints.json"
    if out.exists():
        print(f"{out} exists: released vectors are never edited")
        return
    document = coded(400)
    files = {}
    for name, portable, version in (
        ("container-2-ints.zct", True, 2),
        ("container-2-ints-brotli.zct", False, 2),
        ("v1", False, 1),
    ):
        buf = io.BytesIO()
        pack(document, buf, chunk_rows=400, checksum=version == 2, portable=portable)
        files[name] = buf.getvalue()
    assert zstandard_text(files["container-2-ints.zct"]).count(b'"e":"zb"') == 3, "every column in bytes"
    for name in ("container-2-ints-brotli.zct", "v1"):
        offset, length = ContainerReader(io.BytesIO(files[name])).footer["chunks"][0][:2]
        block = files[name][offset : offset + length]
        brotlis = [at for at, _size in _payloads(block) if block[at : at + 1] == b"b"]
        assert brotlis, "a payload that is a brotli text"
    at = offset + brotlis[0] + 1
    size = int.from_bytes(files["v1"][at : at + 4], "little")
    valid = []
    for name in ("container-2-ints.zct", "container-2-ints-brotli.zct"):
        (HERE / name).write_bytes(files[name])
        valid.append(
            {"file": name, "version": 2, "chunk_rows": 400, "portable": name == "container-2-ints.zct"}
        )
    invalid = []
    for name, declared, error in (
        ("container-1-ints-brotli-long.zct", size + 1, LimitExceeded),  # past the column's bytes
        ("container-1-ints-brotli-short.zct", size - 1, DecodeError),  # the stream holds more
    ):
        forged = files["v1"][:at] + declared.to_bytes(4, "little") + files["v1"][at + 4 :]
        _refused(name, forged, error, "brotli", invalid)
    _write_set(
        out,
        "spec/TABULAR_FORMAT.md section 1.2 (zstd-bytes; payloads as brotli texts)",
        document,
        valid,
        invalid,
    )


def song(n: int) -> dict[str, object]:
    """A tracker's song file in small: its name and settings, a few instruments with envelopes,
    samples with file names, and ``n`` patterns (the longest array: the table), most of them
    empty."""
    rng = random.Random(29)

    def envelope() -> dict[str, object]:
        ticks = sorted(rng.sample(range(1, 90), rng.randint(1, 4)))
        return {"loop": 0, "nodes": [{"tick": t, "value": rng.choice([0, 32, 64])} for t in [0, *ticks]]}

    instruments = [
        {"name": f"inst {i}", "volume": envelope(), "pitch": envelope(), "pan": rng.choice([128, 128, 96])}
        for i in range(8)
    ]
    kinds = ["kick", "snare", "hat", "pad"]
    samples = [{"file": f"{rng.choice(kinds)}{i}.wav", "rate": 44100} for i in range(6)]
    patterns = [
        {"name": rng.choice(["intro", "a", "b", "end"]) if i < 10 else "", "rows": rng.choice([32, 64, 64])}
        for i in range(n)
    ]
    return {"name": "golden vector", "tempo": 125, "instruments": instruments, "patterns": patterns} | {
        "samples": samples
    }


def _with_footer(data: bytes, footer: dict[str, Any]) -> bytes:
    """A container with its footer replaced (the trailer made again: version 2's CRC too)."""
    from zlib import crc32

    version = data[4]
    trailer = 12 if version == 2 else 8
    start = len(data) - trailer - int.from_bytes(data[-8:-4], "little")
    raw = json.dumps(footer, separators=(",", ":")).encode()
    check = crc32(raw).to_bytes(4, "little") if version == 2 else b""
    return data[:start] + raw + check + len(raw).to_bytes(4, "little") + b"ZRCT"


def document_block() -> None:
    """A small document as one block, both the first chunk and the skeleton (spec/TABULAR_FORMAT.md
    §2), in a portable file; and files whose footer breaks the document block's rules: a row
    count the block's array does not have, a skeleton that overlaps the chunk without being its
    block, a path whose value is not an array, and (version 2) a skeleton entry whose CRC-32 is
    not the chunk's (DecodeError all)."""
    out = HERE / "containers-document.json"
    if out.exists():
        print(f"{out} exists: released vectors are never edited")
        return
    document = song(40)
    files = _versions(document, portable=True)
    footers = {v: ContainerReader(io.BytesIO(data)).footer for v, data in files.items()}
    assert all(f["chunks"][0][:2] == f["skeleton"][:2] for f in footers.values()), "one block"
    (HERE / "container-2-document.zct").write_bytes(files[2])
    one, two = footers[1], footers[2]
    (offset, length, rows), crc = one["chunks"][0], two["skeleton"][2]
    invalid = []
    for name, data, footer, error in (
        (
            "container-1-document-count.zct",
            files[1],
            {**one, "rows": rows + 1, "chunks": [[offset, length, rows + 1]]},
            "does not hold its",
        ),
        ("container-1-document-overlap.zct", files[1], {**one, "skeleton": [offset, length - 1]}, "overlaps"),
        ("container-1-document-path.zct", files[1], {**one, "path": ["name"]}, "does not hold its"),
        ("container-2-document-crc.zct", files[2], {**two, "skeleton": [offset, length, crc ^ 1]}, "block"),
    ):
        forged = _with_footer(data, footer)
        _refused(name, forged, DecodeError, error, invalid)
    _write_set(
        out,
        "spec/TABULAR_FORMAT.md section 2 (the document block)",
        document,
        [{"file": "container-2-document.zct", "version": 2, "chunk_rows": 65536, "portable": True}],
        invalid,
    )


def compact_footers() -> None:
    """The compact footer (spec/TABULAR_FORMAT.md §2): a file of several chunks, a skeleton and
    rows appended after it (so that a chunk's offset is past the skeleton's end), and version-1
    files whose compact footer is cut short, has a byte after its end, a flag no version
    defines, an integer of 10 bytes, or a key that is not UTF-8 (DecodeError all)."""
    out = HERE / "containers-footer.json"
    if out.exists():
        print(f"{out} exists: released vectors are never edited")
        return
    from zeroc.tabular import append

    document = {"source": "golden vector", "rows": [{"id": i, "name": f"item{i}"} for i in range(30)]}
    more = [{"id": i, "name": f"more{i}"} for i in range(5)]
    files = {}
    for version in (1, 2):
        buf = io.BytesIO()
        pack(document, buf, chunk_rows=8, checksum=version == 2, portable=True)
        path = HERE / f"container-{version}-footer.zct"
        path.write_bytes(buf.getvalue())
        append(path, more, chunk_rows=8)
        files[version] = path.read_bytes()
    (HERE / "container-1-footer.zct").unlink()
    data = files[1]
    assert data[-8 - int.from_bytes(data[-8:-4], "little")] == 1, "a compact footer"
    end = len(data) - 8 - int.from_bytes(data[-8:-4], "little")
    footer = data[end:-8]
    assert (
        footer[1:3] == bytes([1, 1 | 2 | 2 << 3]) and footer[3:8] == b"\x04rows"
    )  # V 1; portable, skeleton, [key]
    invalid = []
    for name, forged, error in (
        ("container-1-footer-short.zct", footer[:-1], "ends inside"),
        ("container-1-footer-after.zct", footer + b"\x00", "after"),
        ("container-1-footer-flags.zct", footer[:2] + bytes([footer[2] | 0x20]) + footer[3:], "flags"),
        (
            "container-1-footer-long.zct",
            footer[:1] + b"\x81" + b"\x80" * 8 + b"\x00" + footer[2:],
            "9 bytes",
        ),
        ("container-1-footer-key.zct", footer[:4] + b"\xffows" + footer[8:], "UTF-8"),
    ):
        forged_file = data[:end] + forged + len(forged).to_bytes(4, "little") + b"ZRCT"
        _refused(name, forged_file, DecodeError, error, invalid)
    _write_set(
        out,
        "spec/TABULAR_FORMAT.md section 2 (the compact footer)",
        {**document, "rows": document["rows"] + more},
        [{"file": "container-2-footer.zct", "version": 2, "chunk_rows": 8, "portable": True}],
        invalid,
    )


def mixed(n: int) -> dict[str, object]:
    """``n`` orders whose short columns take every place the value stream codes (spec §1.2):
    kinds that vary (tags), counts, flags, list lengths, prices of two decimals, SKUs (a prefix
    and an integer), statuses (a dictionary's codes), an optional key (shape ids) and objects
    keyed by data (a map's lengths)."""
    rng = random.Random(41)
    words = [f"w{i:02d}" for i in range(60)]
    rows: list[dict[str, object]] = []
    for i in range(n):
        row: dict[str, object] = {
            "qty": rng.choice([1, 1, 1, 1, 2, 3, 12]),
            "seen": rng.randrange(0, 5000),
            "paid": rng.random() < 0.8,
            "lines": [rng.randrange(1, 99) for _ in range(rng.choice([1, 1, 2, 4]))],
            "price": round(rng.uniform(1, 500), 2),
            "sku": f"SKU-{rng.randrange(1, 9000)}",
            "status": rng.choice(["paid", "paid", "shipped", "open"]),
            "note": rng.choice([None, 7, "rush", "gift", 3]),
            "counts": {w: rng.randrange(1, 30) for w in rng.sample(words, rng.randint(1, 3))},
        }
        if i % 3 == 0:
            row["coupon"] = f"C{i}"
        rows.append(row)
    return {"source": "golden vector", "rows": rows}


def _restreamed(data: bytes, edit: Any) -> bytes:
    """A version-1 container of one document block that is not portable, its value stream
    replaced by ``edit(stream)`` (the head's size of it, the brotli text and the footer made
    again to match)."""
    import brotli

    footer = ContainerReader(io.BytesIO(data)).footer
    ((offset, length, rows),) = footer["chunks"]
    block = data[offset : offset + length]
    p = int.from_bytes(block[:4], "little")
    assert block[4 + p : 5 + p] == b"b", "a brotli text"
    text = brotli.decompress(block[9 + p :])
    m = int.from_bytes(text[:4], "little")
    head = json.loads(text[4 : 4 + m])
    stream = text[len(text) - head["v"] :]
    new = edit(stream)
    head["v"] = len(new)
    raw = json.dumps(head, separators=(",", ":")).encode()
    body = len(raw).to_bytes(4, "little") + raw + text[4 + m : len(text) - len(stream)] + new
    block = block[: 4 + p] + b"b" + len(body).to_bytes(4, "little") + brotli.compress(body, quality=11)
    footer["chunks"] = [[offset, len(block), rows]]
    footer["skeleton"] = [offset, len(block)]
    return data[:offset] + block + _with_footer(data, footer)[offset + length :]


def value_stream() -> None:
    """Short columns of numbers as bytes at the end of a block's text (spec/TABULAR_FORMAT.md
    §1.2 ``varint``, ``varint-except``), in a file that is not portable, whose head names them
    wherever they may be; and version-1 files (no checksums to catch them first) whose stream
    holds a number of ten bytes, a number longer than it needs, a byte no column takes, and
    one byte too few (DecodeError all)."""
    out = HERE / "containers-stream.json"
    if out.exists():
        print(f"{out} exists: released vectors are never edited")
        return
    import brotli

    document = mixed(60)
    files = _versions(document)
    (chunk,) = ContainerReader(io.BytesIO(files[2])).footer["chunks"]
    offset, length = chunk[:2]
    block = files[2][offset : offset + length]
    p = int.from_bytes(block[:4], "little")
    text = brotli.decompress(block[9 + p :])
    for place in (b'"t":"v"', b'"b":"x"', b'"l":"v"', b'"l":"x"', b'"d":"x"', b'"c":"x"', b'"i":"v"'):
        assert place in text, place  # tags, bools, lengths, shape ids, codes, a string's integers
    (HERE / "container-2-stream.zct").write_bytes(files[2])
    invalid: list[dict[str, str]] = []
    for name, edit, says in (
        ("container-1-stream-long.zct", lambda s: b"\x80" * 9 + b"\x01" + s[1:], "past 9 bytes"),
        ("container-1-stream-wide.zct", lambda s: bytes([s[0] | 0x80, 0]) + s[1:], "longer than it needs"),
        ("container-1-stream-left.zct", lambda s: s + b"\x00", "after the value stream"),
        ("container-1-stream-short.zct", lambda s: s[:-1], "ends inside a number"),
    ):
        _refused(name, _restreamed(files[1], edit), DecodeError, says, invalid)
    _write_set(
        out,
        "spec/TABULAR_FORMAT.md section 1.2 (the value stream: varint, varint-except)",
        document,
        [{"file": "container-2-stream.zct", "version": 2, "chunk_rows": 65536, "portable": False}],
        invalid,
    )


def zstandard_text(data: bytes) -> bytes:
    """The container's bytes with every zstd frame in it decompressed (to look for an encoding)."""
    import zstandard

    out, at = bytearray(), 0
    while (at := data.find(b"\x28\xb5\x2f\xfd", at)) >= 0:
        try:
            out += zstandard.ZstdDecompressor().decompressobj().decompress(data[at:])
        except zstandard.ZstdError:
            pass
        at += 4
    return bytes(out)


def main() -> None:
    portable()
    stamps()
    maps()
    compacted()
    brotli_texts()
    references()
    integer_codes()
    document_block()
    compact_footers()
    value_stream()
    out = HERE / "containers.json"
    if out.exists() and "--force" not in sys.argv:
        sys.exit(f"{out} exists: released vectors are never edited")
    files = {}
    for version, checksum in ((1, False), (2, True)):
        buf = io.BytesIO()
        pack(DOCUMENT, buf, chunk_rows=8, checksum=checksum)
        name = f"container-{version}.zct"
        (HERE / name).write_bytes(buf.getvalue())
        files[version] = name
    flipped = bytearray((HERE / files[2]).read_bytes())
    flipped[20] ^= 0x10  # inside the first chunk
    (HERE / "container-2-flipped.zct").write_bytes(bytes(flipped))
    _write_set(
        out,
        "spec/TABULAR_FORMAT.md section 2",
        DOCUMENT,
        [
            {"file": files[1], "version": 1, "chunk_rows": 8},
            {"file": files[2], "version": 2, "chunk_rows": 8},
        ],
        [{"file": "container-2-flipped.zct", "error": "ChecksumMismatch"}],
    )


if __name__ == "__main__":
    main()
