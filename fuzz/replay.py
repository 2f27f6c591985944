"""Replay a fuzz corpus, then mutate its inputs at random, without coverage feedback.

    python fuzz/replay.py TARGET CORPUS_DIR [MUTATIONS] [SEED]

For the C extensions built with AddressSanitizer and UndefinedBehaviorSanitizer (docs/FUZZING.md):
gcc's sanitizer runtimes, preloaded, take over the coverage hooks atheris's libFuzzer needs, so
the corpus a coverage-guided run of fuzz_zeroc.py grew is replayed here instead, and each
mutation (bit flips, bytes set, inserted, deleted or swapped, cuts, splices with another input)
goes to the same target. An input that raises anything but Zeroc's errors is saved beside the
corpus as ``finding-SEED-N.bin``; a sanitizer's report stops the process.
"""

from __future__ import annotations

import random
import sys
import time
import traceback
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import fuzz_zeroc  # the targets, from beside this file


def mutate(rng: random.Random, data: bytes, corpus: list[bytes]) -> bytes:
    b = bytearray(data)
    for _ in range(rng.randint(1, 4)):
        r = rng.random()
        if r < 0.35 and b:
            b[rng.randrange(len(b))] ^= 1 << rng.randrange(8)
        elif r < 0.5 and b:
            b[rng.randrange(len(b))] = rng.choice([0, 1, 0x7F, 0x80, 0xFF, rng.randrange(256)])
        elif r < 0.6:
            i = rng.randrange(len(b) + 1)
            b[i:i] = rng.randbytes(rng.randint(1, 8))
        elif r < 0.7 and b:
            i = rng.randrange(len(b))
            del b[i : i + rng.randint(1, 8)]
        elif r < 0.8:
            other = rng.choice(corpus)
            i, j = rng.randrange(len(b) + 1), rng.randrange(len(other) + 1)
            b = b[:i] + other[j : j + rng.randint(1, 64)]
        elif r < 0.9 and len(b) > 1:
            i, j = rng.randrange(len(b)), rng.randrange(len(b))
            b[i], b[j] = b[j], b[i]
        else:
            b = b[: rng.randrange(len(b) + 1)]
    return bytes(b)


def main() -> None:
    if len(sys.argv) < 3 or sys.argv[1] not in fuzz_zeroc.TARGETS:
        sys.exit(f"usage: replay.py {{{','.join(fuzz_zeroc.TARGETS)}}} CORPUS_DIR [MUTATIONS] [SEED]")
    target, folder = sys.argv[1], Path(sys.argv[2])
    mutations = int(sys.argv[3]) if len(sys.argv) > 3 else 100_000
    seed = int(sys.argv[4]) if len(sys.argv) > 4 else 1
    run = fuzz_zeroc.TARGETS[target]()
    corpus = [p.read_bytes() for p in sorted(folder.iterdir()) if p.is_file()]
    if not corpus:
        sys.exit(f"{folder} holds no inputs")
    rng = random.Random(seed)
    started, findings = time.time(), 0
    for n in range(len(corpus) + mutations):
        data = corpus[n] if n < len(corpus) else mutate(rng, rng.choice(corpus), corpus)
        try:
            run(data)
        except Exception:
            findings += 1
            (folder.parent / f"finding-{seed}-{n}.bin").write_bytes(data)
            traceback.print_exc()
    print(
        f"{target}: {len(corpus)} corpus inputs and {mutations} mutations in "
        f"{time.time() - started:.0f} s, {findings} findings"
    )
    sys.exit(1 if findings else 0)


if __name__ == "__main__":
    main()
