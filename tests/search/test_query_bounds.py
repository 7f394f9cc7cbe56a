"""Query parsing is linear; queries are bounded in length, terms and time."""

from __future__ import annotations

import random
import re
import subprocess
import sys
import time
from typing import Any

import pytest

import trove
from trove.errors import InvalidQuery, QueryTimeout
from trove.search import bounds, deadline, query

# The pattern the segmenter used to run over whole texts (quadratic on a long word).
_OLD_SEGMENT = re.compile(rf"[^\W_]*[{query._CJK}][^\W_]*")


def test_segments_are_the_same_as_the_old_pattern_finds() -> None:
    rng = random.Random(7)
    alphabet = "ab1_ 中文・ー한-,.é\u30a0x\u3000"
    for _ in range(5000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 16)))
        assert query.cjk_segments(text) == _OLD_SEGMENT.findall(text)
        assert query.blank_cjk(text) == _OLD_SEGMENT.sub(" ", text)


def test_a_long_word_is_parsed_and_indexed_in_linear_time() -> None:
    # The old pattern took 1.8 s for 8,000 letters and grew with the square: 400,000
    # letters would take over an hour. In a child process, so a regression fails by its
    # timeout instead of hanging the suite.
    code = (
        "from trove.search.query import cjk_grams, parse\n"
        "parse('a' * 9_999)\n"
        "assert cjk_grams('a' * 400_000 + '中') == ['a' * 400_000, 'a中']\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)


def test_a_query_longer_than_the_cap_is_refused(kb: trove.Store) -> None:
    with pytest.raises(InvalidQuery, match="query is 10,001 characters"):
        kb.search("a" * 10_001)


def test_a_long_query_keeps_its_rarest_words_and_says_which_it_dropped(
    kb: trove.Store,
) -> None:
    common = [f"common{i}" for i in range(100)]
    for n in range(3):
        kb.add(" ".join(common), source="s", source_id=f"c{n}")
    kb.add("the zebrafish note", source="s", source_id="z")
    words = [*common, "zebrafish"]
    hits = kb.search(" ".join(words), mode="keyword", explain=True, limit=10)
    assert hits[0].source_id == "z"
    dropped = hits[0].explain["dropped_terms"]  # type: ignore[index]
    assert len(dropped) == len(words) - bounds.MAX_WORDS
    assert "zebrafish" not in dropped


def test_a_search_past_its_time_budget_is_stopped(
    tmp_path: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    with trove.open(tmp_path / "kb.db", embedder=None) as kb:  # type: ignore[operator]
        kb.add_many(
            [
                # A word in 60 chunks: a statement past SQLite's first progress call
                # (1,000 steps), however compact the word index.
                {"text": f"word{i % 5} " * 200, "source": "s", "source_id": str(i)}
                for i in range(300)
            ]
        )
        monkeypatch.setattr(deadline, "SEARCH_BUDGET_S", -1.0)
        with pytest.raises(QueryTimeout, match="budget"):
            kb.search("word1 OR word2 OR word3", raw=True, mode="keyword")
        monkeypatch.undo()
        assert kb.search("word1 OR word2", raw=True, mode="keyword")


def test_a_raw_query_longer_than_the_cap_is_refused(kb: trove.Store) -> None:
    # Raw queries skipped the cap: 100 KB of raw ORs ran for minutes.
    with pytest.raises(InvalidQuery, match="query is 10,001 characters"):
        kb.search("a" * 10_001, raw=True)
    with pytest.raises(InvalidQuery, match="query is 100,001 characters"):
        kb.search("w OR " * 20_000 + "w", raw=True)
    assert kb.search('"' + "a " * 4_998 + 'a"', raw=True) == []  # at the cap: searched


def test_a_search_with_its_budget_spent_is_stopped_on_every_backend(
    kb: trove.Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    kb.add("word1 word2", source="s", source_id="1")
    monkeypatch.setattr(deadline, "SEARCH_BUDGET_S", -1.0)
    for raw in (False, True):
        with pytest.raises(QueryTimeout, match="budget"):
            kb.search("word1 OR word2", raw=raw, mode="keyword")
    monkeypatch.undo()
    assert kb.search("word1 OR word2", raw=True, mode="keyword")


def test_the_budget_is_one_for_the_whole_search_not_one_per_step(
    tmp_path: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Each step used to start a budget of its own: steps that each fit in it ran past it
    # together, however many there were.
    with trove.open(tmp_path / "kb.db", embedder="hash:64") as kb:  # type: ignore[operator]
        kb.add("word1 word2", source="s", source_id="1")
        monkeypatch.setattr(deadline, "SEARCH_BUDGET_S", 0.5)
        for step in ("keyword_search", "hit_details"):  # 0.3 s each: 0.6 s in all
            monkeypatch.setattr(kb.backend, step, slowed(getattr(kb.backend, step), 0.3))
        with pytest.raises(QueryTimeout, match="budget"):
            kb.search("word1", mode="keyword")
        monkeypatch.setattr(deadline, "SEARCH_BUDGET_S", 5.0)
        assert kb.search("word1", mode="keyword")


def slowed(step: Any, seconds: float) -> Any:
    def slow(*args: Any) -> Any:
        found = step(*args)
        time.sleep(seconds)
        return found

    return slow


def test_the_embedders_time_is_not_charged_to_the_search(
    tmp_path: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A model's first load takes seconds on a cold process; the search is what is bounded.
    from trove.embedders.hashing import HashEmbedder

    class Slow(HashEmbedder):
        def embed_query(self, text: str) -> Any:
            time.sleep(0.6)
            return super().embed_query(text)

    with trove.open(tmp_path / "kb.db", embedder=Slow(64)) as kb:  # type: ignore[operator]
        kb.add("word1 word2", source="s", source_id="1")
        monkeypatch.setattr(deadline, "SEARCH_BUDGET_S", 0.5)
        for mode in ("semantic", "hybrid"):
            assert kb.search("word1", mode=mode)


def test_a_raw_query_of_more_words_and_phrases_than_a_plain_one_keeps_is_refused(
    kb: trove.Store,
) -> None:
    # FTS5 reads an OR of n terms in steps that each cost n, and a statement is stopped
    # only between steps: 2,000 raw terms ran 9-33 s past the 5 s budget.
    kb.add("w1 w2", source="s", source_id="1")
    at_cap = " OR ".join(f"w{i}" for i in range(query.MAX_RAW_PHRASES))
    assert kb.search(at_cap, raw=True, mode="keyword")
    with pytest.raises(InvalidQuery, match="more than 64 words and phrases"):
        kb.search(at_cap + " OR w", raw=True, mode="keyword")
    with pytest.raises(InvalidQuery, match="more than 64 words and phrases"):
        kb.search("NEAR(" + "w1 " * 65 + ")", raw=True, mode="keyword")


@pytest.mark.parametrize("mode", ["semantic", "hybrid"])
def test_the_vector_leg_draws_on_the_same_budget_on_every_backend(
    store_target: str, mode: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    with trove.open(store_target, embedder="hash:64") as kb:
        kb.add("word1 word2", source="s", source_id="1")
        monkeypatch.setattr(deadline, "SEARCH_BUDGET_S", -1.0)
        with pytest.raises(QueryTimeout, match="budget"):
            kb.search("word1", mode=mode)
        monkeypatch.undo()
        assert kb.search("word1", mode=mode)


def test_work_outside_the_search_is_neither_stopped_nor_charged() -> None:
    """An index catching up with other processes' commits (deadline.outside) is not the
    search's own work: under 8 writing processes it ran a reader's searches past the
    budget (QueryTimeout, and sqlite-vec's interrupted scan as a bare SQLError)."""
    import time

    from trove.search import deadline

    with deadline.within(0.05):
        with deadline.outside():
            assert deadline.left() is None and not deadline.expired()
            time.sleep(0.1)
        deadline.check()  # the 0.1 s was not charged
        left = deadline.left()
        assert left is not None and 0 < left <= 0.05
