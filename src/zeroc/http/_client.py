"""The client SDK on httpx, sync and async, over one sans-I/O core (``_Core``).

The core decides headers and bodies and interprets responses; ``Client`` and ``AsyncClient``
only do the I/O. A missing or broken dictionary never fails a call: the client fetches a
dictionary it lacks once, and if that fails asks again for plain JSON.
"""

from __future__ import annotations

import fnmatch
import hashlib
import os
import re
import time
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import http_sf
import httpx

from zeroc import _json
from zeroc._codec import Codec
from zeroc._dictionary import Dictionary
from zeroc._errors import DecodeError, ZerocError
from zeroc.http._content import ContentCodings
from zeroc.http._negotiate import (
    JSON_MEDIA_TYPE,
    ZEROC_MEDIA_TYPE,
    available_dictionary_header,
    parse_media_type,
    zeroc_media_type,
)
from zeroc.http._server import DICTIONARY_PATH

ACCEPT = f"{ZEROC_MEDIA_TYPE}, {JSON_MEDIA_TYPE};q=0.9"
COMPRESS_REQUESTS_FROM = 256  # bytes: below this a request body is sent as is
DEFAULT_MAX_DECODED = 64 * 1024 * 1024
ROUTES = 1000  # routes (or, where the server names no pattern, paths) whose dictionary is known
# Connection attempts retried (refused or timed out, as while a server restarts), after 0, 0.5,
# 1, 2 ... s: httpx's transport retries, which never resend a request that reached the server.
RETRIES = 5
# Responses kept as RFC 9842 dictionaries (Use-As-Dictionary), the most recently used first.
STORED = 16
STORED_BYTES = 16 * 1024 * 1024


@dataclass
class Reply:
    """A decoded response: ``value`` (the JSON value or message dict), and what it cost."""

    status_code: int
    value: Any
    content: bytes
    encoding: str  # "zeroc" (a frame), "dcz", "zstd", "br", "gzip" or "identity"
    wire_bytes: int  # body bytes as they crossed the network
    response: httpx.Response
    fallback: bool = False

    @property
    def headers(self) -> httpx.Headers:
        return self.response.headers


@dataclass
class _NeedDictionary:
    ident: str


@dataclass
class _Stored:
    """A response kept as an RFC 9842 dictionary for the paths its ``match`` covers."""

    match: re.Pattern[str]
    specificity: int  # the match pattern's length: the longest one that matches is used
    content: bytes
    ident: str | None
    expires: float  # time.monotonic() when the response stops being fresh
    codings: ContentCodings | None = None


def match_pattern(match: str) -> re.Pattern[str] | None:
    """An RFC 9842 ``match`` URL pattern as a regular expression over the path, for the patterns
    this client reads: a path with ``*`` wildcards and ``\\``-escaped characters (what Zeroc
    servers send). Anything else (named groups, modifiers, other origins) gives None: the
    response is then not kept, which only costs a coding."""
    if not match.startswith("/"):
        return None
    out, i = [], 0
    while i < len(match):
        c = match[i]
        if c == "\\" and i + 1 < len(match):
            out.append(re.escape(match[i + 1]))
            i += 2
            continue
        if c in ":(){}+?\\":
            return None
        out.append(".*" if c == "*" else re.escape(c))
        i += 1
    return re.compile("".join(out))


def _fresh_for(cache_control: str | None) -> float:
    """Seconds a response may be kept (its max-age; 0 without one or with no-store/no-cache)."""
    age = 0.0
    for directive in (cache_control or "").split(","):
        name, _, value = directive.strip().partition("=")
        name = name.strip().lower()
        if name in ("no-store", "no-cache"):
            return 0.0
        if name == "max-age":
            try:
                age = float(value.strip().strip('"'))
            except ValueError:
                return 0.0
    return age


