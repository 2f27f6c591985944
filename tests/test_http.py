"""Real servers on loopback (uvicorn for the FastAPI demo, waitress for the Flask demo), talked
to by the SDK, by httpx and by curl — a client nobody here wrote."""

from __future__ import annotations

import asyncio
import base64
import gzip
import hashlib
import json
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import http_sf
import httpx
import pytest
import zstandard

import zeroc
from zeroc.http import AsyncClient, Client
from zeroc.http._content import ContentCodings
from zeroc.http.demo import ORDERS, train_demo_dictionary
from zeroc.workloads import Order, generate

ZEROC = str(Path(sys.executable).with_name("zeroc"))


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Server:
    def __init__(self, proc: subprocess.Popen[bytes], url: str) -> None:
        self.proc, self.url = proc, url

    def rss_kib(self) -> int:
        for line in Path(f"/proc/{self.proc.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
        raise AssertionError("no VmRSS")


@pytest.fixture(scope="module")
def dictionary_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("http") / "orders.zcd"
    train_demo_dictionary().save(path)
    return path


def start_server(dictionary: Path, kind: str) -> Server:
    """``zeroc serve-demo`` in a subprocess (uvicorn, or waitress for "wsgi"), once it answers."""
    port = free_port()
    args = [ZEROC, "serve-demo", "--port", str(port), "--dict", str(dictionary)]
    if kind == "wsgi":
        args.append("--wsgi")
    proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while True:
        try:
            if httpx.get(url + "/health").status_code == 200:
                return Server(proc, url)
        except httpx.HTTPError:
            pass
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            raise AssertionError(f"server did not start: {proc.stderr.read() if proc.stderr else ''}")
        time.sleep(0.1)


@pytest.fixture(scope="module", params=["asgi", "wsgi"])
def server(request: pytest.FixtureRequest, dictionary_file: Path) -> Iterator[Server]:
    s = start_server(dictionary_file, request.param)
    yield s
    s.proc.terminate()
    s.proc.wait(timeout=10)


def curl(*args: str) -> subprocess.CompletedProcess[bytes]:
    assert shutil.which("curl"), "curl is needed for the HTTP tests (Debian package curl)"
    return subprocess.run(["curl", "-sS", *args], capture_output=True, timeout=60, check=True)


def test_curl_compressed_receives_the_smallest_coding_and_decodes_it(server: Server, tmp_path: Path) -> None:
    out = curl("--compressed", "-D", str(tmp_path / "h"), "-o", str(tmp_path / "b"), server.url + "/orders")
    assert out.returncode == 0
    headers = dict(
        line.lower().split(": ", 1) for line in (tmp_path / "h").read_text().splitlines()[1:] if ": " in line
    )
    assert headers["vary"].startswith("accept-encoding")
    assert json.loads((tmp_path / "b").read_bytes()) == ORDERS[:50]
    # curl offers zstd, br and gzip alike: the body goes out in whichever is smallest.
    identity = curl("-H", "Accept-Encoding: identity", server.url + "/orders").stdout
    sizes = {c: len(ContentCodings().encode(c, identity)) for c in ("zstd", "br", "gzip")}
    assert headers["content-encoding"] == min(sizes, key=sizes.__getitem__)
    assert int(headers["content-length"]) == min(sizes.values())


def test_curl_gets_gzip_when_it_only_accepts_gzip_and_nothing_with_q0(server: Server) -> None:
    raw = curl("-H", "Accept-Encoding: gzip", server.url + "/orders").stdout
    assert json.loads(gzip.decompress(raw)) == ORDERS[:50]
    plain = curl(
        "-D", "-", "-H", "Accept-Encoding: gzip;q=0, zstd;q=0, br;q=0", server.url + "/orders"
    ).stdout
    assert b"content-encoding" not in plain.lower()


def test_sdk_gets_a_zeroc_frame_3x_smaller_than_gzip(server: Server) -> None:
    with Client(server.url) as client:
        reply = client.get("/orders/1")
        assert reply.encoding == "zeroc" and reply.value == ORDERS[1]
        assert reply.headers["content-type"].startswith("application/x-zeroc")
    gz = httpx.get(server.url + "/orders/1", headers={"accept-encoding": "gzip"})
    assert gz.headers["content-encoding"] == "gzip" and gz.json() == ORDERS[1]
    print(f"one Order: zeroc {reply.wire_bytes} B on the wire, gzip {gz.num_bytes_downloaded} B")
    assert reply.wire_bytes * 3 <= gz.num_bytes_downloaded


def test_sdk_posts_frames_and_compressed_json(server: Server) -> None:
    with Client(server.url) as client:
        client.get("/orders/2")  # learns the route's dictionary
        reply = client.post("/orders/echo", json=ORDERS[3])
        assert reply.status_code == 200 and reply.value == ORDERS[3]
        assert reply.response.request.headers["content-type"].startswith("application/x-zeroc")
        # A value outside the schema goes as JSON, zstd-compressed since the server accepts it.
        odd = {"note": "not an Order", "pad": "x" * 400}
        reply = client.post("/orders/echo", json=odd)
        assert reply.status_code == 200 and reply.value == odd
        assert reply.response.request.headers["content-encoding"] == "zstd"
        # ... and comes back as JSON too, in a coding the client offered (the smallest one there).
        assert reply.response.headers["content-encoding"] in ("dcz", "zstd", "br", "gzip")
        assert client.fallbacks == 0


def test_streamed_response_is_compressed_chunk_by_chunk(server: Server) -> None:
    with Client(server.url) as client:
        reply = client.get("/stream")
    assert reply.encoding == "zstd" and "content-length" not in reply.headers
    lines = reply.content.splitlines()
    assert [json.loads(x) for x in lines] == ORDERS[:200]


def test_dcz_for_clients_holding_the_dictionary(server: Server, dictionary_file: Path) -> None:
    d = zeroc.Dictionary.load(dictionary_file)
    headers = {
        "accept": "application/json",
        "accept-encoding": "dcz",
        "available-dictionary": ":" + base64.b64encode(d.sha256).decode() + ":",
    }
    r = httpx.get(server.url + "/orders/4", headers=headers)
    assert r.headers["content-encoding"] == "dcz" and "available-dictionary" in r.headers["vary"].lower()
    assert json.loads(ContentCodings(d).decode("dcz", r.content, 1 << 20)) == ORDERS[4]
    # The dictionary endpoint: immutable, named by hash, verified by the client.
    r = httpx.get(f"{server.url}/.well-known/zeroc/dictionaries/{d.id}.zcd")
    assert r.status_code == 200 and "immutable" in r.headers["cache-control"]
    assert zeroc.Dictionary.from_bytes(r.content) == d
    assert httpx.get(f"{server.url}/.well-known/zeroc/dictionaries/{'0' * 64}.zcd").status_code == 404


def test_the_link_names_an_rfc_9842_dictionary_whose_hash_is_its_name(server: Server) -> None:
    """Issue 15 item 9: the Link header's file hashed to neither its name nor the dcz hash. Now
    Link names the raw dictionary by the SHA-256 of its bytes, which is what the browser sends
    back in Available-Dictionary; it carries Use-As-Dictionary for the route."""
    browser = {"accept-encoding": "gzip", "sec-fetch-mode": "cors", "accept": "application/x-zeroc"}
    first = httpx.get(server.url + "/orders", headers=browser)
    link = first.headers["link"]
    assert link.endswith('; rel="compression-dictionary"')
    url = link[1 : link.index(">")]
    r = httpx.get(server.url + url)
    assert r.status_code == 200 and "immutable" in r.headers["cache-control"]
    sha = url.rsplit("/", 1)[1].removesuffix(".dict")
    assert hashlib.sha256(r.content).hexdigest() == sha
    use = http_sf.parse(r.headers["use-as-dictionary"].encode(), tltype="dictionary")
    assert use["match"][0] == "/orders" and use["id"][0] == first.headers["zeroc-dictionary"]
    held = ":" + base64.b64encode(bytes.fromhex(sha)).decode() + ":"
    coded = httpx.get(
        server.url + "/orders", headers={"accept-encoding": "dcz", "available-dictionary": held}
    )
    assert coded.headers["content-encoding"] == "dcz" and coded.content[8:40] == bytes.fromhex(sha)
    # The reference zstd CLI decodes the body with the .dict file (the 40-byte head is a
    # skippable frame), as RFC 9842 means it to.
    assert shutil.which("zstd"), "the zstd CLI is needed (Debian package zstd)"
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "d.dict").write_bytes(r.content)
        (Path(tmp) / "body.dcz").write_bytes(coded.content)
        out = subprocess.run(
            ["zstd", "-d", "-q", "-D", str(Path(tmp) / "d.dict"), "-c", str(Path(tmp) / "body.dcz")],
            capture_output=True,
            check=True,
            timeout=30,
        )
    assert json.loads(out.stdout) == ORDERS[:50]


