"""The store's search pipeline: what :meth:`Store.search <trove.store.Store.search>` does
between checking its arguments and recording the hits' use. Loaded at the first search
(``self`` is the store): opening a store or counting it needs none of the search stack.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from trove import agent, validate
from trove.enrich import with_enrichment
from trove.errors import InvalidQuery
from trove.memory import own_vectors
from trove.search import budget, deadline, memory_rank
from trove.search.filters import Filters
from trove.search.variants import SearchResults
from trove.timeutil import now

if TYPE_CHECKING:
    from trove.parts import Searching


def found(
    self: Searching, query: str, limit: int, options: dict[str, Any], filters: dict[str, Any]
) -> SearchResults:
    """The hits :meth:`Store.search` returns, before it records their use or reports
    them read (so an inner search, like reranking's wider one, reports nothing). All of
    it runs within one time budget (trove.search.deadline)."""
    with deadline.within():
        if filters.pop("collapse_duplicates", True) and self.has_duplicates():
            filters["collapse"] = True
        hits = ranked(self, query, limit, options, filters)
        expand, budgeted = options["expand"], options["budget"]
        if isinstance(expand, int) and expand > 0 and hits:
            deadline.check()
            hits.extend(self.hybrid_search.linked(hits, Filters.build(**filters), expand, now()))
        deadline.check()
        hits[:] = budget.finish(
            self.backend, [h for h in hits if budgeted.passes(h.score, h)], budgeted
        )
        return hits


def ranked(
    self: Searching, query: str, limit: int, options: dict[str, Any], filters: dict[str, Any]
) -> SearchResults:
    """The hits of :meth:`Store.search` before links, budget and access: reranked, by the
    caller's vector, fused over variants, or one ranking (with enrichment)."""
    mode, raw, explain = options["mode"], options["raw"], options["explain"]
    variants, vector = options["variants"], options["vector"]
    expand, rerank = options["expand"], options["rerank"]
    if rerank is not None:
        rank = memory_rank.parse(rerank)
        validate.count(limit, "limit", 0, validate.MAX_LIMIT, InvalidQuery)
        inner = dict(options, expand=0, rerank=None, budget=budget.Options())
        wide = found(self, query, memory_rank.depth(limit), inner, dict(filters))
        return SearchResults(memory_rank.apply(wide, rank, now(), limit, explain))
    if vector is not None:
        where = Filters.build(**filters)
        return SearchResults(own_vectors.search(self.backend, vector, where, limit, explain))
    if variants or expand == "llm":
        return agent.search_variants(
            self,
            with_enrichment(self, self.hybrid_search.search),
            query,
            variants,
            llm=expand == "llm",
            limit=limit,
            explain=explain,
            **dict(filters, mode=mode, raw=raw),
        )
    return SearchResults(
        with_enrichment(self, self.hybrid_search.search)(
            query, mode=mode, limit=limit, raw=raw, explain=explain, **filters
        )
    )
