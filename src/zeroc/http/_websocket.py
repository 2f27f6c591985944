"""WebSocket sessions (spec/HTTP.md §5), sans I/O: the subprotocol choice and the coding of one
connection's messages, each direction a session of its own from the route's dictionary.
The ASGI middleware and the client move the bytes."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import AsyncIterator, Sequence
from typing import Any

from zeroc._dictionary import Dictionary
from zeroc._errors import DecodeError, ZerocError
from zeroc._session import SessionDecoder, SessionEncoder

PROTOCOL = "zeroc.1"
TEXT, BINARY = b"t", b"b"
CLOSE_INVALID = 1007  # RFC 6455: invalid payload data
CLOSE_TOO_BIG = 1009


def protocol_for(dictionary: Dictionary | None) -> str:
    """The subprotocol naming ``dictionary`` (its identity's first 16 hex digits), or the bare one."""
    return PROTOCOL if dictionary is None else f"{PROTOCOL}.{dictionary.id[:16]}"


def offer(dictionary: Dictionary | None) -> list[str]:
    """What a client holding ``dictionary`` offers, best first."""
    return [protocol_for(dictionary), PROTOCOL] if dictionary is not None else [PROTOCOL]


def choose(offered: Sequence[str], dictionary: Dictionary | None) -> tuple[str, Dictionary | None] | None:
    """The server's choice among ``offered`` given its route's ``dictionary``: (subprotocol, the
    dictionary the sessions start from), or None for a connection without Zeroc."""
    if dictionary is not None and protocol_for(dictionary) in offered:
        return protocol_for(dictionary), dictionary
    if PROTOCOL in offered:
        return PROTOCOL, None
    return None


def _identity(data: bytes) -> bytes:
    return data


class FanOut:
    """Records for many connections at once (spec/HTTP.md §5, fan-out): each starts from the
    dictionary alone, so any connection can take it, and the latest ``keep`` messages' records
    are kept, so a message sent to every subscriber is coded once."""

    def __init__(self, dictionary: Dictionary | None, *, level: int = 3, keep: int = 256) -> None:
        content = dictionary.content if dictionary is not None else None
        self._encoder = SessionEncoder(dumps=_identity, lines=False, dictionary=content, level=level)
        self._records: OrderedDict[bytes, bytes] = OrderedDict()
        self.keep = keep
        self.coded = self.shared = 0  # messages coded, and records given again from the cache

    def record(self, message: bytes) -> bytes:
        record = self._records.get(message)
        if record is not None:
            self._records.move_to_end(message)
            self.shared += 1
            return record
        self._encoder.reset()
        record = self._encoder.encode(message)
        self.coded += 1
        self._records[message] = record
        if len(self._records) > self.keep:
            self._records.popitem(last=False)
        return record


class Connection:
    """Both sessions of one connection: ``send`` codes an outgoing message into a record (in
    the connection's own session, or through a shared :class:`FanOut`), ``receive`` decodes an
    incoming record into (text, None) or (None, bytes)."""

    def __init__(
        self,
        dictionary: Dictionary | None,
        *,
        level: int = 3,
        max_message_size: int = 8 << 20,
        fanout: FanOut | None = None,
    ) -> None:
        content = dictionary.content if dictionary is not None else None
        self._fanout = fanout
        self._out = SessionEncoder(dumps=_identity, lines=False, dictionary=content, level=level)
        # A message's record content: its varint length, the kind byte, the message.
        limit = max_message_size + 16
        self._in = SessionDecoder(loads=_identity, lines=False, dictionary=content, max_decoded_size=limit)
        self.max_message_size = max_message_size
        # Messages' bytes and their records' bytes, each way: what the session saves.
        self.sent = [0, 0]
        self.received = [0, 0]

    def send(self, text: str | None = None, data: bytes | None = None) -> bytes:
        message = TEXT + text.encode("utf-8") if text is not None else BINARY + (data or b"")
        record = self._out.encode(message) if self._fanout is None else self._fanout.record(message)
        self.sent[0] += len(message) - 1
        self.sent[1] += len(record)
        return record

    def receive(self, record: bytes) -> tuple[str | None, bytes | None]:
        message: bytes = self._in.decode(record)
        kind, body = message[:1], message[1:]
        self.received[0] += len(body)
        self.received[1] += len(record)
        if kind == TEXT:
            try:
                return body.decode("utf-8"), None
            except UnicodeDecodeError as exc:
                raise DecodeError(f"a text message that is not UTF-8: {exc}") from None
        if kind == BINARY:
            return None, body
        raise DecodeError("a session message that is neither text (t) nor binary (b)")


class WebSocket:
    """A WebSocket client that speaks a Zeroc session where the server does (spec/HTTP.md §5)
    and plain messages where it does not: ``async with WebSocket(url, dictionary) as ws:
    await ws.send(text or bytes); await ws.recv(); async for m in ws``.

    ``dictionary`` (the route's, e.g. from ``Client.dictionary``) lets the sessions start from
    it; without one they start from nothing. ``deflate=True`` also offers permessage-deflate,
    for servers without Zeroc (it then compresses Zeroc's records a second time where both are
    taken). Other keyword arguments go to ``websockets.connect``.
    """

    def __init__(
        self,
        url: str,
        dictionary: Dictionary | None = None,
        *,
        deflate: bool = False,
        max_message_size: int = 8 << 20,
        **options: Any,
    ) -> None:
        self.url, self.dictionary, self.deflate = url, dictionary, deflate
        self.max_message_size = max_message_size
        self.options = options
        self.connection: Connection | None = None  # None: plain messages
        self._ws: Any = None

    async def __aenter__(self) -> WebSocket:
        from websockets.asyncio.client import connect

        self._ws = await connect(
            self.url,
            subprotocols=offer(self.dictionary),  # type: ignore[arg-type]
            compression="deflate" if self.deflate else None,
            max_size=self.max_message_size + 64,
            **self.options,
        )
        chosen = self._ws.subprotocol
        if chosen == protocol_for(self.dictionary):
            self.connection = Connection(self.dictionary, max_message_size=self.max_message_size)
        elif chosen == PROTOCOL:
            self.connection = Connection(None, max_message_size=self.max_message_size)
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    @property
    def subprotocol(self) -> str | None:
        return self._ws.subprotocol if self._ws is not None else None

    async def send(self, message: str | bytes) -> None:
        if self.connection is None:
            await self._ws.send(message)
        elif isinstance(message, str):
            await self._ws.send(self.connection.send(text=message))
        else:
            await self._ws.send(self.connection.send(data=bytes(message)))

    async def recv(self) -> str | bytes:
        raw = await self._ws.recv()
        if self.connection is None:
            return raw  # type: ignore[no-any-return]
        if isinstance(raw, str):
            await self._ws.close(CLOSE_INVALID)
            raise DecodeError("a text message where the session sends records")
        try:
            text, data = self.connection.receive(raw)
        except ZerocError:
            await self._ws.close(CLOSE_INVALID)
            raise
        return text if text is not None else data  # type: ignore[return-value]

    def __aiter__(self) -> AsyncIterator[str | bytes]:
        return self._messages()

    async def _messages(self) -> AsyncIterator[str | bytes]:
        from websockets.exceptions import ConnectionClosedOK

        try:
            while True:
                yield await self.recv()
        except ConnectionClosedOK:
            return

    async def close(self, code: int = 1000) -> None:
        if self._ws is not None:
            await self._ws.close(code)
