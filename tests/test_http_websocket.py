"""WebSocket sessions (spec/HTTP.md §5) and server-sent events on a real uvicorn server (``zeroc
serve-demo``) over loopback, with real clients: zeroc.http.WebSocket, the plain ``websockets``
client, httpx reading an event stream."""

import asyncio
import json
import random
import zlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import zstandard
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed

import zeroc
from zeroc.http import DICTIONARY_PATH, WebSocket
from zeroc.http.demo import EVENTS, ORDERS, train_demo_dictionary
from zeroc.workloads import generate

from .test_http import Server, start_server


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    path = tmp_path_factory.mktemp("ws") / "orders.zcd"
    train_demo_dictionary().save(path)
    s = start_server(path, "asgi")
    yield s
    s.proc.terminate()
    s.proc.wait(timeout=10)


def ws_url(server: Server, path: str = "/ws/echo") -> str:
    return server.url.replace("http://", "ws://") + path


def route_dictionary(server: Server) -> zeroc.Dictionary:
    """The route's dictionary as a client finds it: named by a response on a route that shares
    it (the JSON listing), fetched from the dictionary endpoint, checked by its identity."""
    ident = httpx.get(server.url + "/orders", headers={"accept": "application/x-zeroc"}).headers[
        "zeroc-dictionary"
    ]
    data = httpx.get(f"{server.url}{DICTIONARY_PATH}{ident}.zcd").content
    d = zeroc.Dictionary.from_bytes(data)
    assert d.id == ident
    return d


def messages(n: int) -> list[str | bytes]:
    """What a relay carries: JSON events (most), chat text in several scripts, binary blobs."""
    rng = random.Random(n)
    orders = generate("order", 500, seed=7)
    out: list[str | bytes] = []
    for i in range(n):
        r = rng.random()
        if r < 0.8:
            out.append(json.dumps(orders[i % len(orders)] | {"seq": i}))
        elif r < 0.95:
            out.append(rng.choice(["hello", "Grüße aus Köln", "こんにちは世界", "🙂 ok", ""]) + f" #{i}")
        else:
            out.append(rng.randbytes(rng.randint(0, 3000)))
    return out


def test_ten_thousand_messages_each_way_in_a_session_are_exact(server: Server) -> None:
    d = route_dictionary(server)
    sent = messages(10_000)

    async def run() -> tuple[list[str | bytes], WebSocket]:
        async with WebSocket(ws_url(server), d) as ws:
            assert ws.subprotocol == f"zeroc.1.{d.id[:16]}"
            got = []
            for m in sent:
                await ws.send(m)
                got.append(await ws.recv())
            return got, ws

    got, ws = asyncio.run(run())
    assert got == sent
    assert ws.connection is not None
    raw, coded = ws.connection.sent
    assert coded < raw / 4, (raw, coded)  # each message coded with the ones before it
    assert ws.connection.received[1] < ws.connection.received[0] / 4


def test_a_client_without_the_dictionary_gets_a_session_from_nothing(server: Server) -> None:
    sent = messages(300)

    async def run() -> list[str | bytes]:
        async with WebSocket(ws_url(server)) as ws:
            assert ws.subprotocol == "zeroc.1"
            return [await _echo(ws, m) for m in sent]

    assert asyncio.run(run()) == sent


async def _echo(ws: WebSocket, m: str | bytes) -> str | bytes:
    await ws.send(m)
    return await ws.recv()


def test_a_client_without_zeroc_gets_plain_messages_with_permessage_deflate(server: Server) -> None:
    sent = messages(300)

    async def run() -> tuple[list[str | bytes], str]:
        async with connect(ws_url(server), compression="deflate") as ws:
            assert ws.subprotocol is None
            got = []
            for m in sent:
                await ws.send(m)
                got.append(await ws.recv())
            return got, ws.response.headers.get("sec-websocket-extensions", "")

    got, extensions = asyncio.run(run())
    assert got == sent
    assert "permessage-deflate" in extensions


def test_garbage_closes_with_1007_and_the_server_keeps_serving(server: Server) -> None:
    d = route_dictionary(server)

    async def garbage(payload: str | bytes) -> int | None:
        async with connect(ws_url(server), subprotocols=["zeroc.1"], compression=None) as ws:  # type: ignore[list-item]
            assert ws.subprotocol == "zeroc.1"
            await ws.send(payload)
            with pytest.raises(ConnectionClosed) as closed:
                await ws.recv()
            return closed.value.rcvd.code if closed.value.rcvd else None

    rng = random.Random(4)
    for payload in [b"\x03garbage", rng.randbytes(200), "a text message", b"", b"\x02\xff\xff"]:
        assert asyncio.run(garbage(payload)) == 1007, payload

    async def fine() -> str | bytes:
        async with WebSocket(ws_url(server), d) as ws:
            return await _echo(ws, "still serving")

    assert asyncio.run(fine()) == "still serving"


def test_a_client_that_vanishes_mid_stream_leaves_the_server_serving(server: Server) -> None:
    d = route_dictionary(server)

    async def vanish() -> None:
        ws = WebSocket(ws_url(server), d)
        await ws.__aenter__()
        for m in messages(50):
            await ws.send(m)
        ws._ws.transport.abort()  # no close frame: the TCP connection just ends

    async def fine() -> list[str | bytes]:
        async with WebSocket(ws_url(server), d) as ws:
            return [await _echo(ws, m) for m in messages(20)]

    for _ in range(5):
        asyncio.run(vanish())
    assert asyncio.run(fine()) == messages(20)
    assert server.proc.poll() is None
    assert httpx.get(server.url + "/health").status_code == 200


