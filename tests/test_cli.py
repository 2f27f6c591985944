"""The real `zeroc` command (and `python -m zeroc`) on real files."""

import json
import subprocess
import sys
from pathlib import Path

import pytest
import zstandard

from tests.conftest import DATA
from zeroc.workloads import generate

ZEROC = [str(Path(sys.executable).with_name("zeroc"))]


def run(*args: str, ok: bool = True) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run([*ZEROC, *args], capture_output=True, text=True, timeout=300)
    if ok:
        assert proc.returncode == 0, proc.stderr
    return proc


@pytest.fixture(scope="module")
def orders(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("cli")
    with open(d / "orders.ndjson", "w") as f:
        for m in generate("order", 1500, seed=5):
            f.write(json.dumps(m) + "\n")
    return d


def test_train_encode_decode_inspect_json(orders: Path) -> None:
    dict_path = orders / "orders.zcd"
    proc = run("train", str(orders / "orders.ndjson"), "-o", str(dict_path), "--size", "16384")
    assert "B/message" in proc.stdout and "training:" in proc.stderr
    run("encode", "--dict", str(dict_path), str(orders / "orders.ndjson"), "-o", str(orders / "o.zcs"))
    run("decode", "--dict", str(dict_path), str(orders / "o.zcs"), "-o", str(orders / "back.ndjson"))
    original = [json.loads(x) for x in (orders / "orders.ndjson").read_text().splitlines()]
    back = [json.loads(x) for x in (orders / "back.ndjson").read_text().splitlines()]
    assert back == original
    assert (orders / "o.zcs").stat().st_size < (orders / "orders.ndjson").stat().st_size / 5
    info = json.loads(run("inspect", "--json", str(orders / "o.zcs")).stdout)
    assert info["kind"] == "stream" and info["frames"] == 1500 and info["checksummed"]
    # --no-checksum: a version-1 stream, 4 bytes a frame smaller, that decodes the same.
    run(
        "encode",
        "--no-checksum",
        "--dict",
        str(dict_path),
        str(orders / "orders.ndjson"),
        "-o",
        str(orders / "n.zcs"),
    )
    assert not json.loads(run("inspect", "--json", str(orders / "n.zcs")).stdout)["checksummed"]
    assert (orders / "o.zcs").stat().st_size - (orders / "n.zcs").stat().st_size == 4 * 1500
    run("decode", "--dict", str(dict_path), str(orders / "n.zcs"), "-o", str(orders / "back2.ndjson"))
    assert (orders / "back2.ndjson").read_text() == (orders / "back.ndjson").read_text()
    meta = json.loads(run("inspect", "--json", str(dict_path)).stdout)
    assert meta["kind"] == "dictionary" and meta["serialization"] == "json"
    assert "candidate zstd-3" in run("inspect", str(dict_path)).stdout


def test_encode_session_streams_are_smaller_and_decode_exactly(orders: Path) -> None:
    """--session: one context for the whole file (issue 17), read back by the same decode. Its
    coding is zstd's: smaller than a zstd dictionary's frames and than zstd -19 of the file."""
    dict_path = orders / "orders-zstd.zcd"
    run("train", str(orders / "orders.ndjson"), "-o", str(dict_path), "--size", "16384", "--only", "zstd")
    src = str(orders / "orders.ndjson")
    run("encode", "--dict", str(dict_path), src, "-o", str(orders / "s.zcs"), "--session")
    run("encode", "--dict", str(dict_path), src, "-o", str(orders / "f.zcs"))
    run("decode", "--dict", str(dict_path), str(orders / "s.zcs"), "-o", str(orders / "s.ndjson"))
    original = [json.loads(x) for x in (orders / "orders.ndjson").read_text().splitlines()]
    assert [json.loads(x) for x in (orders / "s.ndjson").read_text().splitlines()] == original
    size = (orders / "s.zcs").stat().st_size
    assert size < 0.7 * (orders / "f.zcs").stat().st_size
    assert size < len(zstandard.ZstdCompressor(level=19).compress((orders / "orders.ndjson").read_bytes()))
    info = json.loads(run("inspect", "--json", str(orders / "s.zcs")).stdout)
    assert info["kind"] == "session stream" and info["messages"] == 1500 and info["checksummed"]


def test_a_learned_dictionarys_session_stream_holds_learned_records(orders: Path) -> None:
    """--session with a learned dictionary: the records go as the model's payloads (inspect
    counts them), the stream is far below zstd -19 of the file, and decode gives it all back."""
    dict_path = orders / "orders-learned.zcd"
    run("train", str(orders / "orders.ndjson"), "-o", str(dict_path), "--only", "learned")
    src = str(orders / "orders.ndjson")
    run("encode", "--dict", str(dict_path), src, "-o", str(orders / "l.zcs"), "--session")
    run("decode", "--dict", str(dict_path), str(orders / "l.zcs"), "-o", str(orders / "l.ndjson"))
    original = [json.loads(x) for x in (orders / "orders.ndjson").read_text().splitlines()]
    assert [json.loads(x) for x in (orders / "l.ndjson").read_text().splitlines()] == original
    info = json.loads(run("inspect", "--json", str(orders / "l.zcs")).stdout)
    assert info["messages"] == 1500 and info["learned_records"] == info["records"] >= 1
    zstd19 = zstandard.ZstdCompressor(level=19).compress((orders / "orders.ndjson").read_bytes())
    assert info["bytes"] < 0.5 * len(zstd19)


def test_train_shows_its_progress_and_takes_a_sample(orders: Path) -> None:
    """Issue 13: no silent phase (the model's fields are counted off as they are learned) and
    --max-samples for huge inputs."""
    dict_path = orders / "sampled.zcd"
    args = ["train", str(orders / "orders.ndjson"), "-o", str(dict_path), "--only", "learned"]
    proc = run(*args, "--max-samples", "300")
    assert "training: learn field model (1/" in proc.stderr and "training: measure codecs" in proc.stderr
    assert json.loads(run("inspect", "--json", str(dict_path)).stdout)["samples"] == 300
    assert run(*args, "--max-samples", "7", ok=False).returncode != 0


def test_schema_mode_and_python_m(orders: Path) -> None:
    dict_path = orders / "orders-pb.zcd"
    run(
        "train",
        str(orders / "orders.ndjson"),
        "-o",
        str(dict_path),
        "--schema",
        "zeroc.workloads:Order",
        "--preference",
        "size",
    )
    run("encode", "--dict", str(dict_path), str(orders / "orders.ndjson"), "-o", str(orders / "pb.zcs"))
    # The dictionary carries its schema: decoding needs nothing else.
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "zeroc",
            "decode",
            "--dict",
            str(dict_path),
            str(orders / "pb.zcs"),
            "-o",
            str(orders / "pb.ndjson"),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert (orders / "pb.ndjson").read_text().splitlines()[0] == json.dumps(
        generate("order", 1, seed=5)[0], separators=(",", ":")
    )


def test_proto_file_option(orders: Path) -> None:
    import zeroc.workloads

    proto = Path(zeroc.workloads.__file__).with_name("workloads.proto")
    run(
        "train",
        str(orders / "orders.ndjson"),
        "-o",
        str(orders / "p.zcd"),
        "--proto",
        str(proto),
        "--message",
        "Order",
    )


def test_real_corpus_directory_and_array_files(tmp_path: Path) -> None:
    jobs = json.loads((DATA / "json" / "apache_builds.json").read_text())["jobs"]
    (tmp_path / "jobs.json").write_text(json.dumps(jobs))
    run("train", str(tmp_path / "jobs.json"), "-o", str(tmp_path / "j.zcd"))
    samples = tmp_path / "samples"
    samples.mkdir()
    for i, job in enumerate(jobs[:100]):
        (samples / f"{i}.json").write_text(json.dumps(job))
    run("train", str(samples), "-o", str(tmp_path / "dir.zcd"))


@pytest.mark.parametrize(
    "args",
    [
        ["decode", "--dict", "{d}/orders.zcd", "{d}/orders.ndjson", "-o", "{d}/x"],
        ["inspect", "{d}/orders.ndjson"],
        ["train", "{d}/tiny.ndjson", "-o", "{d}/t.zcd"],
        ["encode", "--schema", "nope:Nope", "{d}/orders.ndjson", "-o", "{d}/x"],
        ["decode", "--dict", "{d}/orders.ndjson", "{d}/o.zcs", "-o", "{d}/x"],
        ["decode", "{d}/missing.zcs", "-o", "{d}/x"],  # click said "Usage: ..." with status 2
        ["train", "{d}/missing.ndjson", "-o", "{d}/x"],
        ["inspect", "{d}/missing.zcd"],
        ["encode", "{d}/deep.json", "-o", "{d}/x"],  # 2,000 levels: a RecursionError traceback
        ["train", "{d}/deep.json", "-o", "{d}/x"],
    ],
)
def test_bad_input_is_one_line_and_nonzero(orders: Path, args: list[str]) -> None:
    (orders / "tiny.ndjson").write_text('{"a": 1}\n' * 5)
    (orders / "deep.json").write_text("[" + "[" * 2000 + "]" * 2000 + "]")
    if not (orders / "orders.zcd").exists():
        run("train", str(orders / "orders.ndjson"), "-o", str(orders / "orders.zcd"))
    proc = run(*[a.format(d=orders) for a in args], ok=False)
    assert proc.returncode == 1
    assert proc.stderr.startswith("zeroc: error:") and proc.stderr.count("\n") == 1, proc.stderr
    assert "Traceback" not in proc.stderr


def test_demo_prints_sizes() -> None:
    proc = run("demo", "--count", "600")
    assert "order" in proc.stdout and "round-tripped exactly" in proc.stdout


def test_decode_limits_are_settable(tmp_path: Path) -> None:
    """Each decode limit has a CLI option: a stream whose message holds more values than
    ``--max-values`` allows is refused with one line and rc 1; the default decodes it."""
    src = tmp_path / "big.ndjson"
    src.write_text(json.dumps(list(range(100))) + "\n")
    run("encode", str(src), "-o", str(tmp_path / "big.zcs"))
    proc = run("decode", str(tmp_path / "big.zcs"), "-o", str(tmp_path / "x"), "--max-values", "10", ok=False)
    assert proc.returncode == 1 and "max_values" in proc.stderr and "Traceback" not in proc.stderr
    proc = run(
        "decode", str(tmp_path / "big.zcs"), "-o", str(tmp_path / "x"), "--max-decoded-size", "64", ok=False
    )
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    run("decode", str(tmp_path / "big.zcs"), "-o", str(tmp_path / "back.ndjson"))
    assert json.loads((tmp_path / "back.ndjson").read_text()) == list(range(100))
