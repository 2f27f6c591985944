"""``zeroc bench http``: the middleware's server CPU per request, against the bare application and
its peer (Starlette's ``GZipMiddleware``; Flask-Compress for WSGI), on the demo's responses, in
one run.

Each configuration is the demo's FastAPI app (or its Flask twin) served by server processes of its
own on loopback (uvicorn, or waitress for WSGI; REPLICAS of them, averaged), with access logs
off. A client process sends a fixed number of keep-alive requests, and the server's CPU time
(each of its threads' time on a CPU, in ns, from ``/proc/<pid>/task/*/schedstat``, so Linux only)
is read before and after: CPU per request is what the server spends, whatever the client and the
rest of the machine do, which wall-clock latency on a shared 2-core machine is not. Where
valgrind is installed, callgrind also counts each configuration's instructions per request
(instructions()). The requests carry a browser's
``Accept-Encoding`` (``gzip, deflate, br, zstd``) or ``gzip`` alone, and ``Accept:
application/json``; the responses are one Order (323 B of JSON) and the list of 50 (17,896 B).
"""

from __future__ import annotations

import asyncio
import gc
import http.client
import io
import json
import os
import random
import re
import shutil
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
# Flask on waitress: alone, Flask-Compress (Flask's own compression, at its defaults but the
# demo's minimum size), ZerocWSGIMiddleware
WSGI = ("wsgi-bare", "wsgi-compress", "wsgi-zeroc")
PATHS = {"order": "/orders/1", "list": "/orders"}
ACCEPTS = {"browser": "gzip, deflate, br, zstd", "gzip": "gzip"}
WARMUP = 300
QUICK, FULL = 1_500, 6_000
ROUNDS = 30  # short rounds, the servers in a new order each: a slow spell falls on all alike
# Server processes per configuration, their figures averaged: a process's own luck (where its
# memory lies) moved one configuration's CPU per request by 4% between two processes of it
# (835 and 803 us; GZipMiddleware's two 818 and 810), as much as the middlewares differ, and
# four processes of GZipMiddleware's on the Order spread from 590 to 628 us (2026-12-07).
REPLICAS = 4
# Requests counted per case under callgrind (instructions()), quick and full, after WARMUP:
# instructions repeat from request to request, and callgrind runs a Flask request of the list
# (3-5 million instructions) ~50 times slower than the CPU (full: 5 minutes at 1,000).
COUNTED = {True: 100, False: 400}


def app(kind: str, dictionary_path: str, listing_path: str | None = None) -> Any:
    """The demo app for one configuration (``listing_path``: the list's dictionary, trained
    afresh where it is None)."""
    import zeroc
    from zeroc.http import demo

    d = zeroc.Dictionary.load(dictionary_path)
    if kind.startswith("wsgi"):
        listing = zeroc.Dictionary.load(listing_path) if listing_path else None
        flask_app = demo.create_wsgi_app(d, listing)
        if kind != "wsgi-zeroc":
            flask_app.wsgi_app = flask_app.wsgi_app.app  # the middleware's inner app
        if kind == "wsgi-compress":
            from flask_compress import Compress

            flask_app.config["COMPRESS_MIN_SIZE"] = 256  # the demo's own minimum size
            Compress(flask_app)
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

        # Keep-alive past uvicorn's 5 s: warming a dozen servers one after another leaves the
        # first one's connection idle longer than that.
        uvicorn.run(
            application,
            host="127.0.0.1",
            port=port,
            log_level="warning",
            access_log=False,
            timeout_keep_alive=120,
        )


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


