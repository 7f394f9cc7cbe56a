"""Several phrasings of one query searched as one: the retrieval legs run once over all of
them, and documents, snippets and calibration once over the fused list, as for a plain
query.

A plain search spends most of its time after retrieval (documents read, calibration's
coverage, snippets); searching each variant in full multiplied that by the number of
phrasings (bench/agent_loop.py). Here:

- keyword: one ranking over the union of the phrasings' words (the query first). A word
  that ``QUERY_WEIGHT`` says to count more is given that many times: FTS5's ``bm25()``
  and the in-memory word index score a phrase given twice twice (PostgreSQL counts each
  lexeme once, so there the union is unweighted);
- semantic: each phrasing's vector searched (vectors of an LLM's variants come cached with
  the expansion), a document's best similarity over the phrasings kept;
- the two legs fused, calibrated and cut to ``limit`` exactly as
  :meth:`HybridSearch.search` does.

``explain`` says which phrasing would have found each hit on its own: it runs each
phrasing's retrieval legs again (not their documents or snippets), so it costs more than
the search it explains and never changes it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from trove import validate
from trove.embedders.base import Embedder, scripts_of
from trove.errors import InvalidQuery
from trove.models import ChunkHit, Hit
from trove.search import calibration
from trove.search.bounds import MAX_WORDS, bounded
from trove.search.filters import Filters
from trove.search.fusion import fuse
from trove.search.hybrid import FUSION_DEPTH, SCRIPT_SHARE, HybridSearch
from trove.search.query import ParsedQuery, parse
from trove.search.ranking import merge_evidence
from trove.search.variants import Variant
from trove.timeutil import now

# How many times the query's own words count in the keyword union against once for a
# variant's (chosen on SciFact train with bench/agent_loop.py --tune).
QUERY_WEIGHT = 1


@dataclass(frozen=True)
class Phrasing:
    """One phrasing, parsed: its variant, its words (None: matched by meaning only)."""

    variant: Variant
    parsed: ParsedQuery | None
    dropped: tuple[str, ...] = ()


def search(
    hybrid: HybridSearch,
    query: str,
    variants: Sequence[Variant],
    vectors: Mapping[str, Any] | None = None,
    *,
    mode: str | None = None,
    limit: int = 10,
    raw: bool = False,
    explain: bool = False,
    **filters: Any,
) -> list[Hit]:
    """``query`` and its ``variants`` as one ranking (``vectors``: known query vectors of
    variants, by text)."""
    mode = hybrid.resolve_mode(mode)
    validate.count(limit, "limit", 0, validate.MAX_LIMIT, InvalidQuery)
    where = Filters.build(**filters)
    validate.string(query, "query", InvalidQuery)
    if not query.strip() or limit == 0:
        return []
    runs = [Variant(query, None, "query"), *variants]
    phrasings = [_parsed(hybrid, run, mode, raw) for run in runs]
    scripts = scripts_of(query, min_share=SCRIPT_SHARE)
    weights = hybrid.weights(scripts, mode)
    union = _union(phrasings)
    if union.empty and mode == "keyword":
        return []
    lists, per = _legs(hybrid, phrasings, union, weights, (where, limit), vectors or {})
    method = hybrid.parts.fusion if len(lists) > 1 else "single"
    fused = fuse(lists, weights, method=method, limit=limit)
    plain = replace(union, words=tuple(dict.fromkeys(union.words)))
    info = calibration.query_info(plain.words, plain.cjk, "cjk" in scripts)
    dropped = tuple(dict.fromkeys(w for p in phrasings for w in p.dropped))
    hits = hybrid.hits(plain, fused, lists, info, (method, weights, dropped, explain))
    if explain and hits:
        hits = attributed(hybrid, hits, phrasings, per, (method, weights, where, "cjk" in scripts))
    return hits


def _parsed(hybrid: HybridSearch, run: Variant, mode: str, raw: bool) -> Phrasing:
    if run.mode == "semantic" or mode == "semantic":
        return Phrasing(run, None)
    parsed, dropped = bounded(parse(run.query, raw=raw), hybrid.parts.backend.term_counts)
    return Phrasing(run, parsed, dropped)


def _union(phrasings: Sequence[Phrasing]) -> ParsedQuery:
    """The keyword query of every phrasing's words, the query's counted ``QUERY_WEIGHT``
    times; at most ``MAX_WORDS`` distinct words, the query's first."""
    parsed = [p.parsed for p in phrasings if p.parsed is not None]
    raws = [q for q in parsed if q.raw is not None]
    if raws:  # a raw query's tree cannot be merged: its own, as a plain search
        return raws[0]
    words: list[str] = []
    for index, query in enumerate(parsed):
        repeat = QUERY_WEIGHT if index == 0 and phrasings[0].parsed is not None else 1
        words += [w for w in query.words for _ in range(repeat)]
    distinct = list(dict.fromkeys(words))[:MAX_WORDS]
    kept = set(distinct)
    cjk = dict.fromkeys(s for q in parsed for s in q.cjk)
    return ParsedQuery(words=tuple(w for w in words if w in kept), cjk=tuple(cjk))


