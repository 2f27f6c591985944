"""Zeroc over HTTP (spec/HTTP.md): ASGI and WSGI middleware, an httpx client, metrics.

Needs the ``http`` extra: ``pip install 'zeroc[http]'``.
"""

from zeroc.http._asgi import ZerocMiddleware
from zeroc.http._client import AsyncClient, Client, Reply
from zeroc.http._content import ContentCodings
from zeroc.http._metrics import Metrics, StatsdMetrics
from zeroc.http._negotiate import choose_encoding, parse_accept_encoding
from zeroc.http._server import DICTIONARY_PATH, Route
from zeroc.http._websocket import WebSocket
from zeroc.http._wsgi import ZerocWSGIMiddleware

__all__ = [
    "DICTIONARY_PATH",
    "AsyncClient",
    "Client",
    "ContentCodings",
    "Metrics",
    "Reply",
    "Route",
    "StatsdMetrics",
    "WebSocket",
    "ZerocMiddleware",
    "ZerocWSGIMiddleware",
    "choose_encoding",
    "parse_accept_encoding",
]
