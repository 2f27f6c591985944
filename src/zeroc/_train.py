"""Training: a zstd dictionary from samples, and the codec choice measured on a held-back split."""

from __future__ import annotations

import base64
import datetime
import gzip
import json
import random
import time
from collections.abc import Callable, Iterable
from dataclasses import replace
from typing import Any

import zstandard as zstd

from zeroc import _json
from zeroc._codec import Codec
from zeroc._compression import ZstdEngine
from zeroc._defaults import CANDIDATES, PREFERENCES
from zeroc._dictionary import Dictionary
from zeroc._errors import LimitExceeded, TrainingError, UsageError
from zeroc._schema import Schema, resolve
from zeroc.learned import LEARNED_SAMPLES, Model, breakdown

MIN_SAMPLES = 8  # fewer: TrainingError (one or two held-back messages would choose by chance)
# Below either figure zstd's trainer has too little to generalise from (it fails, or its
# dictionary is no better than the samples themselves: 10 tweets, 781.0 vs 780.9 B a tweet at
# level 19), so the dictionary is the samples as raw content, as RFC 9842 uses a past response.
FEW_SAMPLES = 32
MIN_TOTAL_BYTES = 2048
ZDICT_MAGIC = b"\x37\xa4\x30\xec"  # a trained dictionary's first bytes: raw content must not begin so
TIMING_ROUNDS = 5
# Held-back messages measured (sizes) and timed, at most (an even spread of them): 2,000 time a
# codec to within the machine's noise, and timing all 10,000 held back from 50,000 took 28 s.
TIMED_MESSAGES = 2_000
MEASURED_MESSAGES = 5_000
# The model's per-field breakdown (a diagnostic walked in Python, once per level of nesting) is
# taken on an even spread of this many: on 5,000 faker orders it took 8 s, a third of training.
BREAKDOWN_MESSAGES = 1_000
HOLDOUT_EVERY = 5  # every 5th sample is held back: interleaved, so drift cannot bias the choice
SPEED_TIE = 1.15
# balanced: the smallest codec that encodes no slower than json.dumps + gzip-6, what a user has
# today, with 20% to spare: a codec chosen at exactly 3x in training once measured 2.8x in the
# next benchmark run on this noisy machine, so the promise must hold with room when timed again.
# (The bar was 3x: Order's learned model, at 7.2 us against the 7.7 us it had to beat, then
# flipped between 17 and 55 B from run to run.)
NOISE_MARGIN = 1.2

Progress = Callable[[str, int, int], None]


def _version() -> str:
    from zeroc import __version__

    return __version__


def _kind(samples: list[Any], schema: Schema | None) -> tuple[str, Schema | None]:
    first = samples[0]
    if schema is not None:
        return "protobuf", schema
    if hasattr(first, "DESCRIPTOR") and hasattr(first, "SerializeToString"):
        return "protobuf", Schema(type(first))
    if isinstance(first, (bytes, bytearray, memoryview)):
        return "bytes", None
    return "json", None


def _timed(fn: Callable[[Any], Any], items: list[Any], rounds: int = 3) -> float:
    """Mean µs per item, best of ``rounds`` passes after a short warm-up (caches, allocator)."""
    for item in items[:20]:
        fn(item)
    best = float("inf")
    for _ in range(rounds):
        start = time.perf_counter()
        for item in items:
            fn(item)
        best = min(best, time.perf_counter() - start)
    return best / max(len(items), 1) * 1e6


