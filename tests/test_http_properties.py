"""Both middlewares, called in process as their servers call them, on generated requests and
application responses: whatever the headers, statuses, body shapes and codings, what goes out
decodes to exactly what the application sent, with a length that is the body's and every
Set-Cookie line kept."""

from __future__ import annotations

import asyncio
import gzip
import hashlib
import io
from collections.abc import Callable
from typing import Any

import brotli
import orjson
import pytest
import zstandard
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

import zeroc
from zeroc.http import ZerocMiddleware, ZerocWSGIMiddleware
from zeroc.http._content import DCZ_MAGIC
from zeroc.http._negotiate import available_dictionary_header
from zeroc.http._server import Route, Server
from zeroc.workloads import generate

ORDERS = generate("order", 60, seed=11)
DICTIONARY = zeroc.train(generate("order", 600, seed=12), candidates=[("zstd", 19)])
PATHS = ("/orders/7", "/feed", "/other")
TOKENS = (
    "gzip",
    "br",
    "zstd",
    "dcz",
    "identity",
    "*",
    "deflate",
    "gzip;q=0",
    "br;q=0.5",
    "*;q=0",
    "GZIP",
    "x;q=",
)
TYPES = (
    "application/json",
    "application/json; charset=utf-8",
    "text/plain",
    "image/png",
    "image/svg+xml",
    "",
)
SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def routes() -> list[Route]:
    return [Route("/orders/*", DICTIONARY), Route("/feed", delta=4)]


