"""``zeroc bench tabular``: the CBOR evaluation's matrix for tables, plus Parquet, Arrow and Zeroc.

Documents are ``{"metadata": {...}, "data": [{"name": "test<i>", "value1".."value3": float,
"ok": bool}, ...]}`` in three variants whose information floor is exact:

- ``uniform``: values k / 1000 with k uniform in [0, 100,000): log2(10^5) bits each;
- ``walk``: each value the previous plus j / 1000, j uniform in [-35, 35]: log2(71) bits;
- ``binary32``: values k / 1024 with k uniform in [0, 102,400): exact in binary32, log2(102,400) bits.

The ranges give floors close to the two distributions REFERENCE.md section 2 measured (626,441 B
and 242,418 B for 100,000 rows), so its figures can be compared with these.

``ok`` is a fair coin (1 bit); ``name`` is determined by the row number (0 bits).
"""

from __future__ import annotations

import functools
import gzip
import importlib.util
import io
import json
import math
import random
import time
import zlib
from collections.abc import Callable
from typing import Any

import zstandard as zstd

VARIANTS = ("uniform", "walk", "binary32")
CODECS = ("none", "gzip-9", "brotli-q5", "brotli-q11", "zstd-3", "zstd-19")
BROTLI_Q11_BUDGET = 1_000_000  # bytes: brotli-q11 costs seconds per MB for ~nothing (the CBOR study)

Progress = Callable[[str], None]


def make(variant: str, n: int, seed: int = 7) -> tuple[dict[str, Any], float]:
    """The document and its information floor in bytes."""
    rng = random.Random(seed)
    rows = []
    walk = [rng.randrange(100_000) for _ in range(3)]
    for i in range(n):
        if variant == "uniform":
            values = [rng.randrange(100_000) / 1000 for _ in range(3)]
        elif variant == "walk":
            walk = [w + rng.randint(-35, 35) for w in walk]
            values = [w / 1000 for w in walk]
        elif variant == "binary32":
            values = [rng.randrange(102_400) / 1024 for _ in range(3)]
        else:
            raise ValueError(f"unknown variant {variant!r}")
        rows.append(
            {
                "name": f"test{i}",
                "value1": values[0],
                "value2": values[1],
                "value3": values[2],
                "ok": rng.random() < 0.5,
            }
        )
    bits_per_value = {
        "uniform": math.log2(100_000),
        "walk": math.log2(71),
        "binary32": math.log2(102_400),
    }[variant]
    floor_bits = n * (3 * bits_per_value + 1)
    if variant == "walk":  # the three starting points
        floor_bits += 3 * math.log2(100_000) - 3 * bits_per_value
    doc = {"metadata": {"variant": variant, "rows": n, "source": "zeroc bench tabular"}, "data": rows}
    return doc, floor_bits / 8


def _compress(codec: str, data: bytes) -> bytes | None:
    import brotli

    if codec == "none":
        return data
    if codec == "gzip-9":
        return gzip.compress(data, 9, mtime=0)
    if codec == "brotli-q5":
        return brotli.compress(data, quality=5)  # type: ignore[no-any-return]
    if codec == "brotli-q11":
        return brotli.compress(data, quality=11) if len(data) <= BROTLI_Q11_BUDGET else None
    if codec == "zstd-3":
        return zstd.ZstdCompressor(level=3).compress(data)
    return zstd.ZstdCompressor(level=19).compress(data)


def _decompress(codec: str, data: bytes) -> bytes:
    import brotli

    if codec == "none":
        return data
    if codec == "gzip-9":
        return zlib.decompress(data, 31)
    if codec.startswith("brotli"):
        return brotli.decompress(data)  # type: ignore[no-any-return]
    return zstd.ZstdDecompressor().decompress(data)


def _decode(codec: str, blob: bytes, parse: Callable[[bytes], Any], shape: Callable[[Any], Any]) -> Any:
    return shape(parse(_decompress(codec, blob)))


def _columns_of(rows: list[dict[str, Any]]) -> dict[str, list[Any]]:
    return {k: [r[k] for r in rows] for k in rows[0]} if rows else {}


