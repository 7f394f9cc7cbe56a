"""`trove export` while another process writes: one snapshot, so the file always imports
and each document comes with its own chunks."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import trove
from trove.transfer.jsonl import export_jsonl, import_jsonl

DOCS = 450  # three export pages
# Rewrites every document again and again, its text long (many chunks) then short (one).
WRITER = """
import sys, trove
def text(i, long):
    return "\\n\\n".join(f"Note {i} paragraph {p} about parks." for p in range(60 if long else 1))
with trove.open(sys.argv[1], embedder="hash:64") as kb:
    long = False
    while True:
        for start in range(0, int(sys.argv[2]), 15):
            kb.write_many([{"text": text(i, long), "source": "s", "source_id": str(i)}
                           for i in range(start, start + 15)])
            print("wrote", flush=True)
        long = not long
"""


def _fill(target: str) -> None:
    with trove.open(target, embedder="hash:64") as kb:
        kb.write_many(
            [
                {"text": f"Note {i} paragraph 0 about parks.", "source": "s", "source_id": str(i)}
                for i in range(DOCS)
            ]
        )


def _exports(target: str, rounds: int) -> list[str]:
    writer = subprocess.Popen(
        [sys.executable, "-c", WRITER, target, str(DOCS)], stdout=subprocess.PIPE
    )
    try:
        assert writer.stdout is not None
        writer.stdout.readline()  # the writer is under way
        found = []
        with trove.open(target, embedder="hash:64") as kb:
            for _ in range(rounds):
                out = io.StringIO()
                export_jsonl(kb, out)
                found.append(out.getvalue())
        return found
    finally:
        writer.kill()
        writer.wait()


def _check(text: str, into: Path) -> None:
    for line in text.splitlines()[1:]:
        record = json.loads(line)
        if record["kind"] == "document":  # the chunks end where this text ends
            ends = [end for _, _, end, _ in record["chunks"]]
            assert max(ends) == len(record["document"]["text"]), record["document"]["id"]
    with trove.open(into, embedder="hash:64") as kb:
        assert import_jsonl(kb, io.StringIO(text)).added == DOCS


def test_export_under_concurrent_writes_imports_cleanly(tmp_path: Path, pg_target: str) -> None:
    for name, target in (("sqlite", str(tmp_path / "kb.db")), ("postgres", pg_target)):
        _fill(target)
        for n, text in enumerate(_exports(target, 10)):
            _check(text, tmp_path / f"copy-{name}-{n}.db")
