"""``zeroc bench http``: the middleware's server CPU per request, against the bare application and
Starlette's ``GZipMiddleware``, on the demo's responses, in one run.

Each configuration is the demo's FastAPI app (or its Flask twin) served by its own server process
on loopback (uvicorn, or waitress for WSGI), with access logs off. A client process sends a fixed
number of keep-alive requests, and the server's CPU time (each of its threads' time on a CPU, in
ns, from ``/proc/<pid>/task/*/schedstat``, so Linux only) is read before and after: CPU per
request is what the server spends, whatever the client and the rest of the machine do, which
wall-clock latency on a shared 2-core machine is not. The requests carry a browser's
``Accept-Encoding`` (``gzip, deflate, br, zstd``) or ``gzip`` alone, and ``Accept:
application/json``; the responses are one Order (323 B of JSON) and the list of 50 (17,896 B).
"""

from __future__ import annotations

import http.client
import random
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ASGI = ("bare", "gzip", "zeroc")  # FastAPI on uvicorn: alone, GZipMiddleware, ZerocMiddleware
WSGI = ("wsgi-bare", "wsgi-zeroc")  # Flask on waitress: alone, ZerocWSGIMiddleware
PATHS = {"order": "/orders/1", "list": "/orders"}
ACCEPTS = {"browser": "gzip, deflate, br, zstd", "gzip": "gzip"}
WARMUP = 300
QUICK, FULL = 1_500, 6_000
ROUNDS = 30  # short rounds, the servers in a new order each: a slow spell falls on all alike


def app(kind: str, dictionary_path: str) -> Any:
    """The demo app for one configuration."""
    import zeroc
    from zeroc.http import demo

    d = zeroc.Dictionary.load(dictionary_path)
    if kind.startswith("wsgi"):
        flask_app = demo.create_wsgi_app(d)
        if kind == "wsgi-bare":
            flask_app.wsgi_app = flask_app.wsgi_app.app  # the middleware's inner app
        return flask_app
    asgi = demo.create_app(d)
    if kind == "zeroc":
        return asgi
    # The same app without Zeroc's middleware (Starlette keeps it as a list until first use).
    asgi.user_middleware = [m for m in asgi.user_middleware if m.cls.__name__ != "ZerocMiddleware"]
    if kind == "gzip":
        from starlette.middleware.gzip import GZipMiddleware

        asgi.add_middleware(GZipMiddleware, minimum_size=256)  # the demo's own minimum size
    return asgi


def serve(kind: str, port: int, dictionary_path: str) -> None:
    """Serve one configuration (the entry point of the server process)."""
    application = app(kind, dictionary_path)
    if kind.startswith("wsgi"):
        import waitress

        waitress.serve(application, host="127.0.0.1", port=port, _quiet=True)
    else:
        import uvicorn

        uvicorn.run(application, host="127.0.0.1", port=port, log_level="warning", access_log=False)


def _cpu_ns(pid: int) -> dict[str, int]:
    """Each thread's time on a CPU so far, in ns (the first field of its ``schedstat``): exact,
    where ``/proc/<pid>/stat``'s user + system time comes in clock ticks of 10 ms, more than a
    short round's difference between two servers. Per thread, since a process's own
    ``schedstat`` is its main thread's (waitress and FastAPI's sync routes work in threads)."""
    times = {}
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            times[task.name] = int((task / "schedstat").read_text().split()[0])
        except (OSError, IndexError, ValueError):  # a thread that ended meanwhile
            continue
    return times


