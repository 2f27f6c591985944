"""The short run of the coverage-guided fuzz harness (fuzz/fuzz_zeroc.py, atheris): every
decoder entry point, seeded from spec/vectors, a few thousand inputs each, must raise nothing
but Zeroc's errors and stay under the memory bound. The long run is in docs/FUZZING.md;
tests/test_fuzz.py holds the random and mutated inputs that need no coverage feedback."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import atheris  # noqa: F401  # in the dev extra: a missing one fails, never skips
import pytest

HARNESS = Path(__file__).resolve().parents[1] / "fuzz" / "fuzz_zeroc.py"
TARGETS = ["frame", "stream", "learned", "model", "dictionary", "container", "cbor-packed", "http"]
# Inputs a target runs: 2,500, but for the model target, whose every input loads a model (~20 ms).
RUNS = {"model": 400}


@pytest.mark.parametrize("target", TARGETS)
def test_short_fuzz_run_finds_nothing(target: str, tmp_path: Path) -> None:
    corpus = tmp_path / "corpus"
    runs = RUNS.get(target, 2500)
    run = subprocess.run(
        [sys.executable, str(HARNESS), target, f"-runs={runs}", "-seed=1", "-rss_limit_mb=1024", str(corpus)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    assert f"Done {runs} runs" in run.stderr
    assert len(list(corpus.iterdir())) >= 3  # seeded from the vectors, then grown


def test_a_grown_corpus_replays_and_mutates_without_findings(tmp_path: Path) -> None:
    """fuzz/replay.py (the pass under the sanitizers, docs/FUZZING.md) reads the corpus a
    coverage-guided run grew, then mutates it: every input raises only Zeroc's errors."""
    corpus = tmp_path / "corpus"
    grow = [sys.executable, str(HARNESS), "stream", "-runs=500", "-seed=2", str(corpus)]
    assert subprocess.run(grow, capture_output=True, text=True, timeout=600).returncode == 0
    inputs = len(list(corpus.iterdir()))
    replay = [sys.executable, str(HARNESS.parent / "replay.py"), "stream", str(corpus), "3000", "5"]
    run = subprocess.run(replay, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-3000:]
    assert f"stream: {inputs} corpus inputs and 3000 mutations" in run.stdout
    assert run.stdout.rstrip().endswith("0 findings")
