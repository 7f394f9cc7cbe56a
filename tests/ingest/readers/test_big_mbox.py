"""A 200 MB mbox is streamed: memory stays bounded by a message, not the archive."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from helpers.ingest_samples import message

MB = 1024 * 1024
MESSAGES = 150

# Runs in a fresh interpreter so its peak memory is the ingest's alone.
_CHILD = """
import json, resource, sys, trove
kb = trove.open(sys.argv[1], embedder=None)
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
report = kb.ingest(sys.argv[2])
after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({"before_kb": before, "after_kb": after, **report.to_dict()}))
"""


def write_big_mbox(path: Path) -> int:
    """~200 MB: messages with a short text body and a 1 MiB attachment each, as real
    archives are mostly attachments. Written as raw mbox bytes (one template message,
    its Message-ID and marker changed), since building 200 MB through ``mailbox``
    would take most of the test's time."""
    attachment = os.urandom(MB)
    template = bytes(
        message(
            "Report NUMBER",
            "Weekly numbers, see attachment. markerNUMBERq\n",
            message_id="<NUMBER@example.com>",
            attachments=[("numbers.bin", attachment)],
        )
    )
    with path.open("wb") as out:
        for i in range(MESSAGES):
            body = template.replace(b"NUMBER", str(i).encode())
            out.write(b"From ana@example.com Tue Nov  3 09:00:00 2026\n" + body + b"\n")
    return path.stat().st_size


@pytest.mark.slow
def test_a_200_mb_mbox_is_streamed_with_bounded_memory(tmp_path: Path) -> None:
    folder = tmp_path / "mail"
    folder.mkdir()
    size = write_big_mbox(folder / "archive.mbox")
    assert size > 200 * MB
    result = subprocess.run(
        [sys.executable, "-c", _CHILD, str(tmp_path / "kb.db"), str(folder)],
        capture_output=True,
        check=True,
        timeout=600,
    )
    data = json.loads(result.stdout)
    assert data["added"] == MESSAGES and not data["failed"] and not data["skipped"]
    grown = (data["after_kb"] - data["before_kb"]) * 1024
    assert grown < 64 * MB, (
        f"peak memory grew by {grown / MB:.0f} MB for a {size / MB:.0f} MB mbox"
    )
