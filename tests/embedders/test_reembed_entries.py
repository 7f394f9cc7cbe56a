"""Entries under entry control and their vectors: reembed embeds what add embedded (the
title and ``semantic_text``, not the keyword chunk's text), and stats does not count an
entry kept out of the semantic index as a chunk lacking a vector. Every backend."""

from __future__ import annotations

import numpy as np

import trove


def _entries(kb: trove.Store) -> dict[str, str]:
    return {
        "semantic_text": kb.add(
            "k8s", title="infra", semantic_text="container orchestration platform"
        ),
        "keyword_text": kb.add("the deploy notes", keyword_text="deploy rollout"),
        "semantic_only": kb.add("a walrus swims in the sea", index="semantic"),
        "plain": kb.add("A plain note about walruses.\n\nAnd a second paragraph."),
    }


def _vectors(kb: trove.Store, ids: dict[str, str]) -> dict[str, list[np.ndarray]]:
    return {name: [np.asarray(v) for v in kb.chunk_vectors(i)] for name, i in ids.items()}


def test_reembed_embeds_what_add_embedded(store_target: str) -> None:
    with trove.open(":memory:", embedder="hash:64") as reference:
        wanted = _vectors(reference, _entries(reference))
    with trove.open(store_target, embedder="hash:64") as kb:
        ids = _entries(kb)
        kb.reembed("hash:64")  # a new table, every chunk embedded again
        assert _same(_vectors(kb, ids), wanted)
        hits = kb.search("container orchestration platform", mode="semantic", min_score=0)
        assert hits[0].doc_id == ids["semantic_text"]


def test_reembed_missing_embeds_what_add_embedded(store_target: str) -> None:
    """A store written keyword-only, given vectors later: the same as written with them."""
    with trove.open(":memory:", embedder="hash:64") as reference:
        wanted = _vectors(reference, _entries(reference))
    with trove.open(store_target, embedder=None) as kb:
        ids = _entries(kb)
        kb.reembed("hash:64", missing=True)
        assert _same(_vectors(kb, ids), wanted)


def _same(got: dict[str, list[np.ndarray]], wanted: dict[str, list[np.ndarray]]) -> bool:
    assert got.keys() == wanted.keys()
    for name in got:
        assert len(got[name]) == len(wanted[name]), name
        for new, old in zip(got[name], wanted[name], strict=True):
            # SQLite keeps int16 codes (within 1.5e-5 of the row's largest coordinate),
            # PostgreSQL float32: the reference is a SQLite store.
            assert np.allclose(new, old, atol=3e-5), name
    return True


def test_stats_count_no_entry_kept_out_of_the_semantic_index(store_target: str) -> None:
    with trove.open(store_target, embedder="hash:64") as kb:
        _entries(kb)
        kb.add("only words", index="keyword")
        kb.add("only words, in a session", index="keyword", scope="session", session="s1")
        kb.add("", index="none", metadata={"payload": 1})
        kb.add("hidden", index=False, namespace="other")
        stats = kb.stats()
        assert stats.chunks > stats.vectors  # the keyword-only entries have no vector
        assert stats.chunks_without_vectors == 0
        assert kb.stats(namespace="default").chunks_without_vectors == 0
        assert kb.stats(namespace="other").chunks_without_vectors == 0
