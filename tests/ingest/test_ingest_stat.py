"""The stat shortcut: a stored file whose size, mtime and ctime are those recorded with its
hash is unchanged without being read. The hash stays the identity; a file modified just
before a run ("racy": it could change again within the same clock tick) is read again
next time. Files are aged with os.utime, as files older than a run are; a file written
by the test itself is racy."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import trove
from helpers.ingest_samples import message, write_mbox
from trove.backends.file_state import FileStat
from trove.ingest.report import IngestReport

OLD_NS = time.time_ns() - 3600 * 10**9


def write(path: Path, text: str, *, mtime_ns: int | None = OLD_NS) -> Path:
    """A file as if last modified an hour ago (``mtime_ns=None``: modified just now)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    if mtime_ns is not None:
        os.utime(path, ns=(mtime_ns, mtime_ns))
    return path


def stats(kb: trove.Store, source: str = "vault") -> dict[str, FileStat]:
    """The files whose stat is recorded (a recent file may have only its hash)."""
    states = kb.backend.file_states("default", source)
    return {rel: state.stat for rel, state in states.items() if state.stat is not None}


def counts(report: IngestReport) -> tuple[int, int, int, int]:
    return report.files_read, report.added, report.updated, report.unchanged


def test_an_unchanged_file_is_not_read_again(kb: trove.Store, vault: Path) -> None:
    write(vault / "a.md", "# Alpha\n\nabout kafka\n")
    write(vault / "sub" / "b.txt", "about postgres\n")
    assert counts(kb.ingest(vault)) == (2, 2, 0, 0)
    recorded = stats(kb)
    info = os.stat(vault / "a.md")
    assert recorded["a.md"].size == info.st_size and recorded["a.md"].mtime_ns == OLD_NS
    assert counts(kb.ingest(vault)) == (0, 0, 0, 2)
    assert kb.search("kafka")[0].source_id == "a.md"


def test_a_touched_file_with_the_same_content_is_unchanged_and_its_stat_refreshed(
    kb: trove.Store, vault: Path
) -> None:
    write(vault / "a.md", "alpha words")
    write(vault / "b.md", "beta words")
    kb.ingest(vault)
    before = stats(kb)["a.md"]
    later = OLD_NS + 10**9
    os.utime(vault / "a.md", ns=(later, later))
    assert counts(kb.ingest(vault)) == (1, 0, 0, 2)  # read, same hash: unchanged
    assert stats(kb)["a.md"].mtime_ns == later
    assert stats(kb)["a.md"].content_hash == before.content_hash
    assert counts(kb.ingest(vault)) == (0, 0, 0, 2)


def test_an_edit_whose_size_and_mtime_were_put_back_is_seen(kb: trove.Store, vault: Path) -> None:
    path = write(vault / "a.md", "about kafka")
    kb.ingest(vault)
    write(path, "about pulsa")  # same size; mtime set back to the recorded one
    info = os.stat(path)
    recorded = stats(kb)["a.md"]
    assert (info.st_size, info.st_mtime_ns) == (recorded.size, recorded.mtime_ns)
    # ctime cannot be set back: the edit changed it, so the file is read.
    assert counts(kb.ingest(vault)) == (1, 0, 1, 0)
    assert kb.search("pulsa")[0].source_id == "a.md" and kb.search("kafka") == []


def test_a_file_modified_just_before_the_run_is_read_again_next_time(
    kb: trove.Store, vault: Path
) -> None:
    path = write(vault / "a.md", "about kafka", mtime_ns=None)
    write(vault / "old.md", "settled words")
    assert counts(kb.ingest(vault)) == (2, 2, 0, 0)
    assert set(stats(kb)) == {"old.md"}  # a.md may still change within its mtime's tick
    mtime = os.stat(path).st_mtime_ns
    write(path, "about pulsa", mtime_ns=mtime)  # edited within the same tick
    assert counts(kb.ingest(vault)) == (1, 0, 1, 1)
    assert kb.search("pulsa")[0].source_id == "a.md"
    assert counts(kb.ingest(vault)) == (1, 0, 0, 2)  # still racy: read, not recorded
    os.utime(path, ns=(OLD_NS, OLD_NS))  # now long settled
    assert counts(kb.ingest(vault)) == (1, 0, 0, 2)
    assert counts(kb.ingest(vault)) == (0, 0, 0, 2)


def test_a_recorded_file_that_becomes_racy_loses_its_record(kb: trove.Store, vault: Path) -> None:
    path = write(vault / "a.md", "about kafka")
    kb.ingest(vault)
    now = time.time_ns()
    os.utime(path, ns=(now, now))
    assert counts(kb.ingest(vault)) == (1, 0, 0, 1)
    assert stats(kb) == {}


