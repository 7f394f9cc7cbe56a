"""Callers' own vectors: add(vector=...), add_many with vectors, search(vector=...)."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator

import numpy as np
import pytest

import trove
from trove import InvalidInput, InvalidQuery
from trove.embedders import HashEmbedder


def _seed(kb: trove.Store) -> dict[str, str]:
    return {
        "north": kb.add("points north", vector=[1, 0, 0, 0], source="a"),
        "east": kb.add("points east", vector=[0, 1, 0, 0], source="b"),
        "near north": kb.add("mostly north", vector=[0.9, 0.1, 0, 0], source="b"),
    }


def test_search_by_own_vector_ranks_by_cosine(kb: trove.Store) -> None:
    ids = _seed(kb)
    hits = kb.search(vector=[1, 0, 0, 0], limit=3)
    assert [h.doc_id for h in hits] == [ids["north"], ids["near north"], ids["east"]]
    assert hits[0].score > hits[1].score > hits[2].score


def test_vector_search_applies_filters(kb: trove.Store) -> None:
    ids = _seed(kb)
    hits = kb.search(vector=[1, 0, 0, 0], source="b", limit=1)
    assert [h.doc_id for h in hits] == [ids["near north"]]


def test_add_many_with_vectors_and_get_returns_the_stored_text(kb: trove.Store) -> None:
    ids = kb.add_many(
        [
            {"text": "first  text\n", "vector": [0, 0, 1, 0]},
            {"text": "second", "vector": [0, 0, 0, 2]},
        ]
    )
    doc = kb.get(ids[0])
    assert doc is not None and doc.text == "first  text\n"
    assert kb.search(vector=[0, 0, 0, 1], limit=1)[0].doc_id == ids[1]


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_a_buffer_the_caller_fills_again_for_each_item_gives_each_its_own(
    kb: trove.Store, dtype: str
) -> None:
    """A bulk write keeps each item's vector until its batch is written: a caller that
    fills one array for every item must not give every document the last one."""
    buffer = np.zeros(4, dtype)

    def items() -> Iterator[dict[str, object]]:
        for axis in range(3):
            buffer[:] = 0
            buffer[axis] = 1
            yield {"text": f"axis {axis}", "vector": buffer}

    kb.add_many(items())
    _each_axis_finds(kb, [f"axis {axis}" for axis in range(3)], 4)


def test_a_batch_gives_each_item_its_vector_whatever_form_it_comes_in(kb: trove.Store) -> None:
    """A batch's vectors are gathered into one matrix as the items come (past its first
    size): numpy arrays of floats as they are, lists and integer arrays read first."""
    forms = [list, lambda v: np.array(v, "float32"), np.array, lambda v: np.array(v, "int64")]
    items = []
    for i in range(40):
        axis = [0] * 64
        axis[i] = 1
        items.append({"text": f"item {i}", "vector": forms[i % len(forms)](axis)})
    kb.add_many(items, batch_size=100)
    _each_axis_finds(kb, [f"item {i}" for i in range(40)], 64)


def _each_axis_finds(kb: trove.Store, texts: list[str], width: int) -> None:
    """A search along axis i finds the document ``texts[i]``, its vector that axis."""
    for axis, text in enumerate(texts):
        query = [0.0] * width
        query[axis] = 1.0
        [hit] = kb.search(vector=query, limit=1)
        assert hit.snippet == text
        assert hit.score == pytest.approx(1.0, abs=1e-3)


@pytest.mark.parametrize("form", [list, np.array, lambda v: np.array(v, "float32")])
def test_vectors_of_two_widths_in_one_batch_of_a_new_store_are_invalid(
    kb: trove.Store, form: Callable[[list[int]], object]
) -> None:
    """The first vector of a new store fixes the dimension; the batch's others are
    checked against it (they failed in numpy, with a ValueError, before)."""
    with pytest.raises(InvalidInput, match="3 dimensions"):
        kb.add_many(
            [
                {"text": "four", "vector": form([1, 0, 0, 0])},
                {"text": "three", "vector": form([1, 0, 0])},
            ],
            batch_size=10,
        )
    assert kb.stats().documents == 0


@pytest.mark.parametrize(
    "bad",
    [[1, 0, 0], [math.nan, 0, 0, 1], [0, 0, 0, 0], "1,0,0,0", [[1, 0, 0, 0]], [math.inf, 0, 0, 0]],
)
def test_bad_vectors_are_invalid_and_write_nothing(kb: trove.Store, bad: object) -> None:
    kb.add("anchor", vector=[1, 0, 0, 0])
    with pytest.raises(InvalidInput):
        kb.add("bad one", vector=bad)  # type: ignore[arg-type]
    with pytest.raises(InvalidInput):
        kb.add_many([{"text": "bad two", "vector": bad}])
    assert kb.stats().documents == 1


@pytest.mark.parametrize("bad", [[math.nan, 0, 0, 1], [0, 0, 0, 0]])
def test_a_bad_vector_in_a_batch_writes_none_of_it(kb: trove.Store, bad: object) -> None:
    """A batch's vectors are checked together, before the batch is written; a kept
    item's vector too, though nothing of it is written."""
    kept = kb.add("anchor", vector=[1, 0, 0, 0], source_id="a")
    with pytest.raises(InvalidInput):
        kb.add_many(
            [{"text": "good", "vector": [0, 1, 0, 0]}, {"text": "bad", "vector": bad}],
            batch_size=10,
        )
    with pytest.raises(InvalidInput):
        kb.add_many([{"text": "anchor", "source_id": "a", "vector": bad}], on_conflict="keep")
    assert kb.stats().documents == 1
    assert kb.search(vector=[1, 0, 0, 0], limit=1)[0].doc_id == kept


