"""Prometheus metrics of the Zeroc middlewares (prometheus_client), per route and encoding."""

from __future__ import annotations

import math
import threading
from bisect import bisect_left
from collections import deque
from collections.abc import Iterator
from itertools import accumulate
from typing import Any

from prometheus_client.utils import floatToGoString

# Response families, counted by the middleware itself and turned into Prometheus families when
# scraped: prometheus_client's labelled counters and histograms take a lock per value, ~36,000
# instructions a response (cachegrind, the demo's Order), which made Zeroc's middleware cost more
# CPU than Starlette's GZipMiddleware. A response is one tuple appended to a queue (deque's append
# and popleft are atomic, so threads need no lock for them); the queue is added into the totals
# when it passes PENDING or the registry is scraped, under one lock, while the loop's code is in
# cache. A short queue stays in cache too: with PENDING at 4,096 its ~600 KiB of tuples were
# written and read back cold, and the demo's Order cost 1.5-2 us more a request (in process,
# between sweeps of an 8 MiB buffer) than at 64.
RATIO_BUCKETS = (0.05, 0.1, 0.2, 0.3, 0.5, 0.7, 1.0, 1.5)
TIME_BUCKETS = (1e-5, 3e-5, 1e-4, 3e-4, 1e-3, 3e-3, 1e-2, 0.1)
PENDING = 64
# An accumulator: responses, bytes before, bytes after, then each histogram's bucket counts
# (the last for +Inf) and sum.
_RATIO = 3
_RATIO_SUM = _RATIO + len(RATIO_BUCKETS) + 1
_TIME = _RATIO_SUM + 1
_TIME_SUM = _TIME + len(TIME_BUCKETS) + 1


class _Responses:
    """The response families' values by (route, encoding), a collector for the registry."""

    def __init__(self, namespace: str) -> None:
        self.namespace = namespace
        self.lock = threading.Lock()  # held while adding the queue into ``by``
        self.by: dict[tuple[str, str], list[float]] = {}
        self.pending: deque[tuple[str, str, int, int, float]] = deque()

    def fold(self) -> None:
        """Add the queued responses into the totals (each taken off the queue exactly once)."""
        pending, by = self.pending, self.by
        with self.lock:
            while pending:
                try:
                    route, encoding, before, after, seconds = pending.popleft()
                except IndexError:  # another thread took the last one
                    break
                acc = by.get((route, encoding))
                if acc is None:
                    acc = by[route, encoding] = [0.0] * (_TIME_SUM + 1)
                acc[0] += 1
                acc[1] += before
                acc[2] += after
                if before:
                    ratio = after / before
                    acc[_RATIO + bisect_left(RATIO_BUCKETS, ratio)] += 1
                    acc[_RATIO_SUM] += ratio
                acc[_TIME + bisect_left(TIME_BUCKETS, seconds)] += 1
                acc[_TIME_SUM] += seconds

    def _families(self) -> tuple[Any, ...]:
        from prometheus_client.core import CounterMetricFamily, HistogramMetricFamily

        n, labels = self.namespace, ["route", "encoding"]
        return (
            CounterMetricFamily(f"{n}_bytes_before", "Body bytes before encoding", labels=labels),
            CounterMetricFamily(f"{n}_bytes_after", "Body bytes after encoding", labels=labels),
            CounterMetricFamily(f"{n}_responses", "Responses encoded", labels=labels),
            HistogramMetricFamily(f"{n}_compression_ratio", "Bytes after / before", labels=labels),
            HistogramMetricFamily(f"{n}_encode_seconds", "Time to encode a body", labels=labels),
        )

    def describe(self) -> Iterator[Any]:
        return iter(self._families())

    def collect(self) -> Iterator[Any]:
        before, after, responses, ratio, seconds = families = self._families()
        self.fold()
        with self.lock:
            items = [(key, acc[:]) for key, acc in self.by.items()]
        for (route, encoding), acc in items:
            labels = [route, encoding]
            responses.add_metric(labels, acc[0])
            before.add_metric(labels, acc[1])
            after.add_metric(labels, acc[2])
            for family, at, bounds in ((ratio, _RATIO, RATIO_BUCKETS), (seconds, _TIME, TIME_BUCKETS)):
                counts = list(accumulate(acc[at : at + len(bounds) + 1]))
                les = [floatToGoString(b) for b in (*bounds, math.inf)]  # type: ignore[no-untyped-call]
                buckets = list(zip(les, counts, strict=True))
                family.add_metric(labels, buckets, acc[at + len(bounds) + 1])
        return iter(families)


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
        self._responses = _Responses(namespace)
        self._pending = self._responses.pending
        self.registry.register(self._responses)
        self.requests = Counter("requests", "Request bodies decoded", labels, **kw)
        self.decode_seconds = Histogram(
            "decode_seconds", "Time to decode a request body", labels, buckets=TIME_BUCKETS, **kw
        )
        self.fallbacks = Counter("fallbacks", "Frames that fell back to JSON", ["route"], **kw)
        self.misses = Counter("dictionary_misses", "Requests naming a dictionary not held", ["route"], **kw)
        self.errors = Counter("errors", "Requests refused", ["status"], **kw)

    def response(self, route: str, encoding: str, before: int, after: int, seconds: float) -> None:
        pending = self._pending  # the collector's queue, appended here: one call less a response
        pending.append((route, encoding, before, after, seconds))
        if len(pending) > PENDING:
            self._responses.fold()

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
