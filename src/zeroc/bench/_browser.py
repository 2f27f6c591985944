"""``zeroc bench browser``: the TypeScript package (js/) in Debian's headless Chromium, against
the demo on loopback.

- **The time-series page** (js/pages/series.html): a sensor's series of N points fetched as
  JSON + gzip-6, as a portable Zeroc table and as Arrow IPC with zstd buffers. For each, the
  bytes on the wire (the page's resource timing) and, where the page decodes it, the time from
  the response to typed arrays (JSON: `JSON.parse`, then `Date.parse` per timestamp; Zeroc:
  `Table.open(...).columns({timestamps: true})`), the best of a few rounds. The page draws the
  Zeroc table last; its screenshot is the plot.
- **Small messages**: 10,000 ProductView frames decoded by the package's `Decoder` in the page,
  against `JSON.parse` of the same messages' JSON, the best of 30 interleaved rounds: as
  learned-model frames and as zstd-block frames of protobuf.

Needs the built package (`make js`), Debian's chromium and Playwright (the dev extra). Figures
are the browser's own clocks (`performance.now()`): compare the columns of one run.
"""

from __future__ import annotations

import base64
import json
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

CHROMIUM = "/usr/bin/chromium"
# As REFERENCE.md §4 found them (the browser tests use them too): without the background-networking
# flags Chromium keeps trying hosts this machine cannot reach.
FLAGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
FORMS = ("json", "zct", "arrow")
LABELS = {"json": "JSON + gzip-6", "zct": "Zeroc table (portable)", "arrow": "Arrow IPC + zstd"}
MESSAGES = 10_000
MESSAGE_ROUNDS = 30

LOAD = """async ([form, n]) => {
  const r = await window.zerocSeries.load(form, n);
  if (r.t && form === "zct") window.zerocSeries.draw(document.getElementById("chart"), r.t, r.v,
      `${n.toLocaleString("en")} points, decoded from a Zeroc table`);
  return {...r, t: null, v: null, points: r.t ? r.t.length : null};
}"""

# Decode every frame, then parse every text, in interleaved rounds; the best round of each.
MESSAGES_SCRIPT = """async ({zcd, frames, texts, rounds}) => {
  const zeroc = await import("/js/index.js");
  const bin = (b64) => Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
  const decoder = new zeroc.Decoder(await zeroc.Dictionary.fromBytes(bin(zcd)));
  const data = frames.map(bin);
  let best = {zeroc: Infinity, json: Infinity}, sink = 0;
  for (let r = 0; r < rounds; r++) {
    let t = performance.now();
    for (const f of data) sink += decoder.decode(f).user_id;
    best.zeroc = Math.min(best.zeroc, performance.now() - t);
    t = performance.now();
    for (const s of texts) sink += JSON.parse(s).user_id;
    best.json = Math.min(best.json, performance.now() - t);
  }
  const equal = (a, b) => Object.keys(a).length === Object.keys(b).length
    && Object.keys(a).every((k) => a[k] === b[k]);  // ProductView is flat
  const same = data.every((f, i) => equal(decoder.decode(f), JSON.parse(texts[i])));
  return {...best, same, sink};
}"""


