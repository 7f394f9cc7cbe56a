"""The store's side of an agent's loop: per-store defaults, searching with variants
(the caller's or an LLM's), and what purge is about to remove (for its events).

Kept out of store.py so the façade only delegates.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from trove.enrich import with_enrichment
from trove.errors import InvalidInput
from trove.hits import Hit
from trove.models import Document
from trove.search import phrasings
from trove.search.variants import SearchResults, Variant, clean

if TYPE_CHECKING:
    from trove.parts import Agentive, WithBackend
    from trove.search.request import SearchRequest

SETTINGS = {"expand": ("off", "llm"), "enrich": ("off", "on")}
_SETTING_PREFIX = "config."
# Settings are read on every search: a few seconds stale (another process changed
# them) is fine, a query against the meta table each time is not needed.
_SETTINGS_TTL = 2.0


def settings(store: Agentive, **changes: str | None) -> dict[str, str]:
    """Apply ``changes`` (None: back to the default) and return every setting."""
    for name, value in changes.items():
        if name not in SETTINGS:
            raise InvalidInput(f"unknown setting {name!r}; known: {', '.join(SETTINGS)}")
        if value is not None and value not in SETTINGS[name]:
            raise InvalidInput(f"{name} must be one of {', '.join(SETTINGS[name])}")
        if name == "enrich" and value == "on":
            from trove.enrich import enrichments

            if enrichments(store) is None:
                raise InvalidInput("enrichment needs a SQLite store")
        store.backend.set_meta(_SETTING_PREFIX + name, value)
    values = {
        name: store.backend.get_meta(_SETTING_PREFIX + name) or choices[0]
        for name, choices in SETTINGS.items()
    }
    store.memos.settings = (time.monotonic(), values)
    return values


def setting(store: Agentive, name: str) -> str:
    cached = store.memos.settings
    if cached is None or time.monotonic() - cached[0] > _SETTINGS_TTL:
        return settings(store)[name]
    return str(cached[1][name])


def expand_default(store: Agentive) -> int | str:
    return "llm" if setting(store, "expand") == "llm" else 0


def search_variants(
    store: Agentive, search: Callable[[SearchRequest], list[Hit]], request: SearchRequest
) -> SearchResults:
    """Search the request's query with the caller's variants, plus the LLM's when
    ``request.expand == "llm"``: one search over all the phrasings (search/phrasings.py);
    ``search`` (the store's plain search) answers when there is no variant to add."""
    query, limit = request.query, request.limit
    runs = [Variant(text) for text in clean(query, request.variants)]
    warning = None
    vectors: Mapping[str, Any] = {}
    if request.expand == "llm":
        from trove.expansion import expand

        mode = request.mode or ("hybrid" if store.has_embedder else "keyword")
        expansion = expand(store, query, semantic=mode != "keyword" and store.has_embedder)
        warning, vectors = expansion.error, expansion.vectors
        taken = {v.query.casefold() for v in runs}
        runs += [v for v in expansion.variants if v.query.casefold() not in taken]
    if not query.strip() or limit == 0:
        results = SearchResults()
    elif runs:
        results = SearchResults(one_pass(store, request, runs, vectors))
        results.variants = tuple(v.query for v in runs)
    else:
        results = SearchResults(search(request))
    if warning is not None:
        results.degraded = "unexpanded"
        results.warning = warning
    return results


# What search/phrasings.py adds to a hit's explain (enrichment's fusion would drop it).
_VARIANT_KEYS = ("variant_fusion", "found_by", "found_by_origin", "variants")


def one_pass(
    store: Agentive,
    request: SearchRequest,
    runs: Sequence[Variant],
    vectors: Mapping[str, Any],
) -> list[Hit]:
    """The phrasings as one search, matching enrichments too when the store has any."""
    explained: dict[str, dict[str, Any]] = {}

    def search(asked: SearchRequest) -> list[Hit]:
        hits = phrasings.search(store.hybrid_search, asked, runs, vectors)
        explained.update((h.doc_id, h.explain) for h in hits if h.explain)
        return hits

    found = with_enrichment(store, search)(request)
    if not request.explain:
        return found
    return [
        replace(hit, explain={**hit.explain, **_variant_info(explained.get(hit.doc_id))})
        if hit.explain is not None and "variant_fusion" not in hit.explain
        else hit
        for hit in found
    ]


def _variant_info(explain: dict[str, Any] | None) -> dict[str, Any]:
    if explain is None:  # found by its enrichment alone
        return {
            "variant_fusion": "one_pass",
            "found_by": None,
            "found_by_origin": None,
            "variants": [],
        }
    return {k: explain[k] for k in _VARIANT_KEYS if k in explain}


def purgeable(store: WithBackend, stamp: float) -> dict[str, Document]:
    """Documents a purge at ``stamp`` removes, for the ``purged`` events' payloads.

    A page-by-page scan, run only while someone listens for ``purged``: purges are rare
    and manual, and this keeps the backends' protocol unchanged."""
    found: dict[str, Document] = {}
    after = None
    while True:
        page = store.backend.iter_documents(after=after, limit=500)
        if not page:
            return found
        for doc in page:
            if doc.deleted_at is not None or doc.expired:
                found[doc.id] = doc
        after = page[-1].id
