"""The TypeScript package (js/) against the Python library: what Python encodes, node decodes
exactly. The package's own conformance run (`npm test`: every golden vector) is part of
`make test`; these tests add what vectors cannot: libzstd's output at every level, real corpora,
Hypothesis-drawn values, sessions, and corrupted input."""

from __future__ import annotations

import functools
import json
import os
import random
import shutil
import struct
import subprocess
import zlib
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
import zstandard
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import zeroc
from tests.conftest import CONTENT_CANDIDATES, DATA, ROOT
from tests.strategies import json_values, keyed
from tests.test_http import Server, start_server
from zeroc import Dictionary, _json
from zeroc.http.demo import ORDERS
from zeroc.tabular._columns import STAMP_FORMATS, render_stamp
from zeroc.workloads import Order, ProductView, generate

JS = ROOT / "js"
NODE = shutil.which("node")
pytestmark = pytest.mark.skipif(NODE is None, reason="node is not installed (make system installs it)")


@pytest.fixture(scope="module", autouse=True)
def built() -> None:
    """The package compiled from its sources (npm ci once, then tsc)."""
    npm = shutil.which("npm")
    assert npm is not None, "npm is missing beside node"
    if not (JS / "node_modules" / ".package-lock.json").is_file():
        subprocess.run([npm, "ci", "--no-audit", "--no-fund"], cwd=JS, check=True, capture_output=True)
    subprocess.run([npm, "run", "build"], cwd=JS, check=True, capture_output=True)


def node(spec: dict[str, Any], tmp_path: Path) -> dict[str, Any]:
    path = tmp_path / f"cases-{random.getrandbits(32):08x}.json"
    path.write_text(json.dumps(spec))
    run = subprocess.run(
        [NODE, "scripts/decode-cases.mjs", str(path)], cwd=JS, capture_output=True, text=True, timeout=600
    )
    assert run.returncode == 0, run.stderr
    report: dict[str, Any] = json.loads(run.stdout)
    assert report["failed"] == 0, report["failures"]
    return report


def canon(v: Any) -> Any:
    """A value as the node side reports it: numbers by their float64 bits, integers past 2^53
    as digits, object entries sorted (JavaScript puts integer-like keys first)."""
    if v is None or isinstance(v, (bool, str)):
        return v
    if isinstance(v, int) and abs(v) > 2**53 - 1:
        return ["i", str(v)]
    if isinstance(v, (int, float)):
        return ["n", struct.pack("<d", float(v)).hex()]
    if isinstance(v, bytes):
        return ["b", v.hex()]
    if isinstance(v, list):
        return ["a", [canon(x) for x in v]]
    return ["o", sorted([k, canon(x)] for k, x in v.items())]


def sorted_entries(v: Any) -> Any:
    if isinstance(v, list) and len(v) == 2 and v[0] == "o":
        return ["o", sorted([k, sorted_entries(x)] for k, x in v[1])]
    if isinstance(v, list) and len(v) == 2 and v[0] == "a":
        return ["a", [sorted_entries(x) for x in v[1]]]
    return v


def corpus_messages() -> list[bytes]:
    out = []
    for name in ("twitter.json", "github_events.json", "apache_builds.json", "instruments.json"):
        doc = json.loads((DATA / "json" / name).read_text())
        items = (
            doc.get("statuses") or doc.get("jobs") or doc.get("instruments") if isinstance(doc, dict) else doc
        )
        out += [json.dumps(x, separators=(",", ":")).encode() for x in (items or [doc])[:120]]
    return out


