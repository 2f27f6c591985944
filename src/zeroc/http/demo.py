"""The demo services behind ``zeroc serve-demo`` and ``examples/``: one FastAPI, one Flask.

Both serve generated Orders at ``/orders/{i}`` (a route bound to a dictionary and the Order
schema, so SDK clients get ~56-byte Zeroc frames), echo posted Orders at ``POST /orders/echo``,
list 50 orders at ``/orders`` (JSON, bound to a dictionary trained on Orders as JSON, so that
browsers get it dcz-coded with RFC 9842), serve a feed of the 50 latest orders at ``/feed`` (one
more each second; a delta route, so that a page polling it gets each version coded against the
one it holds), stream orders at ``/stream``, and expose Prometheus metrics at ``/metrics``. The
FastAPI one also sends orders as server-sent events at ``/events``, echoes WebSocket messages at
``/ws/echo`` (a Zeroc session each way for clients that offer one, spec/HTTP.md §5) and sends
every subscriber of ``/ws/feed`` the same orders (fan-out: each coded once for all). Both serve
a sensor's time series of ``?n=`` points at ``/series/json`` (ISO timestamps, gzip-6),
``/series/zct`` (a portable Zeroc table) and ``/series/arrow`` (Arrow IPC, zstd buffers). Run
from a checkout whose TypeScript package is built (``make js``), both serve it at ``/js/`` for
pages to import (``import("/js/index.js")``) and its pages at ``/pages/`` (the time-series chart:
``/pages/series.html``).
"""

import time
from collections.abc import AsyncIterator, Iterator
from functools import cache, lru_cache
from pathlib import Path
from typing import Any

import zeroc
from zeroc.http._metrics import Metrics
from zeroc.http._server import Route
from zeroc.workloads import Order, generate

ORDERS = generate("order", 1000, seed=99)
# The TypeScript package as `make js` builds it, and its pages, where the demo runs from a checkout.
JS_DIST = Path(__file__).resolve().parents[3] / "js" / "dist"
JS_PAGES = JS_DIST.parent / "pages"
SERIES_MAX = 2_000_000  # points a /series request may ask for
SERIES_TYPES = {
    "json": "application/json",
    "zct": "application/x-zeroc-table",
    "arrow": "application/vnd.apache.arrow.file",
}


def series(n: int, seed: int = 7) -> dict[str, Any]:
    """A sensor's ``n`` readings: millisecond timestamps 1 to 5 s apart as ISO-8601 text, and a
    random walk of two-decimal values (needs numpy, in the tabular extra)."""
    import numpy as np

    rng = np.random.default_rng(seed)
    stamps = 1_700_000_000_000 + np.cumsum(
        rng.choice([1000, 1000, 1000, 1000, 1000, 1000, 2000, 5000], size=n)
    )
    values = np.round(20 + np.cumsum(rng.normal(0, 0.05, size=n)), 2)
    text = np.datetime_as_string(stamps.astype("datetime64[ms]"), unit="ms")
    points = [{"t": t + "Z", "v": v} for t, v in zip(text.tolist(), values.tolist(), strict=True)]
    return {"sensor": "demo-1", "unit": "celsius", "points": points}


@lru_cache(maxsize=6)
def series_body(form: str, n: int) -> tuple[bytes, dict[str, str]]:
    """The series of ``n`` points as ``form`` (json, zct or arrow): body and headers. JSON goes
    out gzip'd here (the middleware leaves a coded body alone): the comparison is JSON + gzip."""
    import gzip
    import io

    doc = series(n)
    headers = {"content-type": SERIES_TYPES[form], "cache-control": "no-store"}
    if form == "json":
        headers["content-encoding"] = "gzip"
        return gzip.compress(_json_bytes(doc), 6, mtime=0), headers
    out = io.BytesIO()
    if form == "zct":
        from zeroc.tabular import pack

        pack(doc, out, portable=True)
        return out.getvalue(), headers
    import numpy as np
    import pyarrow as pa
    import pyarrow.ipc as ipc

    stamps = np.array([p["t"][:-1] for p in doc["points"]], dtype="datetime64[ms]")
    table = pa.table({"t": pa.array(stamps), "v": pa.array([p["v"] for p in doc["points"]])})
    with ipc.new_file(out, table.schema, options=ipc.IpcWriteOptions(compression="zstd")) as w:
        w.write_table(table)
    return out.getvalue(), headers


