"""Metrics: Prometheus families per route and encoding, and StatsD datagrams on a real socket."""

import socket

from prometheus_client import CollectorRegistry, generate_latest

from zeroc.http import Metrics, StatsdMetrics
from zeroc.http._server import Route, Server
from zeroc.workloads import generate


def test_prometheus_families() -> None:
    registry = CollectorRegistry()
    server = Server([Route("/api/*")], metrics=Metrics(registry), minimum_size=10)
    body = str(generate("order", 5)).encode()
    plan = server.plan("/api/x", {"accept-encoding": "gzip"}, 200, {"content-type": "application/json"})
    out, headers = server.body(plan, body)
    assert ("content-encoding", "gzip") in headers
    text = generate_latest(registry).decode()
    assert f'zeroc_http_bytes_before_total{{encoding="gzip",route="/api/*"}} {float(len(body))}' in text
    assert f'zeroc_http_bytes_after_total{{encoding="gzip",route="/api/*"}} {float(len(out))}' in text
    assert 'zeroc_http_compression_ratio_count{encoding="gzip",route="/api/*"} 1.0' in text


def test_statsd_datagrams() -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        sock.bind(("127.0.0.1", 0))
        sock.settimeout(5)
        metrics = StatsdMetrics(port=sock.getsockname()[1], prefix="t")
        metrics.response("/orders/*", "zstd", 1000, 250, 0.0002)
        metrics.error(413)
        packets = sock.recv(65536).decode() + "\n" + sock.recv(65536).decode()
    assert "t.orders_any.zstd.bytes_before:1000|c" in packets
    assert "t.orders_any.zstd.bytes_after:250|c" in packets
    assert "t.errors.413:1|c" in packets


def test_response_families_count_exactly_across_threads() -> None:
    """The response families are the middleware's own counts, exposed at scrape time: buckets
    cumulative with Prometheus' ``le`` (a value on a bound counts in it), sums exact, and no
    update lost when threads (a WSGI server's) record at once."""
    import threading

    registry = CollectorRegistry()
    metrics = Metrics(registry)

    def record() -> None:
        for _ in range(2000):
            metrics.response("/r/*", "br", 1000, 300, 3e-5)  # ratio 0.3, 30 us: on bounds
            metrics.response("/r/*", "br", 0, 0, 0.5)  # nothing to compress: no ratio

    threads = [threading.Thread(target=record) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    text = generate_latest(registry).decode()
    labels = 'encoding="br",route="/r/*"'
    assert f"zeroc_http_responses_total{{{labels}}} 16000.0" in text
    assert f"zeroc_http_bytes_before_total{{{labels}}} 8e+06" in text
    assert 'zeroc_http_compression_ratio_bucket{encoding="br",le="0.2",route="/r/*"} 0.0' in text
    assert 'zeroc_http_compression_ratio_bucket{encoding="br",le="0.3",route="/r/*"} 8000.0' in text
    assert f"zeroc_http_compression_ratio_count{{{labels}}} 8000.0" in text
    assert 'zeroc_http_encode_seconds_bucket{encoding="br",le="3e-05",route="/r/*"} 8000.0' in text
    assert 'zeroc_http_encode_seconds_bucket{encoding="br",le="+Inf",route="/r/*"} 16000.0' in text
    sums = [line for line in text.splitlines() if line.startswith("zeroc_http_encode_seconds_sum")]
    assert len(sums) == 1 and abs(float(sums[0].split()[-1]) - 8000 * (3e-5 + 0.5)) < 1e-6
