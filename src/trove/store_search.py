"""The store's search pipeline: what :meth:`Store.search <trove.store.Store.search>` does
between checking its arguments (into one :class:`~trove.search.request.SearchRequest`)
and recording the hits' use. Loaded at the first search (``self`` is the store): opening
a store or counting it needs none of the search stack.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from trove import agent
from trove.enrich import with_enrichment
from trove.operations import own_vectors
from trove.search import budget, deadline, memory_rank
from trove.search.variants import SearchResults
from trove.timeutil import now

if TYPE_CHECKING:
    from trove.parts import Searching
    from trove.search.request import SearchRequest


def found(self: Searching, request: SearchRequest) -> SearchResults:
    """The hits :meth:`Store.search` returns, before it records their use or reports
    them read (so an inner search, like reranking's wider one, reports nothing). All of
    it runs within one time budget (trove.search.deadline)."""
    with deadline.within():
        hits = ranked(self, request)
        expand, returned = request.expand, request.returned
        if isinstance(expand, int) and expand > 0 and hits:
            deadline.check()
            hits.extend(self.hybrid_search.linked(hits, request.filters, expand, now()))
        deadline.check()
        hits[:] = budget.finish(
            self.backend, [h for h in hits if returned.passes(h.score, h)], returned
        )
        return hits


def ranked(self: Searching, request: SearchRequest) -> SearchResults:
    """The hits of :meth:`Store.search` before links, budget and access: reranked, by the
    caller's vector, fused over variants, or one ranking (with enrichment)."""
    if request.rerank is not None:
        rank = memory_rank.parse(request.rerank)
        wide = found(self, _plain(request, memory_rank.depth(request.limit)))
        return SearchResults(memory_rank.apply(wide, rank, now(), request.limit, request.explain))
    if request.vector is not None:
        return SearchResults(
            own_vectors.search(
                self.backend, request.vector, request.filters, request.limit, request.explain
            )
        )
    search = with_enrichment(self, self.hybrid_search.search)
    if request.variants or request.expand == "llm":
        return agent.search_variants(self, search, request)
    return SearchResults(search(request))


def _plain(request: SearchRequest, limit: int) -> SearchRequest:
    """The wider search reranking reorders: no links, no rerank, nothing left out."""
    return replace(
        request,
        limit=limit,
        expand=0,
        rerank=None,
        min_score=None,
        with_text=False,
        context=0,
        max_tokens=None,
    )
