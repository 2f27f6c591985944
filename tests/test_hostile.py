"""Every hostile input of tests/data/hostile-inputs.md (found against ``main``, issue 14) ends in
one of Zeroc's errors, in a child process whose peak memory stays under 256 MB: frames with
``Codec().decode``, dictionary files with ``Dictionary.from_bytes`` then ``Codec(d)``, ``.zct``
containers with ``len()``, ``rows(0, 10)``, ``columns()``, ``document()`` and ``to_arrow()``."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

HOSTILE = Path(__file__).parent / "data" / "hostile-inputs.md"
PEAK_KIB = 256 * 1024

# Run in a child so that its peak RSS is its own; prints what each step raised.
CHILD = r"""
import json, sys, tempfile
import zeroc
from zeroc.tabular import open_container

data, kind = bytes.fromhex(sys.argv[1]), sys.argv[2]
raised = []

def attempt(step):
    try:
        step()
        raised.append(None)
    except zeroc.ZerocError as exc:
        raised.append(type(exc).__name__)
    except BaseException as exc:  # what the test is about: anything not Zeroc's
        raised.append("NOT ZEROC: " + type(exc).__name__ + ": " + str(exc)[:200])

if kind == "zct":
    with tempfile.NamedTemporaryFile(suffix=".zct") as f:
        f.write(data)
        f.flush()
        try:
            reader = open_container(f.name)
        except zeroc.ZerocError as exc:
            raised.append(type(exc).__name__)
        else:
            with reader:
                for step in (lambda: len(reader), lambda: reader.rows(0, 10), reader.columns,
                             reader.document, reader.to_arrow):
                    attempt(step)
elif kind == "zcd":
    attempt(lambda: zeroc.Codec(zeroc.Dictionary.from_bytes(data)))
else:
    attempt(lambda: zeroc.Codec().decode(data))
# This process's own peak (VmHWM): ru_maxrss would carry the parent's peak across fork and exec.
status = open("/proc/self/status").read().split("VmHWM:")[1]
print(json.dumps({"raised": raised, "peak_kib": int(status.split()[0])}))
"""


def cases() -> list[tuple[str, str, str]]:
    text = HOSTILE.read_text()
    out = []
    for title, body in re.findall(r"### (.+?)\n(.*?)(?=\n### |\Z)", text, re.S):
        found = re.findall(r"^([0-9a-f]{40,})$", body, re.M)
        if not found or "checksum" in title.lower():  # the checksum bypass: tests/test_codec.py
            continue
        data = found[0]
        kind = "zct" if data.startswith("5a524354") else "zcd" if data.startswith("5a524344") else "frame"
        out.append((title, data, kind))
    return out


def test_the_file_still_holds_the_reproducers() -> None:
    kinds = [kind for _, _, kind in cases()]
    assert len(kinds) >= 10 and {"zct", "zcd", "frame"} <= set(kinds)


@pytest.mark.parametrize(("title", "data", "kind"), cases(), ids=[c[0][:40] for c in cases()])
def test_hostile_input_ends_in_a_zeroc_error_within_256_mb(title: str, data: str, kind: str) -> None:
    done = subprocess.run(
        [sys.executable, "-c", CHILD, data, kind], capture_output=True, text=True, timeout=120, check=True
    )
    result = json.loads(done.stdout)
    assert not any(r and r.startswith("NOT ZEROC") for r in result["raised"]), result["raised"]
    assert any(result["raised"]), f"{title}: nothing was refused"
    assert result["peak_kib"] < PEAK_KIB, f"{title}: peak RSS {result['peak_kib']} KiB"