def test_moved_files_keep_their_documents_and_records_follow_them(
    kb: trove.Store, vault: Path
) -> None:
    write(vault / "a.md", "the migration plan")
    write(vault / "b.md", "other words")
    kb.ingest(vault)
    doc_id = kb.search("migration")[0].doc_id
    (vault / "archive").mkdir()
    os.rename(vault / "a.md", vault / "archive" / "a.md")
    report = kb.ingest(vault, sync=True)
    assert report.moved == [("a.md", "archive/a.md")] and report.deleted == 0
    assert set(stats(kb)) == {"archive/a.md", "b.md"}
    assert kb.search("migration")[0].doc_id == doc_id
    assert counts(kb.ingest(vault, sync=True)) == (0, 0, 0, 2)
    write(vault / "a.md", "brand new words at the old path")
    assert counts(kb.ingest(vault, sync=True)) == (1, 1, 0, 2)


def test_sync_forgets_the_records_of_deleted_files(kb: trove.Store, vault: Path) -> None:
    write(vault / "a.md", "alpha words")
    write(vault / "b.md", "beta words")
    kb.ingest(vault)
    (vault / "b.md").unlink()
    assert kb.ingest(vault).deleted == 0
    assert set(stats(kb)) == {"a.md", "b.md"}  # without --sync nothing is forgotten
    assert kb.ingest(vault, sync=True).deleted == 1
    assert set(stats(kb)) == {"a.md"} and kb.search("beta") == []


def test_a_deleted_document_returns_although_its_file_kept_its_stat(
    kb: trove.Store, vault: Path
) -> None:
    write(vault / "a.md", "alpha words")
    kb.ingest(vault)
    kb.delete(kb.search("alpha")[0].doc_id)
    assert counts(kb.ingest(vault)) == (1, 0, 1, 0)
    assert kb.search("alpha")[0].source_id == "a.md"


def test_dry_run_records_nothing(kb: trove.Store, vault: Path) -> None:
    write(vault / "a.md", "alpha words")
    kb.ingest(vault)
    later = OLD_NS + 10**9
    os.utime(vault / "a.md", ns=(later, later))
    write(vault / "b.md", "beta words")
    report = kb.ingest(vault, dry_run=True)
    assert counts(report) == (2, 1, 0, 1)
    assert stats(kb)["a.md"].mtime_ns == OLD_NS and "b.md" not in stats(kb)


def test_a_lowered_size_limit_still_skips_a_recorded_file(kb: trove.Store, vault: Path) -> None:
    write(vault / "big.md", "x" * 2000)
    kb.ingest(vault)
    report = kb.ingest(vault, max_bytes=1000)
    assert report.skipped == [("big.md", "larger than 1000 bytes")] and report.unchanged == 0


def test_derived_formats_and_containers_are_not_read_again(
    store: trove.Store, vault: Path
) -> None:
    lines = "".join(json.dumps({"text": f"line {i}"}) + "\n" for i in range(3))
    write(vault / "chat.jsonl", lines)
    write_mbox(vault / "in.mbox", [message("Hi", "mail words\n", message_id="<a@x>")])
    (vault / "note.eml").write_bytes(bytes(message("Note", "eml words\n")))
    for name in ("in.mbox", "note.eml"):
        os.utime(vault / name, ns=(OLD_NS, OLD_NS))
    assert counts(store.ingest(vault)) == (3, 5, 0, 0)
    assert set(stats(store)) == {"chat.jsonl", "in.mbox", "note.eml"}
    assert counts(store.ingest(vault)) == (0, 0, 0, 5)
    with (vault / "chat.jsonl").open("a", encoding="utf-8") as handle:
        handle.write(json.dumps({"text": "line 3"}) + "\n")
    assert counts(store.ingest(vault)) == (1, 1, 0, 5)


def test_a_store_from_before_the_stat_records_reads_once_then_not(
    tmp_path: Path, vault: Path
) -> None:
    import apsw

    write(vault / "a.md", "alpha words")
    write(vault / "b.txt", "beta words")
    db = tmp_path / "kb.db"
    with trove.open(db, embedder=None) as kb:
        kb.ingest(vault)
    conn = apsw.Connection(str(db))  # back to schema 5, which had no file_stat table
    # (nor the memory fields of schema 7)
    memory_columns = [
        "confidence",
        "compression_level",
        "entities",
        "source_turn_ids",
        "canonical_id",
        "access_count",
        "last_accessed",
        "indexed",
        "keyword_text",
        "semantic_text",
    ]
    conn.execute(
        "DROP TABLE cluster_member; DROP TABLE cluster; DROP INDEX document_canonical; "
        + "".join(f"ALTER TABLE document DROP COLUMN {c}; " for c in memory_columns)
    )
    conn.execute("DROP TABLE file_stat; PRAGMA user_version = 5")
    conn.close()
    with trove.open(db, embedder=None) as kb:
        assert counts(kb.ingest(vault)) == (2, 0, 0, 2)
        assert counts(kb.ingest(vault)) == (0, 0, 0, 2)