def _json_bytes(value: Any) -> bytes:
    import json

    return json.dumps(value, separators=(",", ":")).encode()


def series_request(form: str, n: str | None) -> tuple[int, bytes, dict[str, str]]:
    """Status, body and headers of ``/series/<form>?n=``."""
    if form not in SERIES_TYPES or n is None or not n.isdigit() or not 1 <= int(n) <= SERIES_MAX:
        return 404 if form not in SERIES_TYPES else 400, b"", {"content-type": "text/plain"}
    body, headers = series_body(form, int(n))
    return 200, body, headers


EVENTS = 20  # server-sent events /events sends before it waits


def train_demo_dictionary() -> zeroc.Dictionary:
    """A dictionary trained on generated Orders, as the demo server uses (about 2 s)."""
    return zeroc.train(generate("order", 5000, seed=1), schema=Order)


@cache
def listing_dictionary() -> zeroc.Dictionary:
    """The list route's dictionary: zstd trained on 2,000 other generated Orders as JSON (about
    0.6 s). The Order dictionary's content was trained on protobuf bytes, which suit frames, not
    the JSON a browser reads."""
    return zeroc.train(generate("order", 2000, seed=2), candidates=[("zstd", 19)])


FEED = 50
# The feed's responses may be cached this long: a browser keeps one as a dictionary only while
# it may cache it (spec/HTTP.md §3); the page asks with fetch(url, {cache: "no-cache"}).
FEED_CACHING = "public, max-age=60"


def feed() -> list[dict[str, Any]]:
    """The FEED latest orders: the window moves on by one order each second."""
    start = int(time.time()) % (len(ORDERS) - FEED)
    return ORDERS[start : start + FEED]


def routes(dictionary: zeroc.Dictionary, listing: zeroc.Dictionary | None = None) -> list[Route]:
    """The demo's routes: Orders bound to ``dictionary``, the list and the WebSockets to
    ``listing`` (by default listing_dictionary())."""
    if listing is None:
        listing = listing_dictionary()
    return [
        Route("/orders/*", dictionary),
        Route("/orders", listing),
        Route("/feed", delta=16),
        Route("/ws/feed", listing, fanout=True),  # the same messages to every subscriber
        Route("/ws/*", listing),  # WebSocket sessions start from the JSON dictionary
    ]


