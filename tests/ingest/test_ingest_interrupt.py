"""An ingest killed halfway (kill -9, or Ctrl-C) leaves whole documents only; running it
again finishes the job with no duplicates. Real subprocesses, really killed."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import apsw
import pytest

import trove
from helpers.ingest_samples import message, write_mbox

FILES = 1500
MESSAGES = 300


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("interrupt") / "notes"
    for i in range(FILES):
        folder = root / f"d{i % 20:02d}"
        folder.mkdir(parents=True, exist_ok=True)
        words = " ".join(f"w{(i * 7 + j) % 997}x" for j in range(150))
        (folder / f"n{i}.md").write_text(f"# Note {i}\n\nmarker{i}q {words}\n", encoding="utf-8")
    messages = [
        message(f"Mail {i}", f"mailmarker{i}q body\n", message_id=f"<m{i}@x>")
        for i in range(MESSAGES)
    ]
    write_mbox(root / "archive.mbox", messages)
    return root


def start(db: Path, tree: Path) -> subprocess.Popen[bytes]:
    # The hash embedder makes every batch embed before it writes, like a real model.
    command = [sys.executable, "-c", "from trove.interfaces.cli import main; main()"]
    command += ["--db", str(db)]
    command += ["--embedder", "hash", "ingest", str(tree), "--json"]
    return subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def wait_for_first_batch(db: Path, process: subprocess.Popen[bytes]) -> int:
    """Documents committed once the first batch is in (the run is then mid-way)."""
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        assert process.poll() is None, "the run ended before it could be interrupted"
        if db.exists():
            try:
                conn = apsw.Connection(str(db), flags=apsw.SQLITE_OPEN_READONLY)
                conn.set_busy_timeout(1000)
                count = conn.execute("SELECT count(*) FROM document").fetchall()[0][0]
                conn.close()
            except apsw.Error:
                count = 0  # the schema is still being created
            if count:
                return int(count)
        time.sleep(0.02)
    raise AssertionError("no batch was committed within two minutes")


def check_complete(db: Path, tree: Path) -> None:
    conn = apsw.Connection(str(db))
    assert conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
    conn.execute("INSERT INTO chunk_fts (chunk_fts) VALUES ('integrity-check')")
    ids = conn.execute("SELECT count(*), count(DISTINCT source_id) FROM document").fetchall()
    assert ids == [(FILES + MESSAGES, FILES + MESSAGES)]  # every file once: no duplicates
    # Every document has its chunks, every chunk its vector: nothing half-written.
    assert conn.execute(
        "SELECT count(*) FROM document d WHERE NOT EXISTS "
        "(SELECT 1 FROM chunk c WHERE c.doc_id = d.id)"
    ).fetchall() == [(0,)]
    conn.close()
    with trove.open(db, embedder="hash") as kb:
        stats = kb.stats()
        assert stats.vectors == stats.chunks
        for i in (0, FILES // 2, FILES - 1):
            hits = kb.search(f"marker{i}q", mode="keyword")
            assert [h.source_id for h in hits] == [f"d{i % 20:02d}/n{i}.md"]
            doc = kb.get(hits[0].doc_id)
            path = tree / f"d{i % 20:02d}" / f"n{i}.md"
            assert doc is not None and doc.text == path.read_text(encoding="utf-8")
        assert len(kb.search(f"mailmarker{MESSAGES - 1}q", mode="keyword")) == 1


def finish(db: Path, tree: Path) -> dict[str, object]:
    again = start(db, tree)
    out, err = again.communicate(timeout=300)
    assert again.returncode == 0, err.decode()
    return dict(json.loads(out))


@pytest.mark.sqlite_only
def test_kill_9_halfway_then_rerun_finishes_without_duplicates(tmp_path: Path, tree: Path) -> None:
    db = tmp_path / "kb.db"
    process = start(db, tree)
    committed = wait_for_first_batch(db, process)
    process.send_signal(signal.SIGKILL)
    process.wait(timeout=30)
    assert committed < FILES + MESSAGES
    report = finish(db, tree)
    assert report["added"] + report["unchanged"] == FILES + MESSAGES  # type: ignore[operator]
    assert report["added"] > 0 and not report["failed"]
    check_complete(db, tree)


@pytest.mark.sqlite_only
def test_ctrl_c_stops_cleanly_then_rerun_finishes(tmp_path: Path, tree: Path) -> None:
    db = tmp_path / "kb.db"
    process = start(db, tree)
    wait_for_first_batch(db, process)
    process.send_signal(signal.SIGINT)
    _, err = process.communicate(timeout=60)
    assert process.returncode == 130
    assert "interrupted" in err.decode() and "Traceback" not in err.decode()
    finish(db, tree)
    check_complete(db, tree)
