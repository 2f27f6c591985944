"""Write golden vectors of the .zct container (spec/TABULAR_FORMAT.md §2): the same document as
version 1 and as version 2 (checksummed), and a version-2 file with one flipped bit. Released
vectors are never edited.

python spec/vectors/make_container_vectors.py        # refuses to overwrite existing files
"""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path

from zeroc.tabular import pack

HERE = Path(__file__).parent
DOCUMENT = {
    "source": "golden vector",
    "rows": [
        {"id": i, "name": f"item{i}", "price": round(i * 1.25, 2), "tags": ["a"] * (i % 3)} for i in range(30)
    ],
}


def main() -> None:
    out = HERE / "containers.json"
    if out.exists() and "--force" not in sys.argv:
        sys.exit(f"{out} exists: released vectors are never edited")
    files = {}
    for version, checksum in ((1, False), (2, True)):
        buf = io.BytesIO()
        pack(DOCUMENT, buf, chunk_rows=8, checksum=checksum)
        name = f"container-{version}.zct"
        (HERE / name).write_bytes(buf.getvalue())
        files[version] = name
    flipped = bytearray((HERE / files[2]).read_bytes())
    flipped[20] ^= 0x10  # inside the first chunk
    (HERE / "container-2-flipped.zct").write_bytes(bytes(flipped))
    doc = {
        "spec": "spec/TABULAR_FORMAT.md section 2",
        "document": DOCUMENT,
        "valid": [
            {"file": files[1], "version": 1, "chunk_rows": 8},
            {"file": files[2], "version": 2, "chunk_rows": 8},
        ],
        "invalid": [{"file": "container-2-flipped.zct", "error": "ChecksumMismatch"}],
    }
    out.write_text(json.dumps(doc, indent=1) + "\n")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