def _launch(kind: str, dictionary_path: str) -> tuple[subprocess.Popen[bytes], int]:
    """A server process of one configuration, on a free port (not yet listening)."""
    port = _free_port()
    code = f"from zeroc.bench._http import serve; serve({kind!r}, {port}, {dictionary_path!r})"
    proc = subprocess.Popen(  # noqa: S603 - this interpreter, running this module
        [sys.executable, "-c", code], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    return proc, port


def _wait(kind: str, proc: subprocess.Popen[bytes], port: int) -> None:
    """Until the server listens (RuntimeError if it ends or takes two minutes)."""
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"{kind} server failed: {proc.stderr.read().decode() if proc.stderr else ''}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return
        except OSError:
            time.sleep(0.1)
    proc.kill()
    raise RuntimeError(f"{kind} server did not start")


def _start(kind: str, dictionary_path: str) -> tuple[subprocess.Popen[bytes], int]:
    """A server process of one configuration, listening."""
    proc, port = _launch(kind, dictionary_path)
    _wait(kind, proc, port)
    return proc, port


def _requests(
    conn: http.client.HTTPConnection, path: str, accept_encoding: str, count: int
) -> tuple[int, str]:
    """Send ``count`` requests on a keep-alive connection; the last body's size and coding."""
    headers = {"Accept": "application/json", "Accept-Encoding": accept_encoding}
    size, coding = 0, "identity"
    for _ in range(count):
        try:
            conn.request("GET", path, headers=headers)
            r = conn.getresponse()
        except (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError):
            conn.close()  # the server closed the idle connection: connect again, as clients do
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
    (``requests`` per case: by default QUICK or FULL, shared by its REPLICAS server processes).
    All servers run at once and are measured in ROUNDS short rounds, each taking the servers in
    a new order, so that a slow spell of the machine falls on all of them; each figure is its
    processes' CPU over all rounds per request (each round's own is kept in ``cpu_us_rounds``,
    the processes' in turn)."""
    from zeroc.http.demo import train_demo_dictionary

    say = progress or (lambda msg: None)
    count = requests or (QUICK if quick else FULL)
    per_round = max(1, count // (ROUNDS * REPLICAS))
    total = per_round * ROUNDS * REPLICAS
    results: dict[str, Any] = {"requests": total, "rounds": ROUNDS, "replicas": REPLICAS, "rows": []}
    with tempfile.TemporaryDirectory() as tmp:
        dictionary_path = str(Path(tmp) / "orders.zcd")
        train_demo_dictionary().save(dictionary_path)
        servers: dict[tuple[str, int], tuple[subprocess.Popen[bytes], int]] = {}
        kinds = (*ASGI, *WSGI)
        try:
            say(f"http: starting {REPLICAS} servers of each configuration ({', '.join(kinds)})")
            for kind in kinds:  # all at once: each spends its ~2 s of start-up importing
                for replica in range(REPLICAS):
                    servers[kind, replica] = _launch(kind, dictionary_path)
            for (kind, _replica), (proc, port) in servers.items():
                _wait(kind, proc, port)
            for response, path in PATHS.items():
                for accept, header in ACCEPTS.items():
                    cpu: dict[str, list[float]] = {kind: [] for kind in kinds}
                    last: dict[str, tuple[int, str]] = {}
                    conns = {
                        k: http.client.HTTPConnection("127.0.0.1", port, timeout=30)
                        for k, (_, port) in servers.items()
                    }
                    try:
                        for server in servers:
                            _requests(conns[server], path, header, min(WARMUP, count))
                        order = list(servers)
                        for r in range(ROUNDS):
                            random.Random(r).shuffle(order)
                            for server in order:
                                proc = servers[server][0]
                                before = _cpu_ns(proc.pid)
                                last[server[0]] = _requests(conns[server], path, header, per_round)
                                spent = _cpu_seconds_between(before, _cpu_ns(proc.pid))
                                cpu[server[0]].append(spent / per_round * 1e6)
                    finally:
                        for conn in conns.values():
                            conn.close()
                    for kind in kinds:
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


# -- instructions per request, the middleware alone (callgrind) ---------------------------------
def _scope(path: str, accept_encoding: str) -> dict[str, Any]:
    """An ASGI scope with the request headers _requests() sends (http.client adds Host)."""
    return {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "GET",
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "query_string": b"",
        "root_path": "",
        "headers": [
            (b"host", b"127.0.0.1"),
            (b"accept", b"application/json"),
            (b"accept-encoding", accept_encoding.encode()),
        ],
        "client": ("127.0.0.1", 1),
        "server": ("127.0.0.1", 80),
    }


class _Sent(list[Any]):
    """The messages an app sends, kept by an ``async`` send."""

    async def append_async(self, message: Any) -> None:
        self.append(message)


def prepare(folder: str) -> None:
    """What count() reads: the demo's two dictionaries, and the bare demo app's response to each
    path (status, headers, body), taken from FastAPI here so that counting replays it."""
    from zeroc.http.demo import listing_dictionary, train_demo_dictionary

    path = Path(folder)
    train_demo_dictionary().save(path / "orders.zcd")
    listing_dictionary().save(path / "listing.zcd")
    bare = app("bare", str(path / "orders.zcd"))
    responses = {}
    for response, url in PATHS.items():
        sent = asyncio.run(_calls(bare, _scope(url, "identity"), 1))
        (path / f"{response}.body").write_bytes(b"".join(m.get("body", b"") for m in sent[1:]))
        headers = [(k.decode("latin-1"), v.decode("latin-1")) for k, v in sent[0]["headers"]]
        responses[response] = {"status": sent[0]["status"], "headers": headers}
    (path / "responses.json").write_text(json.dumps(responses))


def _cases() -> list[tuple[str, str, str]]:
    """(server, response, Accept-Encoding) in the order count() measures them."""
    return [(kind, response, accept) for kind in (*ASGI, *WSGI) for response in PATHS for accept in ACCEPTS]


def _environ(path: str, accept_encoding: str) -> dict[str, Any]:
    """A WSGI environ with the request headers _requests() sends, as waitress gives them."""
    return {
        "REQUEST_METHOD": "GET",
        "SCRIPT_NAME": "",
        "PATH_INFO": path,
        "QUERY_STRING": "",
        "SERVER_NAME": "127.0.0.1",
        "SERVER_PORT": "80",
        "SERVER_PROTOCOL": "HTTP/1.1",
        "REMOTE_ADDR": "127.0.0.1",
        "HTTP_HOST": "127.0.0.1",
        "HTTP_ACCEPT": "application/json",
        "HTTP_ACCEPT_ENCODING": accept_encoding,
        "wsgi.version": (1, 0),
        "wsgi.url_scheme": "http",
        "wsgi.input": io.BytesIO(),
        "wsgi.errors": sys.stderr,
        "wsgi.multithread": True,
        "wsgi.multiprocess": False,
        "wsgi.run_once": False,
    }


def _wsgi_calls(wsgi: Any, path: str, accept_encoding: str, count: int) -> tuple[dict[str, str], bytes]:
    """``count`` requests; the last one's headers and body."""
    headers: dict[str, str] = {}
    body = b""

    def start_response(status: str, raw: list[tuple[str, str]], exc_info: Any = None) -> Any:
        headers.clear()
        headers.update((k.lower(), v) for k, v in raw)
        return None

    for _ in range(count):
        out = wsgi(_environ(path, accept_encoding), start_response)
        try:
            body = b"".join(out)
        finally:
            close = getattr(out, "close", None)
            if close is not None:
                close()
    return headers, body


def count(folder: str, requests: int, warmup: int = WARMUP) -> None:
    """Run by instructions() under callgrind: every ASGI configuration's middleware around an
    app that replays the bare demo app's response, and every WSGI configuration's Flask app
    whole (Flask-Compress works inside Flask), ``warmup`` requests, then ``requests`` counted
    between two calls of os.getppid, per case of _cases(); prints each case's coding and bytes
    as JSON. (callgrind dumps its counts before each call of getppid, which nothing calls while
    serving; zlib's adler32, the marker before, is also called by a raw deflate's reset, as in
    Flask-Compress's gzip.)"""
    from prometheus_client import CollectorRegistry
    from starlette.middleware.gzip import GZipMiddleware

    import zeroc
    from zeroc.http import demo
    from zeroc.http._asgi import ZerocMiddleware
    from zeroc.http._metrics import Metrics

    path = Path(folder)
    orders = zeroc.Dictionary.load(path / "orders.zcd")
    listing = zeroc.Dictionary.load(path / "listing.zcd")
    responses = json.loads((path / "responses.json").read_text())
    loop = asyncio.new_event_loop()
    found: list[tuple[str, int]] = []
    middlewares: dict[tuple[str, str], Any] = {}
    flask_apps: dict[str, Any] = {}  # one per configuration, as a server has one
    # The collector off, as timeit has it: a collection falls on whichever case's requests
    # reach its threshold (the bare Flask app's Order, the same work, counted 435k and 485k
    # instructions a request under two Accept-Encodings with it on).
    gc.disable()
    for kind, response, accept in _cases():
        gc.collect()
        if kind in WSGI:
            if kind not in flask_apps:
                flask_apps[kind] = app(kind, str(path / "orders.zcd"), str(path / "listing.zcd"))
            wsgi, url = flask_apps[kind], PATHS[response]
            _wsgi_calls(wsgi, url, ACCEPTS[accept], warmup)
            os.getppid()  # callgrind: the counts so far are dumped (and dropped)
            got, body = _wsgi_calls(wsgi, url, ACCEPTS[accept], requests)
            os.getppid()  # callgrind: these requests' counts are dumped
            found.append((got.get("content-encoding", "identity"), len(body)))
            continue
        key = (kind, response)
        if key not in middlewares:  # one per configuration and response, as a server has one
            status = responses[response]["status"]
            raw = [(k.encode("latin-1"), v.encode("latin-1")) for k, v in responses[response]["headers"]]
            body = (path / f"{response}.body").read_bytes()

            async def inner(
                scope: Any, receive: Any, send: Any, status: int = status, raw: Any = raw, body: bytes = body
            ) -> None:  # new messages each time, as an app's are (GZipMiddleware edits them)
                await send({"type": "http.response.start", "status": status, "headers": list(raw)})
                await send({"type": "http.response.body", "body": body})

            middleware: Any = inner
            if kind == "gzip":
                middleware = GZipMiddleware(inner, minimum_size=256)
            elif kind == "zeroc":  # as demo.create_app() adds it
                metrics = Metrics(CollectorRegistry())
                middleware = ZerocMiddleware(
                    inner, routes=demo.routes(orders, listing), metrics=metrics, minimum_size=256
                )
            middlewares[key] = middleware
        scope = _scope(PATHS[response], ACCEPTS[accept])
        loop.run_until_complete(_calls(middlewares[key], scope, warmup))
        os.getppid()  # callgrind: the counts so far are dumped (and dropped)
        sent = loop.run_until_complete(_calls(middlewares[key], scope, requests))
        os.getppid()  # callgrind: these requests' counts are dumped
        headers = {k.lower(): v for k, v in sent[0]["headers"]}
        coding = headers.get(b"content-encoding", b"identity").decode()
        found.append((coding, sum(len(m.get("body", b"")) for m in sent[1:])))
    loop.close()
    gc.enable()
    print(json.dumps(found))


async def _calls(asgi: Any, scope: dict[str, Any], count: int) -> list[Any]:
    """``count`` requests; the last one's messages."""

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b"", "more_body": False}

    sent = _Sent()
    for _ in range(count):
        sent = _Sent()
        await asgi(dict(scope), receive, sent.append_async)
    return sent


def instructions(
    quick: bool = True,
    progress: Callable[[str], None] | None = None,
    requests: int | None = None,
    warmup: int = WARMUP,
) -> dict[str, Any] | None:
    """Instructions per request of each configuration (an ASGI middleware alone, a WSGI one
    with its Flask app), counted by callgrind in one process (count()); None where valgrind is
    not installed. Exact where CPU time moves from run to run, but blind to what an instruction
    waits for (a cache miss, a stall), which the servers' CPU time includes."""
    valgrind = shutil.which("valgrind")
    if valgrind is None:
        return None
    say = progress or (lambda msg: None)
    n = requests or COUNTED[quick]
    with tempfile.TemporaryDirectory() as tmp:
        say("http instructions: the demo's dictionaries and responses")
        prepare(tmp)
        out = Path(tmp) / "callgrind.out"
        code = f"from zeroc.bench._http import count; count({tmp!r}, {n}, {warmup})"
        say(f"http instructions: {n:,} requests per case under callgrind")
        proc = subprocess.run(  # noqa: S603 - valgrind running this interpreter on this module
            [
                valgrind,
                "--tool=callgrind",
                "--dump-before=getppid",
                f"--callgrind-out-file={out}",
                sys.executable,
                "-c",
                code,
            ],
            capture_output=True,
            timeout=3600,
            check=False,
        )
        if proc.returncode != 0:
            raise RuntimeError(f"callgrind failed: {proc.stderr.decode(errors='replace')[-2000:]}")
        parts: dict[int, int] = {}
        for f in Path(tmp).glob("callgrind.out*"):
            text = f.read_text(errors="replace")
            part, total = re.search(r"^part: (\d+)", text, re.M), re.search(r"^totals: (\d+)", text, re.M)
            if part is None or total is None:
                raise RuntimeError(f"{f.name} is not a callgrind profile")
            parts[int(part.group(1))] = int(total.group(1))
    cases = _cases()
    if sorted(parts) != list(range(1, 2 * len(cases) + 2)):
        raise RuntimeError(f"callgrind wrote parts {sorted(parts)}, not 1-{2 * len(cases) + 1}")
    found = json.loads(proc.stdout.decode().strip().splitlines()[-1])
    rows = [
        {
            "server": kind,
            "response": response,
            "accept_encoding": accept,
            "coding": coding,
            "bytes": size,
            "instructions_per_request": parts[2 * i + 2] / n,
        }
        for i, ((kind, response, accept), (coding, size)) in enumerate(zip(cases, found, strict=True))
    ]
    return {"requests": n, "warmup": warmup, "rows": rows}


def ratios(result: dict[str, Any]) -> list[dict[str, Any]]:
    """Zeroc's CPU per request over the bare app's and over its peer's (GZipMiddleware, and
    Flask-Compress for WSGI), per case."""
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
            zw = cpu.get(("wsgi-zeroc", response, accept))
            for peer in ("bare", "compress"):
                p = cpu.get((f"wsgi-{peer}", response, accept))
                row[f"wsgi_zeroc_over_{peer}"] = zw / p if zw and p else None
            out.append(row)
    return out


_RATIOS = ("zeroc_over_bare", "zeroc_over_gzip", "wsgi_zeroc_over_bare", "wsgi_zeroc_over_compress")


def instruction_ratios(counted: dict[str, Any]) -> list[dict[str, Any]]:
    """Per case, Zeroc's instructions per request over GZipMiddleware's (each around the
    replaying app), and each middleware's own (less the bare app's); for WSGI, where the Flask
    app runs whole, Zeroc's own over Flask-Compress's own."""
    n = {
        (r["server"], r["response"], r["accept_encoding"]): r["instructions_per_request"]
        for r in counted["rows"]
    }
    out = []
    for response in PATHS:
        for accept in ACCEPTS:
            bare = n["wsgi-bare", response, accept]
            zeroc, compress = (
                n["wsgi-zeroc", response, accept] - bare,
                n["wsgi-compress", response, accept] - bare,
            )
            out.append(
                {
                    "response": response,
                    "accept_encoding": accept,
                    "zeroc_over_gzip": n["zeroc", response, accept] / n["gzip", response, accept],
                    "zeroc_less_bare": n["zeroc", response, accept] - n["bare", response, accept],
                    "gzip_less_bare": n["gzip", response, accept] - n["bare", response, accept],
                    "wsgi_zeroc_over_compress": zeroc / compress,
                    "wsgi_zeroc_less_bare": zeroc,
                    "wsgi_compress_less_bare": compress,
                }
            )
    return out


def table(result: dict[str, Any]) -> str:
    lines = [f"{'server':<13} {'response':<6} {'accepts':<8} {'coding':<8} {'bytes':>7} {'CPU us/req':>11}"]
    for r in result["rows"]:
        lines.append(
            f"{r['server']:<13} {r['response']:<6} {r['accept_encoding']:<8} {r['coding']:<8} "
            f"{r['bytes']:>7} {r['cpu_us_per_request']:>11.0f}"
        )
    lines.append("")
    lines.append(
        f"{'response':<6} {'accepts':<8} {'zeroc/bare':>10} {'zeroc/gzip':>10} {'wsgi z/bare':>11} "
        f"{'wsgi z/compress':>15}"
    )
    for r in result["ratios"]:
        cells = (f"{r[key]:.2f}" if r[key] else "-" for key in _RATIOS)
        ratios = " ".join(map(str.rjust, cells, (10, 10, 11, 15)))
        lines.append(f"{r['response']:<6} {r['accept_encoding']:<8} {ratios}")
    counted = result.get("instructions")
    if counted:
        lines.append("")
        lines.append(f"{'server':<13} {'response':<6} {'accepts':<8} {'coding':<8} {'instructions/req':>17}")
        for r in counted["rows"]:
            lines.append(
                f"{r['server']:<13} {r['response']:<6} {r['accept_encoding']:<8} {r['coding']:<8} "
                f"{r['instructions_per_request']:>17,.0f}"
            )
        for r in instruction_ratios(counted):
            z_gzip, w_compress = r["zeroc_over_gzip"], r["wsgi_zeroc_over_compress"]
            lines.append(
                f"{r['response']:<6} {r['accept_encoding']:<8} zeroc/gzip instructions {z_gzip:.2f}, "
                f"wsgi zeroc/compress (own) {w_compress:.2f}"
            )
    return "\n".join(lines)


def markdown(result: dict[str, Any], command: str) -> str:
    out = [
        "# HTTP middleware overhead",
        "",
        f"Measured with `{command}` ({result['requests']:,} keep-alive requests per case, shared "
        f"by {result.get('replicas', 1)} server processes of each configuration, each process warmed "
        f"up with {WARMUP}, in {result['rounds']} short rounds, each taking the servers, which all "
        "run at once, in a new order; each figure is the processes' CPU over all rounds: a "
        "process's own luck, where its memory lies, moves its figure by several per cent). Server "
        "CPU per request (the server's threads' time on a CPU, in ns, from "
        "/proc/<pid>/task/*/schedstat), so the client does not count. FastAPI on uvicorn "
        "(bare, Starlette's GZipMiddleware at its default level 9, ZerocMiddleware) and Flask on "
        "waitress (bare, Flask-Compress at its defaults — zstd first, then br at quality 4, gzip "
        "at 6 — and ZerocWSGIMiddleware), each serving the demo's app, the peers from the demo's "
        "minimum size of 256 B; `Accept: application/json`, so the bound routes answer JSON in a "
        "content coding.",
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
        "| response | Accept-Encoding | Zeroc / bare | Zeroc / GZipMiddleware | WSGI Zeroc / bare "
        "| WSGI Zeroc / Flask-Compress |",
        "|---|---|---:|---:|---:|---:|",
    ]
    for r in result["ratios"]:
        cells = " | ".join(f"{r[key]:.2f}" if r[key] else "–" for key in _RATIOS)
        out.append(f"| {r['response']} | {ACCEPTS[r['accept_encoding']]} | {cells} |")
    if "instructions" not in result:  # run() alone
        return "\n".join(out) + "\n"
    counted = result["instructions"]
    out += ["", "## Instructions per request, the middleware alone", ""]
    if counted is None:
        out.append("Not counted: valgrind is not installed.")
        return "\n".join(out) + "\n"
    out += [
        f"Counted by callgrind (valgrind) in one process: each ASGI configuration wraps an app "
        f"that replays the bare demo app's response (status, headers and body, taken from it); "
        f"each WSGI one is the Flask demo app whole (Flask-Compress works inside Flask), so its "
        f"figures hold Flask's own work, the bare row's, which the last table takes off. Each is "
        f"sent {counted['warmup']} requests, then {counted['requests']:,} counted (callgrind dumps "
        "its counts at a marker before and after them; the collector off, as timeit has it), with "
        "the request headers of the load above. Instructions are the same from run to run, where "
        "CPU time moves by several per cent; but they are blind to what an instruction waits for "
        "(a cache miss, a stall), which the servers' CPU time above includes.",
        "",
        "| server | response | Accept-Encoding | coding sent | bytes | instructions / request |",
        "|---|---|---|---|---:|---:|",
    ]
    for r in counted["rows"]:
        out.append(
            f"| {r['server']} | {r['response']} | {ACCEPTS[r['accept_encoding']]} | {r['coding']} | "
            f"{r['bytes']:,} | {r['instructions_per_request']:,.0f} |"
        )
    out += [
        "",
        "| response | Accept-Encoding | Zeroc / GZipMiddleware | Zeroc's own (less the bare app) | "
        "GZipMiddleware's own | WSGI Zeroc's own / Flask-Compress's own | WSGI Zeroc's own | "
        "Flask-Compress's own |",
        "|---|---|---:|---:|---:|---:|---:|---:|",
    ]
    for r in instruction_ratios(counted):
        out.append(
            f"| {r['response']} | {ACCEPTS[r['accept_encoding']]} | {r['zeroc_over_gzip']:.2f} | "
            f"{r['zeroc_less_bare']:,.0f} | {r['gzip_less_bare']:,.0f} | "
            f"{r['wsgi_zeroc_over_compress']:.2f} | {r['wsgi_zeroc_less_bare']:,.0f} | "
            f"{r['wsgi_compress_less_bare']:,.0f} |"
        )
    return "\n".join(out) + "\n"