def test_libzstd_output_at_every_level_decodes_exactly(tmp_path: Path) -> None:
    """libzstd's frames (levels -5..22, trained and raw-content dictionaries, checksums, 0 B to
    1 MB, real corpora, random and repetitive bytes, matches overlapping their own output or
    running on from the dictionary) decode exactly; corrupted, they decode or raise the
    package's errors and nothing else."""
    messages = corpus_messages()
    trained = zstandard.train_dictionary(8192, messages[::2]).as_bytes()
    raw = b"".join(messages[1:60])[:20000]
    dicts = {
        "trained": zstandard.ZstdCompressionDict(trained),
        "raw": zstandard.ZstdCompressionDict(raw, dict_type=zstandard.DICT_TYPE_RAWCONTENT),
    }
    rng = random.Random(5)
    canada = (DATA / "json" / "canada.json").read_bytes()
    big = b"".join(messages)[:1_000_000]
    contents = [*messages[1::5], b"", b"a" * 200_000, rng.randbytes(3000), big, canada[:700_000]]
    cases = []
    for i, content in enumerate(contents):
        level = [-5, 1, 3, 6, 12, 19, 22][i % 7]
        name = [None, "trained", "raw"][i % 3]
        c = zstandard.ZstdCompressor(
            level=level, dict_data=dicts[name] if name else None, write_checksum=i % 2 == 0
        )
        cases.append(
            {
                "codec": "zstd",
                "dictionary": name,
                "data_hex": c.compress(content).hex(),
                "content_hex": content.hex(),
            }
        )
        if len(content) < 20000:  # DEFLATE as method 3 writes it: raw, the dictionary's tail preset
            d = zlib.compressobj(9, zlib.DEFLATED, -15, 9, zlib.Z_DEFAULT_STRATEGY, raw[-32768:])
            cases.append(
                {
                    "codec": "deflate",
                    "dictionary": "raw",
                    "data_hex": (d.compress(content) + d.flush()).hex(),
                    "content_hex": content.hex(),
                }
            )
    # Matches that overlap their own output (periods of 1-100 bytes, longer than one copy) and
    # ones that start in the raw dictionary's content and run on into the frame's.
    for level in (3, 19):
        for period in (2, 3, 7, 17, 100):
            content = rng.randbytes(period) * (20_000 // period) + rng.randbytes(40) + raw[-period:] * 9
            for name in (None, "raw"):
                c = zstandard.ZstdCompressor(level=level, dict_data=dicts[name] if name else None)
                cases.append(
                    {
                        "codec": "zstd",
                        "dictionary": name,
                        "data_hex": c.compress(content).hex(),
                        "content_hex": content.hex(),
                    }
                )
    report = node(
        {
            "dictionaries": {"trained": trained.hex(), "raw": raw.hex()},
            "cases": cases,
            "fuzz": {"seed": 11, "rounds": 40},
        },
        tmp_path,
    )
    assert report["decoded"] == len(cases)
    assert report["corrupted"] == 40 * len(cases) and report["rejected"] > 0.5 * report["corrupted"]


def frame_cases(codec: zeroc.Codec, name: str | None, values: list[Any]) -> list[dict[str, Any]]:
    out = []
    for v in values:
        frame = codec.encode(v)
        out.append(
            {"dictionary": name, "frame_hex": frame.hex(), "payload_hex": codec.decode_payload(frame).hex()}
        )
    return out


def check_values(report: dict[str, Any], expected: list[Any]) -> None:
    assert len(report["values"]) == len(expected)
    for got, value in zip(report["values"], expected, strict=True):
        assert sorted_entries(got) == canon(value)


@pytest.fixture(scope="module")
def dictionaries(tmp_path_factory: pytest.TempPathFactory) -> dict[str, zeroc.Dictionary]:
    """A zstd and a DEFLATE dictionary for real JSON, and a protobuf one (ProductView)."""
    messages = [json.loads(m) for m in corpus_messages()]
    return {
        "zstd": zeroc.train(messages[::2], candidates=[("zstd", 19)]),
        "deflate": zeroc.train(messages[::2], candidates=[("deflate", 9)]),
        "protobuf": zeroc.train(
            generate("product_view", 2000, seed=3), schema=ProductView, candidates=CONTENT_CANDIDATES
        ),
    }


def test_real_frames_of_every_method_and_reference(
    tmp_path: Path, dictionaries: dict[str, zeroc.Dictionary]
) -> None:
    """Real messages through Python's codecs (zstd-block, zstd-frame, deflate, stored; context,
    short-id and SHA-256 references; checksums), decoded by node to the same payload and value."""
    messages = [json.loads(m) for m in corpus_messages()][1::2]
    big = {"items": messages * 3}  # past 128 KiB: zstd-frame
    frames: list[dict[str, Any]] = []
    expected: list[Any] = []
    for name in ("zstd", "deflate"):
        for options in ({}, {"frame_id": "short"}, {"frame_id": "sha256", "checksum": True}):
            codec = zeroc.Codec(dictionaries[name], **options)
            frames += frame_cases(codec, name, [*messages[:40], big, 0, "x"])
            expected += [*messages[:40], big, 0, "x"]
    plain = zeroc.Codec()
    frames += frame_cases(plain, None, [*messages[:20], big])
    expected += [*messages[:20], big]
    views = generate("product_view", 200, seed=9)
    frames += frame_cases(zeroc.Codec(dictionaries["protobuf"]), "protobuf", views)
    expected += views
    methods = {bytes.fromhex(f["frame_hex"])[0] & 7 for f in frames}
    assert methods == {0, 1, 2, 3}
    zcd = {k: d.to_bytes().hex() for k, d in dictionaries.items()}
    report = node({"zcd": zcd, "frames": frames}, tmp_path)
    assert report["decoded"] == len(frames)
    check_values(report, expected)


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(values=st.lists(json_values, min_size=1, max_size=60))
def test_any_json_value_decodes_as_python_wrote_it(tmp_path: Path, values: list[Any]) -> None:
    """Hypothesis-drawn JSON values (integers past 64 bits, -0.0, 5e-324, any text): node's
    value is Python's, number for number (a big integer comes back as a BigInt)."""
    codec = zeroc.Codec()
    report = node({"frames": frame_cases(codec, None, values)}, tmp_path)
    check_values(report, values)


def test_sessions_decode_record_by_record(tmp_path: Path, dictionaries: dict[str, zeroc.Dictionary]) -> None:
    """A session of real messages (forms 0-2, resets, checksums, with and without the
    dictionary), record by record, as Python's session decoder reads it."""
    messages = [json.loads(m) for m in corpus_messages()]
    sessions, expected = [], []
    for name, checksum, use in (("zstd", False, True), ("zstd", True, False), ("deflate", False, True)):
        codec = zeroc.Codec(dictionaries[name])
        enc = codec.session_encoder(checksum=checksum, dictionary=use)
        records, batches = [], []
        for i in range(0, 200, 5):
            batch = messages[i : i + 1 + i % 4]
            if i == 100:
                enc.reset()
            records.append(enc.record([enc.content(m) for m in batch]))
            batches.append(batch)
        sessions.append(
            {
                "dictionary": name if use else None,
                "checksum": checksum,
                "records_hex": [r.hex() for r in records],
            }
        )
        expected.append(batches)
    zcd = {k: d.to_bytes().hex() for k, d in dictionaries.items() if k != "protobuf"}
    report = node({"zcd": zcd, "sessions": sessions}, tmp_path)
    for got, batches in zip(report["sessions"], expected, strict=True):
        assert [[sorted_entries(v) for v in r] for r in got] == [[canon(v) for v in b] for b in batches]


def test_learned_sessions_decode_as_python_reads_them(tmp_path: Path) -> None:
    """Sessions of a learned codec, json and protobuf (learned records of one and several
    messages, zstd probes among them, resets, a checksum), record by record and as streams of
    both kinds: node gives the values Python's decoder gives."""
    from zeroc import _session

    cases = {
        "json": (Dictionary.load(ROOT / "spec" / "vectors" / "profiles-learned.zcd"), None),
        "protobuf": (zeroc.train(generate("order", 1500, seed=8)[:1200], schema=Order), Order),
    }
    sessions, streams, expected_sessions, expected_streams = [], [], [], []
    for name, (d, schema) in cases.items():
        assert d.codec["method"] == "learned", name
        codec = zeroc.Codec(d)
        values = generate("order", 60, seed=9) if schema else _profiles() * 3
        for checksum in (False, True):
            dec = zeroc.Codec(d, checksum=checksum).session_decoder()
            records, batches = [], []
            with pytest.MonkeyPatch.context() as mp:
                mp.setattr(_session, "LEARNED_PROBE", 5)
                enc = zeroc.Codec(d, checksum=checksum).session_encoder()
                for i in range(0, len(values), 3):
                    if i == 30:
                        enc.reset()
                    batch = values[i : i + 1 + i % 2]
                    records.append(enc.encode_many(batch))
                    batches.append(dec.decode_many(records[-1]))
            forms = {r[0] >> 1 & 3 for r in records}
            assert 3 in forms and len(forms) > 1, name  # learned records, and zstd's probes
            sessions.append(
                {"dictionary": name, "checksum": checksum, "records_hex": [r.hex() for r in records]}
            )
            expected_sessions.append(batches)
        for session in (True, False):
            stream = codec.encode_stream(values, session=session)
            streams.append({"dictionary": name, "stream_hex": stream.hex()})
            expected_streams.append(codec.decode_stream(stream))
    zcd = {name: d.to_bytes().hex() for name, (d, _) in cases.items()}
    report = node({"zcd": zcd, "sessions": sessions, "streams": streams}, tmp_path)
    for got, batches in zip(report["sessions"], expected_sessions, strict=True):
        assert [[sorted_entries(v) for v in r] for r in got] == [[canon(v) for v in b] for b in batches]
    for got, values in zip(report["streams"], expected_streams, strict=True):
        assert [sorted_entries(v) for v in got] == [canon(v) for v in values]


def _profiles() -> list[Any]:
    """The profiles of spec/vectors/learned-8.json's inputs (its many-profiles case spread)."""
    doc = json.loads((ROOT / "spec" / "vectors" / "learned-8.json").read_text())
    return [p for v in doc["valid"] for p in (v["input"] if isinstance(v["input"], list) else [v["input"]])]


def fetch_demo(server: Server, paths: list[str], *flags: str) -> dict[str, Any]:
    run = subprocess.run(
        [NODE, "scripts/fetch-demo.mjs", server.url, *paths, *flags],
        cwd=JS,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0, run.stderr
    report: dict[str, Any] = json.loads(run.stdout)
    return report


@pytest.mark.parametrize("kind", ["asgi", "wsgi"])
def test_client_reads_frames_from_the_demo(tmp_path: Path, kind: str) -> None:
    """The package's Client against `zeroc serve-demo` on loopback (uvicorn and waitress):
    Orders come as protobuf frames and the list as JSON frames, each dictionary fetched once
    and verified, every value the app's."""
    path = tmp_path / "orders.zcd"
    zeroc.train(generate("order", 2000, seed=1), schema=Order, candidates=CONTENT_CANDIDATES).save(path)
    server = start_server(path, kind)
    try:
        report = fetch_demo(server, ["/orders/3", "/orders/4", "/orders", "/health"])
    finally:
        server.proc.terminate()
        server.proc.wait(timeout=10)
    forms = [r["form"] for r in report["replies"]]
    assert forms == ["zeroc", "zeroc", "zeroc", "json"] and report["fallbacks"] == 0
    want = [ORDERS[3], ORDERS[4], ORDERS[:50], {"status": "ok"}]
    for reply, value in zip(report["replies"], want, strict=True):
        assert reply["status"] == 200 and sorted_entries(reply["value"]) == canon(value)


def test_client_reads_learned_frames(tmp_path: Path) -> None:
    """A route bound to a learned model: its Orders come as method-4 frames (the range coder,
    model format 6 or 7), which the Client decodes to the app's values with no fallback."""
    path = tmp_path / "orders-learned.zcd"
    d = zeroc.train(generate("order", 3000, seed=1), schema=Order, candidates=[("learned", 19)])
    assert d.codec["method"] == "learned"
    d.save(path)
    server = start_server(path, "asgi")
    try:
        report = fetch_demo(server, ["/orders/3", "/orders/4", "/orders/5"])
    finally:
        server.proc.terminate()
        server.proc.wait(timeout=10)
    assert report["fallbacks"] == 0
    for reply, i in zip(report["replies"], [3, 4, 5], strict=True):
        assert reply["form"] == "zeroc" and sorted_entries(reply["value"]) == canon(ORDERS[i])


def test_client_falls_back_to_json_once_when_a_dictionary_does_not_verify(tmp_path: Path) -> None:
    """Dictionary files that arrive changed (a broken proxy) never verify: the first call asks
    again for JSON, and later calls on the route ask for JSON at once (one fallback, not one
    per call), each with the app's value."""
    path = tmp_path / "orders.zcd"
    zeroc.train(generate("order", 2000, seed=1), schema=Order, candidates=CONTENT_CANDIDATES).save(path)
    server = start_server(path, "asgi")
    try:
        report = fetch_demo(server, ["/orders/3", "/orders/4", "/orders/5"], "--mangle-dictionaries")
    finally:
        server.proc.terminate()
        server.proc.wait(timeout=10)
    assert [r["fallback"] for r in report["replies"]] == [True, True, True]
    assert report["fallbacks"] == 1
    for reply, i in zip(report["replies"], [3, 4, 5], strict=True):
        assert reply["form"] == "json" and sorted_entries(reply["value"]) == canon(ORDERS[i])


def in_chromium(url: str, script: str, args: list[Any]) -> list[Any]:
    """``script`` evaluated once per argument in a page of Debian's headless Chromium at ``url``."""
    import playwright.sync_api as playwright

    from tests.test_http_browser import CHROMIUM, FLAGS

    with playwright.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=FLAGS, headless=True)
        try:
            page = browser.new_page()
            page.goto(url)
            return [page.evaluate(script, arg) for arg in args]
        finally:
            browser.close()


# In the page: the package imported from the demo, its Client reading Orders and the list, its
# Decoder reading the raw frames of an Order (learned) and of the list (zstd-block), and its
# Table reading a range of the series; values in canon's form (number bits, BigInt digits).
PAGE_SCRIPT = """async () => {
  const zeroc = await import("/js/index.js");
  const hex = (b) => Array.from(b, (x) => x.toString(16).padStart(2, "0")).join("");
  const canon = (v) => {
    if (v === null || typeof v === "boolean" || typeof v === "string") return v;
    if (typeof v === "number") {
      const d = new DataView(new ArrayBuffer(8));
      d.setFloat64(0, v, true);
      return ["n", hex(new Uint8Array(d.buffer))];
    }
    if (typeof v === "bigint") return ["i", v.toString()];
    if (v instanceof Uint8Array) return ["b", hex(v)];
    if (Array.isArray(v)) return ["a", v.map(canon)];
    return ["o", Object.entries(v).map(([k, x]) => [k, canon(x)])];
  };
  const client = new zeroc.Client();
  const replies = [];
  for (const path of ["/orders/3", "/orders/4", "/orders"]) {
    const r = await client.get(path);
    replies.push({path, form: r.form, fallback: r.fallback, value: canon(r.value)});
  }
  const frames = {};
  for (const path of ["/orders/7", "/orders"]) {
    const response = await fetch(path, {headers: {accept: zeroc.ACCEPT}});
    const id = /dictionary="?([0-9a-f]{64})/.exec(response.headers.get("content-type"))[1];
    const frame = new Uint8Array(await response.arrayBuffer());
    const file = await fetch(`/.well-known/zeroc/dictionaries/${id}.zcd`);
    const dictionary = await zeroc.Dictionary.fromBytes(new Uint8Array(await file.arrayBuffer()));
    const decoder = new zeroc.Decoder(dictionary);
    const payload = hex(decoder.decodePayload(frame));
    frames[path] = {frame: hex(frame), payload, value: canon(decoder.decode(frame))};
  }
  const table = zeroc.Table.open(new Uint8Array(await (await fetch("/series/zct?n=5000")).arrayBuffer()));
  return {replies, fallbacks: client.fallbacks, frames, range: canon(table.rows(1200, 1300)),
          secure: window.isSecureContext};
}"""


def test_chromium_decodes_frames_and_tables_as_python_does(tmp_path: Path) -> None:
    """Debian's headless Chromium against the demo on loopback: the page imports the package
    from /js/; its Client reads Orders (learned frames, model format 6 or 7) and the list (JSON
    zstd-block frames) with no fallback; its Decoder turns a raw learned Order frame and a raw
    zstd-block frame into the payload and value Python decodes from them; its Table reads a
    range of the portable series as Python's reader does."""
    import io

    from zeroc.http.demo import listing_dictionary, series_body
    from zeroc.tabular import ContainerReader

    path = tmp_path / "orders-learned.zcd"
    d = zeroc.train(generate("order", 3000, seed=1), schema=Order, candidates=[("learned", 19)])
    d.save(path)
    server = start_server(path, "asgi")
    try:
        [result] = in_chromium(server.url + "/health", PAGE_SCRIPT, [None])
    finally:
        server.proc.terminate()
        server.proc.wait(timeout=10)
    assert result["secure"], "loopback is a secure context: WebCrypto verifies dictionaries there"
    assert [r["form"] for r in result["replies"]] == ["zeroc"] * 3 and result["fallbacks"] == 0
    for reply, value in zip(result["replies"], [ORDERS[3], ORDERS[4], ORDERS[:50]], strict=True):
        assert sorted_entries(reply["value"]) == canon(value)
    for route, codec, method, value in (
        ("/orders/7", zeroc.Codec(d), 4, ORDERS[7]),
        ("/orders", zeroc.Codec(listing_dictionary()), 1, ORDERS[:50]),
    ):
        got = result["frames"][route]
        frame = bytes.fromhex(got["frame"])
        assert frame[0] & 7 == method
        # A learned frame's payload is its value's JSON text, as Python writes it (the package
        # writes no protobuf); another frame's is its serialization.
        want = _json.dumps(codec.decode(frame)) if method == 4 else codec.decode_payload(frame)
        assert bytes.fromhex(got["payload"]) == want
        assert sorted_entries(got["value"]) == canon(codec.decode(frame)) == canon(value)
    reader = ContainerReader(io.BytesIO(series_body("zct", 5000)[0]))
    assert sorted_entries(result["range"]) == canon(reader.rows(1200, 1300))


def test_series_page_draws_the_series_python_serves(tmp_path: Path) -> None:
    """The time-series page in Chromium: from the Zeroc table and from JSON it builds the same
    typed arrays, which are the demo's series (epoch milliseconds, values), and draws them."""

    from zeroc.http.demo import series

    path = tmp_path / "orders.zcd"
    zeroc.train(generate("order", 500, seed=1), candidates=[("zstd", 3)]).save(path)
    server = start_server(path, "asgi")
    script = """async (form) => {
      const r = await window.zerocSeries.load(form, 5000);
      const canvas = document.getElementById("chart");
      window.zerocSeries.draw(canvas, r.t, r.v, form);
      const pixels = canvas.getContext("2d").getImageData(0, 0, canvas.width, canvas.height).data;
      let ink = 0;
      for (let i = 0; i < pixels.length; i += 4) if (pixels[i] < 128) ink++;
      return {t: Array.from(r.t), v: Array.from(r.v), wire: r.wire, ink};
    }"""
    try:
        forms = ["zct", "json"]
        got = dict(zip(forms, in_chromium(server.url + "/pages/series.html", script, forms), strict=True))
    finally:
        server.proc.terminate()
        server.proc.wait(timeout=10)
    points = series(5000)["points"]
    stamps = [datetime.fromisoformat(p["t"]).timestamp() * 1000 for p in points]
    for form in ("zct", "json"):
        assert got[form]["t"] == stamps and got[form]["v"] == [p["v"] for p in points]
        assert got[form]["ink"] > 1000  # the chart's line and labels
    assert got["zct"]["wire"] < 0.25 * got["json"]["wire"]


def test_bench_browser_reports_the_page_and_the_message_race(tmp_path: Path) -> None:
    """`zeroc bench browser` end to end on a small series: every form's bytes, the Zeroc
    table's and JSON's times, the ProductView race (the page checks the values agree), and the
    chart's screenshot."""
    from zeroc.bench import _browser

    shot = tmp_path / "series.png"
    result = _browser.run(points=3000, screenshot=str(shot), messages=500)
    assert set(result["series"]) == {"json", "zct", "arrow"}
    assert all(r["wire"] > 0 for r in result["series"].values())
    assert (
        result["series"]["zct"]["responseToArrays"] is not None
        and result["series"]["json"]["parse"] is not None
    )
    m = result["messages"]
    assert m["count"] == 500 and m["learned"]["frame_bytes"] < m["zstd"]["frame_bytes"] < m["json_bytes"]
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    text = _browser.markdown(result, "zeroc bench browser")
    assert "ProductView" in text and "Zeroc table" in text


def test_a_race_too_fast_for_the_page_clock_has_no_ratio() -> None:
    """A best round that reads 0 ms (below performance.now()'s 0.1 ms steps, on a fast machine)
    or a time not measured gives no ratio rather than a division by zero, and the report says
    so with a dash."""
    from zeroc.bench import _browser

    form = {
        "wire": 100,
        "decoded": 100,
        "points": 3,
        "requestToArrays": 1.0,
        "responseToArrays": 0.5,
        "parse": None,
    }
    race = {"frame_bytes": 10.0, "zeroc_ms": 0.3}
    result = {
        "points": 3,
        "rounds": 3,
        "series": {"json": {**form, "parse": 0.0}, "zct": form, "arrow": form},
        "messages": {
            "count": 500,
            "rounds": 30,
            "json_bytes": 50.0,
            "learned": {**race, "json_parse_ms": 0.0},
            "zstd": {**race, "json_parse_ms": 0.2},
        },
    }
    v = _browser.verdict(result)
    assert v["messages_learned_over_json_parse"] is None and v["zct_to_arrays_over_json_parse"] is None
    assert v["messages_zstd_over_json_parse"] == pytest.approx(1.5)
    result["verdict"] = v
    text = _browser.markdown(result, "zeroc bench browser")
    assert "| –× |" in text and "| 1.50× |" in text


def test_corrupted_frames_payloads_tables_and_dictionaries_raise_typed_errors(
    tmp_path: Path,
    dictionaries: dict[str, zeroc.Dictionary],
    learned_dictionaries: dict[str, zeroc.Dictionary],
) -> None:
    """Every decoder the package has, fed corruptions (bit flips, cuts, spliced bytes) of real
    inputs: frames of every method, their JSON and protobuf payloads read directly, portable
    tables of the real corpora and dictionary files. Each decodes or raises a Zeroc error:
    never a TypeError, RangeError or a hang."""
    import io

    from zeroc.tabular import pack

    messages = [json.loads(m) for m in corpus_messages()][1::9]
    frames = frame_cases(zeroc.Codec(dictionaries["zstd"], checksum=True), "zstd", messages)
    frames += frame_cases(zeroc.Codec(dictionaries["deflate"]), "deflate", messages[:10])
    frames += frame_cases(
        zeroc.Codec(dictionaries["protobuf"]), "protobuf", generate("product_view", 30, seed=4)
    )
    learned = learned_dictionaries["twitter.json"]  # learned frames: the range coder, every node kind
    tweets = json.loads((DATA / "json" / "twitter.json").read_text())["statuses"][1::4]
    checked = zeroc.Codec(learned, checksum=True)
    frames += [
        {"dictionary": "learned", "frame_hex": f.hex(), "payload_hex": _json.dumps(v).hex()}
        for v in tweets
        if (f := checked.encode(v))[0] & 7 == 4
    ]
    zcd = {k: d.to_bytes().hex() for k, d in dictionaries.items()} | {"learned": learned.to_bytes().hex()}
    for name in ("learned.json", "learned-5.json"):  # the exact coder: format 1, format 5's blocks
        vectors = json.loads((ROOT / "spec" / "vectors" / name).read_text())
        zcd[name] = (ROOT / "spec" / "vectors" / vectors["dictionary"]).read_bytes().hex()
        frames += [
            {"dictionary": name, "frame_hex": v["frame_hex"], "payload_hex": _json.dumps(v["input"]).hex()}
            for v in vectors["valid"]
            if v["codec"].get("frame_id") != "bare"
        ]
    tables = []
    for name, chunk_rows in (
        ("twitter.json", 8),
        ("github_events.json", 8),
        ("canada.json", 8),
        ("instruments.json", 65_536),  # one document block (spec/TABULAR_FORMAT.md §2)
    ):
        out = io.BytesIO()
        pack(json.loads((DATA / "json" / name).read_text()), out, chunk_rows=chunk_rows, portable=True)
        tables.append({"file_hex": out.getvalue().hex(), "ranges": []})
    rounds = int(os.environ.get("ZEROC_JS_FUZZ_ROUNDS", "60"))
    report = node(
        {"zcd": zcd, "frames": frames, "tables": tables, "fuzz": {"seed": 3, "rounds": rounds}}, tmp_path
    )
    assert report["corrupted"] == rounds * (2 * len(frames) + len(tables) + len(zcd))
    assert report["rejected"] > 0.5 * report["corrupted"]


def test_forged_compact_heads_raise_typed_errors_in_node_as_in_python(tmp_path: Path) -> None:
    """Tables whose blocks' compact heads (spec/TABULAR_FORMAT.md §1.3) a forger changed (a node
    replaced, spliced, renamed, dropped, nested past any writer's depth): node opens and reads
    each (whole, and rows 1..3 alone) or raises a Zeroc error, and refuses exactly the ones
    Python refuses (most of them)."""
    import io

    from tests.conftest import block_head, mutated_head, with_head
    from zeroc.tabular import ContainerReader
    from zeroc.tabular._table import encode_block

    rng = random.Random(23)
    events = json.loads((DATA / "json" / "github_events.json").read_text())
    seeds = [
        events[:5],
        [{"a": i, "b": f"x{i % 3}", "c": [i * 0.5, None], "t": "2020-01-01T00:00:00Z"} for i in range(30)],
    ]
    files, refused = [], []
    for _ in range(400):
        rows = rng.choice(seeds)
        block = encode_block(rows, portable=True)
        block = with_head(block, mutated_head(rng, json.loads(block_head(block)[0])))
        footer = json.dumps(
            {
                "format": 1,
                "path": [],
                "rows": len(rows),
                "chunks": [[8, len(block), len(rows)]],
                "skeleton": None,
            }
        ).encode()
        data = b"ZRCT\x01\x00\x00\x00" + block + footer + len(footer).to_bytes(4, "little") + b"ZRCT"
        try:
            reader = ContainerReader(io.BytesIO(data))
            reader.document()
            reader.rows(1, 3)  # part of the chunk: decode_rows, as node's Table.rows
            refused.append(False)
        except zeroc.ZerocError:
            refused.append(True)
        files.append(data.hex())
    report = node({"hostile_tables": files}, tmp_path)
    assert report["hostile"] == refused and sum(refused) > len(files) / 2


@pytest.fixture(scope="module")
def learned_dictionaries() -> dict[str, zeroc.Dictionary]:
    """Learned models (range coder, formats 6-7) of real traffic and of the Order workload."""
    out = {}
    for name in ("twitter.json", "github_events.json", "apache_builds.json"):
        doc = json.loads((DATA / "json" / name).read_text())
        items = doc.get("statuses") or doc.get("jobs") if isinstance(doc, dict) else doc
        d = zeroc.train(items[::2], candidates=[("learned", 19)])
        assert d.codec["method"] == "learned", name
        out[name] = d
    out["order"] = zeroc.train(generate("order", 3000, seed=5), candidates=[("learned", 19)])
    return out


def test_learned_frames_of_real_traffic_decode_as_python_wrote_them(
    tmp_path: Path, learned_dictionaries: dict[str, zeroc.Dictionary]
) -> None:
    """Learned models of tweets, GitHub events, Jenkins jobs and Orders: the held-back half of
    each set (common path and off it, side streams raw and compressed, checksummed frames, bare
    payloads read as frames), decoded by node to Python's values number for number, and to
    Python's JSON text byte for byte (1.0 stays 1.0)."""
    frames: list[dict[str, Any]] = []
    expected: list[Any] = []
    for name, d in learned_dictionaries.items():
        if name == "order":
            values = generate("order", 200, seed=9)
        else:
            doc = json.loads((DATA / "json" / name).read_text())
            values = (doc.get("statuses") or doc.get("jobs") if isinstance(doc, dict) else doc)[1::2]
        for options in ({}, {"checksum": True, "frame_id": "sha256"}):
            codec = zeroc.Codec(d, **options)
            for v in values:
                frame = codec.encode(v)
                if frame[0] & 7 != 4:
                    continue  # zstd took it: a frame of another method (tested elsewhere)
                frames.append(
                    {"dictionary": name, "frame_hex": frame.hex(), "payload_hex": _json.dumps(v).hex()}
                )
                expected.append(v)
    assert len(frames) > 400
    zcd = {k: d.to_bytes().hex() for k, d in learned_dictionaries.items()}
    report = node({"zcd": zcd, "frames": frames}, tmp_path)
    assert report["decoded"] == len(frames)
    check_values(report, expected)


@functools.cache
def order_model() -> zeroc.Dictionary:
    """The Order workload's learned model (a function, not a fixture: a failing Hypothesis
    example then prints its values alone)."""
    return zeroc.train(generate("order", 3000, seed=5), candidates=[("learned", 19)])


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(values=st.lists(json_values, min_size=1, max_size=40))
def test_learned_frames_of_any_value(tmp_path: Path, values: list[Any]) -> None:
    """Hypothesis-drawn values (far from what the Order model learned: escapes, JSON text in the
    side stream, integers past 64 bits, integer-like keys) through the learned codec,
    checksummed: node decodes each to Python's value and checks its CRC-32 over Python's text."""
    d = order_model()
    codec, bare = zeroc.Codec(d, checksum=True), zeroc.Codec(d, frame_id="bare")
    frames = []
    for v in values:
        frame = codec.encode(v)
        payload = _json.dumps(v) if frame[0] & 7 == 4 else codec.decode_payload(frame)
        frames.append({"dictionary": "order", "frame_hex": frame.hex(), "payload_hex": payload.hex()})
    for v in values:  # the model's payload whatever its size: every value through the nodes
        frames.append({"dictionary": "order", "frame_hex": bare.encode(v).hex(), "bare": True})
    report = node({"zcd": {"order": d.to_bytes().hex()}, "frames": frames}, tmp_path)
    check_values(report, values + values)


def test_learned_frames_keep_python_key_order_for_their_checksum(tmp_path: Path) -> None:
    """JavaScript puts integer-like keys first; a checksummed learned frame's CRC-32 covers
    Python's order. Objects from JSON text, from a map node and from an object node keep it."""
    d = order_model()
    codec = zeroc.Codec(d, checksum=True)
    values = [{"b": 1, "4": 2, "a": {"10": None, "x": [1.0, -0.0]}}, [{"9": 1, "1": 2}], {"0": 1}]
    frames = []
    for v in values:
        frame = codec.encode(v)
        assert frame[0] & 7 == 4 and frame[0] & 0x20  # learned, checksummed
        frames.append({"dictionary": "order", "frame_hex": frame.hex(), "payload_hex": _json.dumps(v).hex()})
    report = node({"zcd": {"order": d.to_bytes().hex()}, "frames": frames}, tmp_path)
    check_values(report, values)


def check_tables(tmp_path: Path, docs: list[Any], ranges: list[tuple[int, int]], chunk_rows: int) -> None:
    """Pack each document portable; node's document, rows and columns of each range are the
    Python reader's, value for value."""
    import io

    from zeroc.tabular import ContainerReader, pack

    files = []
    for doc in docs:
        out = io.BytesIO()
        pack(doc, out, chunk_rows=chunk_rows, portable=True)
        files.append(out.getvalue())
    report = node({"tables": [{"file_hex": f.hex(), "ranges": ranges} for f in files]}, tmp_path)
    for data, doc, got in zip(files, docs, report["tables"], strict=True):
        reader = ContainerReader(io.BytesIO(data))
        assert sorted_entries(got["document"]) == canon(doc)
        for (a, b), part in zip(ranges, got["ranges"], strict=True):
            assert sorted_entries(part["rows"]) == canon(reader.rows(a, b))
            want = {k: v.tolist() if hasattr(v, "tolist") else v for k, v in reader.columns(a, b).items()}
            assert {k: sorted_entries(v) for k, v in part["columns"]} == {
                k: canon(v) for k, v in want.items()
            }


def test_portable_tables_of_the_real_corpora(tmp_path: Path) -> None:
    """Tweets (ids past 2^53), GitHub events, Jenkins jobs, instruments and canada's
    coordinates, packed portable in small chunks, and those with a skeleton in one chunk (the
    document block, spec/TABULAR_FORMAT.md §2): node reads each as Python does."""
    docs = [
        json.loads((DATA / "json" / name).read_text())
        for name in (
            "twitter.json",
            "github_events.json",
            "apache_builds.json",
            "instruments.json",
            "canada.json",
        )
    ]
    check_tables(tmp_path, docs, [(0, 3), (5, 40), (30, 10_000)], chunk_rows=16)
    check_tables(tmp_path, [docs[0], docs[2], docs[3]], [(0, 3), (5, 40), (30, 10_000)], chunk_rows=65_536)


def test_portable_aws_shapes_with_references_key_lists_and_byte_codes(tmp_path: Path) -> None:
    """AWS API shapes built from botocore, packed portable: members' shapes as references to
    the names, ``required`` after the members as references to their keys, codes in bytes
    (spec/TABULAR_FORMAT.md §1.2); node reads them as Python does."""
    import io

    from zeroc.bench._tabular import aws_shapes
    from zeroc.tabular import pack

    docs = aws_shapes(3000)
    out = io.BytesIO()
    pack(docs, out, portable=True)
    text = out.getvalue()
    head = b"".join(_zstd_texts(text))
    assert b'"e":"rf"' in head and b'["required",' in head and b'"e":"zb"' in head
    check_tables(tmp_path, [docs], [(0, 3), (100, 200), (2990, 4000)], chunk_rows=65_536)


def _zstd_texts(data: bytes) -> list[bytes]:
    """Every zstd frame in a container, decompressed (a portable file's block texts among them)."""
    import zstandard

    out, at = [], 0
    while (at := data.find(b"\x28\xb5\x2f\xfd", at)) >= 0:
        try:
            out.append(zstandard.ZstdDecompressor().decompressobj().decompress(data[at:]))
        except zstandard.ZstdError:
            pass
        at += 4
    return out


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    rows=st.lists(
        st.dictionaries(st.sampled_from(["a", "b", "c", "d"]), json_values, max_size=4), max_size=40
    )
)
def test_portable_tables_of_any_rows(tmp_path: Path, rows: list[dict[str, Any]]) -> None:
    """Hypothesis-drawn rows (keys that come and go, any JSON value): node reads them exactly."""
    check_tables(tmp_path, [{"rows": rows}], [(0, 5), (3, 30)], chunk_rows=7)


