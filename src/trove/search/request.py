"""One search request: the query, how to rank it, its filters and what to return, checked
once by :meth:`SearchRequest.build` and passed down whole.

``Store.search`` builds it; the pipeline (store_search.py, :class:`HybridSearch
<trove.search.hybrid.HybridSearch>`, search/phrasings.py, the agent's variants, enrichment)
reads its fields and never re-checks them, so the filters are built once per search. An
inner search (reranking's wider one) is the same request with fields replaced.
HTTP's body (``SearchBody.arguments``) and MCP's ``knowledge_search``
(``mcp.format.search_options``) pass their parameters under these names;
tests/interfaces/test_search_mapping.py checks that each is offered or listed.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields
from typing import Any

from trove import validate
from trove.errors import InvalidQuery
from trove.search import budget, memory_rank
from trove.search.filters import Filters
from trove.search.variants import clean


@dataclass(frozen=True)
class SearchRequest:
    """What one search asks for. ``expand`` is a link depth or ``"llm"`` (the store's
    default already applied); ``variants`` are the caller's, cleaned (None: none given);
    ``mode`` is the caller's (None: the store's default, resolved by the search)."""

    query: str = ""
    limit: int = 10
    mode: str | None = None
    filters: Filters = field(default_factory=Filters)
    vector: Sequence[float] | None = None
    raw: bool = False
    explain: bool = False
    expand: int | str = 0
    variants: tuple[str, ...] | None = None
    rerank: str | Mapping[str, Any] | None = None
    collapse_duplicates: bool = True
    min_score: float | None = None
    with_text: bool = False
    context: int = 0
    max_tokens: int | None = None

    @classmethod
    def build(
        cls,
        query: Any = "",
        duplicates: bool = False,
        /,
        *,
        limit: Any = 10,
        mode: str | None = None,
        vector: Sequence[float] | None = None,
        raw: bool = False,
        explain: bool = False,
        expand: Any = 0,
        variants: Any = None,
        rerank: str | Mapping[str, Any] | None = None,
        collapse_duplicates: Any = True,
        min_score: Any = None,
        with_text: Any = False,
        context: Any = 0,
        max_tokens: Any = None,
        **filters: Any,
    ) -> SearchRequest:
        """The request, every argument checked (InvalidQuery names the first bad one).
        ``duplicates``: whether the store holds duplicate groups, which
        ``collapse_duplicates`` then folds (the ``collapse`` filter)."""
        if expand != "llm":
            validate.count(expand, 'expand (or "llm")', 0, validate.MAX_EXPAND, InvalidQuery)
        returned = budget.Options.check(min_score, with_text, context, max_tokens)
        if rerank is not None:
            memory_rank.parse(rerank)
        validate.count(limit, "limit", 0, validate.MAX_LIMIT, InvalidQuery)
        if collapse_duplicates and duplicates:
            filters["collapse"] = True
        where = Filters.build(**filters)
        cleaned = None
        if vector is None:  # a caller's vector searches instead of the words
            validate.string(query, "query", InvalidQuery)
            cleaned = None if variants is None else tuple(clean(query, variants))
        return cls(
            query=query,
            limit=limit,
            mode=mode,
            filters=where,
            vector=vector,
            raw=raw,
            explain=explain,
            expand=expand,
            variants=cleaned,
            rerank=rerank,
            collapse_duplicates=bool(collapse_duplicates),
            min_score=returned.min_score,
            with_text=returned.with_text,
            context=returned.context,
            max_tokens=returned.max_tokens,
        )

    @property
    def returned(self) -> budget.Options:
        """What the search returns beyond ranked hits (score floor, text, token budget)."""
        return budget.Options(self.min_score, self.with_text, self.context, self.max_tokens)


# The request's fields a caller sets by name: every field but the built filters (each
# filter is set by its own name, a field of Filters).
OPTIONS = tuple(f.name for f in fields(SearchRequest) if f.name != "filters")