def test_first_vector_of_a_keyword_store_locks_the_dimension(kb: trove.Store) -> None:
    kb.add("three", vector=[1, 0, 0])
    with pytest.raises(InvalidInput, match="3"):
        kb.add("four", vector=[1, 0, 0, 0])
    lock = kb.backend.vector_lock()
    assert lock is not None and lock.dimension == 3


def test_keyword_store_mixes_entries_with_and_without_vectors(kb: trove.Store) -> None:
    ids = kb.add_many(
        [{"text": "plain words only"}, {"text": "vector words", "vector": [0, 1, 0, 0]}]
    )
    assert [h.doc_id for h in kb.search(vector=[0, 1, 0, 0])] == [ids[1]]
    assert {h.doc_id for h in kb.search("words")} == set(ids)


def test_bad_query_vectors(kb: trove.Store) -> None:
    assert kb.search(vector=[1, 0, 0, 0]) == []  # nothing stored yet
    kb.add("anchor", vector=[1, 0, 0, 0])
    for bad in ([1, 0], [math.nan, 0, 0, 0], [0, 0, 0, 0]):
        with pytest.raises(InvalidQuery):
            kb.search(vector=bad)


def test_own_vectors_beside_an_embedder(store_target: str) -> None:
    embedder = HashEmbedder(8)
    with trove.open(store_target, embedder=embedder) as kb:
        mine = kb.add("my own vector", vector=[0, 0, 0, 0, 0, 0, 0, 1])
        theirs = kb.add("embedded by the store")
        with pytest.raises(InvalidInput, match="8"):
            kb.add("wrong size", vector=[1, 0, 0, 0])
        assert kb.search(vector=[0, 0, 0, 0, 0, 0, 0, 1], limit=1)[0].doc_id == mine
        query = embedder.embed_query("embedded by the store")
        assert kb.search(vector=query.tolist(), limit=1)[0].doc_id == theirs


def test_a_store_of_callers_vectors_reopens_with_default_options(durable_target: str) -> None:
    """No model made its vectors, so none is loaded: writes keep working (with or without a
    vector), text is searched by keyword, meaning by the caller's vectors (issue 30)."""
    with trove.open(durable_target, embedder=None) as kb:
        first = kb.add("the heron waits by the river", vector=[1, 0, 0, 0])
    with trove.open(durable_target) as kb:
        assert not kb.vectors.loaded
        plain = kb.add("a note without a vector")
        second = kb.add("the kingfisher dives", vector=[0, 1, 0, 0])
        assert [h.doc_id for h in kb.search("heron")] == [first]
        assert [h.doc_id for h in kb.search("note")] == [plain]
        assert kb.search(vector=[0, 1, 0, 0], limit=1)[0].doc_id == second
        with pytest.raises(InvalidQuery, match=r"callers' own: search with vector="):
            kb.search("heron", mode="hybrid")
        assert kb.stats().chunks_without_vectors == 1 and not kb.vectors.loaded


def test_vectors_are_read_back(store_target: str) -> None:
    """Store.chunk_vectors: each chunk's stored vector, the caller's own normalized (issue
    30: vectors could not be read back)."""
    with trove.open(store_target, embedder=None) as kb:
        doc_id = kb.add("a vector of my own", vector=[3, 0, 0, 4])
        # SQLite keeps int16 codes (schema 15): within 2e-5 of the row's largest coordinate.
        assert kb.chunk_vectors(doc_id) == [pytest.approx([0.6, 0, 0, 0.8], abs=2e-5)]
        plain = kb.add("no vector here")
        assert kb.chunk_vectors(plain) == [None]
        kb.delete(doc_id)
        with pytest.raises(trove.NotFound):
            kb.chunk_vectors(doc_id)
    with trove.open(":memory:", embedder=None) as kb:
        assert kb.chunk_vectors(kb.add("a store without vectors")) == []
