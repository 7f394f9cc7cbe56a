"""A search's hits choose their passages (``chunk`` and ``snippet``) when the first of
them is read (trove.hits.Hit, search/passage.Deferred): what an eager choice gives, chosen
once for all the hits, on any thread, after the store closed, and through comparing,
copying, pickling, ``replace`` and ``to_dict``."""

from __future__ import annotations

import copy
import pickle
import threading
from dataclasses import replace
from pathlib import Path

import pytest

import trove
from trove.search import passage

SECTIONS = [
    "# Storage\n\nWe keep notes in SQLite. " + "Pages hold rows in order. " * 40,
    "## Cache\n\nWe ran Redis as a cache in front of the database. " + "It evicted keys. " * 40,
    "## Risks\n\nRedis was one more server to watch. We accept that. " + "Nothing else. " * 40,
]
QUERY = "why did we drop redis as a cache"


def _filled(kb: trove.Store) -> None:
    kb.add("\n\n".join(SECTIONS), title="Redis decision")
    kb.add("Redis streams carry events between services. " * 3, title="Streams")
    kb.add("A cache keeps hot keys in memory; redis is one. " * 3, title="Caches")


@pytest.fixture
def counted(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """How many times passages were chosen."""
    calls: list[int] = []
    choose = passage.choose

    def counting(*args: object) -> passage.Chosen:
        calls.append(1)
        return choose(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(passage, "choose", counting)
    return calls


def test_hits_read_later_show_what_hits_read_at_once(store_target: str) -> None:
    """On every backend (PostgreSQL stems the words on the server at the search)."""
    with trove.open(store_target, embedder=None) as kb:
        _filled(kb)
        now = kb.search(QUERY, mode="keyword")
        shown = [(h.chunk, h.snippet) for h in now]
        later = kb.search(QUERY, mode="keyword")
    # Read after the store closed: the choice needs no store.
    assert [(h.chunk, h.snippet) for h in later] == shown
    assert later == now
    assert [h.to_dict() for h in later] == [h.to_dict() for h in now]
    [decision] = [h for h in later if h.title == "Redis decision"]
    assert "«Redis» as a «cache»" in decision.snippet  # the Cache section, not Risks
    assert decision.chunk.heading.endswith("Cache")


def test_a_search_whose_hits_are_not_read_chooses_nothing(
    store_target: str, counted: list[int]
) -> None:
    with trove.open(store_target, embedder=None) as kb:
        _filled(kb)
        hits = kb.search(QUERY, mode="keyword")
        assert [h.doc_id for h in hits] and [h.score for h in hits] and [h.title for h in hits]
        assert counted == []
        assert hits[0].snippet
        assert hits[-1].chunk is not None
        assert all(h.snippet for h in hits)
        assert counted == [1]  # once, for all the hits


def test_hits_read_after_their_store_closed_show_their_passages(kb: trove.Store) -> None:
    """On every backend: the choice needs no store (PostgreSQL stems its words on the
    server at the search, and chooses later)."""
    _filled(kb)
    hits = kb.search(QUERY, mode="keyword")
    kb.close()
    assert all("«" in h.snippet for h in hits)


def test_hits_read_on_many_threads_at_once_choose_once(tmp_path: Path, counted: list[int]) -> None:
    with trove.open(tmp_path / "kb.db", embedder=None) as kb:
        _filled(kb)
        expected = [(h.chunk, h.snippet) for h in kb.search(QUERY, mode="keyword")]
        counted.clear()
        hits = kb.search(QUERY, mode="keyword")
        start = threading.Barrier(8)
        seen: list[list[tuple[object, str]]] = []

        def read() -> None:
            start.wait()
            seen.append([(h.chunk, h.snippet) for h in hits])

        threads = [threading.Thread(target=read) for _ in range(8)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    assert seen == [expected] * 8
    assert counted == [1]


def test_copies_pickles_and_replacements_carry_the_chosen_passage(tmp_path: Path) -> None:
    with trove.open(tmp_path / "kb.db", embedder=None) as kb:
        _filled(kb)
        expected = kb.search(QUERY, mode="keyword")[0]
        expected_shown = (expected.chunk, expected.snippet)
        for made in (
            copy.copy,
            copy.deepcopy,
            lambda h: pickle.loads(pickle.dumps(h)),
            lambda h: replace(h, score=0.5),
        ):
            hit = kb.search(QUERY, mode="keyword")[0]
            assert "_shown" in vars(hit)  # not chosen yet
            other = made(hit)
            assert (other.chunk, other.snippet) == expected_shown
            assert "_shown" not in vars(other)
            assert vars(other).keys() == vars(expected).keys()


def test_a_name_a_hit_lacks_is_still_an_attribute_error(kb: trove.Store) -> None:
    _filled(kb)
    hit = kb.search(QUERY, mode="keyword")[0]
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        hit.nope  # type: ignore[attr-defined]  # noqa: B018
    assert getattr(hit, "nope", 7) == 7
    assert hit.snippet
