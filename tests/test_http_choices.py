"""The server core's choices as pure functions (spec/HTTP.md §1, §3, §4): which coding a whole
body gets, when dcz may be sent, and how the two dictionary resources are named."""

from __future__ import annotations

import gzip
import hashlib
import json
import subprocess
import zlib
from typing import Any

import http_sf
import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import zeroc
from zeroc.http._content import ContentCodings
from zeroc.http._negotiate import available_dictionary_header, best_encodings, url_pattern
from zeroc.http._server import DICTIONARY_PATH, RETRY, RETRY_MAX, TRIALS, Route, Server, _Sizes, is_trial
from zeroc.workloads import generate

ORDERS = generate("order", 400, seed=5)
BROWSER = "gzip, deflate, br, zstd, dcz"


@pytest.fixture(scope="module")
def dictionary() -> zeroc.Dictionary:
    return zeroc.train(generate("order", 600, seed=6), candidates=[("zstd", 19)])


def test_gzip_bodies_of_any_size_decode_and_are_no_larger_than_at_zlibs_defaults() -> None:
    # The window and hash table are sized to the body (wbits 9-15): each size around a boundary
    # decodes with the gzip module and the gzip CLI, no larger than zlib's 32 KiB window gives.
    text = json.dumps(ORDERS).encode()
    for size in (0, 1, 322, 511, 512, 513, 1024, 4097, 17_896, 32_767, 32_768, 32_769, 100_000):
        body = text[:size]
        out = ContentCodings().encode("gzip", body)
        assert gzip.decompress(out) == body
        assert subprocess.run(["gzip", "-dc"], input=out, capture_output=True, check=True).stdout == body
        default = zlib.compressobj(6, zlib.DEFLATED, 31)
        assert len(out) <= len(default.compress(body) + default.flush()), size


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.binary(max_size=40_000) | st.text(max_size=20_000).map(str.encode))
def test_gzip_bodies_round_trip(body: bytes) -> None:
    assert gzip.decompress(ContentCodings().encode("gzip", body)) == body


def coded(
    server: Server, path: str, body: bytes, request: dict[str, str], **response: str
) -> tuple[str, bytes]:
    plan = server.plan(path, request, 200, {"content-type": "application/json", **response})
    out, headers = server.body(plan, body)
    return dict(headers).get("content-encoding", "identity"), out


def test_ties_are_the_codings_at_the_top_weight_in_preference_order() -> None:
    assert best_encodings(BROWSER, ("zstd", "br", "gzip", "dcz")) == ("dcz", "zstd", "br", "gzip")
    assert best_encodings("gzip;q=0.5, br;q=0.9", ("zstd", "br", "gzip")) == ("br",)
    assert best_encodings("identity, gzip", ("gzip",)) == ("gzip", "identity")
    assert best_encodings("gzip;q=0", ("gzip",)) == ("identity",)
    assert best_encodings(None, ("gzip",)) == ("identity",)


def test_a_whole_body_goes_out_in_the_smallest_coding(dictionary: zeroc.Dictionary) -> None:
    """Issue 15 item 8: dcz was chosen although it was the largest coding. The route's first
    bodies are coded in every tied coding and the shortest goes; later ones take the coding
    smallest there, and the trial bodies after (is_trial) are compared again."""
    server = Server([Route("/orders", dictionary)], minimum_size=0)
    held = available_dictionary_header(dictionary.sha256)
    codings = server.match("/orders").codings  # type: ignore[union-attr]
    request = {"accept-encoding": BROWSER, "available-dictionary": held}
    for i in range(2 * RETRY):
        body = json.dumps(ORDERS[i % 40 : i % 40 + 1 + i % 3], separators=(",", ":")).encode()
        sizes = {c: len(codings.encode(c, body)) for c in ("dcz", "zstd", "br", "gzip")}
        chosen, out = coded(server, "/orders", body, request)
        assert codings.decode(chosen, out, 1 << 20) == body
        if is_trial(i + 1):
            assert len(out) == min(sizes.values()), (i, chosen, sizes)
        else:  # the coding that did best on the trials, however this body fares
            assert chosen == "dcz"
    # A client that does not hold the dictionary gets the best of the others.
    body = json.dumps(ORDERS[:20]).encode()
    chosen, out = coded(server, "/orders", body, {"accept-encoding": BROWSER})
    assert chosen in ("zstd", "br", "gzip")
    # A client that names one coding gets it, small or not.
    assert coded(server, "/orders", body, {"accept-encoding": "gzip"})[0] == "gzip"


