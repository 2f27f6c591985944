"""``zeroc bench relay``: a relay's stream of messages through one connection, coded in order.

A chat/event relay (WeeChat's, Discord's gateway, Bluesky's Jetstream) sends many small JSON
messages — lines, typing and presence events, nick-list changes — and now and then a buffer
dump: the history of a channel, ~53 KB or ~2.3 MB, the two messages WeeChat's relay measured
zstd on (2,964 B against zlib's 3,752 B; 133,280 B in 2.97 ms against 345,255 B in 12.72 ms).
The stream is generated (seeded, text from faker); the first part trains the route's dictionary.

Every approach codes the same messages in the same order, each decoded on the other side and
checked: Zeroc's session coding (spec/WIRE_FORMAT.md §4, what a WebSocket carries under
``zeroc.1``), Zeroc's fan-out mode (every record resets: coded once, the same bytes for every
subscriber), Zeroc's independent frames, permessage-deflate (the ``websockets`` package's own
extension) with and without context takeover, zlib per message as WeeChat's relay did, and
zstd per message. Sizes leave out the WebSocket frame header (the same for all). CPU for N
subscribers: approaches with a context per connection code every message N times (their cost is
N times one connection's, measured), the others once.
"""

from __future__ import annotations

import json
import random
import statistics
import time
import zlib
from collections.abc import Callable
from typing import Any

import zstandard as zstd

Coder = tuple[Callable[[bytes], bytes], Callable[[bytes], bytes]]  # (encode, decode), one connection
SUBSCRIBERS = (1, 200)
ROUNDS = 3
DUMPS = {"53 KB dump": 53_000, "2.3 MB dump": 2_300_000}


def _line(fake: Any, rng: random.Random, i: int, buffer: str, nicks: list[str]) -> dict[str, Any]:
    return {
        "id": f"line_{i}",
        "buffer": buffer,
        "date": f"2026-12-01T{(i // 3600) % 24:02d}:{(i // 60) % 60:02d}:{i % 60:02d}Z",
        "prefix": rng.choice(nicks),
        "message": fake.sentence(nb_words=rng.randint(3, 25)),
        "tags": rng.choice(
            [["irc_privmsg", "notify_message"], ["irc_privmsg", "notify_highlight"], ["irc_action"]]
        ),
        "highlight": rng.random() < 0.05,
    }


def _dump(fake: Any, rng: random.Random, buffer: str, nicks: list[str], size: int) -> dict[str, Any]:
    lines: list[dict[str, Any]] = []
    total = 0
    while total < size:
        lines.append(_line(fake, rng, len(lines), buffer, nicks))
        total += len(json.dumps(lines[-1], separators=(",", ":"), ensure_ascii=False).encode()) + 1
    return {"event": "buffer_lines", "buffer": buffer, "lines": lines}