class _Core:
    def __init__(self, cache_dir: str | os.PathLike[str] | None, max_decoded_size: int) -> None:
        self.cache_dir = Path(cache_dir) if cache_dir else None
        self.max_decoded_size = max_decoded_size
        self.dictionaries: dict[str, Dictionary] = {}
        self.codecs: dict[str, Codec] = {}
        self.codings: dict[str, ContentCodings] = {}
        self.route_dictionary: dict[str, str] = {}  # path or route pattern -> dictionary id
        self.request_codings: set[str] = set()
        self.fallbacks = 0
        self.stored: OrderedDict[bytes, _Stored] = OrderedDict()  # by SHA-256, oldest first

    # -- dictionaries --------------------------------------------------------------------
    def held(self, ident: str) -> Dictionary | None:
        d = self.dictionaries.get(ident)
        if d is None and self.cache_dir is not None:
            path = self.cache_dir / f"{ident}.zcd"
            if path.is_file():
                try:
                    d = Dictionary.load(path)
                except ZerocError:
                    path.unlink(missing_ok=True)  # a corrupt cache entry is refetched
                    return None
                if d.id != ident:
                    return None
                self.dictionaries[ident] = d
        return d

    def accept_dictionary(self, ident: str, data: bytes) -> bool:
        """Verify a fetched dictionary file against the hash it was asked for, and keep it."""
        try:
            d = Dictionary.from_bytes(data)
        except ZerocError:
            return False
        if d.id != ident:
            return False
        self.dictionaries[ident] = d
        if self.cache_dir is not None:
            self.cache_dir.mkdir(parents=True, exist_ok=True)
            d.save(self.cache_dir / f"{ident}.zcd")
        return True

    def codec(self, d: Dictionary) -> Codec:
        c = self.codecs.get(d.id)
        if c is None:
            c = self.codecs[d.id] = Codec(d, max_decoded_size=self.max_decoded_size)
        return c

    def content_codings(self, d: Dictionary) -> ContentCodings:
        c = self.codings.get(d.id)
        if c is None:
            c = self.codings[d.id] = ContentCodings(d)
        return c

    # -- requests ------------------------------------------------------------------------
    def prepare(
        self, path: str, value: Any, has_body: bool, plain: bool
    ) -> tuple[dict[str, str], bytes | None]:
        headers = {"accept": JSON_MEDIA_TYPE if plain else ACCEPT, "accept-encoding": "zstd, br, gzip"}
        ident = None if plain else self.dictionary_for(path)
        d = self.held(ident) if ident else None
        kept = None if plain else self.stored_for(path)
        if kept is not None:  # an earlier response: for a route that changes little, the best
            headers["available-dictionary"] = available_dictionary_header(kept[0])
            if kept[1].ident is not None:
                headers["dictionary-id"] = http_sf.ser(kept[1].ident)
            headers["accept-encoding"] = "dcz, zstd, br, gzip"
        elif d is not None:
            headers["available-dictionary"] = available_dictionary_header(d.sha256)
            headers["accept-encoding"] = "dcz, zstd, br, gzip"
        if not has_body:
            return headers, None
        if d is not None and d.serialization != "bytes":
            try:
                frame = self.codec(d).encode(value)
            except ZerocError:
                pass  # the value does not fit the schema: send it as JSON
            else:
                schema = d.schema["message"] if d.schema else None
                headers["content-type"] = zeroc_media_type(d.id, schema)
                return headers, frame
        body = _json.dumps(value)
        headers["content-type"] = JSON_MEDIA_TYPE
        if "zstd" in self.request_codings and len(body) >= COMPRESS_REQUESTS_FROM:
            headers["content-encoding"] = "zstd"
            body = ContentCodings(None).encode("zstd", body)
        return headers, body

    def stored_for(self, path: str) -> tuple[bytes, _Stored] | None:
        """The kept response whose match covers ``path`` most specifically (the most recent of
        equals), dropping those no longer fresh."""
        now = time.monotonic()
        best: tuple[bytes, _Stored] | None = None
        for sha, kept in list(self.stored.items()):
            if kept.expires <= now:
                del self.stored[sha]
            elif kept.match.fullmatch(path) and (best is None or kept.specificity >= best[1].specificity):
                best = (sha, kept)
        return best

    def keep(self, response: httpx.Response, content: bytes) -> None:
        """Keep a response that carries ``Use-As-Dictionary`` (RFC 9842 §2.1) while it is fresh."""
        header = response.headers.get("use-as-dictionary")
        if header is None or not content or len(content) > STORED_BYTES:
            return
        fresh = _fresh_for(response.headers.get("cache-control"))
        try:
            fields: Any = http_sf.parse(header.encode(), tltype="dictionary")
            match = fields["match"][0]
            ident = fields["id"][0] if "id" in fields else None
        except (http_sf.StructuredFieldError, KeyError, TypeError, UnicodeError):
            return
        if fresh <= 0 or not isinstance(match, str) or (regex := match_pattern(match)) is None:
            return
        sha = hashlib.sha256(content).digest()
        self.stored.pop(sha, None)
        self.stored[sha] = _Stored(
            regex, len(match), content, ident if isinstance(ident, str) else None, time.monotonic() + fresh
        )
        while len(self.stored) > STORED or sum(len(k.content) for k in self.stored.values()) > STORED_BYTES:
            self.stored.popitem(last=False)

    def dictionary_for(self, path: str) -> str | None:
        ident = self.route_dictionary.get(path)
        if ident is None:
            for pattern, value in self.route_dictionary.items():
                if "*" in pattern and fnmatch.fnmatchcase(path, pattern):
                    return value
        return ident

    def learn(self, path: str, response: httpx.Response) -> None:
        """Remember which dictionary a route uses: by its pattern when the server names one
        (``/orders/*``: one entry for every order), else by the path, at most ROUTES of them
        (the oldest forgotten first), so that the map does not grow with every path asked."""
        ident = response.headers.get("zeroc-dictionary")
        if ident and len(ident) == 64:
            pattern = response.headers.get("zeroc-route")
            key = pattern or path
            self.route_dictionary.pop(key, None)  # re-inserted: the newest
            self.route_dictionary[key] = ident.lower()
            while len(self.route_dictionary) > ROUTES:
                del self.route_dictionary[next(iter(self.route_dictionary))]
        accepted = response.headers.get("accept-encoding")
        if accepted:
            self.request_codings = {c.strip().lower() for c in accepted.split(",")}

    def settled(self, outcome: Reply | _NeedDictionary | None, sent: dict[str, str], plain: bool) -> bool:
        """True when ``outcome`` is the answer; False means "ask again for plain JSON".

        A frame the server refused (400: its dictionary rotated, say) is retried as JSON too.
        """
        if isinstance(outcome, Reply) and not (
            outcome.status_code == 400 and not plain and _sent_frame(sent)
        ):
            outcome.fallback = plain
            return True
        self.fallbacks += 1
        return False

    def interpret(self, response: httpx.Response) -> Reply | _NeedDictionary:
        coding = response.headers.get("content-encoding", "identity").strip().lower()
        raw = response.content  # httpx already undid zstd, br and gzip
        wire = response.num_bytes_downloaded
        kind, params = parse_media_type(response.headers.get("content-type"))
        if coding == "dcz":
            if len(raw) < 40:
                raise DecodeError("dcz response is too short")
            kept = self.stored.get(raw[8:40])
            if kept is not None:  # coded against an earlier response
                kept.codings = kept.codings or ContentCodings(content=kept.content)
                raw = kept.codings.decode("dcz", raw, self.max_decoded_size)
                coding = "dcz"
                self.keep(response, raw)
                return self._reply(response, raw, coding, wire, kind, params)
            ident = raw[8:40].hex()  # the SHA-256 of the dictionary's content (RFC 9842), which
            # is its identity unless it holds a learned model: then the held one is found by it
            d = next((h for h in self.dictionaries.values() if h.sha256.hex() == ident), None)
            d = d or self.held(ident)
            if d is None:
                return _NeedDictionary(ident)
            raw = self.content_codings(d).decode("dcz", raw, self.max_decoded_size)
        self.keep(response, raw)
        return self._reply(response, raw, coding, wire, kind, params)

    def _reply(
        self, response: httpx.Response, raw: bytes, coding: str, wire: int, kind: str, params: dict[str, str]
    ) -> Reply | _NeedDictionary:
        if kind == ZEROC_MEDIA_TYPE:
            ident = params.get("dictionary", "").lower()
            d = self.held(ident)
            if d is None:
                return _NeedDictionary(ident)
            return Reply(response.status_code, self.codec(d).decode(raw), raw, "zeroc", wire, response)
        is_json = kind == JSON_MEDIA_TYPE or kind.endswith("+json")
        value = _json.loads(raw) if is_json and raw else None
        return Reply(response.status_code, value, raw, coding, wire, response)


