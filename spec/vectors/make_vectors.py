"""Write the version-1 golden vectors. Run once per release; released vectors are never edited.

python spec/vectors/make_vectors.py        # refuses to overwrite existing files
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import zeroc
from zeroc._frame import Method, Ref, pack_stream, tag
from zeroc.workloads import ProductView, generate

HERE = Path(__file__).parent


def _bytes_input(value: Any) -> dict[str, Any]:
    """Serializations written out, except a long repeated pattern, given as pattern x times."""
    if isinstance(value, bytes) and len(value) > 4096:
        unit = value[:256]
        assert unit * (len(value) // 256) == value
        return {"serialization_repeat": {"hex": unit.hex(), "times": len(value) // 256}}
    data = value if isinstance(value, bytes) else None
    return {"serialization_hex": data.hex()} if data is not None else {}


def main() -> None:
    out = HERE / "vectors.json"
    if out.exists() and "--force" not in sys.argv:
        sys.exit(f"{out} exists: released vectors are never edited (add new ones under a new version)")
    pv_dict = zeroc.train(generate("product_view", 2000, seed=42), schema=ProductView, size=4096)
    json_dict = zeroc.train(generate("order", 1000, seed=43), size=4096)
    pv_dict.save(HERE / "product_view-4k.zcd")
    json_dict.save(HERE / "order-json-4k.zcd")
    (HERE / "product_view-4k.dict").write_bytes(pv_dict.content)
    (HERE / "order-json-4k.dict").write_bytes(json_dict.content)
    dicts = {"product_view-4k.zcd": pv_dict, "order-json-4k.zcd": json_dict, None: None}

    valid: list[dict[str, Any]] = []

    def add(name: str, dict_file: str | None, value: Any, **codec: Any) -> bytes:
        d = dicts[dict_file]
        c = zeroc.Codec(d, serialization=codec.pop("serialization", None), **codec)
        frame = c.encode(value)
        valid.append(
            {
                "name": name,
                "dictionary": dict_file,
                "serialization": c.serialization,
                "codec": {"method": c.method, "level": c.level, **codec},
                "input": value if c.serialization != "bytes" else None,
                **(_bytes_input(value) or {"serialization_hex": c._dumps(value).hex()}),
                "frame_hex": frame.hex(),
            }
        )
        return frame

    pv = generate("product_view", 3, seed=7)
    order = generate("order", 2, seed=8)
    add("stored-json-no-dictionary", None, {"a": 1})
    add("zstd-block-json-no-dictionary", None, {"list": list(range(40)), "text": "abc" * 30})
    add("zstd-frame-bytes-over-128k", None, bytes(range(256)) * 600, serialization="bytes")
    add("zstd-block-protobuf-context", "product_view-4k.zcd", pv[0], method="zstd", level=3)
    add(
        "zstd-block-protobuf-short-id",
        "product_view-4k.zcd",
        pv[1],
        method="zstd",
        level=19,
        frame_id="short",
    )
    add(
        "zstd-block-protobuf-sha256-checksum",
        "product_view-4k.zcd",
        pv[2],
        method="zstd",
        level=3,
        frame_id="sha256",
        checksum=True,
    )
    add("deflate-protobuf-context", "product_view-4k.zcd", pv[0], method="deflate", level=9)
    add(
        "protobuf-presence-record",
        "product_view-4k.zcd",
        {"user_id": 7, "product_id": 0, "device_type": "MOBILE"},
        method="zstd",
        level=3,
    )
    add("zstd-block-json-dictionary", "order-json-4k.zcd", order[0], method="zstd", level=3)
    add(
        "deflate-json-dictionary-checksum",
        "order-json-4k.zcd",
        order[1],
        method="deflate",
        level=9,
        checksum=True,
    )
    add("json-exact-mark-big-int", None, {"id": 2**80, "n": -(2**70)})
    add("bytes-stored", None, b"\x00\x01\x02", serialization="bytes")

    stream_codec = zeroc.Codec(pv_dict)
    stream = pack_stream(stream_codec.encode_many(pv), pv_dict.sha256)
    streams = [
        {
            "name": "stream-protobuf-with-dictionary",
            "dictionary": "product_view-4k.zcd",
            "inputs": pv,
            "stream_hex": stream.hex(),
        }
    ]

    good = bytes.fromhex(valid[3]["frame_hex"])  # zstd-block, protobuf, context
    deflate_good = bytes.fromhex(valid[6]["frame_hex"])
    checked = bytes.fromhex(valid[5]["frame_hex"])
    other_short = (pv_dict.short_id ^ 0xFFFF).to_bytes(2, "little")
    big_declared = (
        bytes([tag(Method.ZSTD_FRAME, Ref.NONE, False)])
        + bytes.fromhex("e0")
        + (1 << 40).to_bytes(8, "little")
    )
    invalid = [
        ("empty", None, b"", "TruncatedFrame"),
        ("version-2", None, b"\x40" + good[1:], "UnsupportedFrame"),
        ("reserved-method-4", None, b"\x04abc", "UnsupportedFrame"),
        ("reserved-method-7", None, b"\x0fabc", "UnsupportedFrame"),
        ("sha256-reference-cut", "product_view-4k.zcd", b"\x19" + bytes(10), "TruncatedFrame"),
        ("checksum-cut", None, b"\x20\x01", "TruncatedFrame"),
        ("zstd-block-without-payload", None, b"\x01", "TruncatedFrame"),
        ("checksum-mismatch", "product_view-4k.zcd", checked[:-1] + bytes([checked[-1] ^ 1]), "DecodeError"),
        ("checksum-mismatch-stored", None, b"\x20\x00\x00\x00\x00abc", "ChecksumMismatch"),
        ("corrupt-zstd-block", "product_view-4k.zcd", good[:1] + b"\xff" * (len(good) - 1), "DecodeError"),
        ("context-without-dictionary", None, good, "UnknownDictionary"),
        (
            "short-id-of-another-dictionary",
            "product_view-4k.zcd",
            b"\x11" + other_short + good[1:],
            "DictionaryMismatch",
        ),
        ("deflate-trailing-bytes", "product_view-4k.zcd", deflate_good + b"\x00", "DecodeError"),
        ("deflate-truncated", "product_view-4k.zcd", deflate_good[:-2], "TruncatedFrame"),
        ("zstd-frame-declares-1-TiB", None, big_declared, "LimitExceeded"),
        ("stream-without-end", "product_view-4k.zcd", stream[:-1], "TruncatedFrame"),
        ("stream-trailing-bytes", "product_view-4k.zcd", stream + b"\x00", "DecodeError"),
        ("stream-reserved-flags", None, b"ZRCS\x01\x02\x00", "UnsupportedFrame"),
    ]
    doc = {
        "format_version": 1,
        "spec": "spec/WIRE_FORMAT.md",
        "generated_by": f"zeroc {zeroc.__version__}",
        "notes": "frame_hex is what this encoder wrote (zstandard 0.25 / libzstd 1.5.7); any "
        "conforming decoder must decode it to serialization_hex. Dictionary bytes are in "
        "*.dict (raw zstd dictionaries) and *.zcd (Zeroc dictionary files).",
        "valid": valid,
        "streams": streams,
        "invalid": [
            {
                "name": n,
                "kind": "stream" if b[:4] == b"ZRCS" else "frame",
                "dictionary": d,
                "data_hex": b.hex(),
                "error": e,
            }
            for n, d, b, e in invalid
        ],
    }
    out.write_text(json.dumps(doc, indent=1, ensure_ascii=False) + "\n")
    print(f"wrote {out}: {len(valid)} valid, {len(streams)} streams, {len(invalid)} invalid")


if __name__ == "__main__":
    main()
