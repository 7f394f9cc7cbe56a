"""`trove backup` (online, while another process writes) and the Markdown vault export."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

import trove
from trove import InvalidInput
from trove.interfaces.cli import cli
from trove.transfer.backup import backup
from trove.transfer.vault import export_markdown

WRITER = """
import sys, time, trove
with trove.open(sys.argv[1], embedder=None) as kb:
    print("ready", flush=True)
    i = 0
    while True:
        kb.add_many([{"text": f"note {i}-{j} " + "words " * 50} for j in range(20)])
        i += 1
"""


def test_backup_while_another_process_writes(tmp_path: Path) -> None:
    db = tmp_path / "kb.db"
    with trove.open(db, embedder=None) as kb:
        kb.add_many([{"text": f"seed {i} " + "text " * 100} for i in range(300)])
    writer = subprocess.Popen(
        [sys.executable, "-c", WRITER, str(db)], stdout=subprocess.PIPE, text=True
    )
    try:
        assert writer.stdout is not None and writer.stdout.readline().strip() == "ready"
        time.sleep(0.3)
        copies = [tmp_path / f"copy{i}.db" for i in range(3)]
        for copy in copies:
            assert backup(db, copy) > 0
    finally:
        writer.kill()
        writer.wait()
    for copy in copies:
        with trove.open(copy, embedder=None) as kb:
            stats = kb.stats()
            # A consistent snapshot: whole batches only, every document with its chunks.
            assert stats.documents >= 300 and (stats.documents - 300) % 20 == 0
            assert stats.chunks >= stats.documents
            assert kb.search("seed", mode="keyword", limit=1)


def test_backup_refuses_to_overwrite_and_restores(tmp_path: Path) -> None:
    db, copy = tmp_path / "kb.db", tmp_path / "copy.db"
    with trove.open(db, embedder=None) as kb:
        doc = kb.add("kept safe")
    runner = CliRunner()
    result = runner.invoke(cli, ["--db", str(db), "backup", str(copy)])
    assert result.exit_code == 0 and "backed up to" in result.output
    result = runner.invoke(cli, ["--db", str(db), "backup", str(copy)])
    assert result.exit_code == 1 and "exists; back up to a new file" in result.output
    result = runner.invoke(cli, ["--db", str(tmp_path / "nope.db"), "backup", str(tmp_path / "x")])
    assert result.exit_code == 1 and "is not a store file" in result.output
    # Restore: copy the backup back in place of the store.
    db.unlink()
    copy.replace(db)
    with trove.open(db, embedder=None) as kb:
        assert kb.get(doc).text == "kept safe"  # type: ignore[union-attr]


def test_backup_into_a_missing_folder_names_that_folder(tmp_path: Path) -> None:
    db = tmp_path / "kb.db"
    with trove.open(db, embedder=None) as kb:
        kb.add("kept safe")
    dest = tmp_path / "no" / "such" / "copy.db"
    result = CliRunner().invoke(cli, ["--db", str(db), "backup", str(dest)])
    assert result.exit_code == 1
    assert f"the folder {dest.parent} does not exist" in result.output
    assert not (tmp_path / "no").exists()


# A child that backs up under a file size limit the copy outgrows: the disk is "full".
FULL = """
import resource, sys
from trove.transfer.backup import backup
resource.setrlimit(resource.RLIMIT_FSIZE, (int(sys.argv[3]), int(sys.argv[3])))
try:
    backup(sys.argv[1], sys.argv[2])
except Exception as exc:
    print(type(exc).__name__, exc)
"""


def test_backup_onto_a_full_disk_says_why_and_leaves_nothing(tmp_path: Path) -> None:
    db, dest = tmp_path / "kb.db", tmp_path / "copy.db"
    with trove.open(db, embedder=None) as kb:
        kb.add_many([{"text": f"note {i} " * 200} for i in range(100)])
    limit = db.stat().st_size // 3
    done = subprocess.run(
        [sys.executable, "-c", FULL, str(db), str(dest), str(limit)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.stdout.startswith("StoreError "), done.stdout + done.stderr
    assert "not an error" not in done.stdout
    assert f"cannot write {dest}.partial: File too large" in done.stdout
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith("copy")) == []


def test_backup_of_postgres_is_refused(pg_target: str, tmp_path: Path) -> None:
    with pytest.raises(InvalidInput, match="pg_dump"):
        backup(pg_target, tmp_path / "x.db")


def _provenance(kb: trove.Store, timed: set[str]) -> set[tuple[object, ...]]:
    """Title, tags, author, and the time of the notes in ``timed`` (ingest gives a note
    without a date its file's time, as it does any note)."""
    return {
        (d.title, d.tags, d.author, d.timestamp if d.title in timed else None)
        for d in kb.list(limit=100).items
    }


def test_markdown_vault_reads_back_into_an_equivalent_store(tmp_path: Path) -> None:
    src, dst, vault = tmp_path / "a.db", tmp_path / "b.db", tmp_path / "vault"
    with trove.open(src, embedder=None) as kb:
        cats = kb.add(
            "Cats purr.",
            title="Cats: a note",
            tags=["animal", "pet"],
            author="ana",
            timestamp="2026-11-03T09:00:00Z",
            source="notes",
            source_id="cats",
            url="https://example.org/c",
            metadata={"mood": "calm"},
        )
        dogs = kb.add("Dogs bark.", title="Dogs", source="notes", source_id="dogs")
        twin = kb.add("Another dog note.", title="Dogs", source="other", source_id="dogs")
        kb.link(cats, dogs, "relates_to")
        kb.link(dogs, twin, "supersedes")
        kb.delete(kb.add("gone", title="Gone"))
        report = export_markdown(kb, vault)
        before = _provenance(kb, {"Cats: a note"})
    assert report.notes == 3 and report.links == 2
    names = {p.name for p in vault.iterdir()}
    assert names == {"Cats a note.md", "Dogs.md", f"Dogs {twin[:12]}.md"}
    note = (vault / "Cats a note.md").read_text()
    assert note.startswith("---\ntitle: 'Cats: a note'\n") and "- relates_to: [[Dogs]]" in note
    with trove.open(dst, embedder=None) as kb:
        kb.ingest(vault)
        assert _provenance(kb, {"Cats: a note"}) == before
        by_title = {d.title: d for d in kb.list(limit=100).items}
        cat = by_title["Cats: a note"]
        assert cat.metadata["trove"]["url"] == "https://example.org/c"
        assert cat.metadata["trove"]["metadata"] == {"mood": "calm"}
        linked = {(e.src, e.dst) for d in by_title.values() for e in kb.neighbors(d.id)}
        titles = {(kb.get(s).title, kb.get(d).metadata["trove"]["source"]) for s, d in linked}  # type: ignore[union-attr]
        assert titles == {("Cats: a note", "notes"), ("Dogs", "other")}
    with pytest.raises(InvalidInput, match="not empty"), trove.open(src, embedder=None) as kb:
        export_markdown(kb, vault)