def _sent_frame(headers: dict[str, str]) -> bool:
    return headers.get("content-type", "").startswith(ZEROC_MEDIA_TYPE)


class Client:
    """A Zeroc-aware HTTP client (sync). ``Client("http://127.0.0.1:8000").get("/orders/1").value``.

    ``retries``: connection attempts retried while a server is unreachable (restarting, say);
    other options go to ``httpx.Client``."""

    def __init__(
        self,
        base_url: str,
        *,
        cache_dir: str | os.PathLike[str] | None = None,
        max_decoded_size: int = DEFAULT_MAX_DECODED,
        http: httpx.Client | None = None,
        retries: int = RETRIES,
        **httpx_options: Any,
    ) -> None:
        httpx_options.setdefault("transport", httpx.HTTPTransport(retries=retries))
        self.http = http or httpx.Client(base_url=base_url, **httpx_options)
        self._core = _Core(cache_dir, max_decoded_size)

    @property
    def fallbacks(self) -> int:
        return self._core.fallbacks

    def get(self, path: str, **kw: Any) -> Reply:
        return self.request("GET", path, **kw)

    def post(self, path: str, json: Any = None, **kw: Any) -> Reply:
        return self.request("POST", path, json=json, has_body=True, **kw)

    def request(
        self,
        method: str,
        path: str,
        json: Any = None,
        has_body: bool = False,
        headers: dict[str, str] | None = None,
    ) -> Reply:
        core = self._core
        for plain in (False, True):
            h, body = core.prepare(path, json, has_body, plain)
            response = self.http.request(method, path, content=body, headers={**h, **(headers or {})})
            core.learn(path, response)
            try:
                outcome = core.interpret(response)
                if isinstance(outcome, _NeedDictionary) and self._fetch(outcome.ident):
                    outcome = core.interpret(response)
            except ZerocError:
                outcome = None
            if core.settled(outcome, h, plain):
                assert isinstance(outcome, Reply)
                return outcome
        raise DecodeError(f"{method} {path}: the response could not be decoded even as plain JSON")

    def _fetch(self, ident: str) -> bool:
        try:
            r = self.http.get(f"{DICTIONARY_PATH}{ident}.zcd")
        except httpx.HTTPError:
            return False
        return r.status_code == 200 and self._core.accept_dictionary(ident, r.content)

    def close(self) -> None:
        self.http.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class AsyncClient:
    """The asyncio twin of :class:`Client`."""

    def __init__(
        self,
        base_url: str,
        *,
        cache_dir: str | os.PathLike[str] | None = None,
        max_decoded_size: int = DEFAULT_MAX_DECODED,
        http: httpx.AsyncClient | None = None,
        retries: int = RETRIES,
        **httpx_options: Any,
    ) -> None:
        httpx_options.setdefault("transport", httpx.AsyncHTTPTransport(retries=retries))
        self.http = http or httpx.AsyncClient(base_url=base_url, **httpx_options)
        self._core = _Core(cache_dir, max_decoded_size)

    @property
    def fallbacks(self) -> int:
        return self._core.fallbacks

    async def get(self, path: str, **kw: Any) -> Reply:
        return await self.request("GET", path, **kw)

    async def post(self, path: str, json: Any = None, **kw: Any) -> Reply:
        return await self.request("POST", path, json=json, has_body=True, **kw)

    async def request(
        self,
        method: str,
        path: str,
        json: Any = None,
        has_body: bool = False,
        headers: dict[str, str] | None = None,
    ) -> Reply:
        core = self._core
        for plain in (False, True):
            h, body = core.prepare(path, json, has_body, plain)
            response = await self.http.request(method, path, content=body, headers={**h, **(headers or {})})
            core.learn(path, response)
            try:
                outcome = core.interpret(response)
                if isinstance(outcome, _NeedDictionary) and await self._fetch(outcome.ident):
                    outcome = core.interpret(response)
            except ZerocError:
                outcome = None
            if core.settled(outcome, h, plain):
                assert isinstance(outcome, Reply)
                return outcome
        raise DecodeError(f"{method} {path}: the response could not be decoded even as plain JSON")

    async def _fetch(self, ident: str) -> bool:
        try:
            r = await self.http.get(f"{DICTIONARY_PATH}{ident}.zcd")
        except httpx.HTTPError:
            return False
        return r.status_code == 200 and self._core.accept_dictionary(ident, r.content)

    async def aclose(self) -> None:
        await self.http.aclose()

    async def __aenter__(self) -> AsyncClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()
