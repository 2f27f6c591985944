"""RFC 9842 in a real browser: Debian's headless Chromium, driven by Playwright, against the demo
on loopback. The page registers the route's dictionary from the ``Link`` header, and its later
``fetch()`` goes out with ``Available-Dictionary`` and ``dcz``; the response comes back
dcz-coded and the page's script reads exactly the JSON the app returned (Chromium really
decodes: a wrong hash or corrupt data fails the fetch). The same run with the feature disabled
is the negative control."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import playwright.sync_api as playwright  # in the dev extra: a missing one fails, never skips
import pytest

from tests.test_http import Server, start_server
from zeroc.bench._browser import FLAGS  # REFERENCE.md §4's flags for this machine's closed network
from zeroc.http._content import ContentCodings
from zeroc.http.demo import ORDERS

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"

# Fetch the list once (its Link header names the dictionary), fetch the dictionary (stored
# because it carries Use-As-Dictionary and may be cached), then fetch the list until it comes
# dcz-coded (storing is asynchronous) or the tries run out.
SCRIPT = """async (tries) => {
  const first = await fetch("/orders", {cache: "no-store"});
  const link = first.headers.get("link");
  const url = link.slice(1, link.indexOf(">"));
  await (await fetch(url)).arrayBuffer();
  let last = null;
  for (let i = 0; i < tries; i++) {
    await new Promise((done) => setTimeout(done, 100));
    const r = await fetch("/orders", {cache: "no-store"});
    last = {encoding: r.headers.get("content-encoding"), body: await r.json(), dictionary: url};
    if (last.encoding === "dcz") break;
  }
  return last;
}"""


# Poll the feed (a delta route): its first response is stored as a dictionary, and a later
# one arrives dcz-coded against it; the resource timing entry holds its size on the wire.
FEED_SCRIPT = """async (tries) => {
  await (await fetch("/feed", {cache: "no-cache"})).arrayBuffer();
  let last = null;
  for (let i = 0; i < tries; i++) {
    await new Promise((done) => setTimeout(done, 100));
    const r = await fetch("/feed", {cache: "no-cache"});
    const body = await r.json();
    const timing = performance.getEntriesByName(r.url).pop();
    last = {encoding: r.headers.get("content-encoding"), body, wire: timing.encodedBodySize};
    if (last.encoding === "dcz") break;
  }
  return last;
}"""


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    from zeroc.http.demo import train_demo_dictionary

    path = tmp_path_factory.mktemp("browser") / "orders.zcd"
    train_demo_dictionary().save(path)
    s = start_server(path, "asgi")
    yield s
    s.proc.terminate()
    s.proc.wait(timeout=10)


def run_page(
    server: Server, args: list[str], tries: int, script: str = SCRIPT, path: str = "/orders"
) -> tuple[dict[str, Any], list[dict[str, str]]]:
    """The script's result, and the request headers Chromium sent for ``path``."""
    assert Path(CHROMIUM).exists(), "Debian's chromium is needed (make test installs it)"
    sent: list[dict[str, str]] = []
    with playwright.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=FLAGS + args, headless=True)
        try:
            page = browser.new_page()
            page.on(
                "request",
                lambda r: sent.append(r.all_headers()) if r.url == server.url + path else None,
            )
            page.goto(server.url + "/health")
            result = page.evaluate(script, tries)
        finally:
            browser.close()
    return result, sent


def test_chromium_gets_the_list_dcz_coded_and_reads_it_exactly(demo: Server) -> None:
    result, sent = run_page(demo, [], tries=50)
    assert result["encoding"] == "dcz", result["encoding"]
    assert result["body"] == ORDERS[:50]
    last = sent[-1]
    assert "dcz" in last["accept-encoding"] and last["available-dictionary"].startswith(":")


def test_chromium_without_dictionary_transport_gets_no_dcz(demo: Server) -> None:
    result, sent = run_page(demo, ["--disable-features=CompressionDictionaryTransport"], tries=5)
    assert result["encoding"] != "dcz" and result["body"] == ORDERS[:50]
    assert all("available-dictionary" not in h and "dcz" not in h["accept-encoding"] for h in sent)


def test_chromium_polling_a_delta_route_gets_each_version_against_the_last(demo: Server) -> None:
    """The feed's earlier response is the dictionary: the list arrives ≥ 3× smaller than gzip."""
    result, sent = run_page(demo, [], tries=50, script=FEED_SCRIPT, path="/feed")
    assert result["encoding"] == "dcz", result["encoding"]
    body = result["body"]
    start = ORDERS.index(body[0])
    assert body == ORDERS[start : start + len(body)] and len(body) == 50
    assert sent[-1]["available-dictionary"].startswith(":")
    text = json.dumps(body, separators=(",", ":"), ensure_ascii=False).encode()
    gzip_size = len(ContentCodings().encode("gzip", text))
    print(
        f"feed of 50 orders: {len(text)} B JSON, gzip {gzip_size} B, dcz against the last {result['wire']} B"
    )
    assert 0 < result["wire"] * 3 <= gzip_size