@st.composite
def exchanges(draw: st.DrawFn) -> dict[str, Any]:
    """A request (method, path, headers) and the application's response to it."""
    request: dict[str, str] = {}
    if draw(st.booleans()):
        request["accept-encoding"] = ", ".join(draw(st.lists(st.sampled_from(TOKENS), max_size=5)))
    if draw(st.booleans()):
        request["accept"] = draw(st.sampled_from(["application/json", "application/x-zeroc", "*/*"]))
    if draw(st.booleans()):
        held = available_dictionary_header(DICTIONARY.sha256)
        request["available-dictionary"] = draw(st.sampled_from([held, ":abc:", "garbage"]))
    if draw(st.booleans()):
        request["sec-fetch-site"] = draw(st.sampled_from(["same-origin", "cross-site", "none"]))
        request["sec-fetch-mode"] = draw(st.sampled_from(["cors", "no-cors", "navigate"]))
    status = draw(st.sampled_from([200, 200, 200, 201, 204, 304, 404]))
    body = b""
    if status not in (204, 304):
        body = draw(
            st.sampled_from(ORDERS).map(orjson.dumps)
            | st.integers(1, len(ORDERS)).map(lambda n: orjson.dumps(ORDERS[:n]))
            | st.binary(max_size=3000)
            | st.integers(1, 20_000).map(lambda n: b"abc" * n)
        )
    response: list[tuple[str, str]] = []
    kind = draw(st.sampled_from(TYPES))
    if kind:
        response.append(("Content-Type", kind))
    if draw(st.booleans()):
        response.append(("Content-Length", str(len(body))))
    for name, values in (
        ("ETag", ['"v1"', 'W/"v1"']),
        ("Vary", ["Cookie", "accept-encoding", "*"]),
        ("Cache-Control", ["private", "no-store", "max-age=60"]),
        ("Content-Encoding", ["gzip", "identity"]),
    ):
        if draw(st.integers(0, 3)) == 0:
            response.append((name, draw(st.sampled_from(values))))
    response += [("Set-Cookie", c) for c in draw(st.lists(st.sampled_from(["a=1", "b=2"]), max_size=2))]
    cut = draw(st.integers(1, 3))  # the body in this many parts (more than one: streamed)
    step = -(-len(body) // cut) or 1
    return {
        "method": draw(st.sampled_from(["GET", "GET", "GET", "HEAD"])),
        "path": draw(st.sampled_from(PATHS)),
        "request": request,
        "status": status,
        "response": response,
        "body": body,
        "parts": [body[i : i + step] for i in range(0, len(body), step)] or [b""],
    }


class Checker:
    """Holds what a dcz body may have been coded against: the route's dictionary, and every
    body the delta route has sent (its successors' dictionaries)."""

    def __init__(self) -> None:
        self.dictionaries = {DICTIONARY.sha256: DICTIONARY.content}

    def sent(self, ex: dict[str, Any]) -> None:
        self.dictionaries[hashlib.sha256(ex["body"]).digest()] = ex["body"]

    def decode(self, coding: str, data: bytes) -> bytes:
        if coding == "gzip":
            return gzip.decompress(data)
        if coding == "br":
            return brotli.decompress(data)  # type: ignore[no-any-return]
        if coding == "zstd":
            return zstandard.ZstdDecompressor().decompress(data, max_output_size=1 << 24)
        assert coding == "dcz" and data[:8] == DCZ_MAGIC, coding
        raw = zstandard.ZstdCompressionDict(
            self.dictionaries[data[8:40]], dict_type=zstandard.DICT_TYPE_RAWCONTENT
        )
        return zstandard.ZstdDecompressor(dict_data=raw).decompress(data[40:], max_output_size=1 << 24)

    def check(self, ex: dict[str, Any], headers: list[tuple[str, str]], out: bytes) -> None:
        lines: dict[str, list[str]] = {}
        for k, v in headers:
            assert "\n" not in v and "\r" not in v, (k, v)
            lines.setdefault(k.lower(), []).append(v)
        given_coding = [v for k, v in ex["response"] if k == "Content-Encoding"]
        coding = lines.get("content-encoding", [])
        assert [v for k, v in headers if k.lower() == "set-cookie"] == [
            v for k, v in ex["response"] if k == "Set-Cookie"
        ]
        event(f"{ex['method']} sent as {coding[0] if coding else 'identity'}")
        if ex["method"] == "HEAD":
            assert out == b""
            return
        if "content-length" in lines:
            assert lines["content-length"] == [str(len(out))]
        if coding != given_coding:
            assert len(coding) == 1 and self.decode(coding[0], out) == ex["body"], coding
            vary = lines["vary"][0].lower()
            assert vary == "*" or "accept-encoding" in vary, vary
        elif lines.get("content-type", [""])[0].startswith("application/x-zeroc"):
            event("sent as Zeroc frames")
            assert zeroc.Codec(DICTIONARY).decode(out) == orjson.loads(ex["body"])
        else:
            assert out == ex["body"]


@pytest.fixture(scope="module")
def asgi() -> tuple[ZerocMiddleware, Checker]:
    return ZerocMiddleware(None, routes=routes(), minimum_size=100), Checker()  # type: ignore[arg-type]


@pytest.fixture(scope="module")
def wsgi() -> tuple[ZerocWSGIMiddleware, Checker]:
    return ZerocWSGIMiddleware(None, routes=routes(), minimum_size=100), Checker()  # type: ignore[arg-type]


@SETTINGS
@given(ex=exchanges())
def test_asgi_responses_decode_to_what_the_app_sent(
    asgi: tuple[ZerocMiddleware, Checker], ex: dict[str, Any]
) -> None:
    middleware, checker = asgi
    parts = ex["parts"]

    async def app(scope: Any, receive: Any, send: Any) -> None:
        raw = [(k.lower().encode(), v.encode()) for k, v in ex["response"]]
        await send({"type": "http.response.start", "status": ex["status"], "headers": raw})
        for i, part in enumerate(parts):
            await send({"type": "http.response.body", "body": part, "more_body": i < len(parts) - 1})

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b"", "more_body": False}

    sent: list[dict[str, Any]] = []

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    middleware.app = app
    scope = {
        "type": "http",
        "method": ex["method"],
        "path": ex["path"],
        "raw_path": ex["path"].encode(),
        "query_string": b"",
        "headers": [(k.encode(), v.encode()) for k, v in ex["request"].items()],
    }
    asyncio.run(middleware(scope, receive, send))
    checker.sent(ex)
    assert sent[0]["type"] == "http.response.start" and sent[0]["status"] == ex["status"]
    headers = [(k.decode("latin-1"), v.decode("latin-1")) for k, v in sent[0]["headers"]]
    checker.check(ex, headers, b"".join(m.get("body", b"") for m in sent[1:]))