def run(
    quick: bool = True,
    progress: Callable[[str], None] | None = None,
    screenshot: str | None = None,
    points: int | None = None,
    messages: int = MESSAGES,
) -> dict[str, Any]:
    """The page's figures for 100,000 (quick) or 1,000,000 points (or ``points``), and the race
    of ``messages`` ProductView frames (dictionaries trained on twice as many, at most 5,000)."""
    import playwright.sync_api as playwright

    import zeroc
    from zeroc.bench._http import _start
    from zeroc.http.demo import JS_DIST, train_demo_dictionary
    from zeroc.workloads import ProductView, generate

    say = progress or (lambda msg: None)
    if not (JS_DIST / "index.js").is_file():
        raise RuntimeError("the TypeScript package is not built: run `make js` first")
    n = points or (100_000 if quick else 1_000_000)
    rounds = 3
    result: dict[str, Any] = {"points": n, "rounds": rounds, "series": {}}
    say("browser: training the ProductView dictionaries (learned, zstd)")
    samples = generate("product_view", min(5000, 2 * messages), seed=3)
    dictionaries = {
        kind: zeroc.train(samples, schema=ProductView, candidates=[(kind, 19)])
        for kind in ("learned", "zstd")
    }
    views = generate("product_view", messages, seed=11)
    texts = [json.dumps(v, separators=(",", ":")) for v in views]
    frames = {kind: [zeroc.Codec(d).encode(v) for v in views] for kind, d in dictionaries.items()}
    with tempfile.TemporaryDirectory() as tmp:
        dictionary_path = str(Path(tmp) / "orders.zcd")
        train_demo_dictionary().save(dictionary_path)
        say("browser: starting the demo (uvicorn, ZerocMiddleware)")
        proc, port = _start("zeroc", dictionary_path)
        try:
            with playwright.sync_playwright() as p:
                browser = p.chromium.launch(executable_path=CHROMIUM, args=FLAGS, headless=True)
                try:
                    page = browser.new_page(viewport={"width": 1010, "height": 560})
                    page.goto(f"http://127.0.0.1:{port}/pages/series.html")
                    result["chromium"] = browser.version
                    for form in FORMS:
                        page.evaluate(LOAD, [form, n])  # the server builds and caches the body
                        runs = [page.evaluate(LOAD, [form, n]) for _ in range(rounds)]
                        result["series"][form] = _best(runs)
                        say(f"browser series {form}: {json.dumps(result['series'][form])}")
                    page.evaluate(LOAD, ["zct", n])  # the chart on screen is the Zeroc table's
                    if screenshot:
                        page.locator("#chart").screenshot(path=screenshot)
                    races = {}
                    for kind, d in dictionaries.items():
                        say(f"browser: {messages:,} ProductView frames ({kind}) against JSON.parse")
                        races[kind] = page.evaluate(
                            MESSAGES_SCRIPT,
                            {
                                "zcd": base64.b64encode(d.to_bytes()).decode(),
                                "frames": [base64.b64encode(f).decode() for f in frames[kind]],
                                "texts": texts,
                                "rounds": MESSAGE_ROUNDS,
                            },
                        )
                finally:
                    browser.close()
        finally:
            proc.terminate()
            proc.wait(timeout=30)
    result["messages"] = {
        "count": messages,
        "rounds": MESSAGE_ROUNDS,
        "json_bytes": sum(map(len, texts)) / messages,
    }
    for kind, race in races.items():
        if not race["same"]:
            raise RuntimeError(f"the page decoded ProductView {kind} frames to other values than their JSON")
        result["messages"][kind] = {
            "frame_bytes": sum(map(len, frames[kind])) / messages,
            "zeroc_ms": race["zeroc"],
            "json_parse_ms": race["json"],
        }
    result["verdict"] = verdict(result)
    return result


