"""A 200 MB original moves in and out in pieces: memory stays bounded (measured with
tracemalloc in a subprocess, so nothing else in the test run counts)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = r"""
import hashlib, sys, tracemalloc
import trove
from trove import originals

db, path, out = sys.argv[1:4]
with trove.open(db, embedder=None) as kb:
    tracemalloc.start()
    doc_id = kb.add("a large scan", original=path, original_name="scan.bin")
    _, peak_in = tracemalloc.get_traced_memory()
    tracemalloc.reset_peak()
    with open(out, "wb") as sink:
        written = originals.write_to(kb, kb.original_info(doc_id), sink)
    _, peak_out = tracemalloc.get_traced_memory()
    print(written, peak_in, peak_out)
"""
SIZE = 200 * 1024 * 1024


@pytest.mark.slow
def test_a_200_mb_original_is_stored_and_read_in_bounded_memory(tmp_path: Path) -> None:
    source = tmp_path / "scan.bin"
    with source.open("wb") as f:
        block = bytes(range(256)) * 4096  # 1 MiB
        for i in range(SIZE // len(block)):
            f.write(block[i % 256 :] + block[: i % 256])
    out = tmp_path / "back.bin"
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(tmp_path / "kb.db"), str(source), str(out)],
        capture_output=True,
        text=True,
        check=True,
        timeout=600,
    )
    written, peak_in, peak_out = map(int, done.stdout.split())
    assert written == SIZE
    assert peak_in < 16 * 1024 * 1024 and peak_out < 16 * 1024 * 1024, (peak_in, peak_out)
    with source.open("rb") as a, out.open("rb") as b:
        while piece := a.read(1 << 20):
            assert piece == b.read(1 << 20)