@SETTINGS
@given(ex=exchanges(), style=st.sampled_from(["list", "generator", "write"]))
def test_wsgi_responses_decode_to_what_the_app_sent(
    wsgi: tuple[ZerocWSGIMiddleware, Checker], ex: dict[str, Any], style: str
) -> None:
    middleware, checker = wsgi
    parts, status = ex["parts"], f"{ex['status']} Whatever"

    def app(environ: dict[str, Any], start_response: Callable[..., Any]) -> Any:
        if style == "generator":  # start_response on the first step, as generators do

            def steps() -> Any:
                start_response(status, list(ex["response"]))
                yield from parts

            return steps()
        write = start_response(status, list(ex["response"]))
        if style == "write":  # the legacy write() callable, then the rest
            write(parts[0])
            return parts[1:]
        return list(parts)

    middleware.app = app
    environ = {
        "REQUEST_METHOD": ex["method"],
        "PATH_INFO": ex["path"],
        "wsgi.input": io.BytesIO(b""),
        **{"HTTP_" + k.upper().replace("-", "_"): v for k, v in ex["request"].items()},
    }
    got: dict[str, Any] = {}

    def start_response(line: str, headers: list[tuple[str, str]], exc_info: Any = None) -> Any:
        got["status"], got["headers"] = line, headers
        return lambda data: None

    result = middleware(environ, start_response)
    try:
        out = b"".join(result)
    finally:
        getattr(result, "close", lambda: None)()
    checker.sent(ex)
    assert got["status"] == status
    checker.check(ex, got["headers"], out)


TOGGLED = (  # headers a plan may read, each added to or taken from an exchange in turn
    ("response", "content-encoding", "gzip"),
    ("response", "etag", '"v2"'),
    ("response", "content-type", "image/png"),
    ("response", "set-cookie", "a=1"),
    ("response", "cache-control", "private"),
    ("response", "vary", "Cookie"),
    ("request", "sec-fetch-mode", "cors"),
    ("request", "sec-fetch-site", "cross-site"),
    ("request", "origin", "https://a.example"),
    ("request", "accept", "application/x-zeroc"),
    ("request", "accept-encoding", "gzip"),
    ("request", "available-dictionary", available_dictionary_header(DICTIONARY.sha256)),
)


@pytest.fixture(scope="module")
def server() -> Server:
    return Server(routes(), minimum_size=256)


@SETTINGS
@given(ex=exchanges(), status=st.sampled_from([200, 201, 204, 304, 404]))
def test_a_plan_copied_from_its_template_is_the_plan_made_afresh(
    server: Server, ex: dict[str, Any], status: int
) -> None:
    """Server.plan() makes a plan once per set of the headers it reads and copies it after:
    every copy (an ETag of its own included) is what the whole computation gives, also for
    exchanges one header or the status away from one whose plan is kept already."""
    response: dict[str, str] = {}
    for k, v in ex["response"]:
        response[k.lower()] = f"{response[k.lower()]}, {v}" if k.lower() in response else v
    cases = [(ex["request"], ex["status"], response), (ex["request"], status, response)]
    for side, name, value in TOGGLED:
        request, changed = dict(ex["request"]), dict(response)
        headers = request if side == "request" else changed
        if name in headers:
            del headers[name]
        else:
            headers[name] = value
        cases.append((request, ex["status"], changed))
    for request, code, headers in cases:
        plan = server.plan(ex["path"], request, code, headers)
        assert vars(plan) == vars(server._plan(server.match(ex["path"]), request, code, headers))
