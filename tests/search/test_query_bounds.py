"""Query parsing is linear; queries are bounded in length, terms and time."""

from __future__ import annotations

import random
import re
import subprocess
import sys

import pytest

import trove
from trove.errors import InvalidQuery, QueryTimeout
from trove.search import bounds, query

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
    from trove.backends.sqlite import search as sqlite

    with trove.open(tmp_path / "kb.db", embedder=None) as kb:  # type: ignore[operator]
        kb.add_many(
            [
                # A word in 60 chunks: a statement past SQLite's first progress call
                # (1,000 steps), however compact the word index.
                {"text": f"word{i % 5} " * 200, "source": "s", "source_id": str(i)}
                for i in range(300)
            ]
        )
        monkeypatch.setattr(sqlite, "SEARCH_BUDGET_S", -1.0)
        with pytest.raises(QueryTimeout, match="budget"):
            kb.search("word1 OR word2 OR word3", raw=True, mode="keyword")
        monkeypatch.undo()
        assert kb.search("word1 OR word2", raw=True, mode="keyword")