def test_trials_grow_sparse_as_each_moves_the_totals_less() -> None:
    """The first TRIALS bodies, then the RETRY-th and each twice as far on to RETRY_MAX, then
    every RETRY_MAX-th: 38 trials in 100,000 bodies where a trial every RETRY-th made 1,570."""
    trials = [n for n in range(1, 100_001) if is_trial(n)]
    doubling = [RETRY << k for k in range((RETRY_MAX // RETRY).bit_length() - 1)]
    assert trials[: TRIALS + len(doubling) + 2] == [
        *range(1, TRIALS + 1),
        *doubling,
        RETRY_MAX,
        2 * RETRY_MAX,
    ]
    assert doubling == [64, 128, 256, 512, 1024, 2048]
    steady = trials[TRIALS + len(doubling) :]
    assert steady == list(range(RETRY_MAX, 100_001, RETRY_MAX))
    assert len(trials) == 8 + 6 + 100_000 // RETRY_MAX == 38


def test_the_kept_pick_follows_every_retrial() -> None:
    """The coding picked between trials is kept rather than worked out per body, and made again
    from the totals after each retrial's records: a coding that overtakes on retrial is picked."""
    sizes = _Sizes()
    candidates = ("zstd", "br")
    for _ in range(TRIALS):
        assert sizes.pick(candidates) is None
        sizes.record("zstd", 1000, 300)
        sizes.record("br", 1000, 250)
    assert [sizes.pick(candidates) for _ in range(RETRY - TRIALS - 1)] == ["br"] * (RETRY - TRIALS - 1)
    assert sizes.pick(candidates) is None  # the RETRY-th body: coded in each again (is_trial)
    sizes.record("zstd", 100_000, 10_000)  # zstd now smallest over all the bodies compared
    sizes.record("br", 100_000, 40_000)
    assert sizes.pick(candidates) == "zstd"


def dcz_for(server: Server, request: dict[str, str], response: dict[str, str] | None = None) -> bool:
    return "dcz" in server.plan("/orders", request, 200, response or {}).candidates


def test_dcz_only_where_the_page_may_read_both_and_no_secret_is_mixed(dictionary: zeroc.Dictionary) -> None:
    held = {"accept-encoding": "dcz", "available-dictionary": available_dictionary_header(dictionary.sha256)}
    server = Server([Route("/orders", dictionary)])
    assert dcz_for(server, held)  # not a browser: no Sec-Fetch-Site
    assert dcz_for(server, {**held, "sec-fetch-site": "same-origin", "sec-fetch-mode": "cors"})
    assert dcz_for(server, {**held, "sec-fetch-site": "none", "sec-fetch-mode": "navigate"})
    cross = {**held, "sec-fetch-site": "cross-site", "origin": "https://a.example"}
    assert not dcz_for(server, {**cross, "sec-fetch-mode": "no-cors"}, {"access-control-allow-origin": "*"})
    assert not dcz_for(server, {**cross, "sec-fetch-mode": "cors"})
    assert not dcz_for(
        server, {**cross, "sec-fetch-mode": "cors"}, {"access-control-allow-origin": "https://b.example"}
    )
    assert dcz_for(
        server, {**cross, "sec-fetch-mode": "cors"}, {"access-control-allow-origin": "https://a.example"}
    )
    assert dcz_for(
        server,
        {**cross, "sec-fetch-site": "same-site", "sec-fetch-mode": "cors"},
        {"access-control-allow-origin": "*"},
    )
    # Secrets: cookies set, private or unstored responses, unless the route says it knows better.
    assert not dcz_for(server, held, {"set-cookie": "s=1"})
    assert not dcz_for(server, held, {"cache-control": "max-age=60, Private"})
    assert not dcz_for(server, held, {"cache-control": 'private="set-cookie"'})
    assert not dcz_for(server, held, {"cache-control": "no-store"})
    assert dcz_for(server, held, {"cache-control": "public, max-age=60"})
    allowing = Server([Route("/orders", dictionary, dcz_private=True)])
    assert dcz_for(allowing, held, {"set-cookie": "s=1", "cache-control": "private"})
    # The per-route opt-out; the route still names its dictionary for frames and SDKs.
    off = Server([Route("/orders", dictionary, dcz=False)])
    assert not dcz_for(off, held)
    plan = off.plan("/orders", held, 200, {})
    assert ("zeroc-dictionary", dictionary.id) in plan.set_headers and "Available-Dictionary" in plan.vary
    assert "link" not in dict(plan.set_headers)  # no RFC 9842 dictionary offered to browsers


@pytest.mark.parametrize(
    ("glob", "pattern"),
    [
        ("/orders/*", "/orders/*"),
        ("/orders", "/orders"),
        ("/v1/items/?", "/v1/items/*"),
        ("/v[12]/items/*", "/v*/items/*"),
        ("/a:b/(x)+{y}", "/a\\:b/\\(x\\)\\+\\{y\\}"),
        ("/x/**/y", "/x/*/y"),
    ],
)
def test_route_globs_become_url_patterns(glob: str, pattern: str) -> None:
    assert url_pattern(glob) == pattern


def test_the_two_dictionary_resources_are_named_by_what_a_client_checks() -> None:
    """Issue 15 item 9: for a learned dictionary the identity covers the model, so `<id>.dict`
    hashed to something else. The raw dictionary is now named by its own SHA-256 (what
    Available-Dictionary and the dcz header carry) and the file by the identity it declares."""
    d = zeroc.train(generate("order", 400, seed=7), candidates=[("learned", 19)])
    assert d.model is not None and d.id != d.sha256.hex()
    server = Server([Route("/orders/*", d), Route("/other/*", d, dcz=False)])
    status, headers, body = server.dictionary_response(f"{DICTIONARY_PATH}{d.sha256.hex()}.dict")  # type: ignore[misc]
    assert status == 200 and hashlib.sha256(body).digest() == d.sha256
    use: Any = http_sf.parse(dict(headers)["use-as-dictionary"].encode(), tltype="dictionary")
    assert use["match"][0] == "/orders/*" and use["id"][0] == d.id
    status, headers, body = server.dictionary_response(f"{DICTIONARY_PATH}{d.id.upper()}.zcd")  # type: ignore[misc]
    assert status == 200 and zeroc.Dictionary.from_bytes(body).id == d.id
    assert "use-as-dictionary" not in dict(headers)
    for wrong in (f"{d.id}.dict", f"{d.sha256.hex()}.zcd"):
        assert server.dictionary_response(DICTIONARY_PATH + wrong)[0] == 404  # type: ignore[index]
    browser = {"sec-fetch-mode": "navigate"}  # browsers send Sec-Fetch-Mode on every fetch
    plan = server.plan("/orders/1", browser, 200, {"content-type": "application/json"})
    assert (
        "link",
        f'<{DICTIONARY_PATH}{d.sha256.hex()}.dict>; rel="compression-dictionary"',
    ) in plan.set_headers
    assert server.plan("/orders/1", {}, 200, {"content-type": "application/json"}).set_headers == ()
    # A route that opts out offers no Use-As-Dictionary when it is the only one with the dictionary.
    alone = Server([Route("/other/*", d, dcz=False)])
    headers = alone.dictionary_response(f"{DICTIONARY_PATH}{d.sha256.hex()}.dict")[1]  # type: ignore[index]
    assert "use-as-dictionary" not in dict(headers)


def test_a_delta_route_codes_each_response_against_one_the_client_holds() -> None:
    """spec/HTTP.md §3: responses offered as their successors' dictionaries, the ``delta`` most
    recently used kept; one the server let go, or one a secret may be in, is never used."""
    server = Server([Route("/feed", delta=2)], minimum_size=0)
    versions = [json.dumps(ORDERS[i : i + 50], separators=(",", ":")).encode() for i in range(4)]
    request = {"accept-encoding": BROWSER}

    def fetch(body: bytes, held: bytes | None, **response: str) -> tuple[str, bytes, dict[str, str]]:
        asked = dict(request, **({"available-dictionary": available_dictionary_header(held)} if held else {}))
        plan = server.plan("/feed", asked, 200, {"content-type": "application/json", **response})
        out, headers = server.body(plan, body)
        assert "Available-Dictionary" in plan.vary
        return dict(headers).get("content-encoding", "identity"), out, dict(headers)

    coding, out, headers = fetch(versions[0], None)
    assert coding != "dcz"
    assert http_sf.parse(headers["use-as-dictionary"].encode(), tltype="dictionary")["match"][0] == "/feed"
    held = hashlib.sha256(versions[0]).digest()
    coding, out, headers = fetch(versions[1], held)
    assert coding == "dcz" and out[8:40] == held and "use-as-dictionary" in headers
    gzip_size = len(ContentCodings().encode("gzip", versions[1]))
    assert len(out) * 10 < gzip_size  # 49 of its 50 orders are in the dictionary
    assert ContentCodings(content=versions[0]).decode("dcz", out, 1 << 20) == versions[1]
    # Two kept: versions 1 and 2 push version 0 out, and a client holding it gets no dcz.
    fetch(versions[2], None)
    assert fetch(versions[3], held)[0] != "dcz"
    assert fetch(versions[3], hashlib.sha256(versions[2]).digest())[0] == "dcz"
    # A response that sets a cookie is neither coded against an earlier one nor offered.
    coding, _, headers = fetch(versions[3], hashlib.sha256(versions[2]).digest(), **{"set-cookie": "s=1"})
    assert coding != "dcz" and "use-as-dictionary" not in headers
    unknown = hashlib.sha256(b"never sent").digest()
    assert fetch(versions[3], unknown)[0] != "dcz"


def test_the_sdk_keeps_only_fresh_responses_it_can_match() -> None:
    from zeroc.http._client import STORED, _Core

    core = _Core(None, 1 << 20)

    def answer(path: str, body: bytes, **headers: str) -> None:
        request = httpx.Request("GET", "http://127.0.0.1" + path)
        core.interpret(
            httpx.Response(
                200, headers={"content-type": "application/json", **headers}, content=body, request=request
            )
        )

    use = {"use-as-dictionary": 'match="/feed/*", id="v1"'}
    answer("/feed/1", b'{"a": 1}', **use)  # no freshness: not kept
    answer("/feed/1", b'{"a": 2}', **use, **{"cache-control": "max-age=60, no-store"})
    answer(
        "/feed/1", b'{"a": 3}', **{"use-as-dictionary": 'match="/feed/:id"', "cache-control": "max-age=60"}
    )
    assert not core.stored
    answer("/feed/1", b'{"a": 4}', **use, **{"cache-control": "public, max-age=60"})
    headers, _ = core.prepare("/feed/2", None, False, plain=False)
    assert headers["available-dictionary"] == available_dictionary_header(
        hashlib.sha256(b'{"a": 4}').digest()
    )
    assert headers["dictionary-id"] == '"v1"' and headers["accept-encoding"].startswith("dcz")
    assert "available-dictionary" not in core.prepare("/other", None, False, plain=False)[0]
    assert "available-dictionary" not in core.prepare("/feed/2", None, False, plain=True)[0]
    for i in range(2 * STORED):  # bounded: the oldest go first
        answer("/feed/1", b'{"n": %d}' % i, **use, **{"cache-control": "max-age=60"})
    assert len(core.stored) == STORED
    assert core.stored_for("/feed/9")[0] == hashlib.sha256(b'{"n": %d}' % (2 * STORED - 1)).digest()  # type: ignore[index]