def test_the_dictionary_endpoint_reads_like_a_static_file(server: Server, dictionary_file: Path) -> None:
    """Issue 15 item 11: the endpoint answered POST and DELETE with 200, ignored If-None-Match and
    knew only lower-case hex. Now: any case, GET and HEAD only (405 with Allow), 304 for a
    matching ETag, HEAD with the GET's headers and no body."""
    d = zeroc.Dictionary.load(dictionary_file)
    url = f"{server.url}/.well-known/zeroc/dictionaries/{d.id.upper()}.zcd"
    r = httpx.get(url)
    assert r.status_code == 200 and zeroc.Dictionary.from_bytes(r.content) == d
    assert r.headers["etag"] == f'"{d.id}"'
    for method in ("POST", "DELETE", "PUT"):
        refused = httpx.request(method, url)
        assert refused.status_code == 405 and refused.headers["allow"] == "GET, HEAD"
    again = httpx.get(url, headers={"if-none-match": r.headers["etag"]})
    assert again.status_code == 304 and again.content == b"" and again.headers["etag"] == r.headers["etag"]
    assert httpx.get(url, headers={"if-none-match": '"other"'}).status_code == 200
    head = httpx.head(url)
    assert head.status_code == 200 and head.content == b""
    assert head.headers["content-length"] == r.headers["content-length"]


