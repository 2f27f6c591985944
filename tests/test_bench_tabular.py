"""`zeroc bench tabular`: exact floors, every approach round-trips, the documented layout."""

import math
from pathlib import Path

from zeroc.bench import _tabular as T


def test_floors_are_the_generators_entropy() -> None:
    _, floor = T.make("uniform", 1000)
    assert math.isclose(floor, 1000 * (3 * math.log2(100_000) + 1) / 8)
    _, floor = T.make("walk", 10)
    assert math.isclose(floor, (30 * math.log2(71) + 10 + 3 * (math.log2(1e5) - math.log2(71))) / 8)
    doc, _ = T.make("binary32", 50)
    import numpy as np

    assert all(float(np.float32(r["value1"])) == r["value1"] for r in doc["data"])
    assert T.make("walk", 100, seed=3) == T.make("walk", 100, seed=3)


def test_run_layout_and_zeroc_is_smallest() -> None:
    result = T.run(sizes=(400,))
    assert set(result["tables"]) == {"uniform-400", "walk-400", "binary32-400"}
    for t in result["tables"].values():
        a = t["approaches"]
        assert {
            "json",
            "cbor",
            "cbor-packed",
            "cbor-packed+zstd-19",
            "cbor-columnar+brotli-q5",
            "parquet+zstd-19",
            "arrow-ipc+zstd",
            "zeroc",
        } <= set(a)
        for r in a.values():
            assert set(r) == {"bytes", "encode_ms", "decode_rows_ms", "decode_columns_ms", "times_floor"}
        assert min(a, key=lambda k: a[k]["bytes"]) == "zeroc"
    ts = result["timeseries"]
    assert ts["iso_strings"]["zeroc_bytes"] <= ts["integer_ms"]["zeroc_bytes"] * 1.02
    assert "zeroc" in T.table(result) and T.markdown(result, "x").startswith("# Tabular benchmark")
    docs = result["documents"]  # each form was read back and compared by the run itself
    assert set(docs) == {"github_events", "twitter", "apache_builds", "instruments", "canada", "aws_shapes"}
    for d in docs.values():
        assert d["cbor_packed_bytes"] < d["cbor_bytes"] and d["zeroc_bytes"] < d["json_bytes"]
        assert 0 < d["json_brotli11_bytes"] < d["json_bytes"]
    assert docs["aws_shapes"]["zeroc_bytes"] < docs["aws_shapes"]["json_zstd19_bytes"]  # maps (issue 16)
    assert "| aws_shapes |" in T.markdown(result, "x")


def test_plot(tmp_path: Path) -> None:
    result = T.run(sizes=(200,), real=False)
    T.plot(result, str(tmp_path / "t.png"))
    assert (tmp_path / "t.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
