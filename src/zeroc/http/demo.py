"""The demo services behind ``zeroc serve-demo`` and ``examples/``: one FastAPI, one Flask.

Both serve generated Orders at ``/orders/{i}`` (a route bound to a dictionary and the Order
schema, so SDK clients get ~56-byte Zeroc frames), echo posted Orders at ``POST /orders/echo``,
list 50 orders at ``/orders`` (JSON, bound to a dictionary trained on Orders as JSON, so that
browsers get it dcz-coded with RFC 9842), serve a feed of the 50 latest orders at ``/feed`` (one
more each second; a delta route, so that a page polling it gets each version coded against the
one it holds), stream orders at ``/stream``, and expose Prometheus metrics at ``/metrics``. The
FastAPI one also sends orders as server-sent events at ``/events``, echoes WebSocket messages at
``/ws/echo`` (a Zeroc session each way for clients that offer one, spec/HTTP.md §5) and sends
every subscriber of ``/ws/feed`` the same orders (fan-out: each coded once for all). Run from a
checkout whose TypeScript package is built (``make js``), both serve it at ``/js/`` for pages to
import (``import("/js/index.js")``).
"""

import time
from collections.abc import AsyncIterator, Iterator
from functools import cache
from pathlib import Path
from typing import Any

import zeroc
from zeroc.http._metrics import Metrics
from zeroc.http._server import Route
from zeroc.workloads import Order, generate

ORDERS = generate("order", 1000, seed=99)
# The TypeScript package as `make js` builds it, where the demo runs from a checkout.
JS_DIST = Path(__file__).resolve().parents[3] / "js" / "dist"
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


def routes(dictionary: zeroc.Dictionary) -> list[Route]:
    return [
        Route("/orders/*", dictionary),
        Route("/orders", listing_dictionary()),
        Route("/feed", delta=16),
        Route("/ws/feed", listing_dictionary(), fanout=True),  # the same messages to every subscriber
        Route("/ws/*", listing_dictionary()),  # WebSocket sessions start from the JSON dictionary
    ]


def create_app(dictionary: zeroc.Dictionary, **options: Any) -> Any:
    """The FastAPI demo service wrapped in :class:`zeroc.http.ZerocMiddleware`.

    (No ``from __future__ import annotations`` here: FastAPI resolves the ``Request`` annotation
    of a locally imported class only when annotations are evaluated.)
    """
    from fastapi import FastAPI, Request, WebSocket
    from fastapi.responses import JSONResponse, StreamingResponse
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
    if JS_DIST.is_dir():
        from starlette.staticfiles import StaticFiles

        app.mount("/js", StaticFiles(directory=JS_DIST))
    options.setdefault("minimum_size", 256)
    app.add_middleware(
        ZerocMiddleware,  # type: ignore[arg-type]  # Starlette's factory protocol is stricter than ASGI
        routes=routes(dictionary),
        metrics=Metrics(registry),
        **options,
    )
    return app


def create_wsgi_app(dictionary: zeroc.Dictionary, **options: Any) -> Any:
    """The Flask demo service wrapped in :class:`zeroc.http.ZerocWSGIMiddleware`."""
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

    if JS_DIST.is_dir():

        @app.get("/js/<path:name>")
        def package(name: str) -> Any:
            from flask import send_from_directory

            return send_from_directory(JS_DIST, name)

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
        app.wsgi_app, routes=routes(dictionary), metrics=Metrics(registry), **options
    )
    return app