def stream(small: int, seed: int = 17) -> tuple[list[bytes], list[tuple[str, bytes]]]:
    """(training messages, the test stream as (kind, message)): ``small`` small messages, with a
    53 KB dump a third of the way in and a 2.3 MB dump two thirds of the way in."""
    from faker import Faker

    fake = Faker(["en_US", "de_DE", "ja_JP"])
    fake.seed_instance(seed)
    rng = random.Random(seed)
    nicks = [fake.user_name() for _ in range(120)]
    buffers = [f"irc.libera.#{w}" for w in ("python", "rust", "zstd", "weechat", "linux", "offtopic")]

    def message(i: int) -> dict[str, Any]:
        buffer = rng.choice(buffers)
        r = rng.random()
        if r < 0.7:
            return {"event": "line", **_line(fake, rng, i, buffer, nicks)}
        if r < 0.9:
            return {
                "event": "typing",
                "buffer": buffer,
                "nick": rng.choice(nicks),
                "state": rng.choice(["active", "paused", "off"]),
            }
        return {
            "event": "nicklist_diff",
            "buffer": buffer,
            "added": rng.sample(nicks, rng.randint(0, 3)),
            "removed": rng.sample(nicks, rng.randint(0, 2)),
        }

    def encoded(v: Any) -> bytes:
        return json.dumps(v, separators=(",", ":"), ensure_ascii=False).encode()

    train = [encoded(message(i)) for i in range(2000)]
    test: list[tuple[str, bytes]] = [("small", encoded(message(10_000 + i))) for i in range(small)]
    test.insert(small // 3, ("53 KB dump", encoded(_dump(fake, rng, buffers[0], nicks, DUMPS["53 KB dump"]))))
    test.insert(
        2 * small // 3, ("2.3 MB dump", encoded(_dump(fake, rng, buffers[1], nicks, DUMPS["2.3 MB dump"])))
    )
    return train, test


def _pmd(takeover: bool, window_bits: int, settings: dict[str, Any]) -> Callable[[], Coder]:
    from websockets.extensions.permessage_deflate import PerMessageDeflate
    from websockets.frames import Frame, Opcode

    def connection() -> Coder:
        no = not takeover
        out = PerMessageDeflate(no, no, window_bits, window_bits, dict(settings))
        back = PerMessageDeflate(no, no, window_bits, window_bits, dict(settings))

        def encode(m: bytes) -> bytes:
            return bytes(out.encode(Frame(Opcode.TEXT, m)).data)

        def decode(b: bytes) -> bytes:
            return bytes(back.decode(Frame(Opcode.TEXT, b, rsv1=True)).data)

        return encode, decode

    return connection


def approaches(train: list[bytes]) -> dict[str, tuple[Callable[[], Coder], bool]]:
    """name -> (a new connection's coder, whether it keeps a context per connection)."""
    import zeroc

    d = zeroc.train(train, candidates=[("zstd", 3)])  # bytes: the route's dictionary for raw messages
    codec = zeroc.Codec(d)

    def session(reset_each: bool, level: int = 3) -> Callable[[], Coder]:
        def connection() -> Coder:
            enc = zeroc.SessionEncoder(dumps=_raw, lines=False, dictionary=d.content, level=level)
            dec = zeroc.SessionDecoder(loads=_raw, lines=False, dictionary=d.content)

            def encode(m: bytes) -> bytes:
                enc.reset()
                return enc.encode(m)

            return (encode if reset_each else enc.encode), dec.decode

        return connection

    def frames() -> Coder:
        return codec.encode, codec.decode

    def per_message(
        compress: Callable[[bytes], bytes], decompress: Callable[[bytes], bytes]
    ) -> Callable[[], Coder]:
        return lambda: (compress, decompress)

    zc, zd = zstd.ZstdCompressor(level=3), zstd.ZstdDecompressor()
    return {
        "zeroc session": (session(False), True),
        "zeroc session, level 7": (session(False, 7), True),
        "zeroc fan-out": (session(True), False),
        "zeroc frames": (frames, False),
        "pmd context takeover": (_pmd(True, 15, {}), True),
        "pmd takeover, websockets defaults": (_pmd(True, 12, {"memLevel": 5}), True),
        "pmd no context takeover": (_pmd(False, 15, {}), False),
        "zlib per message": (per_message(zlib.compress, zlib.decompress), False),
        "zstd per message": (per_message(zc.compress, zd.decompress), False),
    }


def _raw(data: bytes) -> bytes:
    return data


def run(quick: bool = False, progress: Callable[[str], None] = lambda _: None) -> dict[str, Any]:
    small = 2_000 if quick else 10_000
    progress(f"relay: generating {small} small messages and two buffer dumps")
    train, test = stream(small)
    kinds = sorted({k for k, _ in test}, key=lambda k: len(k))
    raw = {k: sum(len(m) for kk, m in test if kk == k) for k in kinds}
    count = {k: sum(1 for kk, _ in test if kk == k) for k in kinds}
    coders = approaches(train)
    sizes: dict[str, dict[str, int]] = {}
    best: dict[str, dict[str, list[float]]] = {}  # name -> kind -> [encode ms, p50, decode ms, p50]
    # Rounds interleave the approaches (a burst of load on this shared machine slows them all
    # alike); in each round a new connection codes the whole stream, and each approach keeps,
    # per kind of message, its best round and that round's median message.
    for r in range(ROUNDS):
        for name, (connection, _) in coders.items():
            progress(f"relay: round {r + 1}/{ROUNDS}: {name}")
            encode, decode = connection()
            got = dict.fromkeys(kinds, 0)
            enc_ns: dict[str, list[int]] = {k: [] for k in kinds}
            dec_ns: dict[str, list[int]] = {k: [] for k in kinds}
            for kind, m in test:
                t0 = time.perf_counter_ns()
                b = encode(m)
                t1 = time.perf_counter_ns()
                back = decode(b)
                t2 = time.perf_counter_ns()
                if back != m:
                    raise AssertionError(f"{name} did not give a {kind} message back exactly")
                got[kind] += len(b)
                enc_ns[kind].append(t1 - t0)
                dec_ns[kind].append(t2 - t1)
            sizes[name] = got  # the same every round: coding is deterministic
            mine = best.setdefault(name, {k: [float("inf")] * 4 for k in kinds})
            for k in kinds:
                e, d = sum(enc_ns[k]) / 1e6, sum(dec_ns[k]) / 1e6
                if e < mine[k][0]:
                    mine[k][:2] = [e, statistics.median(enc_ns[k]) / 1e3]
                if d < mine[k][2]:
                    mine[k][2:] = [d, statistics.median(dec_ns[k]) / 1e3]
    results = []
    for name, (_, per_connection) in coders.items():
        mine = best[name]
        encode_s = sum(mine[k][0] for k in kinds) / 1e3
        results.append(
            {
                "approach": name,
                "per_connection": per_connection,
                "bytes": sizes[name],
                "total_bytes": sum(sizes[name].values()),
                "encode_us_p50": {k: mine[k][1] for k in kinds},
                "decode_us_p50": {k: mine[k][3] for k in kinds},
                "encode_ms": {k: mine[k][0] for k in kinds},
                "decode_ms": {k: mine[k][2] for k in kinds},
                "cpu_s": {str(n): encode_s * (n if per_connection else 1) for n in SUBSCRIBERS},
            }
        )
    return {"kinds": kinds, "messages": count, "raw_bytes": raw, "results": results}


def verdict(result: dict[str, Any]) -> list[str]:
    """Issue 17's asks, as measured."""
    by = {r["approach"]: r for r in result["results"]}
    s, pmd, zl = by["zeroc session"], by["pmd context takeover"], by["zlib per message"]
    speed = sum(zl["encode_ms"].values()) / sum(s["encode_ms"].values())
    size, vs_pmd, vs_zlib = (
        s["total_bytes"],
        s["total_bytes"] / pmd["total_bytes"],
        s["total_bytes"] / zl["total_bytes"],
    )
    lines = [
        f"zeroc session: {size:,} B = {vs_pmd:.2f}x permessage-deflate with context takeover "
        f"({pmd['total_bytes']:,} B) and {vs_zlib:.2f}x zlib per message ({zl['total_bytes']:,} B); "
        f"it compresses {speed:.1f}x as fast as zlib per message",
    ]
    for kind in DUMPS:
        lines.append(
            f"{kind} ({result['raw_bytes'][kind]:,} B): zeroc session {s['bytes'][kind]:,} B in "
            f"{s['encode_ms'][kind]:.2f} ms, zlib {zl['bytes'][kind]:,} B in {zl['encode_ms'][kind]:.2f} ms "
            "(WeeChat's relay: zstd 2,964 and 133,280 B, zlib 3,752 and 345,255 B)"
        )
    return lines


def _rows(result: dict[str, Any]) -> list[list[str]]:
    """Header and rows: bytes by kind of message, total, encode and decode ms, CPU s by subscribers."""
    kinds = result["kinds"]
    head = ["approach", *(f"{k} B" for k in kinds), "total B", "encode ms", "decode ms"]
    head += [f"CPU s, {n} subscriber{'s' if n > 1 else ''}" for n in SUBSCRIBERS]
    raw = result["raw_bytes"]
    rows = [
        head,
        ["raw", *(f"{raw[k]:,}" for k in kinds), f"{sum(raw.values()):,}", *[""] * (2 + len(SUBSCRIBERS))],
    ]
    for r in result["results"]:
        rows.append(
            [
                r["approach"],
                *(f"{r['bytes'][k]:,}" for k in kinds),
                f"{r['total_bytes']:,}",
                f"{sum(r['encode_ms'].values()):.1f}",
                f"{sum(r['decode_ms'].values()):.1f}",
                *(f"{r['cpu_s'][str(n)]:.3f}" for n in SUBSCRIBERS),
            ]
        )
    return rows


def table(result: dict[str, Any]) -> str:
    rows = _rows(result)
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines = [
        "  ".join(
            c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths, strict=True))
        )
        for r in rows
    ]
    return "\n".join([*lines, "", *verdict(result)])