@pytest.mark.parametrize(
    ("headers", "body", "status"),
    [
        ({"content-encoding": "gzip"}, b"not gzip at all", 400),
        ({"content-encoding": "zstd"}, b"\x28\xb5\x2f\xfd garbage", 400),
        ({"content-encoding": "br"}, b"\xff\xff\xff", 400),
        ({"content-encoding": "gzip"}, gzip.compress(b"{" * 100)[:-5], 400),
        ({"content-encoding": "compress"}, b"abc", 415),
        ({"content-type": "application/x-zeroc; dictionary=00"}, b"\x01abc", 400),
        ({"content-encoding": "gzip"}, gzip.compress(b"\0" * 20_000_000), 413),
        ({"content-encoding": "zstd"}, zstandard.ZstdCompressor().compress(b"\0" * 20_000_000), 413),
    ],
)
def test_bad_request_bodies_get_clear_errors_and_the_server_keeps_serving(
    server: Server, headers: dict[str, str], body: bytes, status: int
) -> None:
    r = httpx.post(
        server.url + "/orders/echo", content=body, headers={"content-type": "application/json", **headers}
    )
    assert r.status_code == status and "error" in r.json()
    assert httpx.get(server.url + "/health").json() == {"status": "ok"}


def test_oversized_decoded_body_is_413(server: Server) -> None:
    big = b"[" + b"1," * 5_000_000 + b"1]"  # 10 MB of JSON, 10 kB compressed
    r = httpx.post(
        server.url + "/orders/echo",
        content=zstandard.ZstdCompressor().compress(big),
        headers={"content-type": "application/json", "content-encoding": "zstd"},
    )
    assert r.status_code == 413 and "limit" in r.json()["error"]


