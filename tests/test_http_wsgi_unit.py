"""The WSGI middleware called as a WSGI server calls it, with applications of every style."""

import gzip
import io
from collections.abc import Callable, Iterator
from typing import Any

from zeroc.http import ZerocWSGIMiddleware
from zeroc.http._content import ContentCodings

BODY = b'{"rows": [' + b",".join(b'{"n": %d}' % i for i in range(300)) + b"]}"


def call(app: Callable[..., Any], headers: dict[str, str]) -> tuple[str, dict[str, str], bytes]:
    environ = {
        "REQUEST_METHOD": "GET",
        "PATH_INFO": "/x",
        "wsgi.input": io.BytesIO(b""),
        **{"HTTP_" + k.upper().replace("-", "_"): v for k, v in headers.items()},
    }
    seen: dict[str, Any] = {}

    def start_response(status: str, hdrs: list[tuple[str, str]], exc_info: Any = None) -> Any:
        seen["status"], seen["headers"] = status, dict((k.lower(), v) for k, v in hdrs)
        return lambda data: None

    result = ZerocWSGIMiddleware(app)(environ, start_response)
    body = b"".join(result)
    getattr(result, "close", lambda: None)()
    return seen["status"], seen["headers"], body


def generator_app(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterator[bytes]:
    start_response("200 OK", [("Content-Type", "application/json")])  # called on the first step
    yield BODY[:1000]
    yield BODY[1000:]


def list_app(environ: dict[str, Any], start_response: Callable[..., Any]) -> list[bytes]:
    start_response(
        "200 OK",
        [
            ("Content-Type", "application/json"),
            ("Content-Length", str(len(BODY))),
            ("Set-Cookie", "a=1"),
            ("Set-Cookie", "b=2"),
        ],
    )
    return [BODY]


def test_generator_apps_stream_compressed() -> None:
    status, headers, body = call(generator_app, {"accept-encoding": "gzip"})
    assert status == "200 OK" and headers["content-encoding"] == "gzip"
    assert "content-length" not in headers and gzip.decompress(body) == BODY


def test_whole_bodies_get_a_length_and_keep_repeated_headers() -> None:
    environ_cookies: list[str] = []

    def start_response(status: str, hdrs: list[tuple[str, str]], exc_info: Any = None) -> Any:
        environ_cookies.extend(v for k, v in hdrs if k.lower() == "set-cookie")
        assert dict((k.lower(), v) for k, v in hdrs)["content-encoding"] == "zstd"
        return lambda data: None

    environ = {
        "REQUEST_METHOD": "GET",
        "PATH_INFO": "/x",
        "wsgi.input": io.BytesIO(b""),
        "HTTP_ACCEPT_ENCODING": "zstd",
    }
    body = b"".join(ZerocWSGIMiddleware(list_app)(environ, start_response))
    import zstandard

    assert zstandard.ZstdDecompressor().decompress(body) == BODY
    assert environ_cookies == ["a=1", "b=2"]
    _status, headers, plain = call(list_app, {})
    assert plain == BODY and headers["content-length"] == str(len(BODY))


def test_head_requests_get_the_headers_of_get() -> None:
    """spec/HTTP.md §1: the app answers a GET; its coded length goes out, its body does not."""
    environ = {
        "REQUEST_METHOD": "HEAD",
        "PATH_INFO": "/x",
        "wsgi.input": io.BytesIO(b""),
        "HTTP_ACCEPT_ENCODING": "gzip",
    }
    seen: dict[str, str] = {}
    methods: list[str] = []

    def start_response(status: str, hdrs: list[tuple[str, str]], exc_info: Any = None) -> Any:
        seen.update((k.lower(), v) for k, v in hdrs)
        return lambda data: None

    def app(env: dict[str, Any], start: Any) -> Any:
        methods.append(env["REQUEST_METHOD"])
        return list_app(env, start)

    body = b"".join(ZerocWSGIMiddleware(app)(environ, start_response))
    assert methods == ["GET"] and body == b""
    assert seen["content-encoding"] == "gzip" and seen["content-length"] == str(
        len(ContentCodings().encode("gzip", BODY))
    )
