"""Write the golden vectors of stream version 2 (checksummed streams, spec/WIRE_FORMAT.md §3) to
streams-2.json, with the released product_view-4k dictionary. Released vectors are never edited.

python spec/vectors/make_stream_vectors.py        # refuses to overwrite an existing file
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import zeroc
from zeroc._frame import pack_stream
from zeroc.workloads import generate

HERE = Path(__file__).parent


def main() -> None:
    out = HERE / "streams-2.json"
    if out.exists() and "--force" not in sys.argv:
        sys.exit(f"{out} exists: released vectors are never edited")
    d = zeroc.Dictionary.load(HERE / "product_view-4k.zcd")
    values = generate("product_view", 3, seed=44)
    checked = zeroc.Codec(d, checksum=True)
    stream = checked.encode_stream(values)
    assert stream[4] == 2
    # The second frame without its CRC: its tag's checksum bit cleared and the 4 bytes dropped.
    plain = zeroc.Codec(d).encode_many(values)
    lost = pack_stream([*checked.encode_many(values[:1]), plain[1]], d.sha256, checksummed=True)
    doc = {
        "format_version": 2,
        "spec": "spec/WIRE_FORMAT.md section 3 (stream version 2)",
        "generated_by": f"zeroc {zeroc.__version__}",
        "streams": [
            {
                "name": "stream-checksummed",
                "dictionary": "product_view-4k.zcd",
                "inputs": values,
                "stream_hex": stream.hex(),
            }
        ],
        "invalid": [
            {
                "name": "stream-checksummed-frame-without-crc",
                "kind": "stream",
                "dictionary": "product_view-4k.zcd",
                "data_hex": lost.hex(),
                "error": "ChecksumMismatch",
            },
            {
                "name": "stream-version-3",
                "kind": "stream",
                "dictionary": None,
                "data_hex": b"ZRCS\x03\x00\x00".hex(),
                "error": "UnsupportedFrame",
            },
        ],
    }
    out.write_text(json.dumps(doc, indent=1, ensure_ascii=False) + "\n")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
