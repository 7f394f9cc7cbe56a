"""Markdown: front matter as provenance, the file's text kept exactly, links as edges."""

from __future__ import annotations

from pathlib import Path

import trove

NOTE = """---
title: Cache decision
tags: [decision, "#cache"]
author: ana
date: 2026-10-14
status: done
reviewers: [bob, carl]
---
# Why we dropped Redis

We keep the cache in process.
"""


def doc(kb: trove.Store, source_id: str) -> trove.Document:
    for sid, doc_id, _, deleted in kb.iter_source("default", "vault"):
        if sid == source_id and not deleted:
            found = kb.get(doc_id)
            assert found is not None
            return found
    raise AssertionError(f"{source_id} is not stored")


def targets(kb: trove.Store, source_id: str) -> set[str]:
    src = doc(kb, source_id).id
    edges = [e for e in kb.neighbors(src, "links_to") if e.src == src]
    return {kb.get(e.dst).source_id for e in edges}  # type: ignore[union-attr]


def test_front_matter_fills_the_fields_and_the_text_is_the_file(
    store: trove.Store, vault: Path
) -> None:
    (vault / "cache.md").write_text(NOTE, encoding="utf-8")
    assert store.ingest(vault).added == 1
    note = doc(store, "cache.md")
    assert note.text == NOTE  # front matter included: get() returns the file
    assert (note.title, note.author, note.doc_type) == ("Cache decision", "ana", "markdown")
    assert note.tags == ("decision", "cache")
    assert note.timestamp == "2026-10-14T00:00:00Z"
    assert note.metadata == {"status": "done", "reviewers": ["bob", "carl"]}
    assert store.search("redis", tags=["decision"], author="ana")[0].source_id == "cache.md"


def test_title_falls_back_to_the_first_heading_then_the_file_name(
    store: trove.Store, vault: Path
) -> None:
    (vault / "a.md").write_text("Intro line\n\n# Heading One\n\ntext\n", encoding="utf-8")
    (vault / "b.md").write_text("no heading at all\n", encoding="utf-8")
    store.ingest(vault)
    assert doc(store, "a.md").title == "Heading One"
    assert doc(store, "b.md").title == "b"


def test_odd_front_matter_never_loses_the_note(store: trove.Store, vault: Path) -> None:
    (vault / "broken.md").write_text("---\ntitle: [unclosed\n---\nbody text\n", encoding="utf-8")
    (vault / "dates.md").write_text(
        "---\ndate: next tuesday\ntags: a, b\nauthors: [ana, bob]\n---\nbody\n", encoding="utf-8"
    )
    (vault / "list.md").write_text("---\n- just\n- a list\n---\nbody\n", encoding="utf-8")
    report = store.ingest(vault)
    assert report.added == 3 and not report.failed
    broken = doc(store, "broken.md")
    assert broken.title == "broken" and "front_matter_error" in broken.metadata
    dates = doc(store, "dates.md")
    assert dates.metadata["date"] == "next tuesday" and dates.tags == ("a", "b")
    assert dates.author == "ana" and dates.participants == ("ana", "bob")
    assert not doc(store, "list.md").metadata


def test_wiki_and_relative_links_become_edges(store: trove.Store, vault: Path) -> None:
    (vault / "design").mkdir()
    (vault / "index.md").write_text(
        "# Index\n\nSee [[Cache decision]], [[design/api|the API]], [[Missing note]],\n"
        "[the incident](design/incident%20report.md#timeline), [web](https://example.com)\n"
        "and ![[diagram.png]].\n\n```\n[[In code]]\n```\n",
        encoding="utf-8",
    )
    (vault / "design" / "Cache decision.md").write_text("# Cache\n[[index]]\n", encoding="utf-8")
    (vault / "design" / "api.md").write_text("# API\n[up](../index.md)\n", encoding="utf-8")
    (vault / "design" / "incident report.md").write_text("# Incident\n", encoding="utf-8")
    (vault / "In code.md").write_text("code\n", encoding="utf-8")
    report = store.ingest(vault)
    assert report.links == 5
    assert targets(store, "index.md") == {
        "design/Cache decision.md",
        "design/api.md",
        "design/incident report.md",
    }
    assert targets(store, "design/api.md") == {"index.md"}
    assert targets(store, "design/Cache decision.md") == {"index.md"}
    assert doc(store, "index.md").metadata["links"][0] == "[[Cache decision]]"
    hits = store.search("incident", expand=1)
    assert {h.source_id for h in hits} >= {"design/incident report.md", "index.md"}


def test_links_follow_edits_and_notes_that_appear_later(store: trove.Store, vault: Path) -> None:
    (vault / "a.md").write_text("# A\n[[b]] and [[later]]\n", encoding="utf-8")
    (vault / "b.md").write_text("# B\n", encoding="utf-8")
    store.ingest(vault)
    assert targets(store, "a.md") == {"b.md"}
    (vault / "later.md").write_text("# Later\n", encoding="utf-8")
    store.ingest(vault)  # a.md did not change, its dangling link now resolves
    assert targets(store, "a.md") == {"b.md", "later.md"}
    (vault / "a.md").write_text("# A\nonly [[later]] now\n", encoding="utf-8")
    store.ingest(vault)
    assert targets(store, "a.md") == {"later.md"}


def test_a_shared_name_links_to_the_nearest_note(store: trove.Store, vault: Path) -> None:
    for folder in ("x", "y", "y/deeper"):
        (vault / folder).mkdir(parents=True, exist_ok=True)
        (vault / folder / "todo.md").write_text(f"# {folder} todo\n", encoding="utf-8")
    (vault / "y" / "plan.md").write_text("[[todo]]\n", encoding="utf-8")
    (vault / "top.md").write_text("[[todo]]\n", encoding="utf-8")
    store.ingest(vault)
    assert targets(store, "y/plan.md") == {"y/todo.md"}
    assert targets(store, "top.md") == {"x/todo.md"}
