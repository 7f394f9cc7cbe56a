"""The passage a hit shows: of its document's chunks, the one holding the sentence that
matches the query best.

Retrievers rank chunks with the title and heading path indexed beside each chunk's text
(so a word of the title finds the document), and BM25 normalizes by length. Every chunk
of a Markdown note carries its title, so for a query about the title the shortest chunk
won: the README's own query, "why did we drop redis", showed the two-line "Risks" section
("…We accept that.") instead of "We ran Redis as a cache…". What every chunk of a
document shares cannot tell its passages apart; their texts can. So a hit's document is
ranked as before, and its passage is chosen here from the matches in each chunk's own
text: first the chunk with the sentence that holds the most distinct query terms (an
answer sits in one sentence: a chunk that cuts it holds fewer), then the one whose terms
weigh most, a term weighing more the fewer of the document's chunks hold it, then the
earliest; a document none of whose chunks holds a query term (a paraphrase found by
meaning) shows the chunk the retriever ranked.
bench/passage.py measures it on CMRC 2018.
"""

from __future__ import annotations

import math
import re
import threading
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from trove.hits import Chosen, Passages
from trove.models import Chunk
from trove.search import snippet, snippet_text
from trove.search.query import ParsedQuery

# A document of more chunks shows the chunk its retriever ranked: reading and marking
# every chunk of a long PDF for each of its hits would cost more than the search.
MAX_CHUNKS = 64

# Where a sentence (or a line) ends: what a chunk's best match is looked for in.
_SENTENCE_END = re.compile(r"[.!?。！？；\n]")

# (chunk texts by chunk id) -> each text's match spans (a backend's stemmed word marks).
Spans = Callable[[Mapping[int, str]], dict[int, list[tuple[int, int]]]]


@dataclass(frozen=True)
class Passage:
    """One chunk of a hit's document, as a backend reads it for the choice."""

    chunk_id: int
    chunk: Chunk
    text: str


class Deferred:
    """The passages of a search's hits (:class:`~trove.hits.Passages`), chosen when a
    hit's ``chunk`` or ``snippet`` is first read, for all of them at once: a keyword
    search on SciFact spent 0.6 of its 1.6 ms choosing passages its caller may never
    read. ``spans_of`` must need no store (the hits may be read after it closed)."""

    def __init__(
        self,
        query: ParsedQuery,
        candidates: Mapping[str, Sequence[Passage]],
        ranked: Mapping[str, int],
        spans_of: Spans,
    ) -> None:
        self._choice: tuple[Any, ...] | None = (query, candidates, ranked, spans_of)
        self._chosen: Chosen | None = None
        self._lock = threading.Lock()

    def chosen(self) -> Chosen:
        with self._lock:  # two threads reading hits of one search choose once
            if self._chosen is None:
                assert self._choice is not None
                self._chosen = choose(*self._choice)
                self._choice = None  # the chunk texts go once chosen
            return self._chosen


@dataclass(frozen=True)
class Shown:
    """What each hit of one search shows (:class:`~trove.hits.Shown`): its document's
    passage and that passage's snippet, cleaned; the chunk its retriever ranked where
    none was read (a chunk replaced since it was ranked)."""

    passages: Passages
    ranked: Mapping[str, tuple[int, Chunk]]

    def of(self, doc_id: str) -> tuple[Chunk, str]:
        chosen = self.passages.chosen()
        chunk_id, chunk = chosen.chunks.get(doc_id) or self.ranked[doc_id]
        return chunk, snippet_text.clean(chosen.snippets.get(chunk_id, ""))