def test_metrics_are_exposed(server: Server) -> None:
    with Client(server.url) as client:
        client.get("/orders/5")
    text = httpx.get(server.url + "/metrics", follow_redirects=True).text
    assert 'zeroc_http_responses_total{encoding="zeroc",route="/orders/*"}' in text
    assert "zeroc_http_compression_ratio_bucket" in text
    # A streamed response is counted when it ends (it was counted nowhere): its bytes before
    # and after coding, as the client received them.
    plain = {"accept-encoding": "identity"}  # so that reading the metrics adds no zstd bytes
    text = httpx.get(server.url + "/metrics", headers=plain, follow_redirects=True).text
    before = _counter(text, "zeroc_http_bytes_before_total", "zstd")
    streamed = httpx.get(server.url + "/stream", headers={"accept-encoding": "zstd"})
    assert streamed.headers["content-encoding"] == "zstd"
    text = httpx.get(server.url + "/metrics", headers=plain, follow_redirects=True).text
    assert _counter(text, "zeroc_http_bytes_before_total", "zstd") - before == len(streamed.content)


def _counter(text: str, name: str, encoding: str) -> float:
    """The sum of a counter's samples for one encoding, over routes."""
    total = 0.0
    for line in text.splitlines():
        if line.startswith(name + "{") and f'encoding="{encoding}"' in line:
            total += float(line.rsplit(" ", 1)[1])
    return total


def test_thousand_requests_bounded_concurrency_memory_flat(server: Server) -> None:
    async def run(n: int, start: int) -> list[bool]:
        sem = asyncio.Semaphore(16)
        async with AsyncClient(server.url, timeout=30) as client:
            await client.get("/orders/0")

            async def one(i: int) -> bool:
                async with sem:
                    if i % 3 == 0:
                        r = await client.post("/orders/echo", json=ORDERS[i % len(ORDERS)])
                    else:
                        r = await client.get(f"/orders/{i}")
                    return (
                        r.status_code == 200 and r.value == ORDERS[i % len(ORDERS)] and r.encoding == "zeroc"
                    )

            return await asyncio.gather(*(one(i) for i in range(start, start + n)))

    assert all(asyncio.run(run(300, 0)))  # warm up allocators and caches
    before = server.rss_kib()
    results = asyncio.run(run(1000, 300))
    after = server.rss_kib()
    assert results.count(True) == 1000
    print(f"server RSS {before} KiB -> {after} KiB over 1,000 requests")
    assert after - before < 8 * 1024  # flat: no per-request growth (8 MiB tolerance for allocator noise)


def test_the_dictionary_is_named_to_the_clients_that_can_use_it(server: Server) -> None:
    """A bound route names its dictionary (Zeroc-Dictionary, Zeroc-Route) to Zeroc clients and
    RFC 9842 ones, and links the raw dictionary for browsers and RFC 9842 clients; curl and
    plain HTTP libraries get neither (spec/HTTP.md §2): on the 322-byte Order the three headers
    were 250 bytes, more than gzip saved, and the server's CPU to write them more than the
    middleware's own."""
    url = server.url + "/orders/1"
    plain = httpx.get(url, headers={"accept-encoding": "gzip"})
    assert plain.headers["content-encoding"] == "gzip" and "Accept" in plain.headers["vary"]
    assert not {"zeroc-dictionary", "zeroc-route", "link"} & set(plain.headers)
    assert "accept-encoding" not in plain.headers  # nor the request codings only the SDK uses
    sdk = httpx.get(url, headers={"accept": "application/x-zeroc, application/json;q=0.9"})
    assert sdk.headers["zeroc-route"] == "/orders/*" and len(sdk.headers["zeroc-dictionary"]) == 64
    assert sdk.headers["accept-encoding"] == "zstd, br, gzip, dcz"
    assert "link" not in sdk.headers
    browser = httpx.get(url, headers={"sec-fetch-mode": "cors", "accept": "application/json"})
    assert browser.headers["link"].endswith('rel="compression-dictionary"')
    assert "zeroc-dictionary" not in browser.headers
    dcz = httpx.get(url, headers={"accept-encoding": "gzip, dcz"})
    assert {"zeroc-dictionary", "zeroc-route", "link"} <= set(dcz.headers)
    saved = sum(
        len(k) + len(v) + 4
        for k, v in dcz.headers.items()
        if k in ("zeroc-dictionary", "zeroc-route", "link")
    )
    assert saved > len(plain.content) - int(plain.headers["content-length"])  # more than gzip saved


