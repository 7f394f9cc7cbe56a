"""Incremental sync: unchanged files cost a hash, changes replace in place, renames keep
their documents, deletions are tombstoned with sync; and the bad inputs of a real folder."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

import trove
from helpers.ingest_samples import CountingEmbedder, message, write_mbox, write_pdf
from trove.ingest import parse
from trove.ingest.report import IngestProgress


def docs(kb: trove.Store, source: str = "vault") -> dict[str, str]:
    """source_id -> doc id of the live documents of a source."""
    return {sid: d for sid, d, _, deleted in kb.iter_source("default", source) if not deleted}


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_unchanged_files_cost_a_hash_not_parsing_or_embedding(
    tmp_path: Path, vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for i in range(30):
        write(vault / f"n{i}.md", f"# Note {i}\n\nabout topic{i} and more words\n")
    embedder = CountingEmbedder()
    with trove.open(tmp_path / "kb.db", embedder=embedder) as kb:
        first = kb.ingest(vault)
        assert first.added == 30 and len(embedder.texts) == first.chunks == 30
        parsed: list[str] = []
        real = parse.parse

        def counting(format_name: str, rel: str, data: bytes, options: object) -> parse.Parsed:
            parsed.append(rel)
            return real(format_name, rel, data, options)  # type: ignore[arg-type]

        monkeypatch.setattr(parse, "parse", counting)
        embedder.texts.clear()
        again = kb.ingest(vault)
        assert (again.unchanged, again.added, again.updated, again.chunks) == (30, 0, 0, 0)
        assert embedder.texts == [] and parsed == []
        write(vault / "n3.md", "# Note 3\n\nnow about something else\n")
        changed = kb.ingest(vault)
        assert (changed.updated, changed.unchanged) == (1, 29)
        assert parsed == ["n3.md"]
        assert len(embedder.texts) == 1


def test_a_changed_file_replaces_its_document_in_place(kb: trove.Store, vault: Path) -> None:
    write(vault / "a.md", "# Alpha\n\nabout kafka\n")
    kb.ingest(vault)
    before = docs(kb)["a.md"]
    write(vault / "a.md", "# Alpha\n\nabout pulsar\n")
    report = kb.ingest(vault)
    assert (report.updated, report.added) == (1, 0)
    assert docs(kb) == {"a.md": before}
    assert kb.search("kafka") == [] and kb.search("pulsar")[0].doc_id == before


def test_sync_tombstones_only_files_that_are_gone(kb: trove.Store, vault: Path) -> None:
    write(vault / "keep.md", "keep me")
    write(vault / "gone.md", "delete me")
    write(vault / "other.txt", "not in the glob")
    kb.ingest(vault)
    (vault / "gone.md").unlink()
    assert kb.ingest(vault).deleted == 0  # without sync nothing is removed
    assert "gone.md" in docs(kb)
    report = kb.ingest(vault, sync=True, include=["*.md"])
    assert report.deleted == 1  # other.txt is outside the glob, not gone
    assert set(docs(kb)) == {"keep.md", "other.txt"}
    assert kb.search("delete") == []


def test_renamed_and_moved_files_keep_their_documents(kb: trove.Store, vault: Path) -> None:
    write(vault / "draft.md", "# Plan\n\nthe migration plan\n")
    write(vault / "index.md", "# Index\n\n[[draft]]\n")
    kb.ingest(vault)
    plan = docs(kb)["draft.md"]
    os.rename(vault / "draft.md", vault / "plan.md")
    report = kb.ingest(vault)
    assert report.moved == [("draft.md", "plan.md")]
    assert (report.added, report.updated, report.deleted) == (0, 0, 0)
    assert docs(kb) == {"plan.md": plan, "index.md": docs(kb)["index.md"]}
    (vault / "archive").mkdir()
    os.rename(vault / "plan.md", vault / "archive" / "plan.md")
    report = kb.ingest(vault, sync=True)
    assert report.moved == [("plan.md", "archive/plan.md")] and report.deleted == 0
    assert docs(kb)["archive/plan.md"] == plan and len(docs(kb)) == 2
    assert [h.doc_id for h in kb.search("migration")] == [plan]
    # [[draft]] names no note now; linking to the new name reaches the same document.
    index = docs(kb)["index.md"]
    assert kb.neighbors(index, "links_to") == []
    write(vault / "index.md", "# Index\n\n[[plan]]\n")
    kb.ingest(vault)
    assert [e.dst for e in kb.neighbors(index, "links_to")] == [plan]
    write(vault / "archive" / "plan.md", "# Plan\n\nthe migration plan, edited\n")
    assert kb.ingest(vault).updated == 1 and docs(kb)["archive/plan.md"] == plan


def test_renamed_pdf_html_and_mbox_keep_their_documents(store: trove.Store, vault: Path) -> None:
    write_pdf(vault / "r.pdf", ["pdf words"])
    write(vault / "p.html", "<html><body><article><p>html words here</p></article></body></html>")
    write_mbox(vault / "in.mbox", [message("Hi", "mail words\n", message_id="<a@x>")])
    store.ingest(vault)
    before = docs(store)
    for old, new in (("r.pdf", "report.pdf"), ("p.html", "page.html"), ("in.mbox", "old.mbox")):
        os.rename(vault / old, vault / new)
    report = store.ingest(vault, sync=True)
    assert sorted(report.moved) == [
        ("in.mbox", "old.mbox"),
        ("p.html", "page.html"),
        ("r.pdf", "report.pdf"),
    ]
    assert report.deleted == 0 and report.added == 0
    assert docs(store) == {
        "report.pdf": before["r.pdf"],
        "page.html": before["p.html"],
        "old.mbox#a@x": before["in.mbox#a@x"],
    }
    assert store.ingest(vault).unchanged == 3


def test_identical_files_are_two_documents_and_moves_pair_up(
    store: trove.Store, vault: Path
) -> None:
    write(vault / "a.md", "same words")
    write(vault / "b.md", "same words")
    assert store.ingest(vault).added == 2
    ids = docs(store)
    assert ids["a.md"] != ids["b.md"]
    os.rename(vault / "a.md", vault / "c.md")  # b.md stays: only a.md moved
    report = store.ingest(vault, sync=True)
    assert report.moved == [("a.md", "c.md")] and report.deleted == 0
    assert docs(store) == {"b.md": ids["b.md"], "c.md": ids["a.md"]}


def test_a_new_file_where_one_moved_away_gets_its_own_document(
    store: trove.Store, vault: Path
) -> None:
    write(vault / "a.md", "first content")
    store.ingest(vault)
    original = docs(store)["a.md"]
    os.rename(vault / "a.md", vault / "b.md")
    store.ingest(vault)
    write(vault / "a.md", "brand new content at the old path")
    assert store.ingest(vault).added == 1
    found = docs(store)
    assert found["b.md"] == original and found["a.md"] != original
    assert store.get(original).text == "first content"  # type: ignore[union-attr]


def test_a_deleted_document_returns_when_its_file_is_read_again(
    store: trove.Store, vault: Path
) -> None:
    write(vault / "a.md", "words")
    write_pdf(vault / "b.pdf", ["pdf words"])
    store.ingest(vault)
    for doc_id in docs(store).values():
        store.delete(doc_id)
    report = store.ingest(vault)
    assert report.updated == 2 and len(docs(store)) == 2


def test_empty_files(store: trove.Store, vault: Path) -> None:
    for name in ("empty.md", "empty.txt", "empty.html", "empty.pdf", "empty.jsonl", "e.mbox"):
        (vault / name).write_bytes(b"")
    report = store.ingest(vault)
    # Nothing to find in them: skipped, never stored as empty documents.
    assert docs(store) == {}
    assert dict(report.skipped) == {
        "empty.html": "empty HTML file",
        "empty.md": "no text",
        "empty.txt": "no text",
    }
    assert [p for p, _ in report.failed] == ["empty.pdf"]
    again = store.ingest(vault)
    assert (again.added, again.updated, docs(store)) == (0, 0, {})


def test_a_file_that_vanishes_between_listing_and_reading(store: trove.Store, vault: Path) -> None:
    write(vault / "a.md", "first")
    write(vault / "b.md", "vanishes")
    write(vault / "c.md", "third")

    def delete_after_listing(state: IngestProgress) -> None:
        if state.files_done == 0 and (vault / "b.md").exists():
            (vault / "b.md").unlink()

    report = store.ingest(vault, progress=delete_after_listing)
    assert report.added == 2
    assert report.skipped == [("b.md", "vanished before it could be read")]


def test_symlinks_outside_the_root_and_loops(
    tmp_path: Path, store: trove.Store, vault: Path
) -> None:
    outside = write(tmp_path / "elsewhere" / "secret.md", "outside words")
    write(vault / "sub" / "inside.md", "inside words")
    os.symlink(outside, vault / "escape.md")
    os.symlink(outside.parent, vault / "linked")
    os.symlink(vault, vault / "sub" / "loop")
    os.symlink(vault / "missing.md", vault / "dangling.md")
    report = store.ingest(vault)
    assert set(docs(store)) == {"sub/inside.md"}
    reasons = dict(report.skipped)
    assert "outside the folder" in reasons["escape.md"] and "outside" in reasons["linked"]
    assert reasons["dangling.md"] == "broken symlink"
    followed = store.ingest(vault, follow_symlinks=True)
    assert followed.added == 2 and "sub/loop" in dict(followed.skipped)
    assert set(docs(store)) == {"sub/inside.md", "escape.md", "linked/secret.md"}


def test_size_limit_skips_with_a_message(store: trove.Store, vault: Path) -> None:
    write(vault / "big.md", "x" * 2000)
    write(vault / "small.md", "tiny")
    write_mbox(vault / "box.mbox", [message("Big", "y" * 3000), message("Small", "ok\n")])
    report = store.ingest(vault, max_bytes=1000)
    assert set(docs(store)) == {"small.md"} | {
        sid for sid in docs(store) if sid.startswith("box.mbox#")
    }
    assert len(docs(store)) == 2  # the mbox is streamed: only its big message is skipped
    assert dict(report.skipped) == {
        "big.md": "larger than 1000 bytes",
        "box.mbox#message 1": "larger than 1000 bytes",
    }


def test_dry_run_says_what_would_change_and_writes_nothing(kb: trove.Store, vault: Path) -> None:
    write(vault / "a.md", "alpha")
    write(vault / "b.md", "beta")
    kb.ingest(vault)
    write(vault / "a.md", "alpha changed")
    (vault / "b.md").unlink()
    write(vault / "c.md", "gamma")
    report = kb.ingest(vault, sync=True, dry_run=True)
    assert report.dry_run
    assert (report.added, report.updated, report.deleted) == (1, 1, 1)
    assert set(docs(kb)) == {"a.md", "b.md"} and kb.search("alpha")[0].source_id == "a.md"
    assert kb.search("changed") == []


def test_heavy_formats_parse_in_worker_processes_like_inline(
    store: trove.Store, vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(parse, "POOL_MIN_FILES", 2)
    for i in range(6):
        (vault / f"m{i}.eml").write_bytes(bytes(message(f"Mail {i}", f"body {i}\n")))
    (vault / "bad.eml").write_text("no headers at all\n", encoding="utf-8")
    report = store.ingest(vault, workers=2)
    assert report.added == 6 and [p for p, _ in report.skipped] == ["bad.eml"]
    assert store.search("body")[0].doc_type == "email"


def test_progress_counts_files_documents_and_chunks(store: trove.Store, vault: Path) -> None:
    for i in range(3):
        write(vault / f"n{i}.md", f"note {i}")
    write(vault / "image.png", "not text")
    seen: list[IngestProgress] = []
    store.ingest(vault, progress=seen.append)
    assert seen[0].files_total == 4 and seen[0].files_done == 0
    assert seen[-1].files_done == 4 and seen[-1].documents == 3 and seen[-1].chunks == 3
