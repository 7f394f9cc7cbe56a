"""The in-memory vector index hears of this process's writes when they commit and of
nothing that rolls back (backends/sqlite/index_changes.py): no caller tells it by hand,
and it is never reloaded to forget a rollback."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import trove
from trove.backends.sqlite.index_changes import IndexChanges


@pytest.fixture
def kb(db_path: Path):
    with trove.open(db_path, embedder="hash:64") as store:
        store.add_many({"text": f"note {i} about gardens"} for i in range(5))
        store.warm()  # the vector index is loaded
        yield store


def _index(kb: trove.Store):
    searcher = kb.backend._searcher  # type: ignore[attr-defined]
    assert searcher is not None and searcher.ready
    return searcher._index


def _ids(kb: trove.Store) -> set[int]:
    return {int(i) for i in _index(kb).ids()}


def _stored(kb: trove.Store) -> set[int]:
    return {int(i) for i in kb.backend.live_chunk_ids()}  # type: ignore[attr-defined]


def test_a_rolled_back_transaction_leaves_the_index_as_it_was(kb: trove.Store) -> None:
    index, before = _index(kb), _ids(kb)
    with pytest.raises(RuntimeError), kb.transaction():
        kb.add("zebras graze on the savanna")
        kb.update(kb.search("gardens", mode="keyword")[0].doc_id, text="orchids instead")
        raise RuntimeError("undo")
    assert _index(kb) is index  # not reloaded to forget the rollback
    assert _ids(kb) == before == _stored(kb)
    # The rolled-back chunk ids are handed out again; the index holds the new text's.
    doc = kb.add("whales sing in the deep ocean")
    assert _ids(kb) == _stored(kb) and _index(kb) is index
    assert kb.search("whales sing in the deep ocean", mode="semantic")[0].doc_id == doc


def test_a_committed_transaction_updates_the_index_without_a_reload(kb: trove.Store) -> None:
    index, before = _index(kb), _ids(kb)
    with kb.transaction():
        new = kb.add("zebras graze on the savanna")
        old = kb.search("gardens", mode="keyword")[0].doc_id
        kb.update(old, text="orchids bloom in the greenhouse")
        assert _ids(kb) == before  # told at the commit, not before
    assert _index(kb) is index
    assert _ids(kb) == _stored(kb) != before
    assert kb.search("zebras graze on the savanna", mode="semantic")[0].doc_id == new
    assert kb.search("orchids bloom in the greenhouse", mode="semantic")[0].doc_id == old


def test_a_purge_drops_its_chunks_from_the_index(kb: trove.Store) -> None:
    index = _index(kb)
    doc = kb.search("gardens", mode="keyword")[0].doc_id
    kb.delete(doc)
    kb.purge()
    assert _index(kb) is index and _ids(kb) == _stored(kb)


def test_vectors_stored_then_dropped_in_one_transaction_end_dropped() -> None:
    class Index:
        class lock:
            table = "chunk_vec_1"

        def __init__(self) -> None:
            self.ids: set[int] = {1}

        def removed(self, chunk_ids):
            self.ids -= set(chunk_ids)

        def added(self, chunk_ids, vectors):
            self.ids |= set(chunk_ids)

    changes = IndexChanges()
    changes.chunks([], [7, 8])
    changes.vectors("chunk_vec_1", [7, 8], np.zeros((2, 4), np.float32))
    changes.vectors("chunk_vec_2", [9], np.zeros((1, 4), np.float32))  # another table
    changes.chunks([1, 7], [])
    index, forgotten = Index(), []
    changes.tell_vectors(index, lambda: forgotten.append(True))
    assert index.ids == {8} and not forgotten
    changes.switched()
    changes.tell_vectors(index, lambda: forgotten.append(True))
    assert forgotten == [True]