def test_missing_or_broken_dictionary_never_fails_the_call(server: Server, tmp_path: Path) -> None:
    # A corrupt cached dictionary is detected and refetched.
    with Client(server.url, cache_dir=tmp_path) as client:
        ident = client.get("/orders/6").headers["zeroc-dictionary"]
    (tmp_path / f"{ident}.zcd").write_bytes(b"ZRCD garbage")
    with Client(server.url, cache_dir=tmp_path) as client:
        reply = client.get("/orders/6")
        assert reply.value == ORDERS[6] and reply.encoding == "zeroc"
    # A dictionary that cannot be fetched: the client asks again for plain JSON.
    transport = httpx.HTTPTransport()

    class NoDictionaries(httpx.BaseTransport):
        def handle_request(self, request: httpx.Request) -> httpx.Response:
            if request.url.path.startswith("/.well-known/zeroc/"):
                return httpx.Response(503)
            return transport.handle_request(request)

    http = httpx.Client(base_url=server.url, transport=NoDictionaries())
    with Client(server.url, http=http) as client:
        reply = client.get("/orders/7")
        assert reply.value == ORDERS[7] and reply.fallback and client.fallbacks == 1


def test_server_survives_everything_above(server: Server) -> None:
    assert server.proc.poll() is None
    assert httpx.get(server.url + "/orders/8", headers={"accept-encoding": "br"}).json() == ORDERS[8]


def test_head_gets_the_headers_of_get(server: Server) -> None:
    """Issue 15 item 3: HEAD lacked Vary, Content-Encoding and the Zeroc headers, and its
    Content-Length was the identity body's."""
    for path, coding in (("/orders", "gzip"), ("/orders/3", "br"), ("/stream", "zstd")):
        asked = {
            "accept-encoding": coding,
            "sec-fetch-mode": "cors",
            "accept": "application/json, application/x-zeroc;q=0.5",
        }
        get, head = httpx.get(server.url + path, headers=asked), httpx.head(server.url + path, headers=asked)
        assert head.status_code == get.status_code == 200 and head.content == b""
        for name in (
            "content-encoding",
            "content-length",
            "vary",
            "zeroc-dictionary",
            "link",
            "content-type",
        ):
            assert head.headers.get(name) == get.headers.get(name), (path, name)
        assert head.headers["content-encoding"] == coding


