"""Prometheus metrics of the Zeroc middlewares (prometheus_client), per route and encoding."""

from __future__ import annotations

from typing import Any


class Metrics:
    """Counters and histograms; pass one to the middleware and expose ``registry`` at /metrics.

    Families: ``zeroc_http_bytes_before_total`` / ``_after_total`` (body bytes before and after
    encoding), ``zeroc_http_responses_total``, ``zeroc_http_compression_ratio`` (after/before),
    ``zeroc_http_encode_seconds`` / ``zeroc_http_decode_seconds``, ``zeroc_http_fallbacks_total``,
    ``zeroc_http_dictionary_misses_total`` and ``zeroc_http_errors_total`` (by status).
    """

    def __init__(self, registry: Any = None, namespace: str = "zeroc_http") -> None:
        from prometheus_client import REGISTRY, Counter, Histogram

        self.registry = registry if registry is not None else REGISTRY
        labels = ["route", "encoding"]
        kw: dict[str, Any] = {"namespace": namespace, "registry": self.registry}
        self.before = Counter("bytes_before", "Body bytes before encoding", labels, **kw)
        self.after = Counter("bytes_after", "Body bytes after encoding", labels, **kw)
        self.responses = Counter("responses", "Responses encoded", labels, **kw)
        self.requests = Counter("requests", "Request bodies decoded", labels, **kw)
        ratio_buckets = (0.05, 0.1, 0.2, 0.3, 0.5, 0.7, 1.0, 1.5)
        self.ratio = Histogram(
            "compression_ratio", "Bytes after / before", labels, buckets=ratio_buckets, **kw
        )
        time_buckets = (1e-5, 3e-5, 1e-4, 3e-4, 1e-3, 3e-3, 1e-2, 0.1)
        self.encode_seconds = Histogram(
            "encode_seconds", "Time to encode a body", labels, buckets=time_buckets, **kw
        )
        self.decode_seconds = Histogram(
            "decode_seconds", "Time to decode a request body", labels, buckets=time_buckets, **kw
        )
        self.fallbacks = Counter("fallbacks", "Frames that fell back to JSON", ["route"], **kw)
        self.misses = Counter("dictionary_misses", "Requests naming a dictionary not held", ["route"], **kw)
        self.errors = Counter("errors", "Requests refused", ["status"], **kw)
        # Labelled children by (route, encoding): a labels() lookup costs a few µs, five per
        # response; routes are the configured patterns (and "other"), so this stays small.
        self._children: dict[tuple[str, str], tuple[Any, ...]] = {}

    def _of(self, route: str, encoding: str) -> tuple[Any, ...]:
        children = self._children.get((route, encoding))
        if children is None:
            families = (self.before, self.after, self.responses, self.ratio, self.encode_seconds)
            children = self._children[(route, encoding)] = tuple(f.labels(route, encoding) for f in families)
        return children

    def response(self, route: str, encoding: str, before: int, after: int, seconds: float) -> None:
        bytes_before, bytes_after, responses, ratio, encode_seconds = self._of(route, encoding)
        bytes_before.inc(before)
        bytes_after.inc(after)
        responses.inc()
        if before:
            ratio.observe(after / before)
        encode_seconds.observe(seconds)

    def request(self, route: str, encoding: str, before: int, after: int, seconds: float) -> None:
        self.requests.labels(route, encoding).inc()
        self.decode_seconds.labels(route, encoding).observe(seconds)

    def fallback(self, route: str) -> None:
        self.fallbacks.labels(route).inc()

    def miss(self, route: str) -> None:
        self.misses.labels(route).inc()

    def error(self, status: int) -> None:
        self.errors.labels(str(status)).inc()


class StatsdMetrics:
    """The same events sent to StatsD (the ``statsd`` client), for shops without Prometheus.

    Names: ``<prefix>.<route>.<encoding>.bytes_before`` / ``bytes_after`` / ``responses``
    (counters), ``.encode_ms`` / ``.decode_ms`` (timers), ``<prefix>.fallbacks``,
    ``<prefix>.dictionary_misses``, ``<prefix>.errors.<status>``. Route patterns are turned into
    StatsD-safe names (``/orders/*`` -> ``orders_any``).
    """

    def __init__(self, host: str = "127.0.0.1", port: int = 8125, prefix: str = "zeroc_http") -> None:
        import statsd

        self.client = statsd.StatsClient(host, port, prefix=prefix)

    @staticmethod
    def _name(route: str) -> str:
        cleaned = route.strip("/").replace("*", "any").replace("/", "_").replace(".", "_")
        return cleaned or "root"

    def response(self, route: str, encoding: str, before: int, after: int, seconds: float) -> None:
        base = f"{self._name(route)}.{encoding}"
        with self.client.pipeline() as pipe:
            pipe.incr(f"{base}.bytes_before", before)
            pipe.incr(f"{base}.bytes_after", after)
            pipe.incr(f"{base}.responses")
            pipe.timing(f"{base}.encode_ms", seconds * 1000)

    def request(self, route: str, encoding: str, before: int, after: int, seconds: float) -> None:
        self.client.timing(f"{self._name(route)}.{encoding}.decode_ms", seconds * 1000)

    def fallback(self, route: str) -> None:
        self.client.incr(f"{self._name(route)}.fallbacks")

    def miss(self, route: str) -> None:
        self.client.incr(f"{self._name(route)}.dictionary_misses")

    def error(self, status: int) -> None:
        self.client.incr(f"errors.{status}")