def train(
    samples: Iterable[Any],
    *,
    schema: Any = None,
    size: int = 32 * 1024,
    preference: str = "balanced",
    candidates: Iterable[tuple[str, int]] = CANDIDATES,
    progress: Progress | None = None,
    max_samples: int | None = None,
) -> Dictionary:
    """Train a dictionary on ``samples`` (JSON values, protobuf messages or bytes).

    One sample in five is held back; every candidate codec is measured on it and the choice
    follows ``preference``: ``"size"`` (smallest), ``"speed"`` (fastest encode) or
    ``"balanced"`` (smallest among those encoding no slower than json.dumps + gzip-6, with a
    20% margin for timing noise; the fastest if none is).
    With fewer than 32 samples (or 2 KiB of them) the dictionary is the samples themselves, as
    raw content. Raises :class:`TrainingError` with fewer than 8 samples.
    ``max_samples`` trains on a uniform sample of that many (in their order), read in one pass
    with memory for that many only, for inputs too large to learn from whole.
    """
    if preference not in PREFERENCES:
        raise UsageError(f"preference must be one of {PREFERENCES}, not {preference!r}")
    if not 1024 <= size <= 16 * 1024 * 1024:
        raise UsageError(f"dictionary size {size} is outside 1 KiB..16 MiB")
    if max_samples is not None and max_samples < MIN_SAMPLES:
        raise UsageError(f"max_samples must be at least {MIN_SAMPLES}, not {max_samples}")
    step = progress or (lambda stage, done, total: None)
    values = list(samples) if max_samples is None else _sample(samples, max_samples)
    if len(values) < MIN_SAMPLES:
        raise TrainingError(
            f"{len(values)} samples are too few to train a dictionary (need at least {MIN_SAMPLES}); "
            "collect more traffic, or use Codec() without a dictionary"
        )
    kind, sch = _kind(values, resolve(schema))
    plain = Codec(schema=sch, serialization=kind)
    step("serialize", 0, 1)
    serialized = [_json.owned(plain._dumps(v)) for v in values]
    train_set = [s for i, s in enumerate(serialized) if i % HOLDOUT_EVERY != HOLDOUT_EVERY - 1]
    measured = slice(None, None, -(-len(values) // (HOLDOUT_EVERY * MEASURED_MESSAGES)))
    held = [v for i, v in enumerate(values) if i % HOLDOUT_EVERY == HOLDOUT_EVERY - 1][measured]
    held_bytes = [s for i, s in enumerate(serialized) if i % HOLDOUT_EVERY == HOLDOUT_EVERY - 1][measured]
    raw = len(values) < FEW_SAMPLES or sum(map(len, serialized)) < MIN_TOTAL_BYTES
    step("train dictionary", 0, 1)
    content = _train_zstd(train_set, size, raw)
    schema_meta = None
    if sch is not None:
        fds = sch.descriptor_set()
        schema_meta = {
            "message": sch.full_name,
            "descriptor_set": base64.b64encode(fds).decode(),
            "fingerprint": sch.fingerprint,
        }
    draft = Dictionary(content=content, serialization=kind, schema=schema_meta)

    n = len(held)
    cands = list(candidates)
    learned = [c for c in cands if c[0] == "learned"]
    if kind == "bytes" and learned:
        cands = [c for c in cands if c[0] != "learned"]  # a model needs JSON values
        learned = []
    model_figures: dict[str, Any] = {}
    draft_learned = draft
    train_values: list[Any] = []
    if learned:
        step("learn field model", 0, 1)
        as_json = _jsonable(values, sch)
        train_values = [v for i, v in enumerate(as_json) if i % HOLDOUT_EVERY != HOLDOUT_EVERY - 1]
        side = ZstdEngine(content, learned[0][1], max_window_size=8 << 20)
        try:
            model = Model.learn(
                train_values,
                side=side,
                dictionary_size=size,
                progress=lambda done, fields: step("learn field model", done, fields),
            )
        except TrainingError:  # a model past the format's bounds: the other candidates remain
            cands = [c for c in cands if c[0] != "learned"]
            learned = []
            if not cands:
                raise
    if learned:
        draft_learned = replace(
            draft, model=model.to_bytes(), codec={"method": "learned", "level": learned[0][1]}
        )
        step("measure field model", 0, 1)
        held_json = _jsonable(held, sch)
        sizes = [_model_bytes(model, v) for v in held_json]
        coded = [s for s in sizes if s is not None]  # values past the coder's limit go to zstd
        common = round(1 - model.misses / n, 4)
        few = held_json[:: -(-n // BREAKDOWN_MESSAGES)]
        model_figures = {
            "bits_per_message": round(8 * sum(coded) / max(len(coded), 1), 3),
            "common_path": common,
            "fields": breakdown(model.root, few, len(few)),
        }
    step("measure sizes", 0, 1)
    codecs = [
        Codec(draft_learned if m == "learned" else draft, schema=sch, method=m, level=lv) for m, lv in cands
    ]
    frames = [[c.encode(v) for v in held] for c in codecs]
    reference = _jsonable(held if kind != "bytes" else [s.decode("latin-1") for s in held_bytes], sch)
    # Rounds interleave every candidate and the json.dumps + gzip-6 reference, so a burst of
    # load on this noisy machine slows them all alike; each keeps its best round.
    spread = slice(None, None, -(-n // TIMED_MESSAGES))
    timers: list[tuple[Callable[[Any], Any], list[Any]]] = [(c.encode, held[spread]) for c in codecs]
    timers += [(c.decode, f[spread]) for c, f in zip(codecs, frames, strict=True)]
    timers.append((lambda v: gzip.compress(json.dumps(v).encode(), 6), reference[spread]))
    best = [float("inf")] * len(timers)
    for r in range(TIMING_ROUNDS):
        step("measure codecs", r, TIMING_ROUNDS)
        for i, (fn, items) in enumerate(timers):
            best[i] = min(best[i], _timed(fn, items, rounds=1))
    k = len(codecs)
    results = [
        {
            "method": m,
            "level": lv,
            "bytes_per_message": round(sum(map(len, f)) / n, 3),
            "encode_us": round(best[i], 3),
            "decode_us": round(best[k + i], 3),
        }
        for i, ((m, lv), f) in enumerate(zip(cands, frames, strict=True))
    ]
    json_gzip_us = best[-1]
    validation = {
        "messages": n,
        "serialized_bytes": round(sum(map(len, held_bytes)) / n, 3),
        "zstd_bytes": round(sum(len(plain.encode(v)) for v in held) / n, 3),
        "gzip_bytes": round(sum(len(gzip.compress(s, 6)) for s in held_bytes) / n, 3),
        "json_gzip_encode_us": round(json_gzip_us, 3),
        "candidates": results,
    }
    if model_figures:
        validation["model"] = model_figures
    chosen = choose(results, preference, json_gzip_us)
    # The figures came from a dictionary that never saw the held-back fifth; the one shipped is
    # retrained on every sample (on 100 tweets this is the difference between 723 and ~460 B).
    step("retrain on all samples", 0, 1)
    content = _train_zstd(serialized, size, raw)
    final_model = None
    if chosen["method"] == "learned" and len(train_values) >= LEARNED_SAMPLES:
        final_model = draft_learned.model  # relearning would see as many samples: ship the one measured
    elif chosen["method"] == "learned":
        step("relearn field model on all samples", 0, 1)
        side = ZstdEngine(content, chosen["level"], max_window_size=8 << 20)
        try:
            final_model = Model.learn(
                _jsonable(values, sch),
                side=side,
                dictionary_size=size,
                progress=lambda done, fields: step("relearn field model on all samples", done, fields),
            ).to_bytes()
        except TrainingError:  # past the format's bounds on all samples: ship the one measured
            final_model = draft_learned.model
    step("done", 1, 1)
    return Dictionary(
        model=final_model,
        content=content,
        serialization=kind,
        codec={"method": chosen["method"], "level": chosen["level"]},
        schema=schema_meta,
        preference=preference,
        created=datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        samples=len(serialized),
        validation=validation,
        zeroc_version=_version(),
    )


def _sample(samples: Iterable[Any], k: int) -> list[Any]:
    """A uniform sample of ``k`` items in their original order (reservoir sampling, seeded so
    that the same input trains the same dictionary)."""
    rng = random.Random(0)
    kept: list[tuple[int, Any]] = []
    for i, item in enumerate(samples):
        if i < k:
            kept.append((i, item))
        else:
            j = rng.randrange(i + 1)
            if j < k:
                kept[j] = (i, item)
    return [item for _, item in sorted(kept, key=lambda pair: pair[0])]


def _model_bytes(model: Model, value: Any) -> int | None:
    try:
        return len(model.encode(value))
    except LimitExceeded:
        return None


def _train_zstd(samples: list[bytes], size: int, raw: bool) -> bytes:
    """A trained zstd dictionary or, when ``raw`` (few or small samples) or the trainer fails,
    the samples as raw content (the latest last, where zstd's offsets to them are shortest)."""
    if not raw:
        try:
            total = sum(map(len, samples))
            return bytes(zstd.train_dictionary(min(size, total), list[Any](samples)).as_bytes())
        except zstd.ZstdError:
            pass  # samples too alike or too short for the trainer: raw content serves as well
    content = b"".join(samples)[-size:]
    while content[:4] == ZDICT_MAGIC:
        content = content[1:]
    if not content:
        raise TrainingError("the samples are empty: there is nothing to train a dictionary on")
    return content


def _jsonable(values: list[Any], sch: Schema | None) -> list[Any]:
    """The held-back values as JSON-able objects, for the json.dumps + gzip speed reference."""
    if sch is None:
        return values
    return [sch.loads(sch.dumps(v)) if not isinstance(v, dict) else v for v in values]


def choose(results: list[dict[str, Any]], preference: str, json_gzip_us: float) -> dict[str, Any]:
    """Pick a candidate by preference (see :func:`train`).

    Timings are noisy (±30% here), so "fastest" means the smallest of those within
    ``SPEED_TIE`` of the fastest (two codecs measured 5% apart are equally fast here).
    """
    pool = results
    if preference == "balanced":
        pool = [r for r in results if r["encode_us"] * NOISE_MARGIN <= json_gzip_us]
    if preference == "speed" or not pool:
        fastest = min(r["encode_us"] for r in results)
        pool = [r for r in results if r["encode_us"] <= fastest * SPEED_TIE]
    return min(pool, key=lambda r: (r["bytes_per_message"], r["encode_us"]))