def _best(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """One form's figures: bytes (the same every run) and each time's best round."""
    out = {k: runs[0][k] for k in ("wire", "decoded", "points")}
    for key in ("requestToArrays", "responseToArrays", "parse"):
        values = [r[key] for r in runs if r[key] is not None]
        out[key] = min(values) if values else None
    return out


def _ratio(a: float | None, b: float | None) -> float | None:
    """a / b, or None where either was not measured or b is below the page clock's resolution
    (Chromium's performance.now() ticks in 0.1 ms steps where a page is not cross-origin
    isolated: a fast machine parses 500 small messages in less, and the best round reads 0)."""
    return a / b if a is not None and b else None


def _times(x: float | None) -> str:
    return f"{x:.2f}" if x is not None else "–"


def verdict(result: dict[str, Any]) -> dict[str, Any]:
    """Issue 18's bars, as this run measured them (None: too fast for the page's clock)."""
    s, m = result["series"], result["messages"]
    zct, js, arrow = s["zct"], s["json"], s["arrow"]
    return {
        "zct_over_json_gzip": zct["wire"] / js["wire"],
        "zct_over_arrow_zstd": zct["wire"] / arrow["wire"],
        "zct_to_arrays_over_json_parse": _ratio(zct["responseToArrays"], js["parse"]),
        **{
            f"messages_{k}_over_json_parse": _ratio(m[k]["zeroc_ms"], m[k]["json_parse_ms"])
            for k in ("learned", "zstd")
        },
    }


def table(result: dict[str, Any]) -> str:
    head = f"{'form':<24} {'bytes':>11} {'request->arrays ms':>19} {'response->arrays ms':>20}"
    lines = [f"{head} {'JSON.parse ms':>14}"]
    for form in FORMS:
        r = result["series"][form]
        cells = [r["requestToArrays"], r["responseToArrays"], r["parse"]]
        a, b, c = (f"{x:.1f}" if x is not None else "-" for x in cells)
        lines.append(f"{LABELS[form]:<24} {r['wire']:>11,} {a:>19} {b:>20} {c:>14}")
    m, v = result["messages"], result["verdict"]
    lines.append("")
    for k in ("learned", "zstd"):
        lines.append(
            f"{m['count']:,} ProductView frames ({k}, {m[k]['frame_bytes']:.1f} B): "
            f"{m[k]['zeroc_ms']:.1f} ms to decode, JSON.parse of their JSON {m[k]['json_parse_ms']:.1f} ms "
            f"({_times(v[f'messages_{k}_over_json_parse'])}x)"
        )
    lines += [
        f"Zeroc table / JSON + gzip: {v['zct_over_json_gzip']:.3f}; / Arrow IPC + zstd: "
        f"{v['zct_over_arrow_zstd']:.3f}; response->arrays / JSON.parse: "
        f"{_times(v['zct_to_arrays_over_json_parse'])}",
    ]
    return "\n".join(lines)


def markdown(result: dict[str, Any], command: str) -> str:
    m, v = result["messages"], result["verdict"]
    out = [
        "# In the browser",
        "",
        f"Measured with `{command}` in Chromium {result.get('chromium', '')} (Debian's, headless), against "
        "the demo on loopback (uvicorn with ZerocMiddleware), by the page's own clock "
        "(`performance.now()`), each time the best of "
        f"{result['rounds']} rounds. Bytes are the body on the wire (resource timing's `encodedBodySize`).",
        "",
        f"## A time series of {result['points']:,} points (js/pages/series.html)",
        "",
        "A sensor's readings: millisecond timestamps 1 to 5 s apart as ISO-8601 text and "
        "two-decimal values. JSON goes out gzip'd at level 6; the Zeroc table is a portable "
        "`.zct` (no pcodec, whose decoder JavaScript lacks); Arrow IPC carries zstd-compressed "
        "buffers (bytes only: the page has no Arrow reader).",
        "",
        "| form | bytes on the wire | request → typed arrays (ms) | response → typed arrays (ms) "
        "| `JSON.parse` alone (ms) |",
        "|---|---:|---:|---:|---:|",
    ]
    for form in FORMS:
        r = result["series"][form]
        cells = [r["requestToArrays"], r["responseToArrays"], r["parse"]]
        a, b, c = (f"{x:.1f}" if x is not None else "–" for x in cells)
        out.append(f"| {LABELS[form]} | {r['wire']:,} | {a} | {b} | {c} |")
    out += [
        "",
        f"The Zeroc table is {v['zct_over_json_gzip']:.3f}× JSON + gzip's bytes and "
        f"{v['zct_over_arrow_zstd']:.3f}× Arrow IPC + zstd's; from response to typed arrays it "
        f"takes {_times(v['zct_to_arrays_over_json_parse'])}× the time of `JSON.parse` alone (before "
        "JSON's timestamps are even parsed).",
        "",
        "![The chart the page drew from the Zeroc table](series.png)",
        "",
        "## Small messages",
        "",
        f"{m['count']:,} ProductView messages (their JSON {m['json_bytes']:.1f} B each) decoded to "
        "objects by the package's `Decoder` against `JSON.parse` of their JSON, in "
        f"{m['rounds']} interleaved rounds, the best of each; as learned-model frames ("
        '`train(..., candidates=[("learned", 19)])`) and as zstd-block frames of protobuf:',
        "",
        "| frames | bytes each | Zeroc ms for all | µs per message | `JSON.parse` ms "
        "| Zeroc / `JSON.parse` |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for k, label in (("learned", "learned model"), ("zstd", "protobuf, zstd-block")):
        r = m[k]
        out.append(
            f"| {label} | {r['frame_bytes']:.1f} | {r['zeroc_ms']:.1f} "
            f"| {1000 * r['zeroc_ms'] / m['count']:.2f} | {r['json_parse_ms']:.1f} "
            f"| {_times(v[f'messages_{k}_over_json_parse'])}× |"
        )
    return "\n".join(out) + "\n"