def _rows_of(columns: dict[str, list[Any]]) -> list[dict[str, Any]]:
    keys = list(columns)
    return [dict(zip(keys, t, strict=True)) for t in zip(*columns.values(), strict=True)]


def _ms(fn: Callable[[], Any]) -> tuple[float, Any]:
    """Best of up to 3 runs (fewer when a run takes over 0.5 s): this machine is noisy (±30%)."""
    best, out = float("inf"), None
    for _ in range(3):
        start = time.perf_counter()
        out = fn()
        took = time.perf_counter() - start
        best = min(best, took)
        if took > 0.5:
            break
    return round(best * 1000, 2), out


def measure(doc: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Every approach on one document: bytes, encode ms, decode ms to rows and to columns.
    Each decode is checked against the document."""
    import cbor2
    import pyarrow as pa
    import pyarrow.ipc as ipc
    import pyarrow.parquet as pq

    from zeroc.tabular import ContainerReader, pack, pack_cbor, unpack_cbor

    rows = doc["data"]
    out: dict[str, dict[str, Any]] = {}
    layouts: dict[
        str, tuple[Callable[[], bytes], Callable[[bytes], Any], Callable[[Any], Any], Callable[[Any], Any]]
    ] = {
        "json": (
            lambda: json.dumps(doc, separators=(",", ":")).encode(),
            json.loads,
            lambda d: d["data"],
            lambda d: _columns_of(d["data"]),
        ),
        "cbor": (
            lambda: cbor2.dumps(doc),
            cbor2.loads,
            lambda d: d["data"],
            lambda d: _columns_of(d["data"]),
        ),
        "cbor-packed": (  # draft-ietf-cbor-packed: rows as records (tag 114), shared items
            lambda: pack_cbor(doc),
            unpack_cbor,
            lambda d: d["data"],
            lambda d: _columns_of(d["data"]),
        ),
        "cbor-columnar": (
            lambda: cbor2.dumps({"metadata": doc["metadata"], "data": _columns_of(rows)}),
            cbor2.loads,
            lambda d: _rows_of(d["data"]),
            lambda d: d["data"],
        ),
    }
    for layout, (build, parse, to_rows, to_cols) in layouts.items():
        build_ms, raw = _ms(build)
        for codec in CODECS:
            comp_ms, blob = _ms(functools.partial(_compress, codec, raw))
            if blob is None:
                continue
            dec_rows_ms, back = _ms(functools.partial(_decode, codec, blob, parse, to_rows))
            dec_cols_ms, cols = _ms(functools.partial(_decode, codec, blob, parse, to_cols))
            assert back == rows and len(next(iter(cols.values()))) == len(rows)
            out[f"{layout}+{codec}" if codec != "none" else layout] = {
                "bytes": len(blob),
                "encode_ms": round(build_ms + comp_ms, 2),
                "decode_rows_ms": dec_rows_ms,
                "decode_columns_ms": dec_cols_ms,
            }

    def parquet() -> bytes:
        sink = io.BytesIO()
        table = pa.table(_columns_of(rows)).replace_schema_metadata({"metadata": json.dumps(doc["metadata"])})
        pq.write_table(table, sink, compression="zstd", compression_level=19)
        return sink.getvalue()

    def arrow() -> bytes:
        sink = io.BytesIO()
        table = pa.table(_columns_of(rows))
        with ipc.new_file(sink, table.schema, options=ipc.IpcWriteOptions(compression="zstd")) as w:
            w.write_table(table)
        return sink.getvalue()

    def zeroc() -> bytes:
        sink = io.BytesIO()
        pack(doc, sink)
        return sink.getvalue()

    readers: dict[str, tuple[Callable[[], bytes], Callable[[bytes], Any], Callable[[bytes], Any]]] = {
        "openzl": (
            functools.partial(_openzl_encode, doc),
            lambda b: _openzl_decode(b)[1],
            lambda b: _openzl_decode(b)[0],
        ),
        "parquet+zstd-19": (
            parquet,
            lambda b: pq.read_table(io.BytesIO(b)).to_pylist(),
            lambda b: pq.read_table(io.BytesIO(b)),
        ),
        "arrow-ipc+zstd": (
            arrow,
            lambda b: ipc.open_file(io.BytesIO(b)).read_all().to_pylist(),
            lambda b: ipc.open_file(io.BytesIO(b)).read_all(),
        ),
        "zeroc": (
            zeroc,
            lambda b: ContainerReader(io.BytesIO(b)).document()["data"],
            lambda b: ContainerReader(io.BytesIO(b)).columns(),
        ),
    }
    if importlib.util.find_spec("openzl") is None:  # "where it installs" (the words)
        del readers["openzl"]
    for name, (enc, dec_rows, dec_cols) in readers.items():
        enc_ms, blob = _ms(enc)
        rows_ms, back = _ms(functools.partial(dec_rows, blob))
        cols_ms, _ = _ms(functools.partial(dec_cols, blob))
        assert back == rows, f"{name} does not round-trip"
        out[name] = {
            "bytes": len(blob),
            "encode_ms": enc_ms,
            "decode_rows_ms": rows_ms,
            "decode_columns_ms": cols_ms,
        }
    return out


def _openzl_encode(doc: dict[str, Any]) -> bytes:
    """OpenZL's generic numeric graph on the columns, decimals given as scaled integers (the
    transform REFERENCE.md found decisive); not the hand-tuned graph REFERENCE.md also reports."""
    import numpy as np
    import openzl.ext as zl

    cols = _columns_of(doc["data"])
    meta: dict[str, Any] = {"metadata": doc["metadata"], "columns": []}
    arrays: list[Any] = []  # an openzl Input does not keep its data alive (REFERENCE.md: arrays)
    for name, values in cols.items():
        if all(type(v) is bool for v in values):
            arrays.append(np.asarray(values, dtype=np.uint8))
            meta["columns"].append([name, "bool", 1])
        elif all(type(v) is str for v in values):
            arrays.append("\n".join(values).encode())
            meta["columns"].append([name, "str", 1])
        else:
            arr = np.asarray(values, dtype=np.float64)
            scale = next(k for k in (1000, 1024, 1) if np.array_equal(np.round(arr * k) / k, arr))
            arrays.append(np.round(arr * scale).astype(np.int64))
            meta["columns"].append([name, "num", scale])
    compressor = zl.Compressor()
    compressor.select_starting_graph(zl.graphs.Compress()(compressor))
    cctx = zl.CCtx()
    cctx.ref_compressor(compressor)
    cctx.set_parameter(zl.CParam.FormatVersion, zl.MAX_FORMAT_VERSION)
    # The metadata's bytes are kept in ``arrays`` too: an Input keeps no bytes alive either, so a
    # temporary's memory could be reused before compress() read it (a test under load decoded
    # metadata whose first 32 bytes were pointers; 200 of 200 such round trips failed when
    # allocations came between, 2026-12-06).
    arrays.insert(0, json.dumps(meta).encode())
    inputs = [zl.Input(zl.Type.Serial if isinstance(a, bytes) else zl.Type.Numeric, a) for a in arrays]
    return bytes(cctx.compress(inputs))


def _openzl_decode(blob: bytes) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    import numpy as np
    import openzl.ext as zl

    outputs = zl.DCtx().decompress(blob)
    meta = json.loads(outputs[0].content.as_bytes())
    cols: dict[str, Any] = {}
    for (name, kind, scale), out in zip(meta["columns"], outputs[1:], strict=True):
        if kind == "str":
            cols[name] = out.content.as_bytes().decode().split("\n")
        elif kind == "bool":
            cols[name] = out.content.as_nparray().astype(bool)
        else:  # numeric outputs come back unsigned (REFERENCE.md)
            cols[name] = out.content.as_nparray().view(np.int64) / scale
    rows = _rows_of({k: v.tolist() if hasattr(v, "tolist") else v for k, v in cols.items()})
    return cols, rows


def run(
    sizes: tuple[int, ...] = (1_000, 100_000), progress: Progress | None = None, real: bool = True
) -> dict[str, Any]:
    say = progress or (lambda m: None)
    result: dict[str, Any] = {"tables": {}, "timeseries": {}}
    for n in sizes:
        for variant in VARIANTS:
            say(f"tabular: {variant}, {n:,} rows")
            doc, floor = make(variant, n)
            approaches = measure(doc)
            for r in approaches.values():
                r["times_floor"] = round(r["bytes"] / floor, 4)
            result["tables"][f"{variant}-{n}"] = {
                "rows": n,
                "variant": variant,
                "floor_bytes": round(floor),
                "approaches": approaches,
            }
    say("tabular: time series, ISO strings vs integer milliseconds")
    result["timeseries"] = timeseries(max(sizes))
    if real:
        say("tabular: real documents")
        result["documents"] = documents()
    return result


def aws_shapes(count: int = 8_000) -> list[dict[str, Any]]:
    """API shapes from botocore's service models (in the ``bench`` extra; nothing downloaded):
    records of several kinds (structures, strings, lists, maps) whose ``members`` objects are
    keyed by member names: irregular records with maps, as real API descriptions are."""
    from botocore.loaders import Loader

    loader = Loader()
    out: list[dict[str, Any]] = []
    for service in sorted(loader.list_available_services("service-2")):
        model = loader.load_service_model(service, "service-2")
        prefix = model.get("metadata", {}).get("endpointPrefix", service)
        for name, shape in sorted(model.get("shapes", {}).items()):
            record = {"service": prefix, "name": name}
            for k, v in shape.items():
                if k == "members":
                    v = {m: {kk: vv for kk, vv in mv.items() if kk != "documentation"} for m, mv in v.items()}
                if k != "documentation":
                    record[k] = v
            out.append(json.loads(json.dumps(record)))  # plain dicts, as they arrive over the wire
            if len(out) == count:
                return out
    return out


def _brotli11(data: bytes) -> bytes:
    import brotli

    return brotli.compress(data, quality=11, lgwin=24)  # type: ignore[no-any-return]


def documents() -> dict[str, Any]:
    """Real documents (the corpora, and AWS API shapes built from botocore) as JSON + zstd-19,
    JSON + brotli-11, CBOR Packed (+ zstd-19) and a Zeroc container: bytes, the ratio to JSON +
    zstd-19, pack time, and a range read of 100 rows; every form read back and compared."""
    from zeroc.bench._corpora import _document
    from zeroc.tabular import ContainerReader, pack, pack_cbor, unpack_cbor

    names = ("github_events", "twitter", "apache_builds", "instruments", "canada")
    docs = {name: _document(name) for name in names}
    docs["aws_shapes"] = aws_shapes()
    out: dict[str, Any] = {}
    for name, doc in docs.items():
        raw = json.dumps(doc, separators=(",", ":"), ensure_ascii=False).encode()
        z19 = _compress("zstd-19", raw) or b""
        packed = pack_cbor(doc)
        assert unpack_cbor(packed) == doc, f"{name}: CBOR Packed does not round-trip"
        pack_ms, zct = _ms(functools.partial(_pack, pack, doc))
        reader = ContainerReader(io.BytesIO(zct))
        assert reader.document() == doc, f"{name}: the container does not round-trip"
        rows_ms, _ = _ms(functools.partial(_rows, zct))
        out[name] = {
            "json_bytes": len(raw),
            "json_zstd19_bytes": len(z19),
            # The container may code its heads and text with brotli at 11: the same codec on the
            # JSON, whole (a window of 16 MiB), is its peer too. Seconds a MB, on these few MB.
            "json_brotli11_bytes": len(_brotli11(raw)),
            "cbor_bytes": len(cbor2_dumps(doc)),
            "cbor_packed_bytes": len(packed),
            "cbor_packed_zstd19_bytes": len(_compress("zstd-19", packed) or b""),
            "zeroc_bytes": len(zct),
            "zeroc_vs_json_zstd19": round(len(zct) / len(z19), 3),
            "zeroc_pack_ms": pack_ms,
            "zeroc_rows_100_ms": rows_ms,
        }
    return out


def _rows(zct: bytes) -> list[Any]:
    from zeroc.tabular import ContainerReader

    return ContainerReader(io.BytesIO(zct)).rows(100, 200)


def _pack(pack: Callable[..., Any], doc: Any) -> bytes:
    sink = io.BytesIO()
    pack(doc, sink)
    return sink.getvalue()


def cbor2_dumps(doc: Any) -> bytes:
    import cbor2

    return bytes(cbor2.dumps(doc))


def timeseries(n: int) -> dict[str, Any]:
    """The same readings with timestamps as ISO-8601 strings and as integer milliseconds."""
    import numpy as np

    from zeroc.tabular import pack

    rng = random.Random(11)
    base = np.datetime64("2024-01-01T00:00:00", "ms")
    t, iso, ints = 0, [], []
    for _ in range(n):
        t += rng.randint(900, 1100)
        stamp = base + np.timedelta64(t, "ms")
        value = round(rng.gauss(20, 5), 1)
        iso.append({"time": f"{np.datetime_as_string(stamp, unit='ms')}Z", "celsius": value})
        ints.append({"time": int(stamp.astype(np.int64)), "celsius": value})
    out = {}
    for name, rows in (("iso_strings", iso), ("integer_ms", ints)):
        raw = json.dumps(rows, separators=(",", ":")).encode()
        sink = io.BytesIO()
        pack(rows, sink)
        out[name] = {
            "json_bytes": len(raw),
            "json_zstd19_bytes": len(_compress("zstd-19", raw) or b""),
            "zeroc_bytes": len(sink.getvalue()),
        }
    return out


def table(result: dict[str, Any]) -> str:
    lines = []
    for key, t in result["tables"].items():
        lines.append(f"{key} (floor {t['floor_bytes']:,} B)")
        lines.append(
            f"  {'approach':<26}{'bytes':>12}{'x floor':>9}{'enc ms':>10}{'rows ms':>10}{'cols ms':>10}"
        )
        for name, r in sorted(t["approaches"].items(), key=lambda kv: kv[1]["bytes"]):
            lines.append(
                f"  {name:<26}{r['bytes']:>12,}{r['times_floor']:>9.3f}{r['encode_ms']:>10.1f}"
                f"{r['decode_rows_ms']:>10.1f}{r['decode_columns_ms']:>10.1f}"
            )
        lines.append("")
    ts = result["timeseries"]
    lines.append(
        "time series: "
        + ", ".join(
            f"{k}: JSON {v['json_bytes']:,} B, JSON+zstd-19 {v['json_zstd19_bytes']:,} B, "
            f"zeroc {v['zeroc_bytes']:,} B"
            for k, v in ts.items()
        )
    )
    lines += verdict(result)
    return "\n".join(lines)


def verdict(result: dict[str, Any]) -> list[str]:
    out = []
    for key, t in result["tables"].items():
        a = t["approaches"]
        z = a["zeroc"]
        ratio = z["bytes"] / a["cbor-columnar+brotli-q5"]["bytes"]
        beats = [k for k in ("parquet+zstd-19", "openzl") if k in a and z["bytes"] < a[k]["bytes"]]
        out.append(
            f"{key}: zeroc {z['times_floor']:.4f}x floor, {ratio:.3f}x CBOR columnar+brotli-q5, "
            f"smaller than {' and '.join(beats) or 'neither Parquet nor OpenZL'}; "
            f"encode {z['encode_ms']} ms, "
            f"rows {z['decode_rows_ms']} ms, columns {z['decode_columns_ms']} ms"
        )
    for key, d in result.get("documents", {}).items():
        forms = ("json_zstd19_bytes", "json_brotli11_bytes", "cbor_packed_zstd19_bytes")
        smaller = [f.removesuffix("_bytes") for f in forms if d[f] < d["zeroc_bytes"]]
        out.append(
            f"{key}: zeroc {d['zeroc_vs_json_zstd19']:.3f}x JSON + zstd-19 (issue 16 asks <= 0.8), "
            f"{d['zeroc_bytes'] / d['json_brotli11_bytes']:.3f}x JSON + brotli-11; "
            + (f"larger than {' and '.join(smaller)}" if smaller else "the smallest form")
        )
    return out


def markdown(result: dict[str, Any], command: str) -> str:
    lines = [
        "# Tabular benchmark",
        "",
        f"Generated by `{command}`; rerun it rather than editing.",
        "",
        'Documents `{"metadata": ..., "data": [{"name": "test<i>", "value1..3": float, '
        '"ok": bool}]}` in three variants with exact information floors (see '
        "`src/zeroc/bench/_tabular.py`). Encode = build + compress; decode = decompress + parse "
        "back to rows, or to columns; times are the best of up to 3 runs. brotli-q11 is skipped "
        "above 1 MB. OpenZL runs its generic numeric graph with decimals as scaled integers "
        "(not REFERENCE.md's hand-tuned graph).",
        "",
    ]
    for key, t in result["tables"].items():
        lines += [
            f"## {key} (floor {t['floor_bytes']:,} B)",
            "",
            "| approach | bytes | x floor | encode ms | decode rows ms | decode columns ms |",
            "|---|---:|---:|---:|---:|---:|",
        ]
        for name, r in sorted(t["approaches"].items(), key=lambda kv: kv[1]["bytes"]):
            lines.append(
                f"| {name} | {r['bytes']:,} | {r['times_floor']:.3f} | {r['encode_ms']} | "
                f"{r['decode_rows_ms']} | {r['decode_columns_ms']} |"
            )
        lines.append("")
    lines += [
        "## Time series: ISO strings vs integer milliseconds",
        "",
        "| timestamps | JSON | JSON + zstd-19 | Zeroc |",
        "|---|---:|---:|---:|",
    ]
    for k, v in result["timeseries"].items():
        lines.append(f"| {k} | {v['json_bytes']:,} | {v['json_zstd19_bytes']:,} | {v['zeroc_bytes']:,} |")
    if result.get("documents"):
        lines += [
            "",
            "## Real documents",
            "",
            "The corpora of `zeroc bench` and 8,000 AWS API shapes built from botocore's service "
            "models (irregular records whose `members` are keyed by name). Every form is read back "
            "and compared. *rows ms*: `rows(100, 200)` of the container, opened afresh.",
            "",
            "| document | JSON | JSON + zstd-19 | JSON + brotli-11 | CBOR | CBOR Packed | "
            "CBOR Packed + zstd-19 | Zeroc | Zeroc / JSON + zstd-19 | pack ms | rows ms |",
            "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
        ]
        for k, v in result["documents"].items():
            lines.append(
                f"| {k} | {v['json_bytes']:,} | {v['json_zstd19_bytes']:,} | {v['json_brotli11_bytes']:,} | "
                f"{v['cbor_bytes']:,} | "
                f"{v['cbor_packed_bytes']:,} | {v['cbor_packed_zstd19_bytes']:,} | {v['zeroc_bytes']:,} | "
                f"{v['zeroc_vs_json_zstd19']:.3f} | {v['zeroc_pack_ms']} | {v['zeroc_rows_100_ms']} |"
            )
    lines += ["", "## Verdict", "", *(f"- {v}" for v in verdict(result)), ""]
    return "\n".join(lines)


def plot(result: dict[str, Any], path: str) -> None:
    """Shipped bytes (as a multiple of the floor) against encode ms, one point per approach."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(9, 6))
    largest = max(t["rows"] for t in result["tables"].values())
    markers = dict(zip(VARIANTS, ["o", "s", "^"], strict=True))
    for t in result["tables"].values():
        if t["rows"] != largest:
            continue
        for name, r in t["approaches"].items():
            ax.scatter(
                max(r["encode_ms"], 0.01),
                r["times_floor"],
                marker=markers[t["variant"]],
                color="crimson" if name == "zeroc" else "grey",
                s=40,
            )
            if t["variant"] == "walk":
                ax.annotate(name, (max(r["encode_ms"], 0.01), r["times_floor"]), fontsize=6)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("encode ms (build + compress)")
    ax.set_ylabel("bytes / information floor")
    ax.set_title(f"zeroc bench tabular, {largest:,} rows (o uniform, s walk, ^ binary32; red: Zeroc)")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
