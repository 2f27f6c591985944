"""Coverage-guided fuzzing of every decoder entry point with atheris (libFuzzer for Python).

    python fuzz/fuzz_zeroc.py TARGET [libFuzzer options] [corpus directory]

Targets: ``frame`` (``Codec.decode`` with a JSON and a protobuf dictionary and none), ``stream``
(``Codec.decode_stream``), ``learned`` (method-4 frames of every learned vector dictionary, with
and without the native coder), ``model`` (learned vector dictionaries whose model documents the
input edits, written as valid files: loaded, coding values exactly, decoding the input's payload),
``dictionary`` (``Dictionary.from_bytes`` then ``Codec``), ``container`` (a ``.zct`` read every
way: rows, columns, document, Arrow), ``cbor-packed`` (``unpack_cbor``) and ``http`` (request
bodies through ``Server.decode_request`` in every content coding and as frames). An input may
raise only Zeroc's errors: anything else is a finding, which libFuzzer reports with the input.
The corpus starts from the golden vectors in spec/vectors (``seeds``). With
``ZEROC_FUZZ_TIMES=file`` the slowest input per KB (after a warm-up on the seeds) is written to
``file``. The short run is in the
test suite (tests/test_fuzz_harness.py); the long run and its figures are in docs/FUZZING.md.
"""

from __future__ import annotations

import copy
import io
import json
import os
import random
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import atheris
import zstandard

with atheris.instrument_imports():
    import zeroc
    from zeroc import learned
    from zeroc.http._server import Route, Server
    from zeroc.learned import _generate
    from zeroc.tabular import ContainerReader, pack_cbor, unpack_cbor

VECTORS = Path(__file__).resolve().parents[1] / "spec" / "vectors"
LIMIT = 1 << 20  # decoded bytes: small, so that a long run spends its time on parsing


def _dictionary(name: str) -> zeroc.Dictionary:
    return zeroc.Dictionary.load(VECTORS / name)


def _decoding(codecs: list[zeroc.Codec]) -> Callable[[bytes], None]:
    """Decode ``data[1:]`` with the codec ``data[0]`` picks."""

    def run(data: bytes) -> None:
        codec = codecs[data[0] % len(codecs)] if data else codecs[0]
        try:
            codec.decode(data[1:])
        except zeroc.ZerocError:
            pass

    return run


def frame_target() -> Callable[[bytes], None]:
    codecs = [
        zeroc.Codec(max_decoded_size=LIMIT),
        zeroc.Codec(_dictionary("order-json-4k.zcd"), max_decoded_size=LIMIT),
        zeroc.Codec(_dictionary("product_view-4k.zcd"), max_decoded_size=LIMIT),
        zeroc.Codec(_dictionary("order-json-4k.zcd"), checksum=True, max_decoded_size=LIMIT),
    ]

    return _decoding(codecs)


def stream_target() -> Callable[[bytes], None]:
    """Streams of frames and session streams, with a zstd dictionary and with a learned model
    (whose sessions may hold learned records); a stream naming the other's dictionary fails
    fast with the first."""
    codecs = [
        zeroc.Codec(_dictionary("product_view-4k.zcd"), max_decoded_size=LIMIT),
        zeroc.Codec(_dictionary("profiles-learned.zcd"), max_decoded_size=LIMIT),
    ]

    def run(data: bytes) -> None:
        for codec in codecs:
            try:
                codec.decode_stream(data)
            except zeroc.ZerocError:
                pass

    return run


def learned_target() -> Callable[[bytes], None]:
    names = sorted(p.name for p in VECTORS.glob("*-learned.zcd"))
    codecs = [zeroc.Codec(_dictionary(n), max_decoded_size=LIMIT) for n in names]
    # The same models with the pure-Python coder: the generated code differs, the bytes must not.
    _generate.NATIVE, native = False, _generate.NATIVE
    try:
        codecs += [zeroc.Codec(_dictionary(n), max_decoded_size=LIMIT) for n in names]
    finally:
        _generate.NATIVE = native

    return _decoding(codecs)


def dictionary_target() -> Callable[[bytes], None]:
    def run(data: bytes) -> None:
        try:
            d = zeroc.Dictionary.from_bytes(data)
            zeroc.Codec(d)
            if d.model is not None:
                learned.Model.from_bytes(d.model).describe()
        except zeroc.ZerocError:
            pass

    return run