def markdown(result: dict[str, Any], command: str) -> str:
    rows = _rows(result)
    intro = (__doc__ or "").split("\n\n", 1)[1].replace("\n", " ").strip()
    counts = ", ".join(f"{result['messages'][k]:,} {k}" for k in result["kinds"])
    out = ["# Relay benchmark", "", f"Generated by `{command}`. {intro}", "", f"Messages: {counts}.", ""]
    out.append("| " + " | ".join(rows[0]) + " |")
    out.append("|---|" + "---:|" * (len(rows[0]) - 1))
    out += ["| " + " | ".join(r) + " |" for r in rows[1:]]
    out += ["", *[f"- {line}" for line in verdict(result)], ""]
    return "\n".join(out)


def plot(result: dict[str, Any], path: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = [r["approach"] for r in result["results"]]
    fig, (a, b) = plt.subplots(1, 2, figsize=(13, 5))
    a.barh(names, [r["total_bytes"] / 1e3 for r in result["results"]], color="#4c72b0")
    a.set_xlabel("KB on the wire (whole stream)")
    a.invert_yaxis()
    b.barh(names, [sum(r["encode_ms"].values()) for r in result["results"]], color="#dd8452", label="encode")
    b.barh(
        names,
        [sum(r["decode_ms"].values()) for r in result["results"]],
        left=[sum(r["encode_ms"].values()) for r in result["results"]],
        color="#55a868",
        label="decode",
    )
    b.set_xlabel("ms for the whole stream, one connection")
    b.invert_yaxis()
    b.legend()
    fig.suptitle("zeroc bench relay: one connection's messages, coded in order")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