def choose(
    query: ParsedQuery,
    candidates: Mapping[str, Sequence[Passage]],
    ranked: Mapping[str, int],
    spans_of: Spans,
) -> Chosen:
    """The best passage of each document among ``candidates`` (its chunks) and its
    snippet; ``ranked`` is the chunk each document's retriever ranked."""
    texts = {p.chunk_id: p.text for passages in candidates.values() for p in passages}
    spans = spans_of(texts)
    grams = query.bigrams()
    chunks: dict[str, tuple[int, Chunk]] = {}
    snippets: dict[int, str] = {}
    for doc_id, passages in candidates.items():
        if len(passages) > 1:
            found = {p.chunk_id: terms(p.text, spans[p.chunk_id], grams) for p in passages}
            sentences = _sentences(passages, found, spans, grams)
            best = _best(passages, found, sentences, ranked.get(doc_id))
        elif passages:  # one chunk (a long document's ranked one): no choice to make
            best = passages[0]
        else:
            continue
        marks = spans[best.chunk_id] + _gram_spans(best.text, grams)
        chunks[doc_id] = (best.chunk_id, best.chunk)
        snippets[best.chunk_id] = snippet.make(best.text, marks)
    return Chosen(chunks, snippets)


def terms(text: str, spans: Sequence[tuple[int, int]], grams: Sequence[str]) -> set[str]:
    """The distinct query terms ``text`` holds: its marked words (as written, folded) and
    the query's CJK bigrams."""
    found = {text[start:end].lower() for start, end in spans}
    if grams:
        folded = text.lower()
        found.update(g for g in grams if g in folded)
    return found


def best_sentence(text: str, spans: Sequence[tuple[int, int]], grams: Sequence[str]) -> int:
    """The most distinct query terms one sentence (or line) of ``text`` holds. Each
    match is placed in its sentence by where it starts: the matches in order, a sentence
    ends between two of them where the text between holds a sentence's end (a search
    of the few gaps between matches, not of every sentence end: a regex match per
    sentence and a set per sentence cost a hybrid search on SciFact 2 ms)."""
    marks = [(start, text[start:end].lower()) for start, end in spans]
    if grams:
        folded = text.lower()
        for gram in grams:
            at = folded.find(gram)
            while at != -1:
                marks.append((at, gram))
                at = folded.find(gram, at + 1)
    marks.sort()
    best, previous = 0, 0
    held: set[str] = set()
    for at, term in marks:
        if held and _SENTENCE_END.search(text, previous, at):
            best, held = max(best, len(held)), set()
        held.add(term)
        previous = at
    return max(best, len(held))


def _sentences(
    passages: Sequence[Passage],
    found: Mapping[int, set[str]],
    spans: Mapping[int, Sequence[tuple[int, int]]],
    grams: Sequence[str],
) -> dict[int, int]:
    """:func:`best_sentence` of each passage that holds a term (0 for the others), where
    two or more do: a lone passage with terms is chosen whatever its sentences hold (its
    best sentence holds one at least, the others' none), so they are not read."""
    holding = [p for p in passages if found[p.chunk_id]]
    if len(holding) < 2:
        return {p.chunk_id: 1 if found[p.chunk_id] else 0 for p in passages}
    sentences = dict.fromkeys(found, 0)
    for p in holding:
        sentences[p.chunk_id] = best_sentence(p.text, spans[p.chunk_id], grams)
    return sentences


def _best(
    passages: Sequence[Passage],
    found: Mapping[int, set[str]],
    sentences: Mapping[int, int],
    ranked: int | None,
) -> Passage:
    """The passage with the best sentence, then whose distinct terms weigh most, a term
    weighing more the fewer of the document's chunks hold it, then the earliest (where
    the document first says it); with no term anywhere (a paraphrase found by meaning),
    the chunk the retriever ranked."""
    if not any(found.values()):
        return next((p for p in passages if p.chunk_id == ranked), passages[0])
    count = len(passages)
    holders = Counter(term for p in passages for term in found[p.chunk_id])

    def weight(p: Passage) -> tuple[int, float, int]:
        score = sum(math.log(1 + count / holders[term]) for term in found[p.chunk_id])
        return sentences[p.chunk_id], round(score, 9), -p.chunk.index

    return max(passages, key=weight)


def _gram_spans(text: str, grams: Sequence[str]) -> list[tuple[int, int]]:
    """Where the query's CJK bigrams occur in ``text``: what the snippet centres on in a
    language without words (its spans merged where they overlap)."""
    return snippet.substring_intervals(text, grams) if grams else []
