"""From ranked chunks to ranked documents: windows, collapsing chunks to their
documents, evidence from several indexes, and the substring fallback's score.

Fusing two retrievers' documents is :mod:`trove.search.fusion`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from trove.models import Chunk, assemble
from trove.search.bm25 import K1, B

if TYPE_CHECKING:
    from trove import hits
    from trove.hits import ChunkHit
else:  # at the first search: the SQLite backend's filters import this module, and opening
    # a store makes no hit dataclass
    from trove.lazy import LazyModule

    hits = LazyModule("trove.hits")


# Chunks ranked past ``limit`` at least (:func:`first_window`), and asked about past it
# first (backends/sqlite/filters.first_asked): those a filter may hide.
SPARE = 16


def first_window(limit: int, repeats: float = 1.0) -> int:
    """Chunks to rank for ``limit`` documents. ``repeats``: the share of the store's
    chunks that add no document to a ranking (:func:`repeated_share`; 0 where every
    document is one chunk and none is deleted). A document's chunks rarely crowd the top
    of one query's ranking, so half again as many chunks usually suffice, and twice the
    share of repeats where that is less (but ``SPARE`` more at least: chunks a filter may
    hide); callers widen the window (``WIDEN`` times) when they do not. Wider first
    windows cost every query: at 100k chunks, 600 instead of 300 for a hybrid search's
    200 documents was slower; at 1M one-chunk documents each leg ranks 216, not 300."""
    spare = max(int(limit * min(0.5, 2 * repeats)), min(SPARE, limit // 2))
    return max(limit + spare, 50)


def repeated_share(chunks: int, documents: int) -> float:
    """Of a store's ``chunks`` chunks, the share that are not the first of one of its
    ``documents`` live documents: a document's later chunks, and a deleted one's (ranked
    until it is purged, then hidden by the filter). 0 in a store of one-chunk documents
    (chat messages, memories). Nothing known (no chunk or no document) is as if
    documents repeat."""
    if chunks <= 0 or documents <= 0:
        return 1.0
    return max(0.0, 1.0 - documents / chunks)


WIDEN = 4


# A chunk's (index, start, end, heading), as a backend's filter reads it: a Chunk is built
# only for the chunk that stands for its document (a hybrid leg checks some 216 chunks for
# 200 documents, and fusion keeps 10 of them).
ChunkFields = tuple[int, int, int, str]


def collapse(
    ranked: Sequence[tuple[int, float]],
    allowed: Mapping[int, tuple[str, Chunk | ChunkFields]],
    limit: int,
) -> list[ChunkHit]:
    """Best chunk per document, in rank order, keeping only allowed chunks."""
    best: dict[str, ChunkHit] = {}
    for cid, score in ranked:
        found = allowed.get(cid)
        if found is not None and found[0] not in best:
            doc_id, chunk = found
            if not isinstance(chunk, Chunk):
                chunk = Chunk(*chunk)
            # half the cost of ChunkHit(...), 200 times a hybrid leg
            fields = {"doc_id": doc_id, "chunk_id": cid, "score": score, "chunk": chunk}
            best[doc_id] = assemble(hits.ChunkHit, fields)
            if len(best) >= limit:
                break
    return list(best.values())


def merge_evidence(scores: dict[str, ChunkHit], hit: ChunkHit, *, keep_best: bool = False) -> None:
    """Combine evidence for one document: scores from different indexes add up
    (``keep_best``: keep the better of two hits instead)."""
    current = scores.get(hit.doc_id)
    if current is None:
        scores[hit.doc_id] = hit
    elif keep_best:
        if hit.score > current.score:
            scores[hit.doc_id] = hit
    else:
        best = hit if hit.score > current.score else current
        scores[hit.doc_id] = hits.ChunkHit(
            best.doc_id, best.chunk_id, current.score + hit.score, best.chunk
        )


def substring_scores(texts: Sequence[str], terms: Sequence[str], total: int) -> list[float]:
    """A BM25-like score of each (lowercased) text for terms matched as substrings, when
    no index can count them (CJK words under three characters): idf from how many of
    ``texts`` hold a term among ``total`` chunks, length normalized around 600 chars."""
    frequency = {t: sum(1 for text in texts if t in text) for t in terms}
    scores = []
    for text in texts:
        score = 0.0
        for term in terms:
            tf = text.count(term)
            if tf:
                idf = math.log((total - frequency[term] + 0.5) / (frequency[term] + 0.5) + 1)
                score += idf * tf * (K1 + 1) / (tf + K1 * (1 - B + B * len(text) / 600))
        scores.append(score)
    return scores