def _legs(
    hybrid: HybridSearch,
    phrasings: Sequence[Phrasing],
    union: ParsedQuery,
    weights: dict[str, float],
    scope: tuple[Filters, int],
    vectors: Mapping[str, Any],
) -> tuple[dict[str, list[ChunkHit]], list[list[ChunkHit]]]:
    """The keyword leg over the union and the semantic leg over every phrasing (and each
    phrasing's own semantic list), the semantic one on the pool while the keyword one
    ranks, as HybridSearch.both does."""
    where, limit = scope
    used = [name for name, weight in weights.items() if weight > 0]
    stamp = now()
    # One leg: the fusion keeps its top ``limit``, and a document in the best-similarity
    # top ``limit`` is in the top ``limit`` of the phrasing that found it.
    depth = FUSION_DEPTH if len(used) > 1 else limit
    pending = None
    if "semantic" in used and not hybrid.inline():
        pending = hybrid.pool.submit(
            per_phrasing_semantic, hybrid, phrasings, vectors, where, depth, stamp
        )
    lists: dict[str, list[ChunkHit]] = {}
    if "keyword" in used:
        backend = hybrid.parts.backend
        lists["keyword"] = (
            [] if union.empty else backend.keyword_search(union, where, depth, stamp)
        )
    per: list[list[ChunkHit]] = [[] for _ in phrasings]
    if "semantic" in used:
        if pending is None:
            per = per_phrasing_semantic(hybrid, phrasings, vectors, where, depth, stamp)
        else:
            per = pending.result()
        best: dict[str, ChunkHit] = {}
        for hits in per:
            for hit in hits:
                merge_evidence(best, hit, keep_best=True)
        lists["semantic"] = sorted(best.values(), key=lambda h: (-h.score, h.doc_id))[:depth]
    return lists, per


def per_phrasing_semantic(
    hybrid: HybridSearch,
    phrasings: Sequence[Phrasing],
    vectors: Mapping[str, Any],
    where: Filters,
    depth: int,
    stamp: float,
) -> list[list[ChunkHit]]:
    """The semantic leg of each phrasing that is matched by meaning (empty for others)."""
    semantic = [p.variant.mode in (None, "semantic", "hybrid") for p in phrasings]
    found = hybrid.parts.vectors.query(phrasings[0].variant.query)
    if found is None:  # nothing to search with (no vectors; a query with no features)
        return [[] for _ in phrasings]
    lock, first = found
    texts = [
        p.variant.query for p, wanted in zip(phrasings[1:], semantic[1:], strict=True) if wanted
    ]
    known = {**vectors, **embed(hybrid.parts.vectors.resolve(), texts, vectors)}
    backend = hybrid.parts.backend
    lists = [backend.vector_search(lock, first, where, depth, stamp) if semantic[0] else []]
    for phrasing, wanted in zip(phrasings[1:], semantic[1:], strict=True):
        vector = known.get(phrasing.variant.query) if wanted else None
        lists.append(
            [] if vector is None else backend.vector_search(lock, vector, where, depth, stamp)
        )
    return lists


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
    semantic: Sequence[list[ChunkHit]],
    how: tuple[str, dict[str, float], Filters, bool],
) -> list[Hit]:
    """``hits`` with which phrasing would have found each on its own: its rank there and
    the calibrated score it would have had (``variants``), the best of them
    (``found_by``; None when only the phrasings together found it)."""
    method, weights, where, cjk_script = how
    backend = hybrid.parts.backend
    docs = backend.get_documents([h.doc_id for h in hits])
    texts = calibration.document_texts(backend.get_document, docs)
    found: dict[str, list[dict[str, Any]]] = {h.doc_id: [] for h in hits}
    stamp = now()
    for phrasing, own in zip(phrasings, semantic, strict=True):
        lists: dict[str, list[ChunkHit]] = {}
        if weights.get("keyword", 0) > 0 and phrasing.parsed is not None:
            lists["keyword"] = backend.keyword_search(phrasing.parsed, where, FUSION_DEPTH, stamp)
        if weights.get("semantic", 0) > 0 and own:
            lists["semantic"] = own
        if not lists:
            continue
        parsed = phrasing.parsed or ParsedQuery()
        info = calibration.query_info(parsed.words, parsed.cjk, cjk_script)
        model_id = hybrid.parts.vectors.resolve().model_id if "semantic" in lists else None
        legs = [leg for leg in ("keyword", "semantic") if leg in lists]
        key = calibration.model_key(legs, model_id)
        tops = {leg: float(ranked[0].score) for leg, ranked in lists.items() if ranked}
        ranked = fuse(
            lists, weights, method=method if len(lists) > 1 else "single", limit=FUSION_DEPTH
        )
        for rank, entry in enumerate(ranked, 1):
            if entry.doc_id not in found:
                continue
            cover = calibration.coverage(info, texts.get(entry.doc_id, ""))
            row = calibration.features(entry.parts, tops, legs, info, rank, cover)
            score = round(min(1.0, max(0.0, calibration.probability(key, row))), 6)
            run = phrasing.variant
            found[entry.doc_id].append(
                {"query": run.query, "origin": run.origin, "rank": rank, "score": score}
            )
    return [_explained(hit, found[hit.doc_id]) for hit in hits]


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
