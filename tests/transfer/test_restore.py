"""`trove import` and `trove migrate` restore through one path (transfer/restore.py): a
process killed midway leaves whole batches and its fresh vector table under one pending
key, and the same command run again resumes into that table."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import trove
from trove.tools.copy import migrate
from trove.transfer.jsonl import export_jsonl, import_jsonl
from trove.transfer.restore import PENDING

DOCS = 450  # three batches of 200


def _fill(path: Path) -> None:
    with trove.open(path, embedder="hash:64") as kb:
        kb.add_many({"text": f"note {i} about gardens and rivers"} for i in range(DOCS))


def _dump(path: Path) -> str:
    out = io.StringIO()
    with trove.open(path, embedder=None) as kb:
        export_jsonl(kb, out, vectors=True)
    return out.getvalue()


def _killed_after_one_batch(body: str) -> None:
    """Run ``body`` in a child process whose ``progress`` kills it (SIGKILL) at once."""
    script = "import os, signal\n"
    script += "def progress(n):\n    os.kill(os.getpid(), signal.SIGKILL)\n"
    script += textwrap.dedent(body)
    src = str(Path(trove.__file__).resolve().parents[1])
    env = {**os.environ, "PYTHONPATH": src}
    done = subprocess.run([sys.executable, "-c", script], env=env, timeout=120)
    assert done.returncode == -9


def _pending(path: Path) -> str:
    with trove.open(path, embedder=None) as kb:
        assert kb.backend.vector_lock() is None
        assert kb.stats().documents == 200  # the first batch, whole
        pending = kb.backend.get_meta(PENDING)
        assert pending is not None
        return str(json.loads(pending)["table"])


def test_an_import_killed_midway_resumes_and_exports_the_same(tmp_path: Path) -> None:
    _fill(tmp_path / "a.db")
    text = _dump(tmp_path / "a.db")
    (tmp_path / "a.jsonl").write_text(text, encoding="utf-8")
    _killed_after_one_batch(f"""
        import trove
        from trove.transfer.jsonl import import_jsonl
        kb = trove.open({str(tmp_path / "b.db")!r}, embedder="hash:64")
        with open({str(tmp_path / "a.jsonl")!r}, encoding="utf-8") as lines:
            import_jsonl(kb, lines, progress=progress)
        """)
    table = _pending(tmp_path / "b.db")
    with trove.open(tmp_path / "b.db", embedder="hash:64") as kb:
        report = import_jsonl(kb, io.StringIO(text))
        assert (report.unchanged, report.added, report.embedded) == (200, DOCS - 200, 0)
        lock = kb.backend.vector_lock()
        assert lock is not None and lock.table == table
        assert kb.backend.get_meta(PENDING) is None
    assert _dump(tmp_path / "b.db") == text


def test_a_migrate_killed_midway_resumes_into_the_same_table(tmp_path: Path) -> None:
    _fill(tmp_path / "a.db")
    _killed_after_one_batch(f"""
        from trove.tools.copy import migrate
        migrate({str(tmp_path / "a.db")!r}, {str(tmp_path / "b.db")!r}, progress=progress)
        """)
    table = _pending(tmp_path / "b.db")
    report = migrate(tmp_path / "a.db", tmp_path / "b.db")
    assert (report.unchanged, report.copied, report.vectors) == (200, DOCS - 200, DOCS - 200)
    with trove.open(tmp_path / "b.db", embedder=None) as kb:
        lock = kb.backend.vector_lock()
        assert lock is not None and lock.table == table
        assert kb.backend.get_meta(PENDING) is None
    assert _dump(tmp_path / "b.db") == _dump(tmp_path / "a.db")


def test_an_import_keeps_a_loaded_vector_index_in_step(tmp_path: Path) -> None:
    """Restored vectors and those embedded after (``reembed(missing=True)``) reach the
    index as their transactions commit: it is neither reloaded nor left behind."""
    _fill(tmp_path / "a.db")
    for vectors in (True, False):
        out = io.StringIO()
        with trove.open(tmp_path / "a.db", embedder=None) as kb:
            export_jsonl(kb, out, vectors=vectors)
        target = tmp_path / f"b{vectors}.db"
        with trove.open(target, embedder="hash:64") as kb:
            kb.add("a note that was here first")
            kb.warm()
            searcher = kb.backend._searcher  # type: ignore[attr-defined]
            index = searcher._index
            report = import_jsonl(kb, io.StringIO(out.getvalue()))
            assert report.added == DOCS and (report.embedded == 0) == vectors
            assert kb.backend._searcher is searcher and searcher._index is index  # type: ignore[attr-defined]
            held = {int(i) for i in index.ids()}
            assert held == {int(i) for i in kb.backend.live_chunk_ids()}  # type: ignore[attr-defined]
