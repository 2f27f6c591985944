"""WSGI middleware (Flask, Django, any WSGI app): a thin adapter over ``Server``.

A response with a Content-Length is transformed whole (minimum size applies, Content-Length is
rewritten); one without is compressed chunk by chunk as the application yields it.
"""

from __future__ import annotations

import io
from collections.abc import Callable, Iterable, Iterator, Sequence
from http import HTTPStatus
from typing import Any

from zeroc._errors import LimitExceeded, ZerocError
from zeroc.http._negotiate import add_vary
from zeroc.http._server import Plan, Route, Server

StartResponse = Callable[..., Any]
WSGIApp = Callable[[dict[str, Any], StartResponse], Iterable[bytes]]


def _status_line(code: int) -> str:
    try:
        return f"{code} {HTTPStatus(code).phrase}"
    except ValueError:
        return str(code)


def _request_headers(environ: dict[str, Any]) -> dict[str, str]:
    out = {k[5:].replace("_", "-").lower(): v for k, v in environ.items() if k.startswith("HTTP_")}
    for key in ("CONTENT_TYPE", "CONTENT_LENGTH"):
        if environ.get(key):
            out[key.replace("_", "-").lower()] = environ[key]
    return out


class ZerocWSGIMiddleware:
    """The WSGI twin of :class:`zeroc.http.ZerocMiddleware`, with the same options."""

    def __init__(self, app: WSGIApp, routes: Sequence[Route] = (), **options: Any) -> None:
        self.app = app
        self.server = Server(routes, **options)

    def __call__(self, environ: dict[str, Any], start_response: StartResponse) -> Iterable[bytes]:
        server = self.server
        path = environ.get("PATH_INFO", "")
        method = environ.get("REQUEST_METHOD", "GET")
        served = server.dictionary_response(path, method, environ.get("HTTP_IF_NONE_MATCH"))
        if served is not None:
            status, headers, body = served
            start_response(_status_line(status), headers)
            return [body]
        # HEAD gets GET's headers (spec/HTTP.md §1): the app answers a GET, whose body is dropped.
        head = method == "HEAD"
        if head:
            environ = dict(environ, REQUEST_METHOD="GET")
        request = _request_headers(environ)
        if server.needs_decoding(request):
            try:
                data, changes = server.decode_request(path, request, self._read(environ))
            except ZerocError as exc:
                status, headers, body = server.error(exc)
                start_response(_status_line(status), headers)
                return [body]
            environ = dict(environ)
            environ["wsgi.input"] = io.BytesIO(data)
            environ["CONTENT_LENGTH"] = str(len(data))
            environ.pop("HTTP_CONTENT_ENCODING", None)
            if changes.get("content-type"):
                environ["CONTENT_TYPE"] = changes["content-type"]
        captured: dict[str, Any] = {}
        written: list[bytes] = []

        def capture(
            status: str, headers: list[tuple[str, str]], exc_info: Any = None
        ) -> Callable[[bytes], None]:
            captured["status"], captured["headers"], captured["exc_info"] = status, headers, exc_info
            return written.append

        app_iter: Iterable[bytes] = self.app(environ, capture)
        if "status" not in captured:  # a generator app calls start_response on its first step
            iterator = iter(app_iter)
            first = next(iterator, None)
            app_iter = _Chained(first, iterator, app_iter)
            if "status" not in captured:
                raise RuntimeError("WSGI application did not call start_response")
        status_line, raw = captured["status"], list(captured["headers"])
        response = {k.lower(): v for k, v in raw}
        plan = server.plan(path, request, int(status_line.split()[0]), response)
        if "content-length" in response or plan.to_zeroc or written:
            try:
                body = b"".join([*written, *app_iter])
            finally:
                _close(app_iter)
            out, set_headers = server.body(plan, body)
            code = int(status_line.split()[0])
            if code not in (204, 304) and code >= 200:  # no body, no length of ours (RFC 9110 §8.6)
                set_headers.append(("content-length", str(len(out))))
            start_response(status_line, _rewrite(raw, set_headers, plan), captured["exc_info"])
            return [b"" if head else out]
        if head:
            _close(app_iter)
            coded = [("content-encoding", plan.encoding), *plan.coded()]
            coded = [] if plan.encoding == "identity" else coded
            start_response(status_line, _rewrite(raw, coded, plan, bool(coded)), captured["exc_info"])
            return []
        if plan.encoding == "identity":
            start_response(status_line, _rewrite(raw, [], plan), captured["exc_info"])
            return self._stream(plan, app_iter) if server.metrics is not None else app_iter
        start_response(
            status_line,
            _rewrite(raw, [("content-encoding", plan.encoding), *plan.coded()], plan, True),
            captured["exc_info"],
        )
        return self._stream(plan, app_iter)

    def _read(self, environ: dict[str, Any]) -> bytes:
        limit = self.server.max_request_size
        try:
            length = int(environ.get("CONTENT_LENGTH") or -1)
        except ValueError:
            length = -1
        if length > limit:
            raise LimitExceeded(f"request body of {length} bytes exceeds {limit}")
        body: bytes = environ["wsgi.input"].read(length if length >= 0 else limit + 1)
        if len(body) > limit:
            raise LimitExceeded(f"request body exceeds {limit} bytes")
        return body

    def _stream(self, plan: Plan, app_iter: Iterable[bytes]) -> Iterator[bytes]:
        encoder = self.server.stream(plan)  # counted for the metrics when it ends
        try:
            for chunk in app_iter:
                if chunk:
                    yield encoder.chunk(chunk)
            yield encoder.finish()
        finally:
            _close(app_iter)


class _Chained:
    """The first chunk (already taken to learn the status) followed by the rest, with the
    original iterable's close()."""

    def __init__(self, first: bytes | None, rest: Iterator[bytes], original: Iterable[bytes]) -> None:
        self.first, self.rest, self.original = first, rest, original

    def __iter__(self) -> Iterator[bytes]:
        if self.first is not None:
            yield self.first
        yield from self.rest

    def close(self) -> None:
        _close(self.original)


def _close(app_iter: Iterable[bytes]) -> None:
    close = getattr(app_iter, "close", None)
    if close is not None:
        close()


def _rewrite(
    raw: list[tuple[str, str]], extra: list[tuple[str, str]], plan: Plan, drop_length: bool = False
) -> list[tuple[str, str]]:
    changes = dict(plan.set_headers)
    changes.update(extra)
    changes["vary"] = add_vary(next((v for k, v in raw if k.lower() == "vary"), None), *plan.vary)
    if plan.request_codings:
        changes["accept-encoding"] = plan.request_codings
    drop = set(changes) | ({"content-length"} if drop_length else set())
    return [(k, v) for k, v in raw if k.lower() not in drop] + list(changes.items())
