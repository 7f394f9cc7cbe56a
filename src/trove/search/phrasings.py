"""Several phrasings of one query: each phrasing retrieved, the lists fused, and
documents, snippets and calibration once over the fused list, as for a plain query.

A plain search spends most of its time after retrieval (documents read, calibration's
coverage, snippets); searching each variant in full multiplied that by the number of
phrasings (bench/agent_loop.py). Here:

- keyword: one BM25 ranking over the union of the phrasings' words, each word once: a
  document holding one variant's words only is in it, and a document's score sums what
  each phrasing's words give it (fusion by sum, in one index scan).
  Weighting a word by how many phrasings hold it (FTS5 scores a word given twice twice)
  costs one more index scan per copy, and PostgreSQL counts each lexeme once anyway;
- semantic: each phrasing searched by meaning (its own k-NN results, all phrasings'
  vectors in one pass of the vector index; an LLM's variants' vectors come cached with
  the expansion) and the lists fused, each document once with its best similarity, so
  a document only one variant is near is found;
- the two legs fused, calibrated and cut to ``limit`` exactly as
  :meth:`HybridSearch.search` does.

``explain`` says which phrasing would have found each hit on its own: it runs each
phrasing's retrieval legs again (not their documents or snippets), so it costs more than
the search it explains and never changes it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from trove.embedders.base import Embedder, scripts_of
from trove.hits import ChunkHit, Hit
from trove.search import calibration, deadline
from trove.search.bounds import MAX_CJK_CHARS, MAX_WORDS, bounded
from trove.search.filters import Filters
from trove.search.fusion import fuse
from trove.search.hybrid import FUSION_DEPTH, SCRIPT_SHARE, HybridSearch
from trove.search.query import ParsedQuery, parse
from trove.search.variants import Variant
from trove.timeutil import now

if TYPE_CHECKING:
    import numpy as np

    from trove.search.request import SearchRequest
else:  # numpy loads where first used: opening a store, stats, keyword search need none
    from trove.lazy import numpy as np


@dataclass(frozen=True)
class Phrasing:
    """One phrasing, parsed: its variant, its words (None: matched by meaning only)."""

    variant: Variant
    parsed: ParsedQuery | None
    dropped: tuple[str, ...] = ()


def search(
    hybrid: HybridSearch,
    request: SearchRequest,
    variants: Sequence[Variant],
    vectors: Mapping[str, Any] | None = None,
) -> list[Hit]:
    """The request's query and its ``variants`` as one ranking (``vectors``: known query
    vectors of variants, by text)."""
    mode = hybrid.resolve_mode(request.mode)
    query, limit, where, raw = request.query, request.limit, request.filters, request.raw
    if not query.strip() or limit == 0:
        return []
    runs = [Variant(query, None, "query"), *variants]
    phrasings = [_parsed(hybrid, run, mode, raw) for run in runs]
    scripts = scripts_of(query, min_share=SCRIPT_SHARE)
    weights = hybrid.weights(scripts, mode)
    union = _union(phrasings)
    if union.empty and mode == "keyword":
        return []
    lists, found = _legs(hybrid, phrasings, union, weights, (where, limit), vectors or {})
    method = hybrid.parts.fusion if len(lists) > 1 else "single"
    adaptive = hybrid.parts.keyword_weight is None  # as HybridSearch.search
    fused = fuse(lists, weights, method=method, limit=limit, adaptive=adaptive)
    info = calibration.query_info(union.words, union.cjk, "cjk" in scripts)
    dropped = tuple(dict.fromkeys(w for p in phrasings for w in p.dropped))
    hits = hybrid.hits(union, fused, lists, info, (method, weights, dropped, request.explain))
    if request.explain and hits:
        hits = attributed(
            hybrid, hits, phrasings, found, (method, weights, where, "cjk" in scripts)
        )
    return hits


def _parsed(hybrid: HybridSearch, run: Variant, mode: str, raw: bool) -> Phrasing:
    if run.mode == "semantic" or mode == "semantic":
        return Phrasing(run, None)
    parsed, dropped = bounded(parse(run.query, raw=raw), hybrid.parts.backend.term_counts)
    return Phrasing(run, parsed, dropped)


def _union(phrasings: Sequence[Phrasing]) -> ParsedQuery:
    """The keyword query of every phrasing's words and CJK text, each once (the query's
    first), within the bounds of one query. Raw query trees cannot be merged: a raw
    query is searched by its own words (its variants add by meaning only)."""
    parsed = [p.parsed for p in phrasings if p.parsed is not None]
    raws = [q for q in parsed if q.raw is not None]
    if raws:
        return raws[0]
    words = tuple(dict.fromkeys(w for q in parsed for w in q.words))[:MAX_WORDS]
    cjk, budget = [], MAX_CJK_CHARS
    for segment in dict.fromkeys(s for q in parsed for s in q.cjk):
        if budget <= 0:
            break
        cjk.append(segment[:budget])
        budget -= len(segment)
    return ParsedQuery(words=words, cjk=tuple(cjk))


def _legs(
    hybrid: HybridSearch,
    phrasings: Sequence[Phrasing],
    union: ParsedQuery,
    weights: dict[str, float],
    scope: tuple[Filters, int],
    vectors: Mapping[str, Any],
) -> tuple[dict[str, list[ChunkHit]], Vectors | None]:
    """The keyword leg over the union of words and the semantic leg over each
    phrasing's vector, the semantic one on the pool while the
    keyword one ranks, as HybridSearch.both does."""
    where, limit = scope
    used = [name for name, weight in weights.items() if weight > 0]
    stamp = now()
    # One leg: the fusion keeps its top ``limit`` only.
    depth = FUSION_DEPTH if len(used) > 1 else limit
    pending = None
    if "semantic" in used and hybrid.legs_apart():
        semantic = deadline.carried(_semantic)
        pending = hybrid.pool.submit(
            semantic, hybrid, phrasings, vectors, where, (depth, limit), stamp
        )
    lists: dict[str, list[ChunkHit]] = {}
    if "keyword" in used:
        backend = hybrid.parts.backend
        lists["keyword"] = (
            [] if union.empty else backend.keyword_search(union, where, depth, stamp)
        )
    found = None
    if "semantic" in used:
        if pending is None:
            lists["semantic"], found = _semantic(
                hybrid, phrasings, vectors, where, (depth, limit), stamp
            )
        else:
            lists["semantic"], found = pending.result()
    return lists, found


# The embedder's lock and each phrasing's query vector (None: not matched by meaning).
Vectors = tuple[Any, list[Any]]


def _semantic(
    hybrid: HybridSearch,
    phrasings: Sequence[Phrasing],
    vectors: Mapping[str, Any],
    where: Filters,
    depths: tuple[int, int],
    stamp: float,
) -> tuple[list[ChunkHit], Vectors | None]:
    """Each phrasing's nearest documents (one k-NN pass for every phrasing with a vector:
    the backend's vector_search_many), fused: each document once, with its best
    similarity to any phrasing and that phrasing's chunk. A document near one variant
    only is found, which the mean of the phrasings' vectors (searched once before) could
    miss. Vectors are compared on the same scale (one embedder, unit length), so the best
    of them is a fair score.

    ``depths``: the query's search is as deep as a plain search's (the fusion normalizes
    over it), a variant's only ``limit`` deep: what a variant adds is its nearest
    documents, and a shallow k-NN search costs a third of a deep one (it reads fewer
    chunk rows)."""
    with deadline.paused():  # the embedder's time is not the search's (deadline.py)
        found = phrasing_vectors(hybrid, phrasings, vectors)
    if found is None:
        return [], None
    lock, rows = found
    depth, shallow = depths
    # Two phrasings with one vector (a reordering, to a bag-of-words embedder) and one
    # depth find the same chunks: searched once.
    searches: dict[tuple[bytes, int], Any] = {}
    for index, row in enumerate(rows):
        vector = None if row is None else np.asarray(row, dtype=np.float32).reshape(-1)
        norm = 0.0 if vector is None else float(np.linalg.norm(vector))
        if vector is not None and norm > 0:
            limit = depth if index == 0 else min(depth, shallow)
            searches.setdefault((vector.tobytes(), limit), vector / norm)
    if not searches:
        return [], found
    queries, limits = list(searches.values()), [limit for _, limit in searches]
    ranked = hybrid.parts.backend.vector_search_many(lock, np.stack(queries), where, limits, stamp)
    best: dict[str, ChunkHit] = {}
    for hit in (hit for hits in ranked for hit in hits):
        kept = best.get(hit.doc_id)
        if kept is None or hit.score > kept.score:
            best[hit.doc_id] = hit
    fused = sorted(best.values(), key=lambda h: (-h.score, h.doc_id))[:depth]
    return fused, found


def phrasing_vectors(
    hybrid: HybridSearch, phrasings: Sequence[Phrasing], vectors: Mapping[str, Any]
) -> Vectors | None:
    """The lock and each phrasing's vector (``vectors``: those already known, by text);
    None when there is nothing to search with (no vectors, a query with no features)."""
    found = hybrid.parts.vectors.query(phrasings[0].variant.query)
    if found is None:
        return None
    lock, first = found
    wanted = [p.variant.mode in (None, "semantic", "hybrid") for p in phrasings[1:]]
    texts = [p.variant.query for p, ok in zip(phrasings[1:], wanted, strict=True) if ok]
    known = {**vectors, **embed(hybrid.parts.vectors.resolve(), texts, vectors)}
    rows = [
        known.get(p.variant.query) if ok else None
        for p, ok in zip(phrasings[1:], wanted, strict=True)
    ]
    return lock, [first, *rows]


def embed(embedder: Embedder, texts: Sequence[str], known: Mapping[str, Any]) -> dict[str, Any]:
    """Query vectors of ``texts`` not in ``known``: one batch, unless the embedder embeds
    a query differently from a document (then one call each)."""
    missing = [t for t in dict.fromkeys(texts) if t not in known]
    if not missing:
        return {}
    if type(embedder).embed_query is Embedder.embed_query:
        return dict(zip(missing, embedder.embed(missing), strict=True))
    return {text: embedder.embed_query(text) for text in missing}


def attributed(
    hybrid: HybridSearch,
    hits: list[Hit],
    phrasings: Sequence[Phrasing],
    vectors: Vectors | None,
    how: tuple[str, dict[str, float], Filters, bool],
) -> list[Hit]:
    """``hits`` with which phrasing would have found each on its own: its rank there and
    the calibrated score it would have had (``variants``), the best of them
    (``found_by``; None when only the phrasings together found it)."""
    backend = hybrid.parts.backend
    docs = backend.get_documents([h.doc_id for h in hits])
    texts = calibration.document_texts(backend.get_document, docs)
    runs: dict[str, list[dict[str, Any]]] = {h.doc_id: [] for h in hits}
    lock, rows = vectors or (None, [None] * len(phrasings))
    for phrasing, vector in zip(phrasings, rows, strict=True):
        for doc_id, rank, score in _alone(hybrid, phrasing, (lock, vector), how, texts):
            if doc_id in runs:
                run = phrasing.variant
                runs[doc_id].append(
                    {"query": run.query, "origin": run.origin, "rank": rank, "score": score}
                )
    return [_explained(hit, runs[hit.doc_id]) for hit in hits]


def _alone(
    hybrid: HybridSearch,
    phrasing: Phrasing,
    vector: tuple[Any, Any],
    how: tuple[str, dict[str, float], Filters, bool],
    texts: Mapping[str, str],
) -> list[tuple[str, int, float]]:
    """(document, rank, calibrated score) of what ``phrasing`` alone would find, for the
    documents in ``texts``."""
    method, weights, where, cjk_script = how
    backend = hybrid.parts.backend
    stamp = now()
    lists: dict[str, list[ChunkHit]] = {}
    if weights.get("keyword", 0) > 0 and phrasing.parsed is not None:
        lists["keyword"] = backend.keyword_search(phrasing.parsed, where, FUSION_DEPTH, stamp)
    lock, query = vector
    if weights.get("semantic", 0) > 0 and query is not None:
        lists["semantic"] = backend.vector_search(lock, query, where, FUSION_DEPTH, stamp)
    if not lists:
        return []
    parsed = phrasing.parsed or ParsedQuery()
    info = calibration.query_info(parsed.words, parsed.cjk, cjk_script)
    model_id = hybrid.parts.vectors.resolve().model_id if "semantic" in lists else None
    legs = [leg for leg in ("keyword", "semantic") if leg in lists]
    key = calibration.model_key(legs, model_id)
    tops = {leg: float(ranked[0].score) for leg, ranked in lists.items() if ranked}
    method = method if len(lists) > 1 else "single"
    found = []
    for rank, entry in enumerate(fuse(lists, weights, method=method, limit=FUSION_DEPTH), 1):
        if entry.doc_id in texts:
            cover = calibration.coverage(info, texts[entry.doc_id])
            row = calibration.features(entry.parts, tops, legs, info, rank, cover)
            score = round(min(1.0, max(0.0, calibration.probability(key, row))), 6)
            found.append((entry.doc_id, rank, score))
    return found


def _explained(hit: Hit, runs: list[dict[str, Any]]) -> Hit:
    best = max(runs, key=lambda r: r["score"], default=None)  # the first of equals
    info = {
        **(hit.explain or {}),
        "variant_fusion": "one_pass",
        "found_by": best["query"] if best else None,
        "found_by_origin": best["origin"] if best else None,
        "variants": runs,
    }
    return replace(hit, explain=info)