@pytest.fixture(scope="module")
def learned_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A dictionary whose codec is the learned field model (spec/LEARNED_MODEL.md)."""
    d = zeroc.train(generate("order", 3000, seed=1), schema=Order, candidates=[("learned", 19)])
    assert d.codec["method"] == "learned"
    path = tmp_path_factory.mktemp("http-learned") / "orders-learned.zcd"
    d.save(path)
    return path


@pytest.mark.parametrize("kind", ["asgi", "wsgi"])
def test_the_http_layer_serves_learned_frames_without_knowing(learned_file: Path, kind: str) -> None:
    server = start_server(learned_file, kind)
    try:
        with Client(server.url) as client:
            reply = client.get("/orders/1")
            assert reply.encoding == "zeroc" and reply.value == ORDERS[1]
            assert reply.response.content[0] & 7 == 4  # frame method 4: the learned model
            posted = client.post("/orders/echo", json=ORDERS[3])
            assert posted.status_code == 200 and posted.value == ORDERS[3]
            assert client.fallbacks == 0
        gz = httpx.get(server.url + "/orders/1", headers={"accept-encoding": "gzip"})
        assert gz.json() == ORDERS[1]
        print(f"{kind}: one Order as a learned frame {reply.wire_bytes} B, gzip {gz.num_bytes_downloaded} B")
        assert reply.wire_bytes * 8 <= gz.num_bytes_downloaded
    finally:
        server.proc.terminate()
        server.proc.wait(timeout=10)


def test_frames_name_their_dictionary_in_either_case_and_the_sdk_remembers_routes_not_paths(
    server: Server, dictionary_file: Path
) -> None:
    """Issue 15 item 11: ``dictionary=`` in upper-case hex was a mismatch (400); the SDK kept one
    entry per distinct path it asked for, without bound. Now the hex is read in either case, and
    the SDK remembers the route's pattern (one entry for every order) and at most ROUTES paths."""
    from zeroc.http._client import ROUTES
    from zeroc.http._negotiate import zeroc_media_type

    d = zeroc.Dictionary.load(dictionary_file)
    frame = zeroc.Codec(d).encode(ORDERS[6])
    schema = d.schema["message"] if d.schema else None
    r = httpx.post(
        server.url + "/orders/echo",
        content=frame,
        headers={"content-type": zeroc_media_type(d.id.upper(), schema), "accept": "application/json"},
    )
    assert r.status_code == 200 and r.json() == ORDERS[6]
    # The schema parameter counts too: a frame that says it is another message type is refused.
    for other in ("zeroc.workloads.SearchRequest", None):
        kind = zeroc_media_type(d.id, other)
        r = httpx.post(server.url + "/orders/echo", content=frame, headers={"content-type": kind})
        assert r.status_code == 400 and "schema" in r.json()["error"]
    with Client(server.url) as client:
        for i in range(30):
            assert client.get(f"/orders/{i}").value == ORDERS[i % len(ORDERS)]
        known = client._core.route_dictionary
        assert list(known) == ["/orders/*"], known
        response = httpx.Response(200, headers={"zeroc-dictionary": d.id})
        for i in range(ROUTES + 50):  # a server that names no pattern: paths, bounded
            client._core.learn(f"/p/{i}", response)
        assert len(client._core.route_dictionary) == ROUTES and "/p/0" not in client._core.route_dictionary


def test_sdk_polling_a_delta_route_gets_each_version_against_the_last(server: Server) -> None:
    """The SDK speaks RFC 9842 too: it keeps a response that carries Use-As-Dictionary while it
    is fresh, names it in Available-Dictionary and decodes the dcz reply against it."""
    with Client(server.url) as client:
        first = client.get("/feed")
        assert "use-as-dictionary" in first.headers and len(first.value) == 50
        second = client.get("/feed")
        start = ORDERS.index(second.value[0])
        assert second.value == ORDERS[start : start + 50]
        sent = second.response.request.headers
        assert (
            sent["available-dictionary"]
            == ":" + base64.b64encode(hashlib.sha256(first.content).digest()).decode() + ":"
        )
        assert second.encoding == "dcz" and "dcz" in sent["accept-encoding"]
        gzip_size = len(ContentCodings().encode("gzip", second.content))
        print(f"feed: {len(second.content)} B JSON, dcz {second.wire_bytes} B, gzip {gzip_size} B")
        assert second.wire_bytes * 3 <= gzip_size


def test_idle_connections_do_not_stall_the_demo(server: Server) -> None:
    """Issue 15 item 11: 100 idle sockets stalled ``serve-demo --wsgi`` for ~2 min (waitress's
    connection limit of 100 and 120 s channel timeout). The demo now allows 1,000 connections
    and closes idle ones after 10 s (uvicorn: 1,000, then 503)."""
    host, port = server.url.removeprefix("http://").split(":")
    idle = [socket.create_connection((host, int(port)), timeout=10) for _ in range(150)]
    try:
        r = httpx.get(server.url + "/health", timeout=30)
        assert r.status_code == 200 and r.json() == {"status": "ok"}
    finally:
        for s in idle:
            s.close()