def test_rows_that_are_not_objects_are_one_column_in_node_as_in_python(tmp_path: Path) -> None:
    docs = [{"rows": [1, [2, 3], "x", None, {"a": 1}]}, [[1.5, 2], [3], []]]
    check_tables(tmp_path, docs, [(0, 5), (1, 3)], chunk_rows=2)


def test_columns_that_change_kind_between_chunks_keep_their_values_in_node(tmp_path: Path) -> None:
    """A boolean column absent from one chunk, or an integer one in another: node's columns
    are still booleans, integers and nulls, as Python's (Hypothesis found False read back as 0)."""
    docs = [
        {"rows": [{}] * 20 + [{"0": False}]},
        {"rows": [{"a": 1}, {"a": 2}, {"a": True}, {"a": False}, {}, {"a": 3}]},
    ]
    check_tables(tmp_path, docs, [(0, 6), (3, 30)], chunk_rows=2)


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(rows=keyed)
def test_portable_maps_of_any_keys(tmp_path: Path, rows: list[dict[str, Any]]) -> None:
    """Objects keyed by data (maps, spec/TABULAR_FORMAT.md §1.1), alone and as a field of a
    sparse table: node reads them exactly."""
    records = [{"id": i, "members": m} if i % 3 else {"id": i} for i, m in enumerate(rows)]
    check_tables(tmp_path, [{"rows": rows}, {"rows": records}], [(0, 5), (3, 30)], chunk_rows=20)


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    times=st.lists(
        st.datetimes(min_value=datetime(1, 1, 1), max_value=datetime(9999, 12, 31, 23, 59, 59)),
        min_size=2,
        max_size=40,
    ),
    template=st.sampled_from(STAMP_FORMATS),
)
def test_stamp_columns_read_in_node_as_python_wrote_them(
    tmp_path: Path, times: list[datetime], template: str
) -> None:
    """Times in every stamp format, years 1 to 9999, as a portable table: node writes each back
    to the identical string (rows and columns), as Python's reader does."""
    fmt = template.replace("{zone}", "+0000")
    epoch = datetime(1970, 1, 1)
    rows = [{"t": render_stamp(fmt, int((t.replace(microsecond=0) - epoch).total_seconds()))} for t in times]
    check_tables(tmp_path, [{"rows": rows}], [(0, 40)], chunk_rows=16)
