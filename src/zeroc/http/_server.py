"""The server side of spec/HTTP.md as a pure core: headers and bodies in, decisions out.

The ASGI and WSGI middlewares only move bytes between their server and this core.
"""

from __future__ import annotations

import fnmatch
import hashlib
import json
import threading
import time
from collections import OrderedDict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import http_sf
import orjson

from zeroc import _json
from zeroc._codec import Codec
from zeroc._dictionary import Dictionary
from zeroc._errors import DictionaryMismatch, EncodeError, LimitExceeded, UnknownDictionary, ZerocError
from zeroc.http._content import ContentCodings
from zeroc.http._metrics import Metrics, StatsdMetrics
from zeroc.http._negotiate import (
    DEFAULT_EXCLUDED,
    JSON_MEDIA_TYPE,
    REQUEST_CODINGS,
    ZEROC_MEDIA_TYPE,
    available_dictionary,
    best_encodings,
    directives,
    is_excluded,
    names_dcz,
    names_zeroc,
    parse_media_type,
    url_pattern,
    wants_zeroc,
    zeroc_media_type,
)

DICTIONARY_PATH = "/.well-known/zeroc/dictionaries/"
IMMUTABLE = "public, max-age=31536000, immutable"
# Choosing a whole body's coding by size (spec/HTTP.md §1): a route's first TRIALS bodies, then
# its RETRY-th and each body twice as far on up to the RETRY_MAX-th, then every RETRY_MAX-th, are
# coded in every tied coding; the others take the one smallest there. With a trial every
# RETRY-th body, the demo's Orders repeated to 1 MB cost 285 us a body in brotli and gzip
# beyond their zstd's 1,067 us.
TRIALS = 8
RETRY = 64
RETRY_MAX = 4096


