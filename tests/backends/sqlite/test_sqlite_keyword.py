"""The in-memory word index: FTS5's exact BM25 ranking, kept in step with the file."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import trove
from helpers.threads import run_threads
from trove.backends.sqlite.word_index import fts as keyword
from trove.backends.sqlite.word_index import searcher as word_searcher
from trove.search.query import parse

WORDS = [
    "running", "runs", "runner", "café", "cafe", "CAFÉ", "graph", "graphs", "index",
    "indexes", "vector", "sqlite", "the", "of", "a", "zebra", "ångström", "naïve", "42",
    "x86", "co2", "über", "quick", "brown", "fox",
]  # fmt: skip


def fts_ranking(kb: trove.Store, query: str, window: int = 1000) -> list[tuple[int, float]]:
    parsed = parse(query)
    match = keyword.word_match(parsed)
    assert match is not None
    return kb.backend._fts_ranked("chunk_fts", match, window)  # type: ignore[attr-defined]


def memory_ranking(kb: trove.Store, query: str, window: int = 1000) -> list[tuple[int, float]]:
    ranker = kb.backend._word_ranker(parse(query))  # type: ignore[attr-defined]
    assert ranker is not None, "the in-memory index should answer"
    return ranker(window)


def assert_same(kb: trove.Store, query: str, window: int = 1000) -> None:
    """Same chunks, same scores to the bit, same order (ties by chunk id, as FTS5)."""
    assert memory_ranking(kb, query, window) == fts_ranking(kb, query, window)


@pytest.fixture
def kb(db_path: Path):
    with trove.open(db_path, embedder=None) as store:
        yield store


def add_texts(kb: trove.Store, texts: list[str], **fields: str) -> list[str]:
    return kb.add_many({"text": t, **fields} for t in texts)


@settings(max_examples=25, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    docs=st.lists(
        st.lists(st.sampled_from(WORDS), min_size=1, max_size=40).map(" ".join),
        min_size=1,
        max_size=30,
    ),
    query=st.lists(st.sampled_from(WORDS), min_size=1, max_size=6).map(" ".join),
)
def test_scores_equal_fts5_bm25(tmp_path: Path, docs: list[str], query: str) -> None:
    with trove.open(tmp_path / f"p{abs(hash((tuple(docs), query)))}.db", embedder=None) as kb:
        add_texts(kb, docs)
        kb.warm()
        assert_same(kb, query)


def test_titles_and_headings_count_like_fts5(kb: trove.Store) -> None:
    kb.add("# Graphs\n\nA vector index of graphs.\n\n## Zebra\n\nquick fox", title="Index")
    kb.add("graph graph graph " * 50, title="Vector")
    kb.warm()
    for query in ("graph", "index zebra", "vector fox", "graphs vector index"):
        assert_same(kb, query)


def test_follows_this_process_writes(kb: trove.Store) -> None:
    ids = [kb.add(t, source="s", source_id=t) for t in ["quick brown fox", "lazy dog"]]
    ids += add_texts(kb, ["brown bear"])
    kb.warm()
    assert_same(kb, "brown fox")
    add_texts(kb, ["a brown fox again", "fox fox fox"])
    assert_same(kb, "brown fox")
    assert (
        kb.add("only a dog now", source="s", source_id="quick brown fox") == ids[0]
    )  # replaced text: new chunks, old ones dropped
    assert_same(kb, "brown fox dog")
    kb.delete(ids[2])
    kb.purge()  # removes the chunks for good
    assert_same(kb, "brown fox dog bear")
    assert all(hit.doc_id != ids[2] for hit in kb.search("bear", mode="keyword"))


def test_follows_another_connections_commits(db_path: Path) -> None:
    with trove.open(db_path, embedder=None) as reader, trove.open(db_path, embedder=None) as w:
        add_texts(w, ["alpha beta", "beta gamma"])
        reader.warm()
        assert_same(reader, "beta")
        doc = add_texts(w, ["beta beta delta"])[0]
        assert_same(reader, "beta delta")
        assert reader.search("delta", mode="keyword")[0].doc_id == doc
        w.delete(doc)
        w.purge()
        assert_same(reader, "beta delta")
        assert reader.search("delta", mode="keyword") == []


def test_rolled_back_write_leaves_no_trace(kb: trove.Store) -> None:
    add_texts(kb, ["stable text about graphs"] + [f"other note {i}" for i in range(5)])
    kb.warm()
    backend = kb.backend
    doc_id = kb.search("graphs", mode="keyword")[0].doc_id
    with pytest.raises(RuntimeError), backend.transaction():
        backend.replace_chunks(doc_id, [])  # type: ignore[attr-defined]
        raise RuntimeError("abort")
    assert_same(kb, "graphs")
    assert [h.doc_id for h in kb.search("graphs", mode="keyword")] == [doc_id]


def test_rebuilds_when_most_rows_are_replaced(kb: trove.Store) -> None:
    for i in range(20):
        kb.add(f"version one of note {i} about graphs", source="s", source_id=str(i))
    kb.warm()
    for round_ in range(3):
        for i in range(20):
            kb.add(
                f"version {round_} of note {i} about vector graphs", source="s", source_id=str(i)
            )
        assert_same(kb, "graphs vector note")
    index = kb.backend._words._index  # type: ignore[attr-defined]
    assert index.dead_share <= 0.5


def test_filters_still_fill_the_limit(kb: trove.Store) -> None:
    add_texts(kb, [f"graph note {i}" for i in range(300)], source="noise")
    add_texts(kb, [f"a graph {i} worth finding" for i in range(12)], source="wanted")
    kb.warm()
    hits = kb.search("graph", mode="keyword", source="wanted", limit=10)
    assert len(hits) == 10
    assert {h.source for h in hits} == {"wanted"}


def test_ties_at_the_window_edge_are_fts5s(kb: trove.Store) -> None:
    # 40 chunks score alike: a window of 10 keeps FTS5's ten (the lowest chunk ids), and
    # a text with the word twice adds a sum FTS5 computes in its own order of operations.
    add_texts(kb, ["graph vector note"] * 40 + ["graph graph vector index"] * 3)
    kb.warm()
    for window in (1, 10, 25, 100):
        assert_same(kb, "graph vector index", window)


def test_a_word_of_two_tokens_goes_to_fts5() -> None:
    index = keyword.WordIndex(lambda data: data.decode().split())
    index.add([(1, "foo bar"), (2, "bar")])
    assert index.ranker(["foo bar"]) is None
    rank = index.ranker(["bar"])
    assert rank is not None
    assert [cid for cid, _ in rank(10)] == [2, 1]  # the shorter chunk first


def test_small_store_stays_on_fts5_until_warmed(kb: trove.Store) -> None:
    add_texts(kb, ["graph index"])
    kb.search("graph", mode="keyword")
    assert not kb.backend._words.ready  # type: ignore[attr-defined]
    kb.warm()
    assert kb.backend._words.ready  # type: ignore[attr-defined]


def test_large_store_builds_in_the_background(
    kb: trove.Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(word_searcher, "AUTO_MIN_CHUNKS", 5)
    add_texts(kb, [f"graph {i} of many" for i in range(10)])
    searcher = kb.backend._words  # type: ignore[attr-defined]
    before = kb.search("graph", mode="keyword", limit=20)  # FTS5
    assert searcher._builder is None  # a one-shot command's only query builds nothing
    assert kb.search("graph", mode="keyword", limit=20) == before  # FTS5; starts the build
    assert searcher._builder is not None
    searcher._builder.join(timeout=30)
    assert searcher.ready
    assert kb.search("graph", mode="keyword", limit=20) == before


def test_close_stops_a_build(db_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(word_searcher, "AUTO_MIN_CHUNKS", 5)
    monkeypatch.setattr(keyword, "SEGMENT_ROWS", 16)
    kb = trove.open(db_path, embedder=None)
    add_texts(kb, [f"graph {i}" for i in range(2000)])
    kb.search("graph", mode="keyword")
    kb.search("graph", mode="keyword")
    builder = kb.backend._words._builder  # type: ignore[attr-defined]
    kb.close()
    assert builder is not None and not builder.is_alive()


def test_concurrent_writers_and_searchers(kb: trove.Store) -> None:
    add_texts(kb, [f"seed graph {i}" for i in range(50)])
    kb.warm()

    def write_or_search(n: int) -> None:  # three writers, two searchers
        for i in range(20 if n < 3 else 30):
            if n < 3:
                kb.add(f"thread {n} graph {i} vector", source="t", source_id=f"{n}-{i % 5}")
            else:
                kb.search("graph vector", mode="keyword")

    run_threads(write_or_search, 5)
    assert_same(kb, "graph vector thread seed")


def test_many_small_writes_merge_into_few_segments(
    kb: trove.Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(keyword, "SEGMENT_ROWS", 8)
    add_texts(kb, ["seed graph"])
    kb.warm()
    for i in range(60):
        kb.add(f"note {i} graph {'vector ' * (i % 4)}")
        if i % 7 == 0:
            assert_same(kb, "graph vector note")
    assert_same(kb, "graph vector note")
    segments = kb.backend._words._index._segments  # type: ignore[attr-defined]
    assert all(s.row_count <= 8 for s in segments)
    assert len(segments) <= 12  # 61 rows in segments of up to 8, small ones merged