# What the model target writes into a model document's fields: bounds and their neighbours,
# wrong types, node kinds' names.
POISON: list[Any] = [
    None, -1, 0, 1, 2, 255, 256, 65535, 65536, 2**31, 2**32, 2**53 + 1, 2**63 - 1, 2**63, 2**64,
    2**70, -(2**80), "", "x", "\u00e9", "\ud800", [], {}, 0.5, 1.5, float("inf"), True, False,
    [0], [1, 2], [[0, 1]], [None], {"kind": "raw"}, "object", "chars", "map", "array",
]  # fmt: skip


def model_target() -> Callable[[bytes], None]:
    """Model files that pass the dictionary's own checks: the input chooses a learned vector
    dictionary and 1-4 edits of its model document (a field deleted, an integer moved, a value
    copied from a sibling, or one of POISON), which is then written as a valid ``.zcd`` (so the
    SHA-256 that stops the dictionary target's mutations is right). A model that loads must code
    the vectors' values and give them back exactly (types and key order included); its decoder
    also reads the input's last bytes as a payload."""
    sets = []
    for path in sorted(VECTORS.glob("learned*.json")):
        doc = json.loads(path.read_text())
        d = _dictionary(doc["dictionary"])
        assert d.model is not None
        values = list({json.dumps(v["input"]): v["input"] for v in doc["valid"]}.values())[:4]
        sets.append((d, json.loads(zstandard.ZstdDecompressor().decompress(d.model)), values))

    def run(data: bytes) -> None:
        fdp = atheris.FuzzedDataProvider(data)
        d, model, values = sets[fdp.ConsumeIntInRange(0, len(sets) - 1)]
        bad = copy.deepcopy(model)
        spots = _spots(bad, [])
        for _ in range(fdp.ConsumeIntInRange(1, 4)):
            holder, key = spots[fdp.ConsumeIntInRange(0, len(spots) - 1)]
            action, old = fdp.ConsumeIntInRange(0, 3), holder[key]
            if action == 0 and isinstance(holder, dict):
                del holder[key]
            elif action == 1 and type(old) is int:
                holder[key] = old + fdp.ConsumeIntInRange(-3, 3) * 2 ** fdp.ConsumeIntInRange(0, 64)
            elif action == 2 and isinstance(holder, list):
                holder[key] = copy.deepcopy(holder[fdp.ConsumeIntInRange(0, len(holder) - 1)])
            else:
                holder[key] = copy.deepcopy(POISON[fdp.ConsumeIntInRange(0, len(POISON) - 1)])
            spots = _spots(bad, [])  # a deleted or replaced subtree takes its spots with it
        section = zstandard.ZstdCompressor().compress(json.dumps(bad).encode())
        file = zeroc.Dictionary(d.content, d.serialization, d.codec, d.schema, model=section).to_bytes()
        try:
            loaded = zeroc.Dictionary.from_bytes(file)
            codec = zeroc.Codec(loaded, frame_id="context", max_decoded_size=LIMIT)
        except zeroc.ZerocError:
            return
        for value in values:
            try:
                frame = codec.encode(value)
            except zeroc.ZerocError:
                continue
            back = codec.decode(frame)  # what the model wrote, it reads: any error is a finding
            if json.dumps(back) != json.dumps(value):
                raise AssertionError(f"a loaded model gave back {back!r:.200} for {value!r:.200}")
        try:
            codec.decode(bytes([LEARNED_TAG]) + fdp.ConsumeBytes(fdp.remaining_bytes()))
        except zeroc.ZerocError:
            pass

    return run


LEARNED_TAG = 0x0C  # a frame of method 4 (learned) naming its dictionary by context, no checksum


def _spots(tree: Any, out: list[tuple[Any, Any]]) -> list[tuple[Any, Any]]:
    """Every (container, key) of a JSON document, depth first."""
    items = tree.items() if isinstance(tree, dict) else enumerate(tree) if isinstance(tree, list) else ()
    for k, v in items:
        out.append((tree, k))
        _spots(v, out)
    return out


def container_target() -> Callable[[bytes], None]:
    def run(data: bytes) -> None:
        try:
            with ContainerReader(io.BytesIO(data), max_values=1 << 18) as reader:
                len(reader)
                reader.rows(0, 5)
                reader.columns()
                reader.document()
                reader.to_arrow()
        except zeroc.ZerocError:
            pass

    return run


def cbor_packed_target() -> Callable[[bytes], None]:
    def run(data: bytes) -> None:
        try:
            unpack_cbor(data, max_built=1 << 20)
        except zeroc.ZerocError:
            pass

    return run


