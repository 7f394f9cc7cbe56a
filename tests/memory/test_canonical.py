"""Near-duplicates folded into canonical memories, collapsed in search, reversible."""

from __future__ import annotations

import pytest

import trove
from trove import InvalidInput


def _dupes(kb: trove.Store) -> tuple[str, str, str]:
    old = kb.add(
        "the deploy uses blue green switching",
        vector=[1, 0, 0, 0],
        timestamp="2026-01-01T00:00:00Z",
    )
    new = kb.add(
        "the deploy uses blue green switching now",
        vector=[0.99, 0.05, 0, 0],
        timestamp="2026-06-01T00:00:00Z",
    )
    other = kb.add("lunch is at noon", vector=[0, 0, 1, 0])
    return old, new, other


def test_canonicalize_marks_groups_links_and_collapses_search(kb: trove.Store) -> None:
    old, new, other = _dupes(kb)
    assert kb.canonicalize(dry_run=True)[0].canonical == new
    assert kb.get(old, record_access=False).canonical_id is None  # type: ignore[union-attr]
    [group] = kb.canonicalize(threshold=0.9)
    assert (group.canonical, group.duplicates) == (new, [old])
    stale = kb.get(old, record_access=False)
    assert stale is not None and stale.canonical_id == new
    assert [(e.src, e.dst, e.type) for e in kb.neighbors(old, "duplicate_of")] == [
        (old, new, "duplicate_of")
    ]
    assert [h.doc_id for h in kb.search("deploy")] == [new]
    assert {h.doc_id for h in kb.search("deploy", collapse_duplicates=False)} == {old, new}
    assert [h.doc_id for h in kb.search(vector=[1, 0, 0, 0], limit=5)] == [new, other]
    kb.delete(new)  # with its canonical gone, the duplicate shows again
    assert [h.doc_id for h in kb.search("deploy")] == [old]


def test_uncanonicalize_restores_everything(kb: trove.Store) -> None:
    old, new, _ = _dupes(kb)
    kb.canonicalize(threshold=0.9)
    assert kb.uncanonicalize() == 2
    assert {h.doc_id for h in kb.search("deploy")} == {old, new}
    assert kb.neighbors(old, "duplicate_of") == []
    assert kb.get(old) is not None  # nothing was deleted


def test_rules_choose_the_canonical(kb: trove.Store) -> None:
    old, _, _ = _dupes(kb)
    kb.update(old, importance=0.9)
    assert kb.canonicalize(threshold=0.9, rule="important", dry_run=True)[0].canonical == old
    with pytest.raises(InvalidInput):
        kb.canonicalize(rule="oldest")
    with pytest.raises(InvalidInput):
        kb.canonicalize(threshold=0)


def test_text_check_keeps_different_texts_apart(kb: trove.Store) -> None:
    kb.add("alpha beta gamma", vector=[1, 0, 0, 0])
    kb.add("completely other words", vector=[1, 0, 0, 0])
    assert kb.canonicalize(threshold=0.9) == []
    assert len(kb.canonicalize(threshold=0.9, text_threshold=None, dry_run=True)) == 1


def test_empty_store_and_store_without_vectors(kb: trove.Store) -> None:
    assert kb.canonicalize() == []
    a = kb.add("we meet every monday at nine")
    b = kb.add("we meet every monday at nine!")
    kb.add("something else entirely")
    [group] = kb.canonicalize()  # no vectors: text similarity only
    assert {group.canonical, *group.duplicates} == {a, b}


def test_bucketed_pairs_find_close_duplicates() -> None:
    import numpy as np

    from trove.memory import canonical

    rng = np.random.default_rng(1)
    base = rng.standard_normal((300, 32)).astype(np.float32)
    noisy = base + 0.05 * rng.standard_normal(base.shape).astype(np.float32)
    matrix = np.vstack([base, noisy])
    matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
    exact = set(canonical._vector_pairs(matrix, 0.95))
    approx = set(canonical._bucket_pairs(matrix, 0.95))
    assert approx <= exact and len(approx) >= 0.95 * len(exact) and len(exact) >= 300
