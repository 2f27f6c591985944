"""Write the golden vectors of sessions (spec/WIRE_FORMAT.md §3.1 and §4): sessions-1.json, with
the released product_view-4k dictionary, and sessions-2.json, learned records (form 3) with the
released profiles-learned model. Released vectors are never edited.

python spec/vectors/make_session_vectors.py        # writes the sets that do not exist yet
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
    for name, make in (("sessions-1.json", version_1), ("sessions-2.json", version_2)):
        out = HERE / name
        if out.exists() and "--force" not in sys.argv:
            print(f"{out} exists: released vectors are never edited")
            continue
        out.write_text(json.dumps(make(), indent=1, ensure_ascii=False) + "\n")
        print(f"wrote {out}")


def version_1() -> dict[str, object]:
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
    return doc


def version_2() -> dict[str, object]:
    """Learned records (form 3): a live session of profiles one or two a record, long enough
    that the encoder's probe sends one record through zstd between learned ones (and so learned
    records with and without an open context); the same checksummed; a file stream; and the
    records a decoder must refuse."""
    name = "profiles-learned.zcd"
    d = zeroc.Dictionary.load(HERE / name)
    profiles = [v["input"] for v in json.loads((HERE / "learned-8.json").read_text())["valid"]]
    values = [profiles[i % len(profiles)] for i in range(40)]
    batches = [values[i : i + 1 + (i % 7 == 3)] for i in range(0, 40)]
    batches = [b for i, b in enumerate(batches) if i % 7 != 4]  # a value once, whether alone or in a pair
    codec, checked = zeroc.Codec(d), zeroc.Codec(d, checksum=True)
    live, with_crc = records(codec, batches), records(checked, batches)
    forms = [r[0] >> 1 & 3 for r in live]
    assert 3 in forms and set(forms) - {3}, forms  # learned records, and zstd's probe among them
    first_zstd = next(i for i, f in enumerate(forms) if f != 3)
    assert live[first_zstd][0] & 1 and not live[first_zstd + 1][0] & 1  # zstd resets; learned then continues
    enc = codec.session_encoder(level=LEVEL, window_log=WINDOW_LOG)
    learned_reset = enc.encode(values[0])
    assert learned_reset[0] == (1 << 3 | 3 << 1 | 1)
    zstd_only = codec.session_encoder(level=LEVEL, window_log=WINDOW_LOG, learned=False)
    zstd_reset = zstd_only.encode(values[1])
    continued = bytes([zstd_reset[0] & ~1]) + zstd_reset[1 + 2 :]  # as if a context were open (form 1)
    assert zstd_reset[0] >> 1 & 3 == 1
    opened = zstd_only.encode(values[2])  # a context's second record, after zstd_reset
    assert not opened[0] & 1
    # A record of one message is its head and payload; one of three that holds one payload
    # (after its length) ends where the second's length should be.
    three_claimed = bytes([3 << 3 | 3 << 1 | 1, len(learned_reset) - 1]) + learned_reset[1:]
    pair = codec.session_encoder(level=LEVEL, window_log=WINDOW_LOG).encode_many(values[:2])
    assert pair[0] == (2 << 3 | 3 << 1 | 1) and pair[1] < 0x80
    cut = pair[: 2 + pair[1] - 1]  # inside its first payload, whose length says one byte more
    bad_crc = bytearray(with_crc[0])
    bad_crc[1] ^= 0xFF
    inputs = [v for b in batches for v in b]

    def stream(recs: list[bytes], dictionary: zeroc.Dictionary | None = d, checksummed: bool = False) -> str:
        return pack_stream(recs, dictionary.digest if dictionary else None, checksummed, session=True).hex()

    file = codec.encode_stream(inputs, session=True)
    assert codec.decode_stream(file) == inputs and file[5] & 1  # from the dictionary

    def invalid(name: str, recs: list[bytes], error: str, **kw: object) -> dict[str, object]:
        return {
            "name": name,
            "kind": "stream",
            "dictionary": "profiles-learned.zcd",
            "data_hex": stream(recs, **kw),
            "error": error,
        }  # type: ignore[arg-type]

    return {
        "format_version": 1,
        "spec": "spec/WIRE_FORMAT.md section 4 (learned session records, form 3)",
        "generated_by": f"zeroc {zeroc.__version__}",
        "encoder": {"level": LEVEL, "window_log": WINDOW_LOG},
        "sessions": [
            {
                "name": "learned-session-records",
                "dictionary": name,
                "checksum": False,
                "batches": batches,
                "records_hex": [r.hex() for r in live],
            },
            {
                "name": "learned-session-records-checksummed",
                "dictionary": name,
                "checksum": True,
                "batches": batches,
                "records_hex": [r.hex() for r in with_crc],
            },
        ],
        "streams": [
            {
                "name": "learned-session-stream",
                "dictionary": name,
                "inputs": inputs,
                "stream_hex": file.hex(),
            },
        ],
        "invalid": [
            invalid(
                "learned-session-zstd-continues-a-context-a-learned-record-ended",
                [learned_reset, continued],
                "DecodeError",
            ),
            invalid(
                "learned-session-zstd-continues-across-a-learned-record-that-reset",
                [zstd_reset, learned_reset, opened],
                "DecodeError",
            ),
            invalid("learned-session-record-count-above-its-payloads", [three_claimed], "DecodeError"),
            invalid(
                "learned-session-record-bytes-after-its-last-payload",
                [learned_reset + b"\x00"],
                "DecodeError",
            ),
            invalid("learned-session-record-cut-inside-a-payload", [cut], "DecodeError"),
            invalid(
                "learned-session-not-from-the-dictionary", [learned_reset], "DecodeError", dictionary=None
            ),
            invalid(
                "learned-session-record-checksum-mismatch",
                [bytes(bad_crc)],
                "ChecksumMismatch",
                checksummed=True,
            ),
        ],
    }


if __name__ == "__main__":
    main()