def next_trial(n: int) -> int:
    """The first whole body after a route's ``n``-th (from 1; 0 before any) that is coded in
    every tied coding."""
    if n < TRIALS:
        return n + 1
    if n < RETRY:
        return RETRY
    if n < RETRY_MAX:
        return 1 << n.bit_length()  # the next power of two
    return (n // RETRY_MAX + 1) * RETRY_MAX


def is_trial(n: int) -> bool:
    """Whether a route's ``n``-th whole body (from 1) is coded in every tied coding."""
    return next_trial(n - 1) == n


_UNSEEN: Any = object()  # a path not in the match cache yet
PLANS = 1024  # plan templates kept per server


def _recodable(status: int, response: dict[str, str]) -> bool:
    """Whether a response's body may be given a content coding (or become frames) at all."""
    return not (status in (204, 206, 304) or status < 200 or "content-encoding" in response)


def _strong(etag: str) -> str | None:
    """A strong ETag, which a re-encoded body's headers weaken (a weak one stays as it is)."""
    etag = etag.strip()
    return etag if etag.startswith('"') else None


class UnsupportedCoding(ZerocError):
    """A request body in a content coding this server does not decode."""

    http_status = 415


@dataclass(frozen=True)
class Route:
    """Bind requests whose path matches ``pattern`` (exact, or glob like ``/orders/*``) to a
    dictionary, and through it (or ``schema``) to Zeroc frames."""

    pattern: str
    dictionary: Dictionary | None = None
    schema: Any = None
    # RFC 9842 (spec/HTTP.md §4): offer dcz on this route; also for responses that set cookies
    # or are private (only where no secret shares a response with input an attacker controls).
    dcz: bool = True
    dcz_private: bool = False
    # A delta route (spec/HTTP.md §3): each whole response it could send as dcz is offered as the
    # dictionary for its successors, and the ``delta`` most recently used are kept for that.
    delta: int = 0
    # WebSocket sessions on this route in fan-out mode (spec/HTTP.md §5): every record the server
    # sends starts from the dictionary alone, so a message sent to many connections is coded once.
    fanout: bool = False


@dataclass
class _Bound:
    route: Route
    codings: ContentCodings
    codec: Codec | None
    media_type: str | None
    label: str
    sizes: _Sizes = field(default_factory=lambda: _Sizes())
    recent: _Recent | None = None
    headers: tuple[tuple[str, str], ...] = ()  # what responses to Zeroc clients carry
    link: tuple[tuple[str, str], ...] = ()  # what responses to browsers carry
    vary: tuple[str, ...] = ("Accept-Encoding",)

    def __post_init__(self) -> None:
        d = self.route.dictionary
        if d is not None:
            self.headers = (("zeroc-dictionary", d.id), ("zeroc-route", self.route.pattern))
            if self.route.dcz:  # the RFC 9842 dictionary, for browsers (none where dcz is off)
                link = f'<{DICTIONARY_PATH}{d.sha256.hex()}.dict>; rel="compression-dictionary"'
                self.link = (("link", link),)
            self.vary = ("Accept-Encoding", "Available-Dictionary", "Accept")
        elif self.recent is not None:
            self.vary = ("Accept-Encoding", "Available-Dictionary")


class _Recent:
    """A delta route's latest responses, kept as dictionaries by their SHA-256 (the ``keep``
    most recently used); each one's dcz coder is made when a client first names it."""

    def __init__(self, keep: int) -> None:
        self.keep = keep
        self.bodies: OrderedDict[bytes, ContentCodings | bytes] = OrderedDict()
        self.lock = threading.Lock()  # WSGI servers call from several threads

    def add(self, body: bytes) -> None:
        sha = hashlib.sha256(body).digest()
        with self.lock:
            if sha in self.bodies:
                self.bodies.move_to_end(sha)
                return
            self.bodies[sha] = body
            while len(self.bodies) > self.keep:
                self.bodies.popitem(last=False)

    def codings(self, sha: bytes) -> ContentCodings | None:
        with self.lock:
            held = self.bodies.get(sha)
            if held is None:
                return None
            self.bodies.move_to_end(sha)
        if isinstance(held, bytes):
            held = ContentCodings(content=held)
            with self.lock:
                if sha in self.bodies:
                    self.bodies[sha] = held
        return held


class _Sizes:
    """Which coding has made a route's whole bodies smallest: bytes in and out per coding, over
    the bodies that were coded in every candidate."""

    def __init__(self) -> None:
        self.seen = 0
        self.trial = next_trial(0)  # the next body to code in every candidate
        self.total: dict[str, list[int]] = {}
        self.best: dict[tuple[str, ...], str] = {}  # the pick per candidates, until a trial

    def pick(self, candidates: tuple[str, ...]) -> str | None:
        """The candidate with the smallest ratio so far, or None: code this body in each."""
        self.seen += 1
        if self.seen >= self.trial:  # >=: threads may both count before either compares
            self.trial = next_trial(self.seen)
            return None
        best = self.best.get(candidates)
        if best is None:
            if any(c not in self.total for c in candidates):
                return None
            best = min(candidates, key=lambda c: self.total[c][1] / max(1, self.total[c][0]))
            self.best[candidates] = best
        return best

    def record(self, coding: str, before: int, after: int) -> None:
        t = self.total.setdefault(coding, [0, 0])
        t[0] += before
        t[1] += after
        self.best.clear()


@dataclass
class Plan:
    """What to do with one response."""

    route: str
    bound: _Bound | None = None
    encoding: str = "identity"  # a streamed body's coding; a whole body's once it is chosen
    candidates: tuple[str, ...] = ("identity",)  # the codings tied at the client's highest weight
    to_zeroc: bool = False
    set_headers: tuple[tuple[str, str], ...] = ()
    request_codings: str = "zstd, br, gzip"  # announced in Accept-Encoding (spec/HTTP.md §1), or ""
    vary: tuple[str, ...] = ()
    dcz: ContentCodings | None = None  # what dcz codes with: the route's dictionary or a response
    offer: bool = False  # a delta route's body: offered (and kept) as its successors' dictionary
    etag: str | None = None  # the response's strong ETag, weakened where the body is re-encoded

    def coded(self) -> list[tuple[str, str]]:
        """Headers of a body this plan re-encodes: its ETag made weak (RFC 9110 §8.8.1: the
        coded and the identity bodies are different representations, which a strong ETag
        would tell caches and If-Range to mix)."""
        return [("etag", "W/" + self.etag)] if self.etag else []


class Server:
    """Shared state and decisions of the Zeroc middlewares."""

    def __init__(
        self,
        routes: Sequence[Route] = (),
        *,
        minimum_size: int = 500,
        max_request_size: int = 8 * 1024 * 1024,
        excluded_types: Iterable[str] = DEFAULT_EXCLUDED,
        metrics: Metrics | StatsdMetrics | None = None,
    ) -> None:
        self.minimum_size = minimum_size
        self.max_request_size = max_request_size
        self.excluded = tuple(excluded_types)
        self.metrics = metrics
        self.plain = ContentCodings(None)
        self._bound = [self._bind(r) for r in routes]
        self._dictionaries: dict[str, Dictionary] = {}  # by identity: the .zcd files
        self._raw: dict[str, tuple[Dictionary, str | None]] = {}  # by content SHA-256: the .dict
        for b in self._bound:
            d = b.route.dictionary
            if d is None:
                continue
            self._dictionaries.setdefault(d.id, d)
            use = http_sf.ser({"match": url_pattern(b.route.pattern), "id": d.id}) if b.route.dcz else None
            if self._raw.get(d.sha256.hex(), (d, None))[1] is None:  # the first route offering dcz
                self._raw[d.sha256.hex()] = (d, use)
        self._match_cache: dict[str, _Bound | None] = {}
        self._plans: dict[tuple[Any, ...], Plan] = {}  # plan(): templates by the headers they read
        self._sizes = _Sizes()  # for paths no route binds

    def _bind(self, route: Route) -> _Bound:
        d = route.dictionary
        recent = _Recent(route.delta) if route.delta > 0 else None
        if d is None:
            return _Bound(route, self.plain, None, None, route.pattern, recent=recent)
        codec = Codec(d, route.schema) if d.serialization != "bytes" else None
        media = None
        if codec is not None:
            media = zeroc_media_type(d.id, codec.schema.full_name if codec.schema else None)
        return _Bound(route, ContentCodings(d), codec, media, route.pattern, recent=recent)

    def match(self, path: str) -> _Bound | None:
        try:
            return self._match_cache[path]
        except KeyError:
            pass
        found = None
        for b in self._bound:
            if b.route.pattern == path or fnmatch.fnmatchcase(path, b.route.pattern):
                found = b
                break
        if len(self._match_cache) < 10_000:  # paths with ids are unbounded; keep the cache so
            self._match_cache[path] = found
        return found

    # -- dictionary endpoint ------------------------------------------------------------
    def dictionary_response(
        self, path: str, method: str = "GET", if_none_match: str | None = None
    ) -> tuple[int, list[tuple[str, str]], bytes] | None:
        """The dictionary endpoint's answer, or None for other paths. Names are hex in either
        case; only GET and HEAD are allowed (405); a matching If-None-Match gets 304 (the
        files never change: their name is their hash)."""
        if not path.startswith(DICTIONARY_PATH):
            return None
        name = path[len(DICTIONARY_PATH) :]
        ident, _, ext = name.partition(".")
        ident, ext = ident.lower(), ext.lower()
        use = None
        if ext == "zcd":
            d = self._dictionaries.get(ident)
        elif ext == "dict":
            d, use = self._raw.get(ident, (None, None))
        else:
            d = None
        if d is None:
            return 404, [("content-type", JSON_MEDIA_TYPE)], b'{"error": "no such dictionary"}'
        if method not in ("GET", "HEAD"):
            body = b'{"error": "dictionaries are read with GET or HEAD"}'
            return 405, [("allow", "GET, HEAD"), ("content-type", JSON_MEDIA_TYPE)], body
        etag = f'"{ident}"'
        cached = [("cache-control", IMMUTABLE), ("etag", etag)]
        if use is not None:  # an RFC 9842 dictionary for the route's responses
            cached.append(("use-as-dictionary", use))
        if if_none_match is not None:
            tags = {t.strip().removeprefix("W/") for t in if_none_match.split(",")}
            if etag in tags or "*" in tags:
                return 304, cached, b""
        body = d.to_bytes() if ext == "zcd" else d.content
        kind = "application/x-zeroc-dictionary" if ext == "zcd" else "application/octet-stream"
        headers = [("content-type", kind), *cached, ("content-length", str(len(body)))]
        return 200, headers, body if method == "GET" else b""

    # -- requests -----------------------------------------------------------------------
    @staticmethod
    def needs_decoding(headers: dict[str, str]) -> bool:
        coding = headers.get("content-encoding", "").strip().lower()
        return (coding not in ("", "identity")) or headers.get("content-type", "").lower().startswith(
            ZEROC_MEDIA_TYPE
        )

    def decode_request(
        self, path: str, headers: dict[str, str], body: bytes
    ) -> tuple[bytes, dict[str, str | None]]:
        """The body the application sees and the header changes (None removes a header)."""
        if len(body) > self.max_request_size:
            raise LimitExceeded(f"request body of {len(body)} bytes exceeds {self.max_request_size}")
        coding = headers.get("content-encoding", "identity").strip().lower() or "identity"
        if coding not in (*REQUEST_CODINGS, "identity"):
            raise UnsupportedCoding(f"request content coding {coding!r} is not supported")
        bound = self.match(path)
        codings = bound.codings if bound is not None and coding == "dcz" else self.plain
        started = time.perf_counter()
        data = codings.decode(coding, body, self.max_request_size)
        changes: dict[str, str | None] = {"content-encoding": None}
        kind, params = parse_media_type(headers.get("content-type"))
        if kind == ZEROC_MEDIA_TYPE:
            if bound is None or bound.codec is None or bound.route.dictionary is None:
                raise UnknownDictionary(f"{path} takes no Zeroc frames")
            named = params.get("dictionary", "").lower()  # hex, in either case
            if named != bound.route.dictionary.id:
                raise DictionaryMismatch(
                    f"frame names dictionary {named[:16]!r}; {path} uses {bound.route.dictionary.id[:16]}"
                )
            expected = bound.codec.schema.full_name if bound.codec.schema else None
            said = params.get("schema") or (None if params.get("serialization") == "json" else expected)
            if said != expected:  # a frame of another message type (or JSON for a schema)
                said, takes = (said or "none, JSON")[:100], expected or "JSON frames"
                raise DictionaryMismatch(f"frame says schema {said!r}; {path} takes {takes}")
            data = _json.dumps(bound.codec.decode(data))
            changes["content-type"] = JSON_MEDIA_TYPE
        changes["content-length"] = str(len(data))
        if self.metrics is not None:
            label = bound.label if bound else "other"
            self.metrics.request(label, coding, len(body), len(data), time.perf_counter() - started)
        return data, changes

    # -- responses ----------------------------------------------------------------------
    def plan(self, path: str, request: dict[str, str], status: int, response: dict[str, str]) -> Plan:
        """What to do with a response to ``request``. A response's plan is a function of a few
        of its headers and the request's, except where a dictionary is named or the route keeps
        responses (dcz), so those plans are made once per such headers and copied."""
        bound = self._match_cache.get(path, _UNSEEN)
        if bound is _UNSEEN:
            bound = self.match(path)
        if "available-dictionary" in request or (bound is not None and bound.recent is not None):
            return self._plan(bound, request, status, response)
        key = (
            id(bound),
            request.get("accept-encoding"),
            request.get("accept"),
            "sec-fetch-mode" in request,
            status,
            "content-encoding" in response,
            response.get("content-type"),
        )
        template = self._plans.get(key)
        if template is None:
            template = self._plan(bound, request, status, {k: v for k, v in response.items() if k != "etag"})
            if len(self._plans) >= PLANS:  # the headers are the client's to vary: a bounded memo
                self._plans.clear()
            self._plans[key] = template
        plan = object.__new__(Plan)
        plan.__dict__.update(template.__dict__)
        if "etag" in response and _recodable(status, response):
            plan.etag = _strong(response["etag"])
        return plan

    def _plan(
        self, bound: _Bound | None, request: dict[str, str], status: int, response: dict[str, str]
    ) -> Plan:
        plan = Plan(bound.label if bound else "other", bound)
        d = bound.route.dictionary if bound else None
        if bound is not None:
            # The route's dictionary is named to the clients that can use it (spec/HTTP.md §2):
            # on a 322-byte Order the three headers were 250 bytes, more than gzip saved.
            dcz = names_dcz(request.get("accept-encoding"))
            zeroc = dcz or names_zeroc(request.get("accept"))
            plan.set_headers = bound.headers if zeroc else ()
            if bound.link and (dcz or "sec-fetch-mode" in request):
                plan.set_headers += bound.link
            plan.vary = bound.vary
            if bound.route.dictionary is not None:  # announced to the same clients (Vary: Accept)
                plan.request_codings = "zstd, br, gzip, dcz" if zeroc else ""
        else:
            plan.vary = ("Accept-Encoding",)
        if not _recodable(status, response):
            return plan
        plan.etag = _strong(response.get("etag", ""))
        ctype = response.get("content-type", "")
        plan.to_zeroc = (
            bound is not None
            and bound.codec is not None
            and status == 200
            and ctype.split(";")[0].strip().lower() == JSON_MEDIA_TYPE
            and wants_zeroc(request.get("accept"))
        )
        # A content coding too: where the body falls back from frames to JSON, it goes coded.
        if not plan.to_zeroc and is_excluded(ctype, self.excluded):
            return plan
        available = ["zstd", "br", "gzip"]
        named = request.get("available-dictionary")
        held = available_dictionary(named) if named else None
        allowed = (
            bound is not None
            and (held is not None or bound.recent is not None)  # else nothing to allow
            and dcz_allowed(bound.route, request, response)
        )
        if bound is not None and held is not None:
            if d is not None and held == d.sha256:
                plan.dcz = bound.codings
            elif bound.recent is not None:
                plan.dcz = bound.recent.codings(held)
            if plan.dcz is None and self.metrics is not None:
                self.metrics.miss(plan.route)
            if plan.dcz is not None and allowed:
                available.append("dcz")
        if bound is not None and bound.recent is not None:
            plan.offer = allowed and status == 200
        plan.candidates = best_encodings(request.get("accept-encoding"), tuple(available))
        plan.encoding = plan.candidates[0]
        return plan

    def body(self, plan: Plan, body: bytes) -> tuple[bytes, list[tuple[str, str]]]:
        """Transform a whole response body; returns it with the headers to set."""
        started = time.perf_counter()
        headers = list(plan.set_headers)
        bound = plan.bound
        if plan.to_zeroc and bound is not None and bound.codec is not None:
            try:
                frame = bound.codec.encode(orjson.loads(body))
            except (orjson.JSONDecodeError, EncodeError):
                if self.metrics is not None:
                    self.metrics.fallback(plan.route)
                plan.to_zeroc = False
            else:
                headers.append(("content-type", bound.media_type or ZEROC_MEDIA_TYPE))
                headers += plan.coded()
                self._observe(plan.route, "zeroc", len(body), len(frame), started)
                return frame, headers
        if plan.offer and bound is not None and bound.recent is not None and len(body) >= self.minimum_size:
            bound.recent.add(body)  # the route's successors may name it (spec/HTTP.md §3)
            headers.append(("use-as-dictionary", http_sf.ser({"match": url_pattern(bound.route.pattern)})))
        if plan.candidates != ("identity",) and len(body) >= self.minimum_size:
            plan.encoding, out = self._smallest(plan, body)
            if plan.encoding != "identity":
                headers.append(("content-encoding", plan.encoding))
                headers += plan.coded()
                if self.metrics is not None:
                    seconds = time.perf_counter() - started
                    self.metrics.response(plan.route, plan.encoding, len(body), len(out), seconds)
                return out, headers
        plan.encoding = "identity"
        self._observe(plan.route, "identity", len(body), len(body), started)
        return body, headers

    def _smallest(self, plan: Plan, body: bytes) -> tuple[str, bytes]:
        """The coding of ``plan.candidates`` that has been smallest on the route, and the body
        in it; on trial bodies, every candidate's output is compared and recorded."""
        candidates = plan.candidates
        sizes = plan.bound.sizes if plan.bound is not None else self._sizes
        pick = sizes.pick(candidates) if len(candidates) > 1 else candidates[0]
        if pick is not None:
            codings = plan.dcz if pick == "dcz" and plan.dcz is not None else self.plain
            return pick, codings.encode(pick, body)
        best: tuple[str, bytes] | None = None
        for coding in candidates:  # in preference order, which breaks ties
            out = self.stream_codings(plan, coding).encode(coding, body)
            sizes.record(coding, len(body), len(out))
            if best is None or len(out) < len(best[1]):
                best = (coding, out)
        assert best is not None
        return best

    def stream_codings(self, plan: Plan, coding: str | None = None) -> ContentCodings:
        """What codes ``coding`` (the plan's by default) for this response."""
        if (coding or plan.encoding) == "dcz" and plan.dcz is not None:
            return plan.dcz
        return self.plain

    def stream(self, plan: Plan) -> Streamed:
        """The coder of a streamed body (chunk by chunk, each flushed), which reports the body to
        the metrics when it finishes, as a whole body is reported."""
        inner = None if plan.encoding == "identity" else self.stream_codings(plan).stream(plan.encoding)
        return Streamed(self, plan, inner)

    def _observe(self, route: str, encoding: str, before: int, after: int, started: float) -> None:
        if self.metrics is not None:
            self.metrics.response(route, encoding, before, after, time.perf_counter() - started)

    def error(self, exc: ZerocError) -> tuple[int, list[tuple[str, str]], bytes]:
        status = exc.http_status if exc.http_status in (400, 413, 415) else 400
        if self.metrics is not None:
            self.metrics.error(status)
        body = json.dumps({"error": str(exc)}).encode()
        return status, [("content-type", JSON_MEDIA_TYPE), ("content-length", str(len(body)))], body


def dcz_allowed(route: Route, request: dict[str, str], response: dict[str, str]) -> bool:
    """Whether a response may be dictionary-compressed (spec/HTTP.md §4, RFC 9842 §7): the
    route offers it, a cross-origin browser request may read the response (CORS), and the
    response sets no cookie and is not private (unless the route allows those)."""
    if not route.dcz:
        return False
    site = request.get("sec-fetch-site")
    if site is not None and site.strip().lower() not in ("same-origin", "none"):
        allow = response.get("access-control-allow-origin", "").strip()
        if request.get("sec-fetch-mode", "").strip().lower() != "cors" or allow not in (
            "*",
            request.get("origin", "").strip(),
        ):
            return False
    if route.dcz_private:
        return True
    private = directives(response.get("cache-control")) & {"private", "no-store"}
    return "set-cookie" not in response and not private


class Streamed:
    """A streamed body going through its content coding (or none), counted: bytes in and out
    and the time spent coding go to the metrics when the body ends."""

    def __init__(self, server: Server, plan: Plan, inner: Any) -> None:
        self.server, self.plan, self.inner = server, plan, inner
        self.before = self.after = 0
        self.seconds = 0.0

    def chunk(self, data: bytes) -> bytes:
        started = time.perf_counter()
        out = data if self.inner is None else self.inner.chunk(data)
        self.seconds += time.perf_counter() - started
        self.before += len(data)
        self.after += len(out)
        return out

    def finish(self) -> bytes:
        started = time.perf_counter()
        out = b"" if self.inner is None else self.inner.finish()
        self.seconds += time.perf_counter() - started
        self.after += len(out)
        if self.server.metrics is not None:
            plan = self.plan
            self.server.metrics.response(plan.route, plan.encoding, self.before, self.after, self.seconds)
        return out
