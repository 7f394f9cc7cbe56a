"""A hit shows the passage of its document that matches the query, not the chunk the
shared title and heading path made score best (issue 30, item 1)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import trove
from trove.models import Chunk
from trove.search.passage import Passage, best_sentence, choose
from trove.search.query import parse

SAMPLES = Path(__file__).resolve().parents[2] / "samples" / "notes"
QUICK_START = "why did we drop redis"
CHUNK_0 = "We ran Redis as a cache in front of the search API for two years."


def test_the_quick_start_shows_chunk_0_in_keyword_search(kb: trove.Store) -> None:
    kb.ingest(SAMPLES)
    [hit] = kb.search(QUICK_START, limit=1, with_text=True)
    assert hit.title == "Why we dropped Redis"
    assert hit.chunk.index == 0
    assert hit.text is not None and CHUNK_0 in hit.text
    assert "«Redis» as a cache" in hit.snippet
    assert "accept that" not in hit.snippet


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["keyword", "semantic", "hybrid"])
def test_the_quick_start_shows_chunk_0_in_every_mode(tmp_path: Path, mode: str) -> None:
    with trove.open(tmp_path / "kb.db") as kb:  # the real default model
        kb.ingest(SAMPLES)
        [hit] = kb.search(QUICK_START, mode=mode, limit=1, with_text=True)
    assert hit.title == "Why we dropped Redis"
    assert hit.text is not None and CHUNK_0 in hit.text
    assert "accept that" not in hit.snippet


def test_a_heading_of_its_own_still_chooses_its_section(kb: trove.Store) -> None:
    kb.ingest(SAMPLES)
    [hit] = kb.search("risks of dropping redis: cold starts", limit=1, with_text=True)
    assert hit.title == "Why we dropped Redis"
    assert hit.text is not None and "We accept that." in hit.text


def _passages(*texts: str) -> list[Passage]:
    return [Passage(10 + i, Chunk(i, 0, len(t)), t) for i, t in enumerate(texts)]


def _spans(texts: dict[int, str]) -> dict[int, list[tuple[int, int]]]:
    """Words as a backend marks them (here: whole words, case folded)."""
    wanted = {"we", "redis"}
    found: dict[int, list[tuple[int, int]]] = {}
    for cid, text in texts.items():
        spans, at = [], 0
        for word in text.split(" "):
            if word.strip(".").lower() in wanted:
                spans.append((at, at + len(word.strip("."))))
            at += len(word) + 1
        found[cid] = spans
    return found


def test_a_term_every_chunk_holds_weighs_less_than_a_rare_one() -> None:
    passages = _passages("we we we we.", "we ran redis.", "we stopped.")
    chosen = choose(parse("we redis"), {"d": passages}, {"d": 12}, _spans)
    assert chosen.chunks == {"d": (11, passages[1].chunk)}
    assert chosen.snippets == {11: "«we» ran «redis»."}


def test_no_match_anywhere_keeps_the_chunk_the_retriever_ranked() -> None:
    passages = _passages("no match here.", "nor here.", "nothing.")
    chosen = choose(parse("paraphrase"), {"d": passages}, {"d": 12}, _spans)
    assert chosen.chunks["d"][0] == 12


def test_cjk_passages_are_chosen_by_the_query_bigrams() -> None:
    passages = _passages("北京是中国的首都。", "战国无双3是由光荣开发的。")
    chosen = choose(parse("战国无双3是由哪两个公司开发的"), {"d": passages}, {"d": 10}, _spans)
    assert chosen.chunks["d"][0] == 11
    assert chosen.snippets[11] == "«战国无双3是由»光荣«开发的»。"


def test_a_tie_goes_to_the_earlier_chunk_not_the_ranked_one() -> None:
    passages = _passages("we ran redis.", "the cache: we kept redis.", "other.")
    chosen = choose(parse("we redis"), {"d": passages}, {"d": 11}, _spans)
    assert chosen.chunks["d"][0] == 10


def test_a_lone_chunk_holding_a_term_is_chosen_over_the_ranked_one() -> None:
    passages = _passages("nothing here.", "still nothing.", "it ran redis.")
    chosen = choose(parse("redis"), {"d": passages}, {"d": 10}, _spans)
    assert chosen.chunks["d"][0] == 12
    assert chosen.snippets == {12: "it ran «redis»."}


def _sentence_of_each_match(text: str, spans: list[tuple[int, int]], grams: list[str]) -> int:
    """best_sentence's definition: a match is in the sentence numbered by how many
    sentence ends (``.!?。！？；`` or a newline) come before where it starts."""
    held: dict[int, set[str]] = {}
    marks = [(s, text[s:e].lower()) for s, e in spans]
    marks += [(at, g) for g in grams for at in range(len(text)) if text.lower().startswith(g, at)]
    for at, term in marks:
        held.setdefault(sum(c in ".!?。！？；\n" for c in text[:at]), set()).add(term)
    return max(map(len, held.values()), default=0)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.sampled_from(["we", "Redis", "ran", "it", ".", "!", "\n", "。", "缓存", " "])),
    st.lists(st.sampled_from(["缓存", "存。"]), max_size=2),
)
def test_best_sentence_counts_the_terms_of_each_sentence(
    pieces: list[str], grams: list[str]
) -> None:
    text = " ".join(pieces)
    spans = [
        (m.start(), m.end()) for m in re.finditer(r"\b(?:we|redis|ran)\b", text, re.IGNORECASE)
    ]
    assert best_sentence(text, spans, grams) == _sentence_of_each_match(text, spans, grams)
