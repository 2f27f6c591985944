"""ASGI middleware (Starlette, FastAPI, any ASGI app): a thin adapter over ``Server``.

Like Starlette's GZipMiddleware it holds back ``http.response.start`` until it knows whether the
body comes whole (then it can apply the minimum size and set Content-Length) or streamed (then it
compresses chunk by chunk and drops Content-Length).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable, MutableMapping, Sequence
from functools import lru_cache
from typing import Any

from zeroc._errors import LimitExceeded, ZerocError
from zeroc.http import _websocket
from zeroc.http._negotiate import add_vary
from zeroc.http._server import DICTIONARY_PATH, Plan, Route, Server, Streamed

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


def _headers(raw: Iterable[tuple[bytes, bytes]]) -> dict[str, str]:
    """Request headers by lower-case name; a repeated header's values combined in order, as RFC
    9110 §5.3 reads them (``a, b``; cookies ``a; b``), so that two Accept-Encoding lines count
    and two Content-Encoding lines are seen as two codings. (A loop: in Python 3.11 a
    comprehension is a function call of its own, which a server pays for cold on every request.)"""
    out: dict[str, str] = {}
    for k, v in raw:
        name = k.decode("latin-1").lower()
        if name in out:
            out[name] += ("; " if name == "cookie" else ", ") + v.decode("latin-1")
        else:
            out[name] = v.decode("latin-1")
    return out


def _changed(raw: Sequence[tuple[bytes, bytes]], changes: dict[str, str | None]) -> list[tuple[bytes, bytes]]:
    """The request's header lines with ``changes`` applied (None removes a header); every other
    line stays as the client sent it, repeated ones included."""
    kept = [(k, v) for k, v in raw if k.decode("latin-1").lower() not in changes]
    return kept + [(k.encode("latin-1"), v.encode("latin-1")) for k, v in changes.items() if v is not None]


class _Disconnected(Exception):
    """The client went away before its request body was complete."""


async def _respond(send: Send, status: int, headers: list[tuple[str, str]], body: bytes) -> None:
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [(k.encode(), v.encode()) for k, v in headers],
        }
    )
    await send({"type": "http.response.body", "body": body})


class ZerocMiddleware:
    """Compress responses, decode compressed requests, speak Zeroc frames on bound routes.

    ``ZerocMiddleware(app, routes=[Route("/orders/*", dictionary)], minimum_size=500,
    max_request_size=8 MiB, metrics=Metrics())`` — see spec/HTTP.md for the protocol.
    """

    def __init__(self, app: ASGIApp, routes: Sequence[Route] = (), **options: Any) -> None:
        self.app = app
        self.server = Server(routes, **options)
        self._fanouts: dict[tuple[str, str], _websocket.FanOut] = {}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "websocket":
            await self._websocket(scope, receive, send)
            return
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        server = self.server
        path = scope["path"]
        if not isinstance(scope["headers"], (list, tuple)):  # any iterable (ASGI): read twice here
            scope = dict(scope, headers=list(scope["headers"]))
        request = _headers(scope["headers"])
        if path.startswith(DICTIONARY_PATH):
            method = scope.get("method", "GET")
            served = server.dictionary_response(path, method, request.get("if-none-match"))
            if served is not None:
                await _respond(send, *served)
                return
        if ("content-encoding" in request or "content-type" in request) and server.needs_decoding(request):
            try:
                body = await self._read(receive)
                data, changes = server.decode_request(path, request, body)
            except _Disconnected:  # a body cut short is never handed on as if it were whole
                return
            except ZerocError as exc:
                await _respond(send, *server.error(exc))
                return
            scope = dict(scope, headers=_changed(scope["headers"], changes))
            receive = _replay(data, receive)
        # HEAD gets GET's headers (spec/HTTP.md §1): the app answers a GET, whose body is dropped.
        head = scope.get("method") == "HEAD"
        if head:
            scope = dict(scope, method="GET")
        await self.app(scope, receive, _Responder(server, path, request, send, head).send)

    async def _read(self, receive: Receive) -> bytes:
        chunks, size = [], 0
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                raise _Disconnected
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > self.server.max_request_size:
                raise LimitExceeded(f"request body exceeds {self.server.max_request_size} bytes")
            chunks.append(chunk)
            if not message.get("more_body", False):
                break
        return b"".join(chunks)

    async def _websocket(self, scope: Scope, receive: Receive, send: Send) -> None:
        """A WebSocket whose client offers a ``zeroc.1`` subprotocol carries a session each way
        (spec/HTTP.md §5); any other passes through untouched."""
        offered = list(scope.get("subprotocols") or ())
        bound = self.server.match(scope["path"])
        chosen = _websocket.choose(offered, bound.route.dictionary if bound else None)
        if chosen is None:
            await self.app(scope, receive, send)
            return
        protocol, dictionary = chosen
        fanout = None
        if bound is not None and bound.route.fanout:  # one coder per route and dictionary
            fanout = self._fanouts.get((bound.route.pattern, protocol))
            if fanout is None:
                fanout = self._fanouts[bound.route.pattern, protocol] = _websocket.FanOut(dictionary)
        conn = _websocket.Connection(dictionary, max_message_size=self.server.max_request_size, fanout=fanout)
        inner = dict(scope, subprotocols=[p for p in offered if not p.startswith(_websocket.PROTOCOL)])
        closed = False

        async def close(code: int) -> Message:
            nonlocal closed
            if not closed:
                closed = True
                await send({"type": "websocket.close", "code": code})
            return {"type": "websocket.disconnect", "code": code}

        async def app_receive() -> Message:
            if closed:
                return {"type": "websocket.disconnect", "code": 1000}
            message = await receive()
            if message["type"] != "websocket.receive":
                return message
            record = message.get("bytes")
            if record is None:  # a text message: not a record
                return await close(_websocket.CLOSE_INVALID)
            try:
                text, data = conn.receive(record)
            except LimitExceeded:
                return await close(_websocket.CLOSE_TOO_BIG)
            except ZerocError:
                return await close(_websocket.CLOSE_INVALID)
            return {"type": "websocket.receive", "text": text, "bytes": data}

        async def app_send(message: Message) -> None:
            nonlocal closed
            kind = message["type"]
            if closed:  # closed already (by a bad record, or by the app): nothing more goes out
                return
            if kind == "websocket.close":
                closed = True
            elif kind == "websocket.accept":
                message = dict(message, subprotocol=protocol)
            elif kind == "websocket.send":
                record = conn.send(message.get("text"), message.get("bytes"))
                message = {"type": "websocket.send", "bytes": record}
            await send(message)

        await self.app(inner, app_receive, app_send)


def _replay(data: bytes, receive: Receive) -> Receive:
    sent = False

    async def replay() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": data, "more_body": False}
        return await receive()  # later messages (disconnect) come from the server

    return replay


class _Responder:
    def __init__(self, server: Server, path: str, request: dict[str, str], send: Send, head: bool) -> None:
        self.server, self.path, self.request, self.send_next = server, path, request, send
        self.head = head  # answering HEAD: headers as for GET, then an empty body
        self.ended = False
        self.start: Message | None = None
        self.plan: Plan | None = None
        self.stream: Streamed | None = None
        self.buffer: list[bytes] = []
        self.response: dict[str, str] = {}

    async def send(self, message: Message) -> None:
        kind = message["type"]
        if kind == "http.response.start":
            headers = message.get("headers", ())
            if not isinstance(headers, (list, tuple)):  # any iterable (ASGI): read more than once here
                message = {**message, "headers": list(headers)}
            self.start = message
            return
        start = self.start
        if kind != "http.response.body" or start is None:
            await self.send_next(message)
            return
        if self.ended:  # HEAD: the response went out with the headers; the rest is dropped
            return
        body, more = message.get("body", b""), message.get("more_body", False)
        plan = self.plan
        if plan is None:
            self.response = _headers(start.get("headers", ()))
            plan = self.plan = self.server.plan(self.path, self.request, start["status"], self.response)
        if self.stream is None and (not more or plan.to_zeroc or self.buffer):
            if more or self.buffer:  # a body in parts (or frames, which need all of it): gathered
                self.buffer.append(body)
                if more:
                    return
                body = b"".join(self.buffer)
            out, headers = self.server.body(plan, body)
            status = start["status"]
            if status in (204, 304) or status < 200:  # no body, so no length of ours (RFC 9110 §8.6)
                await self.send_next(self._started(headers, drop_length=False))
            else:
                await self.send_next(self._started(headers, drop_length=True, length=len(out)))
            body = b"" if self.head else out
            await self.send_next({"type": "http.response.body", "body": body, "more_body": False})
            return
        if self.stream is None:
            self.stream = self.server.stream(plan)
            if plan.encoding == "identity":
                await self.send_next(self._started([], drop_length=False))
            else:
                coded = [("content-encoding", plan.encoding), *plan.coded()]
                await self.send_next(self._started(coded, drop_length=True))
            if self.head:
                self.ended = True
                await self.send_next({"type": "http.response.body", "body": b"", "more_body": False})
                return
        out = self.stream.chunk(body) if more else self.stream.chunk(body) + self.stream.finish()
        await self.send_next({"type": "http.response.body", "body": out, "more_body": more})

    def _started(self, extra: list[tuple[str, str]], drop_length: bool, length: int | None = None) -> Message:
        """The held ``http.response.start`` with the plan's headers, ``extra`` and ``length``
        set (the application's Content-Length dropped where ``drop_length``)."""
        assert self.start is not None and self.plan is not None
        plan = self.plan
        pairs = (*plan.set_headers, *extra, ("vary", add_vary(self.response.get("vary"), *plan.vary)))
        if plan.request_codings:
            pairs += (("accept-encoding", plan.request_codings),)
        drop, added = _raw_headers(pairs, drop_length)
        # Rewrite the raw list so repeated headers (Set-Cookie) survive. (A loop: see _headers.)
        headers = []
        for k, v in self.start.get("headers", ()):
            if k.lower() not in drop:
                headers.append((k, v))
        headers += added
        if length is not None:
            headers.append((b"content-length", b"%d" % length))
        return {**self.start, "headers": headers}


@lru_cache(maxsize=1024)  # a route's responses set the same few headers, but for their ETags
def _raw_headers(
    pairs: tuple[tuple[str, str], ...], drop_length: bool
) -> tuple[frozenset[bytes], tuple[tuple[bytes, bytes], ...]]:
    """The header lines ``pairs`` set (a later pair of a name wins) as ASGI's bytes, and the
    names an application's own lines of must go (Content-Length too where ``drop_length``)."""
    changes = dict(pairs)
    added = tuple((k.encode("latin-1"), v.encode("latin-1")) for k, v in changes.items())
    drop = {k for k, _ in added} | ({b"content-length"} if drop_length else set())
    return frozenset(drop), added