def _cpu_seconds_between(before: dict[str, int], after: dict[str, int]) -> float:
    """The CPU the threads spent between two readings (a thread started since counts whole)."""
    return sum(t - before.get(tid, 0) for tid, t in after.items()) / 1e9


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _start(kind: str, dictionary_path: str) -> tuple[subprocess.Popen[bytes], int]:
    port = _free_port()
    code = f"from zeroc.bench._http import serve; serve({kind!r}, {port}, {dictionary_path!r})"
    proc = subprocess.Popen(  # noqa: S603 - this interpreter, running this module
        [sys.executable, "-c", code], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"{kind} server failed: {proc.stderr.read().decode() if proc.stderr else ''}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return proc, port
        except OSError:
            time.sleep(0.1)
    proc.kill()
    raise RuntimeError(f"{kind} server did not start")


def _requests(
    conn: http.client.HTTPConnection, path: str, accept_encoding: str, count: int
) -> tuple[int, str]:
    """Send ``count`` requests on a keep-alive connection; the last body's size and coding."""
    headers = {"Accept": "application/json", "Accept-Encoding": accept_encoding}
    size, coding = 0, "identity"
    for _ in range(count):
        conn.request("GET", path, headers=headers)
        r = conn.getresponse()
        body = r.read()
        if r.status != 200:
            raise RuntimeError(f"{path}: status {r.status}")
        size, coding = len(body), r.getheader("content-encoding") or "identity"
    return size, coding


def run(
    quick: bool = True, progress: Callable[[str], None] | None = None, requests: int | None = None
) -> dict[str, Any]:
    """CPU per request of every configuration on every response and Accept-Encoding
    (``requests`` per case: by default QUICK or FULL). All servers run at once and are measured
    in ROUNDS short rounds, each taking the servers in a new order, so that a slow spell of the
    machine falls on all of them; each figure is its CPU over all rounds per request (each
    round's own is kept in ``cpu_us_rounds``)."""
    from zeroc.http.demo import train_demo_dictionary

    say = progress or (lambda msg: None)
    count = requests or (QUICK if quick else FULL)
    per_round = max(1, count // ROUNDS)
    results: dict[str, Any] = {"requests": per_round * ROUNDS, "rounds": ROUNDS, "rows": []}
    with tempfile.TemporaryDirectory() as tmp:
        dictionary_path = str(Path(tmp) / "orders.zcd")
        train_demo_dictionary().save(dictionary_path)
        servers: dict[str, tuple[subprocess.Popen[bytes], int]] = {}
        try:
            for kind in (*ASGI, *WSGI):
                say(f"http {kind}: starting its server")
                servers[kind] = _start(kind, dictionary_path)
            for response, path in PATHS.items():
                for accept, header in ACCEPTS.items():
                    cpu: dict[str, list[float]] = {kind: [] for kind in servers}
                    last: dict[str, tuple[int, str]] = {}
                    conns = {
                        k: http.client.HTTPConnection("127.0.0.1", port, timeout=30)
                        for k, (_, port) in servers.items()
                    }
                    try:
                        for kind in servers:
                            _requests(conns[kind], path, header, min(WARMUP, count))
                        order = list(servers)
                        for r in range(ROUNDS):
                            random.Random(r).shuffle(order)
                            for kind in order:
                                proc = servers[kind][0]
                                before = _cpu_ns(proc.pid)
                                last[kind] = _requests(conns[kind], path, header, per_round)
                                spent = _cpu_seconds_between(before, _cpu_ns(proc.pid))
                                cpu[kind].append(spent / per_round * 1e6)
                    finally:
                        for conn in conns.values():
                            conn.close()
                    for kind in servers:
                        size, coding = last[kind]
                        us = statistics.fmean(cpu[kind])
                        results["rows"].append(
                            {
                                "server": kind,
                                "response": response,
                                "accept_encoding": accept,
                                "coding": coding,
                                "bytes": size,
                                "cpu_us_per_request": us,
                                "cpu_us_rounds": cpu[kind],
                            }
                        )
                        say(f"http {kind} {response} {accept}: {us:.0f} us, {coding} {size} B")
        finally:
            for proc, _port in servers.values():
                proc.terminate()
            for proc, _port in servers.values():
                proc.wait(timeout=30)
    results["ratios"] = ratios(results)
    return results


def ratios(result: dict[str, Any]) -> list[dict[str, Any]]:
    """Zeroc's CPU per request over the bare app's and over GZipMiddleware's, per case."""
    cpu = {
        (r["server"], r["response"], r["accept_encoding"]): r["cpu_us_per_request"] for r in result["rows"]
    }
    out = []
    for response in PATHS:
        for accept in ACCEPTS:
            row: dict[str, Any] = {"response": response, "accept_encoding": accept}
            z = cpu.get(("zeroc", response, accept))
            for peer in ("bare", "gzip"):
                p = cpu.get((peer, response, accept))
                row[f"zeroc_over_{peer}"] = z / p if z and p else None
            zw, bw = cpu.get(("wsgi-zeroc", response, accept)), cpu.get(("wsgi-bare", response, accept))
            row["wsgi_zeroc_over_bare"] = zw / bw if zw and bw else None
            out.append(row)
    return out


def table(result: dict[str, Any]) -> str:
    lines = [f"{'server':<11} {'response':<6} {'accepts':<8} {'coding':<8} {'bytes':>7} {'CPU us/req':>11}"]
    for r in result["rows"]:
        lines.append(
            f"{r['server']:<11} {r['response']:<6} {r['accept_encoding']:<8} {r['coding']:<8} "
            f"{r['bytes']:>7} {r['cpu_us_per_request']:>11.0f}"
        )
    lines.append("")
    lines.append(f"{'response':<6} {'accepts':<8} {'zeroc/bare':>10} {'zeroc/gzip':>10} {'wsgi z/bare':>11}")
    for r in result["ratios"]:
        cells = [r["zeroc_over_bare"], r["zeroc_over_gzip"], r["wsgi_zeroc_over_bare"]]
        z_bare, z_gzip, w = (f"{c:.2f}" if c else "-" for c in cells)
        lines.append(f"{r['response']:<6} {r['accept_encoding']:<8} {z_bare:>10} {z_gzip:>10} {w:>11}")
    return "\n".join(lines)


def markdown(result: dict[str, Any], command: str) -> str:
    out = [
        "# HTTP middleware overhead",
        "",
        f"Measured with `{command}` ({result['requests']:,} keep-alive requests per case after "
        f"{WARMUP} to warm up, in {result['rounds']} short rounds, each taking the servers, which "
        "all run at once, in a new order; each figure is the server's CPU over all rounds). Server "
        "CPU per request (the server's threads' time on a CPU, in ns, from "
        "/proc/<pid>/task/*/schedstat), so the client does not count. FastAPI on uvicorn "
        "(bare, Starlette's GZipMiddleware at its default level 9, ZerocMiddleware) and Flask on "
        "waitress (bare, ZerocWSGIMiddleware), each serving the demo's app; `Accept: "
        "application/json`, so the bound routes answer JSON in a content coding.",
        "",
        "| server | response | Accept-Encoding | coding sent | bytes | CPU µs / request |",
        "|---|---|---|---|---:|---:|",
    ]
    for r in result["rows"]:
        out.append(
            f"| {r['server']} | {r['response']} | {ACCEPTS[r['accept_encoding']]} | {r['coding']} | "
            f"{r['bytes']:,} | {r['cpu_us_per_request']:.0f} |"
        )
    out += [
        "",
        "| response | Accept-Encoding | Zeroc / bare | Zeroc / GZipMiddleware | WSGI Zeroc / bare |",
        "|---|---|---:|---:|---:|",
    ]
    for r in result["ratios"]:
        cells = [r["zeroc_over_bare"], r["zeroc_over_gzip"], r["wsgi_zeroc_over_bare"]]
        z_bare, z_gzip, w = (f"{c:.2f}" if c else "–" for c in cells)
        out.append(f"| {r['response']} | {ACCEPTS[r['accept_encoding']]} | {z_bare} | {z_gzip} | {w} |")
    return "\n".join(out) + "\n"
