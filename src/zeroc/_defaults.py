"""Defaults and limits that the command line shows in its options before anything heavy is
imported: the decoders' bounds and what ``train()`` chooses among. The modules that apply them
import them from here."""

from __future__ import annotations

# Bytes one decode may produce, by default (Codec(max_decoded_size=...)).
DEFAULT_MAX_DECODED_SIZE = 64 * 1024 * 1024
# Values one decoded text may build, counted as its commas plus its opening brackets (at least
# the values and containers it holds; those inside strings count too). A text of n bytes holds
# fewer than n / 2 + 1, so only texts past twice this are counted. 64 MiB of ``[{},{},...]``
# built 2 GB of objects; at this limit ``[{},...]`` builds ~80 MB.
MAX_VALUES = 1 << 21
# Candidates the trainer measures. zstd 19 and deflate win on size but cost 10-30 µs a message.
# Level 1 is left out: with a dictionary it encodes small messages no faster than level 3.
# "learned" is the learned field model (spec/LEARNED_MODEL.md); its level is the zstd level of
# its side stream (free text the model leaves to zstd and the dictionary).
CANDIDATES: tuple[tuple[str, int], ...] = (
    ("zstd", 3),
    ("zstd", 9),
    ("zstd", 12),
    ("zstd", 19),
    ("deflate", 9),
    ("learned", 19),
)
PREFERENCES = ("size", "speed", "balanced")
