"""Write the golden vectors of sessions (spec/WIRE_FORMAT.md §3.1 and §4) to sessions-1.json,
with the released product_view-4k dictionary. Released vectors are never edited.

python spec/vectors/make_session_vectors.py        # refuses to overwrite an existing file
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import zstandard as zstd

import zeroc
from zeroc._frame import crc32, pack_stream, varint
from zeroc.workloads import generate

HERE = Path(__file__).parent
LEVEL, WINDOW_LOG = 3, 17


def records(codec: zeroc.Codec, batches: list[list[object]], reset_at: int | None = None) -> list[bytes]:
    """One record per batch, the context reset before batch ``reset_at``."""
    enc = codec.session_encoder(level=LEVEL, window_log=WINDOW_LOG)
    out = []
    for i, batch in enumerate(batches):
        if i == reset_at:
            enc.reset()
        out.append(enc.encode_many(batch))
    return out


def main() -> None:
    out = HERE / "sessions-1.json"
    if out.exists() and "--force" not in sys.argv:
        sys.exit(f"{out} exists: released vectors are never edited")
    d = zeroc.Dictionary.load(HERE / "product_view-4k.zcd")
    values = generate("product_view", 6, seed=45)
    batches = [values[:1], values[1:3], values[3:4], values[4:6]]
    plain, checked, bare = zeroc.Codec(d), zeroc.Codec(d, checksum=True), zeroc.Codec()
    live = records(plain, batches)
    synced = records(plain, batches, reset_at=2)
    with_crc = records(checked, batches)
    no_dict = records(bare, batches)
    orders = generate("order", 3, seed=46)
    json_batches = [orders[:1], orders[1:]]
    json_dict = records(zeroc.Codec(zeroc.Dictionary.load(HERE / "order-json-4k.zcd")), json_batches)
    # A record whose head says 3 messages where its content holds 2.
    enc = plain.session_encoder(level=LEVEL, window_log=WINDOW_LOG)
    content = enc.content(values[0]) + enc.content(values[1])
    whole = enc._cctx.compressobj()
    miscounted = varint(3 << 3 | 1) + whole.compress(content) + whole.flush(zstd.COMPRESSOBJ_FLUSH_BLOCK)
    tail = enc._cctx.compressobj()
    data = tail.compress(enc.content(values[0])) + tail.flush(zstd.COMPRESSOBJ_FLUSH_BLOCK)
    cut = varint(1 << 3 | 1) + data[:-3]  # form 0: the block header says more than follows
    reserved = varint(1 << 3 | 3 << 1 | 1) + data
    bad_crc = bytearray(with_crc[0])
    bad_crc[1] ^= 0xFF
    assert bad_crc[1:5] != crc32(enc.content(values[0])).to_bytes(4, "little")

    def stream(recs: list[bytes], dictionary: zeroc.Dictionary | None = d, checksummed: bool = False) -> str:
        return pack_stream(recs, dictionary.sha256 if dictionary else None, checksummed, session=True).hex()

    inputs = [v for b in batches for v in b]
    doc = {
        "format_version": 1,
        "spec": "spec/WIRE_FORMAT.md sections 3.1 and 4 (sessions)",
        "generated_by": f"zeroc {zeroc.__version__}",
        "encoder": {"level": LEVEL, "window_log": WINDOW_LOG},
        "sessions": [
            {
                "name": "session-records",
                "dictionary": "product_view-4k.zcd",
                "checksum": False,
                "batches": batches,
                "records_hex": [r.hex() for r in live],
            },
            {
                "name": "session-records-reset",
                "dictionary": "product_view-4k.zcd",
                "checksum": False,
                "batches": batches,
                "reset_at": 2,
                "records_hex": [r.hex() for r in synced],
            },
            {
                "name": "session-records-checksummed",
                "dictionary": "product_view-4k.zcd",
                "checksum": True,
                "batches": batches,
                "records_hex": [r.hex() for r in with_crc],
            },
            {
                "name": "session-records-json",
                "dictionary": "order-json-4k.zcd",
                "checksum": False,
                "batches": json_batches,
                "records_hex": [r.hex() for r in json_dict],
            },
            {
                "name": "session-records-no-dictionary",
                "dictionary": None,
                "checksum": False,
                "batches": batches,
                "records_hex": [r.hex() for r in no_dict],
            },
        ],
        "streams": [
            {
                "name": "session-stream",
                "dictionary": "product_view-4k.zcd",
                "inputs": inputs,
                "stream_hex": stream(live),
            },
            {
                "name": "session-stream-checksummed",
                "dictionary": "product_view-4k.zcd",
                "inputs": inputs,
                "stream_hex": stream(with_crc, checksummed=True),
            },
            {
                "name": "session-stream-no-dictionary",
                "dictionary": None,
                "inputs": inputs,
                "stream_hex": stream(no_dict, None),
            },
        ],
        "invalid": [
            {
                "name": "session-first-record-without-reset",
                "kind": "stream",
                "dictionary": "product_view-4k.zcd",
                "data_hex": stream(live[1:]),
                "error": "DecodeError",
            },
            {
                "name": "session-record-count-above-content",
                "kind": "stream",
                "dictionary": "product_view-4k.zcd",
                "data_hex": stream([miscounted]),
                "error": "DecodeError",
            },
            {
                "name": "session-record-cut-inside-a-block",
                "kind": "stream",
                "dictionary": "product_view-4k.zcd",
                "data_hex": stream([cut]),
                "error": "DecodeError",
            },
            {
                "name": "session-record-of-no-message",
                "kind": "stream",
                "dictionary": "product_view-4k.zcd",
                "data_hex": stream([b"\x01" + live[0][1:]]),
                "error": "DecodeError",
            },
            {
                "name": "session-record-reserved-form",
                "kind": "stream",
                "dictionary": "product_view-4k.zcd",
                "data_hex": stream([reserved]),
                "error": "DecodeError",
            },
            {
                "name": "session-record-checksum-mismatch",
                "kind": "stream",
                "dictionary": "product_view-4k.zcd",
                "data_hex": stream([bytes(bad_crc)], checksummed=True),
                "error": "ChecksumMismatch",
            },
            {
                "name": "session-stream-reserved-flag",
                "kind": "stream",
                "dictionary": None,
                "data_hex": b"ZRCS\x01\x08\x00".hex(),
                "error": "UnsupportedFrame",
            },
        ],
    }
    out.write_text(json.dumps(doc, indent=1, ensure_ascii=False) + "\n")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
