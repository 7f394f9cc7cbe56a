"""Write-time enrichment (opt-in): a configured LLM reads each written document and
returns a short summary, keywords and entities, kept beside the document (its text and
``get`` stay byte-exact) and indexed, so a search can find the document by words that
only the enrichment has. Hits then say which matched: ``provenance`` is ``original`` or
``enriched``.

An enrichment failure never fails the write: the document is stored and marked
un-enriched, and ``trove enrich --missing`` fills it in later. SQLite stores only.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, cast

from trove.errors import InvalidQuery
from trove.hits import Hit
from trove.llm import LLMError, strings
from trove.models import Chunk
from trove.search import exact, snippet
from trove.search.calibration import FLOOR
from trove.search.hybrid import document_hit
from trove.search.query import parse
from trove.search.variants import Variant, fuse
from trove.timeutil import now

if TYPE_CHECKING:
    from trove.backends.base import Enrichments
    from trove.parts import Agentive, WithBackend
    from trove.search.request import SearchRequest

SYSTEM = """\
You index documents for a search engine. Answer with one JSON object and nothing else: \
{"summary": "one or two sentences on what the document is about", "keywords": [up to 8 \
search terms a reader might use, including synonyms not in the text], "entities": [the \
people, organisations, places, products and projects it names]}. Use the document's \
language."""
# What the model reads of a long document: its start says what it is about, and a
# bounded prompt keeps each call within the timeout.
PROMPT_CHARS = 6000
_FLAG_TTL = 2.0


def enrichments(store: WithBackend) -> Enrichments | None:
    from trove.backends.base import Enriching

    backend = store.backend
    # Asked of the class: a closed store's stand-in answers every attribute with an error.
    if not issubclass(type(backend), Enriching):
        return None
    return cast(Enriching, backend).enrichments()


def wanted(store: Agentive, enrich: bool | None) -> bool:
    """Whether a write enriches: the caller's choice, else the store's setting."""
    if enrich is None:
        from trove.agent import setting

        enrich = setting(store, "enrich") == "on"
    if enrich and enrichments(store) is None:
        raise InvalidQuery("enrichment needs a SQLite store")
    return bool(enrich)


def enrich(store: Agentive, doc_ids: Sequence[str]) -> dict[str, int]:
    """Enrich these documents now; returns how many were enriched and how many failed."""
    rows = enrichments(store)
    if rows is None:
        raise InvalidQuery("enrichment needs a SQLite store")
    model = store.llm
    done = failed = 0
    for doc_id in doc_ids:
        doc = store.backend.get_document(doc_id)
        if doc is None or doc.deleted_at is not None:
            continue
        if model is None:
            rows.put(doc.id, doc.content_hash, "", now(), error="no LLM configured")
            failed += 1
            continue
        prompt = f"Title: {doc.title}\n\n{doc.text[:PROMPT_CHARS]}" if doc.title else doc.text
        try:
            reply = model.json(SYSTEM, prompt[:PROMPT_CHARS])
        except LLMError as exc:
            rows.put(doc.id, doc.content_hash, model.model_id, now(), error=str(exc))
            failed += 1
            continue
        summary = reply.get("summary")
        fields = {
            "summary": summary.strip() if isinstance(summary, str) else "",
            "keywords": strings(reply.get("keywords"), 8),
            "entities": strings(reply.get("entities"), 20),
        }
        rows.put(doc.id, doc.content_hash, model.model_id, now(), fields=fields)
        done += 1
    store.memos.enriched = None  # searches use it from now on
    return {"enriched": done, "failed": failed}


def enrich_missing(
    store: Agentive, *, progress: Callable[[int], None] | None = None
) -> dict[str, int]:
    """Enrich every live document that has no current enrichment (new, changed, failed)."""
    rows = enrichments(store)
    if rows is None:
        raise InvalidQuery("enrichment needs a SQLite store")
    totals = {"enriched": 0, "failed": 0}
    tried: set[str] = set()
    while True:
        batch = [d for d in rows.missing(limit=len(tried) + 100) if d not in tried]
        if not batch:
            return totals
        tried.update(batch)
        counts = enrich(store, batch)
        for key in totals:
            totals[key] += counts[key]
        if progress:
            progress(len(batch))


def with_enrichment(
    store: Agentive, search: Callable[[SearchRequest], list[Hit]]
) -> Callable[[SearchRequest], list[Hit]]:
    """``search`` that also matches enrichments, when the store has any."""
    rows = enrichments(store)
    if rows is None or not _has_any(store, rows):
        return search

    def both(request: SearchRequest) -> list[Hit]:
        query, limit = request.query, request.limit
        original = search(request)
        if request.mode == "semantic" or request.raw or not limit:
            return original
        found = _enriched(store, rows, request)
        if not found:
            return [replace(h, provenance="original") for h in original]
        runs = [Variant(query, origin="original"), Variant(query, origin="enriched")]
        fused = fuse(runs, [original, found], limit=limit, explain=True)
        return [_provenance(h, request.explain) for h in fused]

    return both


def _provenance(hit: Hit, explain: bool) -> Hit:
    """The hit kept is the original's whenever the text matched (its scores are on the
    retrievers' scale, above the squashed enrichment score), else the enrichment's."""
    info = hit.explain or {}
    origin = info.get("found_by_origin", "original")
    kept = None
    if explain:
        hidden = ("found_by", "found_by_origin", "variant_fusion", "variants")
        kept = {k: v for k, v in info.items() if k not in hidden}
        kept["enrichment"] = {
            r["origin"]: {"rank": r["rank"], "score": r["score"]} for r in info["variants"]
        }
    return replace(hit, provenance=origin, explain=kept)


def _enriched(store: Agentive, rows: Enrichments, request: SearchRequest) -> list[Hit]:
    parsed = parse(request.query)
    terms = parsed.words
    if not terms:
        return []
    asked = exact.phrases(request.query, parsed)
    found = rows.search(terms, max(request.limit * 2, 20))
    allowed = store.backend.visible([d for d, _, _ in found], request.filters, now())
    docs = store.backend.get_documents([d for d, _, _ in found if d in allowed])
    hits = []
    for doc_id, score, summary in found:
        if doc_id in docs:
            spans = snippet_spans(summary, terms)
            # BM25 is unbounded; squashed into (0, 1) like the other scores hits carry. An
            # enrichment that holds the query itself shows at the floor, as a text would.
            score = score / (score + 5.0)
            if exact.holds(asked, summary):
                score = max(score, FLOOR)
            hit = document_hit(docs[doc_id], score, snippet.make(summary, spans), None, None)
            hits.append(replace(hit, chunk=Chunk(index=0, start=0, end=0)))
    return hits


def snippet_spans(text: str, terms: Sequence[str]) -> list[tuple[int, int]]:
    lower = text.casefold()
    spans = []
    for term in terms:
        start = lower.find(term.casefold())
        if start >= 0:
            spans.append((start, start + len(term)))
    return spans


def _has_any(store: Agentive, rows: Enrichments) -> bool:
    # Asked on every search: a few seconds stale is fine, a query each time is not needed.
    cached = store.memos.enriched
    if cached is None or time.monotonic() - cached[0] > _FLAG_TTL:
        cached = (time.monotonic(), rows.any())
        store.memos.enriched = cached
    return bool(cached[1])
