"""Use recording (access_count, last_accessed) and the opt-in memory ranking."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

import trove
from trove import InvalidQuery


def test_get_and_search_results_count_as_uses(kb: trove.Store) -> None:
    a = kb.add("apple pie recipe", source="s", source_id="a")
    b = kb.add("apple tart", source="s", source_id="b")
    kb.get(a)
    kb.get(a)
    kb.search("apple")
    kb.get(b, record_access=False)
    kb.search("apple", record_access=False)
    kb.flush_access()
    doc_a, doc_b = kb.get(a, record_access=False), kb.get(b, record_access=False)
    assert doc_a is not None and doc_b is not None
    assert (doc_a.access_count, doc_b.access_count) == (3, 1)
    assert doc_a.last_accessed is not None
    assert kb.search("tart", record_access=False)[0].access_count == 1


def test_a_write_keeps_the_access_count(kb: trove.Store) -> None:
    doc_id = kb.add("v1", source="s", source_id="1")
    kb.get(doc_id)
    kb.flush_access()
    kb.add("v2", source="s", source_id="1")
    kb.update(doc_id, title="T")
    doc = kb.get(doc_id, record_access=False)
    assert doc is not None and doc.access_count == 1


def test_a_store_opened_without_recording_records_nothing(store_target: str) -> None:
    with trove.open(store_target, embedder=None, record_access=False) as kb:
        doc_id = kb.add("quiet")
        kb.get(doc_id)
        kb.search("quiet")
        kb.flush_access()
        doc = kb.get(doc_id)
        assert doc is not None and doc.access_count == 0


def test_close_writes_pending_counts(durable_target: str) -> None:
    with trove.open(durable_target, embedder=None) as kb:
        doc_id = kb.add("remember me")
        kb.get(doc_id)
    with trove.open(durable_target, embedder=None) as kb:
        doc = kb.get(doc_id, record_access=False)
        assert doc is not None and doc.access_count == 1


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes read-only files anyway")
def test_read_only_file_still_answers_reads(tmp_path: Path) -> None:
    path = tmp_path / "kb.db"
    with trove.open(path, embedder=None) as kb:
        doc_id = kb.add("read only memory")
    for name in os.listdir(tmp_path):
        (tmp_path / name).chmod(stat.S_IRUSR)
    tmp_path.chmod(stat.S_IRUSR | stat.S_IXUSR)
    try:
        with trove.open(path, embedder=None) as kb:
            assert kb.get(doc_id) is not None
            assert kb.search("memory")[0].doc_id == doc_id
            assert kb.flush_access() == 0
    finally:
        tmp_path.chmod(stat.S_IRWXU)


def test_read_only_store_drops_counts_but_answers(kb: trove.Store) -> None:
    """A backend that refuses the write (as a read-only file or role does)."""
    doc_id = kb.add("memory")

    def refuse(counts: object) -> None:
        raise trove.StoreError("attempt to write a readonly database")

    kb.backend.record_access = refuse  # type: ignore[method-assign]
    assert kb.get(doc_id) is not None
    assert kb.flush_access() == 0
    assert kb.search("memory")[0].doc_id == doc_id


def test_rerank_off_is_the_plain_ranking_and_memory_profile_reorders(kb: trove.Store) -> None:
    old = kb.add("deploy notes", timestamp="2020-01-01T00:00:00Z", importance=0.1)
    new = kb.add("deploy notes again", timestamp="2026-11-30T00:00:00Z", importance=0.9)
    plain = kb.search("deploy notes")
    assert [h.doc_id for h in plain] == [old, new]  # the shorter text wins on BM25
    assert kb.search("deploy notes", rerank=None) == plain
    ranked = kb.search("deploy notes", rerank="memory", explain=True)
    assert [h.doc_id for h in ranked] == [new, old]
    factors = ranked[0].explain["rerank"]  # type: ignore[index]
    assert set(factors) == {"relevance", "recency", "importance", "access", "final"}
    assert factors["importance"] == 0.9 and ranked[0].score == factors["final"]


def test_rerank_by_access(kb: trove.Store) -> None:
    a = kb.add("shared topic one")
    b = kb.add("shared topic two")
    for _ in range(5):
        kb.get(b)
    kb.flush_access()
    hits = kb.search("shared topic", rerank={"access": 0.9}, record_access=False)
    assert hits[0].doc_id == b and {h.doc_id for h in hits} == {a, b}


@pytest.mark.parametrize(
    "bad", ["fancy", {"recency": 0}, {"importance": 2}, {"weight": 1}, {"access": "x"}, 3]
)
def test_bad_rerank_is_invalid(kb: trove.Store, bad: object) -> None:
    kb.add("x")
    with pytest.raises(InvalidQuery):
        kb.search("x", rerank=bad)  # type: ignore[arg-type]


def test_a_reranked_search_checks_its_limit(tmp_path: Path) -> None:
    with trove.open(tmp_path / "kb.db", embedder=None) as kb:
        kb.add("x y")
        for bad in (-1, "a", 10**9):
            with pytest.raises(InvalidQuery, match="limit"):
                kb.search("x", rerank="memory", limit=bad)