def create_app(dictionary: zeroc.Dictionary, **options: Any) -> Any:
    """The FastAPI demo service wrapped in :class:`zeroc.http.ZerocMiddleware`.

    (No ``from __future__ import annotations`` here: FastAPI resolves the ``Request`` annotation
    of a locally imported class only when annotations are evaluated.)
    """
    from fastapi import FastAPI, Request, WebSocket
    from fastapi.responses import JSONResponse, Response, StreamingResponse
    from prometheus_client import CollectorRegistry, make_asgi_app

    from zeroc.http._asgi import ZerocMiddleware

    registry = CollectorRegistry()
    app = FastAPI(title="Zeroc demo")

    @app.get("/orders/{i}")
    def order(i: int) -> dict[str, Any]:
        return ORDERS[i % len(ORDERS)]

    @app.post("/orders/echo")
    async def echo(request: Request) -> Any:
        return await request.json()

    @app.get("/orders")
    def orders() -> list[dict[str, Any]]:
        return ORDERS[:50]

    @app.get("/feed")
    def latest() -> JSONResponse:
        return JSONResponse(feed(), headers={"cache-control": FEED_CACHING})

    @app.get("/stream")
    def stream() -> StreamingResponse:
        def lines() -> Iterator[bytes]:
            import json

            for o in ORDERS[:200]:
                yield json.dumps(o).encode() + b"\n"

        return StreamingResponse(lines(), media_type="application/x-ndjson")

    @app.get("/events")
    def events() -> StreamingResponse:
        """Server-sent events: the first EVENTS orders, one event each, then the stream stays
        open as a live feed does between events (until the client leaves)."""

        async def stream() -> AsyncIterator[bytes]:
            import asyncio
            import json

            for o in ORDERS[:EVENTS]:
                yield b"data: " + json.dumps(o).encode() + b"\n\n"
            await asyncio.Event().wait()

        return StreamingResponse(stream(), media_type="text/event-stream")

    @app.get("/health")
    def health() -> dict[str, str]:
        return {"status": "ok"}

    @app.websocket("/ws/feed")
    async def ws_feed(ws: WebSocket) -> None:
        """The first FEED orders to every subscriber (a fan-out route: each coded once for all),
        then nothing until the client leaves."""
        import json

        await ws.accept()
        for o in ORDERS[:FEED]:
            await ws.send_text(json.dumps(o))
        while (await ws.receive())["type"] != "websocket.disconnect":
            pass

    @app.websocket("/ws/echo")
    async def ws_echo(ws: WebSocket) -> None:
        """Every message back as it came (text or binary), until the client leaves."""
        await ws.accept()
        while True:
            message = await ws.receive()
            if message["type"] == "websocket.disconnect":
                return
            if message.get("text") is not None:
                await ws.send_text(message["text"])
            else:
                await ws.send_bytes(message["bytes"])

    app.mount("/metrics", make_asgi_app(registry))

    @app.get("/series/{form}")
    def series_route(form: str, n: str | None = None) -> Response:
        status, body, headers = series_request(form, n)
        return Response(body, status_code=status, headers=headers)

    if JS_DIST.is_dir():
        from starlette.staticfiles import StaticFiles

        app.mount("/js", StaticFiles(directory=JS_DIST))
        app.mount("/pages", StaticFiles(directory=JS_PAGES))
    options.setdefault("minimum_size", 256)
    app.add_middleware(
        ZerocMiddleware,  # type: ignore[arg-type]  # Starlette's factory protocol is stricter than ASGI
        routes=routes(dictionary),
        metrics=Metrics(registry),
        **options,
    )
    return app


def create_wsgi_app(
    dictionary: zeroc.Dictionary, listing: zeroc.Dictionary | None = None, **options: Any
) -> Any:
    """The Flask demo service wrapped in :class:`zeroc.http.ZerocWSGIMiddleware` (``listing``:
    the list's dictionary, as for routes())."""
    import json

    from flask import Flask, Response, jsonify, request
    from prometheus_client import CollectorRegistry, generate_latest

    from zeroc.http._wsgi import ZerocWSGIMiddleware

    registry = CollectorRegistry()
    app = Flask("zeroc_demo")
    # Flask sorts keys by default; keep the order the data has (a learned model learned it).
    app.json.sort_keys = False  # type: ignore[attr-defined]

    @app.get("/orders/<int:i>")
    def order(i: int) -> Any:
        return jsonify(ORDERS[i % len(ORDERS)])

    @app.get("/series/<form>")
    def series_route(form: str) -> Any:
        status, body, headers = series_request(form, request.args.get("n"))
        return Response(body, status=status, headers=headers)

    if JS_DIST.is_dir():
        from flask import send_from_directory

        @app.get("/js/<path:name>")
        def package(name: str) -> Any:
            return send_from_directory(JS_DIST, name)

        @app.get("/pages/<path:name>")
        def pages(name: str) -> Any:
            return send_from_directory(JS_PAGES, name)

    @app.post("/orders/echo")
    def echo() -> Any:
        return jsonify(request.get_json())

    @app.get("/orders")
    def orders() -> Any:
        return jsonify(ORDERS[:50])

    @app.get("/feed")
    def latest() -> Any:
        response = jsonify(feed())
        response.headers["cache-control"] = FEED_CACHING
        return response

    @app.get("/stream")
    def stream() -> Response:
        return Response((json.dumps(o) + "\n" for o in ORDERS[:200]), mimetype="application/x-ndjson")

    @app.get("/health")
    def health() -> Any:
        return jsonify(status="ok")

    @app.get("/metrics")
    def metrics() -> Response:
        return Response(generate_latest(registry), mimetype="text/plain")

    options.setdefault("minimum_size", 256)
    app.wsgi_app = ZerocWSGIMiddleware(  # type: ignore[method-assign]
        app.wsgi_app, routes=routes(dictionary, listing), metrics=Metrics(registry), **options
    )
    return app
