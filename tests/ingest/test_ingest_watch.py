"""trove watch: a real watcher on a real folder, changed while it runs."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

import trove
from trove.ingest.report import IngestReport
from trove.ingest.watch import watch


def live(kb: trove.Store) -> dict[str, str]:
    return {sid: d for sid, d, _, deleted in kb.iter_source("default", "vault") if not deleted}


def eventually(check: Callable[[], bool], what: str, timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return
        time.sleep(0.05)
    raise AssertionError(f"not within {timeout} s: {what}")


def test_watch_follows_edits_renames_and_deletions(vault: Path, tmp_path: Path) -> None:
    (vault / "a.md").write_text("# A\n\nalpha words\n", encoding="utf-8")
    stop = threading.Event()
    db = tmp_path / "kb.db"
    trove.open(db, embedder=None).close()  # made first: two connections must not both create it
    reports: list[IngestReport] = []
    thread = threading.Thread(
        target=lambda: _watch(db, vault, stop, reports), daemon=True, name="watcher"
    )
    thread.start()
    try:
        with trove.open(db, embedder=None) as kb:
            eventually(lambda: bool(reports), "the first sync")
            assert reports[0].added == 1 and set(live(kb)) == {"a.md"}

            (vault / "a.md").write_text("# A\n\nalpha edited\n", encoding="utf-8")
            (vault / "sub").mkdir()
            (vault / "sub" / "b.md").write_text("# B\n\nbeta words\n", encoding="utf-8")
            eventually(lambda: "sub/b.md" in live(kb), "a new file in a new folder")
            eventually(lambda: bool(kb.search("edited")), "an edited file")
            b = live(kb)["sub/b.md"]

            os.rename(vault / "sub" / "b.md", vault / "c.md")
            eventually(lambda: "c.md" in live(kb), "a renamed file")
            assert live(kb)["c.md"] == b and "sub/b.md" not in live(kb)

            (vault / "a.md").unlink()
            eventually(lambda: "a.md" not in live(kb), "a deleted file")
            assert kb.search("alpha") == []
            (vault / ".hidden.md").write_text("ignored", encoding="utf-8")
            (vault / "image.png").write_bytes(b"\x89PNG")
            time.sleep(0.5)
            assert set(live(kb)) == {"c.md"}
    finally:
        stop.set()
        thread.join(timeout=10)
    assert not thread.is_alive()


def _watch(db: Path, vault: Path, stop: threading.Event, reports: list[IngestReport]) -> None:
    with trove.open(db, embedder=None) as writer:
        watch(writer, vault, debounce_ms=100, stop=stop, on_report=reports.append)


def test_watch_command_prints_a_report_per_change_and_stops_on_ctrl_c(
    vault: Path, tmp_path: Path
) -> None:
    command = [sys.executable, "-c", "from trove.interfaces.cli import main; main()"]
    command += ["--db", str(tmp_path / "kb.db"), "--embedder", "none"]
    command += ["watch", str(vault), "--debounce", "100", "--json"]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        assert process.stdout is not None
        first = json.loads(process.stdout.readline())
        assert first["added"] == 0 and first["path"] == str(vault)
        (vault / "new.md").write_text("fresh words", encoding="utf-8")
        second = json.loads(process.stdout.readline())
        assert second["added"] == 1
        process.send_signal(signal.SIGINT)
        _, err = process.communicate(timeout=20)
        assert process.returncode == 0 and "stopped" in err.decode()
    finally:
        if process.poll() is None:
            process.kill()
