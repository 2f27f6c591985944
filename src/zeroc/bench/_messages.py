"""The message benchmark: every approach on the same messages, in one run."""

from __future__ import annotations

import gc
import platform
import time
from collections.abc import Callable
from importlib import metadata
from typing import Any

from zeroc.bench._approaches import Approach, build
from zeroc.learned import _generate
from zeroc.workloads import WORKLOADS, entropy_floor, generate

QUICK = (2_000, 2_000)
FULL = (10_000, 10_000)  # the original benchmark's 10k training / 10k test messages
CHUNK = 250  # approaches are timed in interleaved chunks so load bursts hit them alike
PINNED = ["zeroc", "zstandard", "protobuf", "orjson", "brotli", "msgpack", "cbor2", "botocore", "faker"]

Progress = Callable[[str], None]


def _percentiles(samples_ns: list[int]) -> dict[str, float]:
    s = sorted(samples_ns)

    def pick(q: float) -> float:
        return round(s[min(len(s) - 1, int(q * len(s)))] / 1000, 3)

    return {"p50": pick(0.50), "p95": pick(0.95), "p99": pick(0.99)}


def measure(approaches: list[Approach], test: list[Any]) -> dict[str, dict[str, Any]]:
    """Sizes, round-trip check and per-message latencies of every approach on ``test``."""
    encoded = {}
    for a in approaches:
        frames = [a.encode(m) for m in test]
        for frame, m in zip(frames, test, strict=True):
            if a.decode(frame) != m:
                raise AssertionError(f"{a.name} does not round-trip {m!r}")
        encoded[a.name] = frames
    enc_ns: dict[str, list[int]] = {a.name: [] for a in approaches}
    dec_ns: dict[str, list[int]] = {a.name: [] for a in approaches}
    clock = time.perf_counter_ns
    enabled = gc.isenabled()
    gc.disable()  # as timeit does: collections would land on whichever message triggered them
    try:
        for start in range(0, len(test), CHUNK):
            for a in approaches:
                enc, dec, frames = a.encode, a.decode, encoded[a.name]
                e, d = enc_ns[a.name], dec_ns[a.name]
                for i in range(start, min(start + CHUNK, len(test))):
                    t0 = clock()
                    enc(test[i])
                    t1 = clock()
                    dec(frames[i])
                    t2 = clock()
                    e.append(t1 - t0)
                    d.append(t2 - t1)
    finally:
        if enabled:
            gc.enable()
    out = {}
    for a in approaches:
        out[a.name] = {
            "bytes_per_message": round(sum(map(len, encoded[a.name])) / len(test), 3),
            "encode_us": _percentiles(enc_ns[a.name]),
            "decode_us": _percentiles(dec_ns[a.name]),
            "ops_per_s": {
                "encode": round(1e9 * len(test) / sum(enc_ns[a.name])),
                "decode": round(1e9 * len(test) / sum(dec_ns[a.name])),
            },
        }
    return out


def run(
    quick: bool = True,
    progress: Progress | None = None,
    seed: int = 2026,
    counts: tuple[int, int] | None = None,
    workloads_too: bool = True,
    traffic: bool = True,
) -> dict[str, Any]:
    """Run the benchmark (the generated workloads, then the real-traffic sets); returns the
    document ``--json`` writes."""
    say = progress or (lambda msg: None)
    n_train, n_test = counts or (QUICK if quick else FULL)
    workloads: dict[str, Any] = {}
    for name, (_make, cls) in WORKLOADS.items() if workloads_too else ():
        say(f"{name}: generating {n_train} + {n_test} messages")
        msgs = generate(name, n_train + n_test, seed=seed)
        train, test = msgs[:n_train], msgs[n_train:]
        say(f"{name}: training dictionaries")
        approaches = build(train, cls)
        say(f"{name}: measuring {len(approaches)} approaches")
        results = measure(approaches, test)
        floor = entropy_floor(name)
        json_b = results["json"]["bytes_per_message"]
        gzip_b = results["json+gzip"]["bytes_per_message"]
        for r in results.values():
            b = r["bytes_per_message"]
            r["ratio_vs_json"] = round(b / json_b, 4)
            r["ratio_vs_json_gzip"] = round(b / gzip_b, 4)
            r["times_floor"] = round(b / floor, 3)
        workloads[name] = {"entropy_floor_bytes": round(floor, 3), "approaches": results}
    doc: dict[str, Any] = {"workloads": workloads}
    if traffic:
        from zeroc.bench import _traffic

        doc["traffic"] = _traffic.run(quick=quick, progress=say)
        doc["message_sizes"] = _traffic.sizes(quick=quick, progress=say)
    return {
        **doc,
        "meta": {
            "mode": "custom" if counts else "quick" if quick else "full",
            "train_messages": n_train,
            "test_messages": n_test,
            "seed": seed,
            "python": platform.python_version(),
            "native_coder": _generate.NATIVE,  # the learned codec's coder: C, or Python integers
            "machine": f"{platform.machine()}, {_cpu()}",
            "versions": {p: _version(p) for p in PINNED},
            "descriptions": {a: d for a, d in _descriptions().items()},
        },
    }


def _descriptions() -> dict[str, str]:
    from zeroc.bench._approaches import DESCRIPTIONS

    return DESCRIPTIONS


def _version(package: str) -> str:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return "not installed"


def _cpu() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            names = [line.split(":", 1)[1].strip() for line in f if line.startswith("model name")]
        return f"{len(names)} x {names[0]}" if names else platform.processor()
    except OSError:
        return platform.processor() or "unknown CPU"
