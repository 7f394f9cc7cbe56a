"""A store at rest is its file: a bulk write (add_many, ingest) and a close fold SQLite's
write-ahead log into the file, so no log of tens of MB is left beside it."""

from __future__ import annotations

from pathlib import Path

import pytest

import trove

pytestmark = pytest.mark.sqlite_only


def _log_bytes(path: Path) -> int:
    wal = Path(f"{path}-wal")
    return wal.stat().st_size if wal.exists() else 0


def _items(n: int) -> list[dict[str, str]]:
    return [
        {"text": f"note {i} about the harbour and its cranes", "source_id": str(i)}
        for i in range(n)
    ]


def test_add_many_leaves_no_log_beside_the_file(tmp_path: Path) -> None:
    path = tmp_path / "kb.db"
    with trove.open(path, embedder="hash:64") as kb:
        kb.add_many(_items(300), batch_size=50)
        # Still open: SQLite's own fold at the last close is not what empties it.
        assert _log_bytes(path) == 0
        assert kb.stats().documents == 300
        kb.add("one more note", source="s", source_id="x")  # a single write may log
        assert _log_bytes(path) > 0
    with trove.open(path, embedder="hash:64") as kb:
        assert kb.stats().documents == 301


def test_close_folds_the_log_while_another_connection_stays_open(tmp_path: Path) -> None:
    path = tmp_path / "kb.db"
    with trove.open(path, embedder=None) as reader:
        writer = trove.open(path, embedder=None)
        writer.add("written before the close", source="s", source_id="1")
        assert _log_bytes(path) > 0
        writer.close()
        assert _log_bytes(path) == 0
        assert [h.source_id for h in reader.search("written")] == ["1"]


def test_ingest_leaves_no_log_beside_the_file(tmp_path: Path) -> None:
    folder = tmp_path / "notes"
    folder.mkdir()
    for i in range(20):
        (folder / f"{i}.md").write_text(f"# Note {i}\n\nThe harbour cranes, day {i}.\n")
    path = tmp_path / "kb.db"
    with trove.open(path, embedder=None) as kb:
        report = kb.ingest(folder)
        assert report.added == 20
        assert _log_bytes(path) == 0


def test_reembed_leaves_no_log_beside_the_file(tmp_path: Path) -> None:
    path = tmp_path / "kb.db"
    with trove.open(path, embedder="hash:64") as kb:
        for i in range(30):  # single writes: the log is left to grow
            kb.add(f"note {i} about the harbour", source="s", source_id=str(i))
    # Another connection open: the fold at the last close is not what empties the log.
    with trove.open(path, embedder="hash:64") as kb, trove.open(path, embedder=None) as other:
        assert kb.reembed("hash:32") == 30
        assert _log_bytes(path) == 0
        assert other.stats().vectors == 30


def test_a_log_emptied_by_a_checkpoint_is_cut_back(tmp_path: Path) -> None:
    # Single writes leave the log to SQLite's own checkpoints, which empty it but would
    # leave the file at its largest size for good.
    path = tmp_path / "kb.db"
    text = " ".join(f"harbour{i} crane{i % 97}" for i in range(4000))
    with trove.open(path, embedder=None) as kb:
        for i in range(40):
            kb.add(f"{text} {i}", source="s", source_id=str(i))
        grown = _log_bytes(path)
        assert grown > 6 * 2**20
        # As SQLite's automatic checkpoint, but waiting until every frame is in the file.
        [(busy, _, _)] = kb.backend.conn.execute("PRAGMA wal_checkpoint(RESTART)")
        assert busy == 0
        assert _log_bytes(path) == grown
        kb.add("one more", source="s", source_id="x")  # writing starts over at the head
        assert _log_bytes(path) <= 4 * 2**20