def test_connection_sizes_and_limits_in_process() -> None:
    """The sans-I/O core: a message past the limit is refused, not decoded."""
    from zeroc.http._websocket import Connection, FanOut, choose, offer, protocol_for

    d = zeroc.Dictionary.load(Path(__file__).resolve().parents[1] / "spec" / "vectors" / "order-json-4k.zcd")
    assert choose(offer(d), d) == (protocol_for(d), d)
    assert choose(offer(None), d) == ("zeroc.1", None)
    assert choose(["chat"], d) is None
    a, b = Connection(d), Connection(d, max_message_size=1000)
    assert b.receive(a.send(text="x" * 900)) == ("x" * 900, None)
    with pytest.raises(zeroc.LimitExceeded):
        b.receive(a.send(data=bytes(5000)))
    # Fan-out: many connections share one coder; a message is coded once, every record resets.
    fan = FanOut(d, keep=2)
    senders = [Connection(d, fanout=fan) for _ in range(3)]
    records = [c.send(text="same event") for c in senders]
    assert records[0] == records[1] == records[2] and (fan.coded, fan.shared) == (1, 2)
    for m in ["a", "b", "c", "a"]:  # "a" fell out of the two kept
        senders[0].send(text=m)
    assert fan.coded == 5
    late = Connection(d)
    assert late.receive(senders[1].send(text="b")) == ("b", None)  # any receiver can take it


def test_an_event_stream_is_one_context_with_every_event_flushed(server: Server) -> None:
    """Server-sent events (spec/HTTP.md §1): the stream is compressed with one context, and
    each event is flushed: the demo's /events sends 20 events and then waits for ever, so a
    client can only decode all 20 if every one arrived complete (else its read times out)."""
    expected = [json.dumps(o) for o in ORDERS[:EVENTS]]
    decoders: list[tuple[str, Callable[[], Any]]] = [
        ("zstd", lambda: zstandard.ZstdDecompressor().decompressobj()),
        ("gzip", lambda: zlib.decompressobj(31)),
    ]
    for coding, decompressor in decoders:
        events: list[str] = []
        raw = 0
        headers = {"accept-encoding": coding}
        with httpx.stream("GET", server.url + "/events", headers=headers, timeout=20) as r:
            assert r.headers["content-encoding"] == coding
            assert r.headers["content-type"].startswith("text/event-stream")
            d = decompressor()
            text = ""
            for chunk in r.iter_raw():
                raw += len(chunk)
                text += d.decompress(chunk).decode()
                *done, text = text.split("\n\n")
                events += [e.removeprefix("data: ") for e in done]
                if len(events) >= 20:
                    break
        assert events == expected
        assert raw < sum(map(len, expected)) / 3


def test_a_fanout_route_codes_each_message_once_for_every_subscriber(server: Server) -> None:
    """/ws/feed is a fan-out route: three subscribers get byte-identical records (coded once),
    each starting from the dictionary (reset), decoding to the orders sent."""
    from zeroc._session import SessionDecoder
    from zeroc.http._websocket import protocol_for
    from zeroc.http.demo import FEED

    d = route_dictionary(server)

    async def subscribe() -> list[bytes]:
        offer = [protocol_for(d)]
        async with connect(ws_url(server, "/ws/feed"), subprotocols=offer, compression=None) as ws:  # type: ignore[arg-type]
            assert ws.subprotocol == protocol_for(d)
            return [bytes(await ws.recv()) for _ in range(FEED)]  # type: ignore[arg-type]

    async def three() -> list[list[bytes]]:
        return list(await asyncio.gather(subscribe(), subscribe(), subscribe()))

    a, b, c = asyncio.run(three())
    assert a == b == c
    assert all(r[0] & 1 for r in a)  # every record resets: any subscriber can take it
    dec = SessionDecoder(loads=lambda x: x, lines=False, dictionary=d.content)
    assert [dec.decode(r) for r in a] == [b"t" + json.dumps(o).encode() for o in ORDERS[:FEED]]


def test_after_a_close_nothing_more_goes_out() -> None:
    """In process, at the ASGI interface: a bad record closes the socket once (1007); what the
    app sends after that, its own close included, is dropped, as the server would refuse it."""
    from zeroc.http import Route, ZerocMiddleware

    sent: list[dict[str, Any]] = []
    inbox = [{"type": "websocket.connect"}, {"type": "websocket.receive", "bytes": b"\x0bnot a record"}]

    async def app(scope: Any, receive: Any, send: Any) -> None:
        assert scope["subprotocols"] == ["chat"]  # the app sees the others offered
        assert (await receive())["type"] == "websocket.connect"
        await send({"type": "websocket.accept"})
        assert (await receive()) == {"type": "websocket.disconnect", "code": 1007}
        await send({"type": "websocket.send", "text": "too late"})
        await send({"type": "websocket.close", "code": 1000})

    async def receive() -> dict[str, Any]:
        return inbox.pop(0)

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    middleware = ZerocMiddleware(app, routes=[Route("/ws/*")])
    scope = {"type": "websocket", "path": "/ws/x", "subprotocols": ["zeroc.1", "chat"], "headers": []}
    asyncio.run(middleware(scope, receive, send))
    accept = {"type": "websocket.accept", "subprotocol": "zeroc.1"}
    assert sent == [accept, {"type": "websocket.close", "code": 1007}]