def http_target() -> Callable[[bytes], None]:
    d = _dictionary("product_view-4k.zcd")
    server = Server([Route("/pv/*", d)], max_request_size=LIMIT)
    media = f'application/x-zeroc; schema="zeroc.workloads.ProductView"; dictionary="{d.id}"'
    headers = [
        {"content-encoding": "zstd"},
        {"content-encoding": "gzip"},
        {"content-encoding": "br"},
        {"content-encoding": "dcz"},
        {"content-type": media},
        {"content-encoding": "zstd", "content-type": media},
    ]

    def run(data: bytes) -> None:
        h = headers[data[0] % len(headers)] if data else headers[0]
        try:
            server.decode_request("/pv/1", h, data[1:])
        except zeroc.ZerocError:
            pass

    return run


TARGETS = {
    "frame": frame_target,
    "stream": stream_target,
    "learned": learned_target,
    "dictionary": dictionary_target,
    "model": model_target,
    "container": container_target,
    "cbor-packed": cbor_packed_target,
    "http": http_target,
}


def seeds(target: str) -> list[bytes]:
    """The golden vectors an entry point reads, as its first corpus (with the selector byte
    where the target takes one)."""
    out: list[bytes] = []
    names = ("vectors.json", "streams-2.json", "sessions-1.json", "sessions-2.json")
    docs = [json.loads((VECTORS / n).read_text()) for n in names]
    if target in ("frame", "http"):
        for doc in docs:
            valid = doc.get("valid", [])
            out += [bytes([i % 6]) + bytes.fromhex(v["frame_hex"]) for i, v in enumerate(valid)]
            out += [b"\x00" + bytes.fromhex(v["data_hex"]) for v in doc["invalid"] if v["kind"] == "frame"]
    elif target == "stream":
        for doc in docs:
            out += [bytes.fromhex(v["stream_hex"]) for v in doc["streams"]]
            out += [bytes.fromhex(v["data_hex"]) for v in doc["invalid"] if v["kind"] == "stream"]
    elif target == "learned":
        for path in sorted(VECTORS.glob("learned*.json")):
            doc = json.loads(path.read_text())
            out += [bytes([i % 8]) + bytes.fromhex(v["frame_hex"]) for i, v in enumerate(doc["valid"])]
    elif target == "model":  # choices for FuzzedDataProvider: which model, where, what
        out += [random.Random(i).randbytes(32) for i in range(32)]
    elif target == "dictionary":
        out += [p.read_bytes() for p in sorted(VECTORS.glob("*.zcd"))]
    elif target == "container":
        out += [p.read_bytes() for p in sorted(VECTORS.glob("*.zct"))]
    elif target == "cbor-packed":  # the container vectors' documents, packed
        for path in sorted(VECTORS.glob("containers*.json")):
            out.append(pack_cbor(json.loads(path.read_text())["document"]))
    return out


def main() -> None:
    if len(sys.argv) < 2 or sys.argv[1] not in TARGETS:
        sys.exit(f"usage: fuzz_zeroc.py {{{','.join(TARGETS)}}} [libFuzzer options] [corpus]")
    target = sys.argv.pop(1)
    run = TARGETS[target]()
    corpus = [a for a in sys.argv[1:] if not a.startswith("-")]
    if corpus:  # seed an empty corpus directory from the golden vectors
        folder = Path(corpus[0])
        folder.mkdir(parents=True, exist_ok=True)
        if not any(folder.iterdir()):
            for i, seed in enumerate(seeds(target)):
                (folder / f"seed-{i:03d}").write_bytes(seed)
    if os.environ.get("ZEROC_FUZZ_TIMES"):  # the slowest input per KB, written as it goes
        for seed in seeds(target):  # warm up: the first call of a path imports pyarrow, pcodec
            run(seed)
        run = _timed(run, Path(os.environ["ZEROC_FUZZ_TIMES"]))
    atheris.Setup(sys.argv, run)
    atheris.Fuzz()


def _timed(run: Callable[[bytes], None], report: Path) -> Callable[[bytes], None]:
    """``run``, keeping the input that took longest per KB (an input under 1 KB counts as 1 KB);
    the report is rewritten at each new worst and every 10,000 inputs (libFuzzer leaves without
    running exit handlers)."""
    worst = {"ms_per_kb": 0.0, "bytes": 0, "inputs": 0}

    def timed(data: bytes) -> None:
        started = time.perf_counter()
        try:
            run(data)
        finally:
            ms = (time.perf_counter() - started) * 1000 / max(1.0, len(data) / 1024)
            worst["inputs"] += 1
            new = ms > worst["ms_per_kb"]
            if new:
                worst.update(ms_per_kb=ms, bytes=len(data))
            if new or worst["inputs"] % 10_000 == 0:
                report.write_text(json.dumps(worst) + "\n")

    return timed


if __name__ == "__main__":
    main()
