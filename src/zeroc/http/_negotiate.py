"""Header negotiation as pure functions: headers in, decisions out (spec/HTTP.md)."""

from __future__ import annotations

import base64
import binascii
from collections.abc import Iterable
from functools import lru_cache

ZEROC_MEDIA_TYPE = "application/x-zeroc"
JSON_MEDIA_TYPE = "application/json"
# Server preference, best first (spec/HTTP.md section 1).
PREFERENCE = ("dcz", "zstd", "br", "gzip", "identity")
REQUEST_CODINGS = ("zstd", "gzip", "br", "dcz")
DEFAULT_EXCLUDED = (
    "image/",
    "video/",
    "audio/",
    "application/zip",
    "application/gzip",
    "application/zstd",
    "application/octet-stream",
    "application/x-zeroc-table",  # a .zct container: its blocks are zstd already
    "application/vnd.apache.arrow.file",  # Arrow IPC, whose buffers carry their own compression
)
NOT_EXCLUDED = ("image/svg+xml",)


def _q(params: list[str]) -> float:
    for p in params:
        name, _, value = p.partition("=")
        if name.strip().lower() == "q":
            try:
                q = float(value.strip())
            except ValueError:
                return 0.0
            return q if 0.0 <= q <= 1.0 else 0.0
    return 1.0


def parse_accept_encoding(header: str | None) -> dict[str, float]:
    """``gzip;q=0.5, br, *;q=0`` -> {"gzip": 0.5, "br": 1.0, "*": 0.0}, tokens lower-cased."""
    out: dict[str, float] = {}
    for item in (header or "").split(","):
        token, *params = item.split(";")
        token = token.strip().lower()
        if token:
            out[token] = max(out.get(token, 0.0), _q(params))
    return out


def choose_encoding(header: str | None, available: Iterable[str]) -> str:
    """The coding to answer with: highest weight, ties broken by server preference."""
    return best_encodings(header, tuple(available))[0]


@lru_cache(maxsize=1024)  # clients send few distinct headers; a hostile one only churns the cache
def best_encodings(header: str | None, available: tuple[str, ...]) -> tuple[str, ...]:
    """The codings tied at the highest weight, in server preference order (spec/HTTP.md §1:
    a whole body goes out in the smallest of them, a streamed one in the first).

    ``available`` are the codings this response could use (``dcz`` only when the client holds
    the route's dictionary and section 4 allows it). Identity not named in the header is
    acceptable (RFC 9110 §12.5.3) but ranks below every coding the client did name; with no
    acceptable coding at all the answer is identity, which RFC 9110 permits.
    """
    if header is None:
        return ("identity",)
    weights = parse_accept_encoding(header)
    star = weights.get("*")

    def weight(coding: str) -> float:
        if coding in weights:
            return weights[coding]
        if coding == "identity":
            return 0.0 if star == 0.0 else 0.001
        return star if star is not None else 0.0

    allowed = set(available) | {"identity"}
    ranked = [(weight(c), c) for c in PREFERENCE if c in allowed]
    top = max(q for q, _ in ranked)
    if top <= 0:
        return ("identity",)
    return tuple(c for q, c in ranked if q == top)


# URL-pattern syntax (the WHATWG URL Pattern standard) other than the ``*`` wildcard.
_URL_PATTERN_SPECIAL = frozenset(":(){}+?\\")


def url_pattern(glob: str) -> str:
    """A route's glob as an RFC 9842 ``match`` URL pattern: ``*`` stays a wildcard, ``?`` and
    ``[...]`` widen to ``*`` (a dictionary offered too widely is only ignored by the server),
    other pattern syntax is escaped."""
    out: list[str] = []
    i = 0
    while i < len(glob):
        c = glob[i]
        if c == "[" and (end := glob.find("]", i + 2)) > 0:
            c, i = "*", end
        elif c == "?":
            c = "*"
        elif c in _URL_PATTERN_SPECIAL:
            c = "\\" + c
        if not (c == "*" and out and out[-1] == "*"):
            out.append(c)
        i += 1
    return "".join(out)


