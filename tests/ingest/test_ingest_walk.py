"""Ingesting folders of Markdown and text: incremental, safe with bad files."""

from __future__ import annotations

import os
import resource
from pathlib import Path

import pytest

import trove

SAMPLES = Path(__file__).resolve().parents[2] / "samples" / "notes"


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    root = tmp_path / "vault"
    (root / "sub").mkdir(parents=True)
    (root / "a.md").write_text("# Alpha\n\nThe alpha note about kafka.\n", encoding="utf-8")
    (root / "sub" / "b.txt").write_text("Beta text about postgres.\r\n", encoding="utf-8")
    (root / "image.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00")
    return root


def test_ingest_reads_markdown_and_text_recursively(kb: trove.Store, folder: Path) -> None:
    report = kb.ingest(folder)
    assert (report.added, report.updated, report.unchanged) == (2, 0, 0)
    assert report.skipped == [("image.png", "unsupported file type")]
    hit = kb.search("kafka")[0]
    assert (hit.title, hit.source, hit.source_id) == ("Alpha", "vault", "a.md")
    doc = kb.get(kb.search("postgres")[0].doc_id)
    assert doc is not None and doc.text == "Beta text about postgres.\r\n"
    assert doc.source_id == "sub/b.txt" and doc.doc_type == "text" and doc.timestamp


def test_reingest_skips_unchanged_and_updates_changed(kb: trove.Store, folder: Path) -> None:
    kb.ingest(folder)
    first = kb.search("kafka")[0].doc_id
    (folder / "a.md").write_text("# Alpha\n\nNow about pulsar.\n", encoding="utf-8")
    report = kb.ingest(folder)
    assert (report.added, report.updated, report.unchanged) == (0, 1, 1)
    assert kb.search("kafka") == []
    assert kb.search("pulsar")[0].doc_id == first


def test_sync_tombstones_deleted_files(kb: trove.Store, folder: Path) -> None:
    kb.ingest(folder)
    (folder / "sub" / "b.txt").unlink()
    assert kb.ingest(folder).deleted == 0  # without --sync nothing is removed
    assert kb.search("postgres")
    report = kb.ingest(folder, sync=True)
    assert report.deleted == 1
    assert kb.search("postgres") == []


def test_bad_files_are_skipped_by_name_and_others_stored(kb: trove.Store, folder: Path) -> None:
    (folder / "latin1.txt").write_bytes("caf\xe9 cr\xe8me".encode("latin-1"))
    (folder / "binary.md").write_bytes(b"\x00\x01\x02 binary")
    report = kb.ingest(folder)
    reasons = dict(report.skipped)
    assert "not valid UTF-8" in reasons["latin1.txt"]
    assert "binary" in reasons["binary.md"]
    assert report.added == 2


def test_include_and_exclude_globs(kb: trove.Store, folder: Path) -> None:
    assert kb.ingest(folder, include=["*.md"]).added == 1
    assert kb.ingest(folder, exclude=["sub/*"]).added == 0


def test_hidden_files_and_symlink_loops_are_not_followed(kb: trove.Store, folder: Path) -> None:
    (folder / ".obsidian").mkdir()
    (folder / ".obsidian" / "x.md").write_text("hidden", encoding="utf-8")
    os.symlink(folder, folder / "sub" / "loop")
    outside = folder.parent / "outside.md"
    outside.write_text("outside the root", encoding="utf-8")
    os.symlink(outside, folder / "escape.md")
    report = kb.ingest(folder)
    assert report.added == 2
    assert kb.search("hidden") == [] and kb.search("outside") == []
    skipped = dict(report.skipped)
    assert skipped["sub/loop"] == "symlink loop: leads back to a folder above it"


def test_a_loop_of_links_is_named_in_the_report(kb: trove.Store, folder: Path) -> None:
    os.symlink(folder / "two", folder / "one")
    os.symlink(folder / "one", folder / "two")
    skipped = dict(kb.ingest(folder).skipped)
    assert skipped["one"] == skipped["two"] == "symlink loop"


def test_empty_file_is_skipped_not_stored(kb: trove.Store, folder: Path) -> None:
    (folder / "empty.md").write_text("", encoding="utf-8")
    (folder / "blank.md").write_text("  \n\n ", encoding="utf-8")
    report = kb.ingest(folder)
    assert report.added == 2
    assert ("empty.md", "no text") in report.skipped and ("blank.md", "no text") in report.skipped


def test_too_large_files_are_skipped(kb: trove.Store, folder: Path) -> None:
    report = kb.ingest(folder, max_bytes=30)
    assert {p for p, _ in report.skipped} >= {"a.md"}


def test_missing_path_is_not_found(kb: trove.Store, tmp_path: Path) -> None:
    with pytest.raises(trove.NotFound):
        kb.ingest(tmp_path / "nope")


def test_sample_notes_are_searchable(kb: trove.Store) -> None:
    report = kb.ingest(SAMPLES)
    assert report.added == len(list(SAMPLES.iterdir())) and not report.skipped
    assert kb.search("why did we drop redis")[0].title == "Why we dropped Redis"
    assert kb.search("数据库迁移")[0].source_id == "会议纪要-数据库迁移.md"


@pytest.mark.slow
def test_50_mb_text_file_is_stored_with_bounded_memory(db_path: Path, tmp_path: Path) -> None:
    big = tmp_path / "big" / "big.txt"
    big.parent.mkdir()
    line = "The quick brown fox jumps over the lazy dog while kafka streams flow. "
    with big.open("w", encoding="utf-8") as handle:
        for i in range(50 * 1024 * 1024 // len(line)):
            handle.write(line if i != 400_000 else "a unique needle zyzzyva appears here. ")
    size = big.stat().st_size
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    with trove.open(db_path, embedder=None) as kb:
        assert kb.ingest(big.parent).added == 1
        hits = kb.search("zyzzyva")
        assert len(hits) == 1 and "«zyzzyva»" in hits[0].snippet
        doc = kb.get(hits[0].doc_id)
        assert doc is not None and len(doc.text) == size
        del doc
    grown = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 - before
    assert grown < 8 * size, f"peak memory grew by {grown / size:.1f}x the file size"
