"""Shared fixtures: the real corpora (decompressed from this repository's copies into a
temporary folder, ``DATA / "json"``) and small trained dictionaries."""

from __future__ import annotations

import atexit
import json
import random
import shutil
import tempfile
from pathlib import Path
from typing import Any

import pytest
import zstandard
from hypothesis import HealthCheck, settings

import zeroc
from zeroc._defaults import CANDIDATES
from zeroc.workloads import WORKLOADS, generate

# No test may depend on timing: Hypothesis's deadline and its too-slow health check (which
# times input generation, and fires on a loaded machine or under the sanitizers) are off for all.
settings.register_profile("zeroc", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("zeroc")

ROOT = Path(__file__).resolve().parents[1]
# The benchmark's copies of five simdjson documents (src/zeroc/bench/corpora/README.md): a
# fresh clone tests alone, with nothing beside it.
COPIES = sorted((ROOT / "src" / "zeroc" / "bench" / "corpora").glob("*.json.zst"))
DATA = Path(tempfile.mkdtemp(prefix="zeroc-corpora-"))
atexit.register(shutil.rmtree, DATA, True)
(DATA / "json").mkdir()
for _copy in COPIES:
    (DATA / "json" / _copy.name.removesuffix(".zst")).write_bytes(
        zstandard.ZstdDecompressor().decompress(_copy.read_bytes())
    )


def corpus(name: str) -> Any:
    """Load a real corpus; fail loudly (never skip) when it is missing."""
    path = DATA / "json" / name
    if not path.is_file():
        pytest.fail(f"corpus {path} is missing: see src/zeroc/bench/corpora/README.md")
    return json.loads(path.read_text(encoding="utf-8"))


def damaged(rng: random.Random, data: bytes, *, changes: int = 4, cut: float = 0.3) -> bytes:
    """``data`` with 1 to ``changes`` bytes replaced and, with probability ``cut``, cut short:
    the corruption the decoders' hostile-input tests feed them."""
    b = bytearray(data)
    for _ in range(rng.randint(1, changes)):
        b[rng.randrange(len(b))] = rng.randrange(256)
    if rng.random() < cut:
        del b[rng.randrange(len(b)) :]
    return bytes(b)


def block_head(block: bytes) -> tuple[bytes, bytes]:
    """A column block's JSON head text and text pool (spec/TABULAR_FORMAT.md §1)."""
    from zeroc.tabular import _columns

    text = _columns.unpack_text(block[4 + int.from_bytes(block[:4], "little") :], 1 << 24)
    m = int.from_bytes(text[:4], "little")
    return text[4 : 4 + m], text[4 + m :]


def with_head(block: bytes, head: Any, rest: bytes | None = None) -> bytes:
    """``block`` with its head replaced by ``head`` (any JSON value), payloads kept, and the
    text after the head (pool and value stream) kept or replaced by ``rest``."""
    p = 4 + int.from_bytes(block[:4], "little")
    text = json.dumps(head, separators=(",", ":")).encode()
    after = block_head(block)[1] if rest is None else rest
    return block[:p] + zstandard.ZstdCompressor(level=3).compress(
        len(text).to_bytes(4, "little") + text + after
    )


def mutated_head(rng: random.Random, head: Any) -> Any:
    """A compact block head with one node changed the way a forger would: replaced by another
    JSON value or by another node of the head, a member renamed to another short name or
    dropped, or a column nested past any writer's depth."""
    import copy

    head = copy.deepcopy(head)
    nodes: list[tuple[Any, Any]] = []  # (container, key or index)
    stack = [head]
    while stack:
        n = stack.pop()
        items = n.items() if isinstance(n, dict) else enumerate(n) if isinstance(n, list) else ()
        for k, v in items:
            nodes.append((n, k))
            stack.append(v)
    if not nodes:
        return rng.choice([None, [], 0, "r"])
    parent, key = rng.choice(nodes)
    choice = rng.randrange(5)
    if choice == 0:
        parent[key] = rng.choice(
            [None, True, 0, -1, 1.5, 2**70, "x", "", [], {}, [[]], {"e": "zz"}, {"c": 1, "e": "se"}]
        )
    elif choice == 1:
        other, k2 = rng.choice(nodes)
        parent[key] = copy.deepcopy(other[k2])
    elif choice == 2 and isinstance(parent, dict):
        parent[rng.choice("rtmnbifsoaxehdplyvcwukzqg") + rng.choice(["", "", "x", "v", "s"])] = parent.pop(
            key
        )
    elif choice == 3 and isinstance(parent, dict):
        del parent[key]
    else:
        deep: Any = {"i": [1]}
        for _ in range(rng.choice([10, 70, 400])):
            deep = {"a": {"l": {"c": 1}, "i": deep}}
        parent[key] = deep
    return head


def find_node(doc: Any, kind: str) -> dict[str, Any]:
    """The first node of ``kind`` in a learned model's document (to change it in a test)."""
    stack = [doc]
    while stack:
        n = stack.pop()
        if isinstance(n, dict):
            if n.get("kind") == kind:
                return n
            stack.extend(n.values())
        elif isinstance(n, list):
            stack.extend(n)
    raise AssertionError(f"no {kind} node")


def halves(items: list[Any]) -> tuple[list[Any], list[Any]]:
    return items[0::2], items[1::2]


@pytest.fixture(scope="session")
def workload_dicts() -> dict[str, zeroc.Dictionary]:
    """One 32 KB dictionary per workload, trained once per session (preference: size)."""
    out = {}
    for name, (_make, cls) in WORKLOADS.items():
        out[name] = zeroc.train(generate(name, 5000, seed=7), schema=cls, preference="size")
    return out


# The default candidates but the learned model: tests of dictionary-content codecs must not
# depend on whether train's timing found the learned model fast enough to choose it.
CONTENT_CANDIDATES = [c for c in CANDIDATES if c[0] != "learned"]


@pytest.fixture(scope="session")
def json_dict() -> zeroc.Dictionary:
    """A JSON dictionary with a zstd or DEFLATE codec (its identity is its content's SHA-256)."""
    return zeroc.train(generate("order", 2000, seed=3), size=16 * 1024, candidates=CONTENT_CANDIDATES)