def directives(header: str | None) -> set[str]:
    """The directive names of a ``Cache-Control`` value, lower-cased (``private="x"`` counts)."""
    return {d.split("=", 1)[0].strip().lower() for d in (header or "").split(",") if d.strip()}


def parse_media_type(header: str | None) -> tuple[str, dict[str, str]]:
    """``application/x-zeroc; schema="a.B"`` -> ("application/x-zeroc", {"schema": "a.B"})."""
    if not header:
        return "", {}
    kind, *params = header.split(";")
    out = {}
    for p in params:
        name, _, value = p.partition("=")
        value = value.strip()
        if len(value) >= 2 and value[0] == value[-1] == '"':
            value = value[1:-1]
        if name.strip():
            out[name.strip().lower()] = value
    return kind.strip().lower(), out


def accept_weight(header: str | None, media_type: str) -> float:
    """The weight ``Accept`` gives ``media_type`` (exact, then type/*, then */*)."""
    if header is None:
        return 1.0
    main = media_type.split("/")[0] + "/*"
    found: dict[str, float] = {}
    for item in header.split(","):
        kind, *params = item.split(";")
        found[kind.strip().lower()] = _q(params)
    for key in (media_type, main, "*/*"):
        if key in found:
            return found[key]
    return 0.0


@lru_cache(maxsize=1024)
def wants_zeroc(accept: str | None) -> bool:
    """True when the client ranks application/x-zeroc at least as high as JSON (and above 0)."""
    if accept is None:
        return False
    z = accept_weight(accept, ZEROC_MEDIA_TYPE)
    return z > 0 and ZEROC_MEDIA_TYPE in accept.lower() and z >= accept_weight(accept, JSON_MEDIA_TYPE)


@lru_cache(maxsize=1024)
def names_zeroc(accept: str | None) -> bool:
    """Whether an Accept header takes Zeroc frames at all (a Zeroc client, whatever it ranks)."""
    if accept is None or ZEROC_MEDIA_TYPE not in accept.lower():
        return False
    return accept_weight(accept, ZEROC_MEDIA_TYPE) > 0


@lru_cache(maxsize=1024)
def names_dcz(accept_encoding: str | None) -> bool:
    """Whether an Accept-Encoding header takes dcz (an RFC 9842 client holding a dictionary)."""
    return parse_accept_encoding(accept_encoding).get("dcz", 0.0) > 0


def zeroc_media_type(dictionary_id: str, schema: str | None) -> str:
    kind = f'schema="{schema}"' if schema else 'serialization="json"'
    return f'{ZEROC_MEDIA_TYPE}; {kind}; dictionary="{dictionary_id}"'


def available_dictionary(header: str | None) -> bytes | None:
    """The SHA-256 in ``Available-Dictionary: :<base64>:`` (RFC 9842), or None if absent/bad."""
    if not header:
        return None
    value = header.strip()
    if len(value) < 3 or value[0] != ":" or value[-1] != ":":
        return None
    try:
        digest = base64.b64decode(value[1:-1], validate=True)
    except (binascii.Error, ValueError):
        return None
    return digest if len(digest) == 32 else None


def available_dictionary_header(sha256: bytes) -> str:
    return ":" + base64.b64encode(sha256).decode() + ":"


@lru_cache(maxsize=1024)
def is_excluded(content_type: str | None, excluded: tuple[str, ...] = DEFAULT_EXCLUDED) -> bool:
    kind = (content_type or "").split(";")[0].strip().lower()
    if kind in NOT_EXCLUDED:
        return False
    return any(kind.startswith(e) if e.endswith("/") else kind == e for e in excluded)


@lru_cache(maxsize=1024)
def add_vary(existing: str | None, *names: str) -> str:
    have = [v.strip() for v in (existing or "").split(",") if v.strip()]
    lower = {v.lower() for v in have}
    if "*" in lower:
        return "*"
    return ", ".join(have + [n for n in names if n.lower() not in lower])
