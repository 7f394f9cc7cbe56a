"""One search, several phrasings: the caller's (or an LLM's) variants of a query, checked,
and what a search with them returns.

The phrasings are searched as one (search/phrasings.py). :func:`fuse` merges ranked hit
lists of different queries by reciprocal rank (k=60), each document once with its best
evidence: enrichment matches (trove/enrich.py) are fused with a search's hits that way.
"""

from __future__ import annotations

import builtins
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from trove.errors import InvalidQuery
from trove.hits import Hit
from trove.search.fusion import RRF_K

# More phrasings than this cost more searches than they find (and an agent that sends
# fifty is looping); the limit is the same on every interface.
MAX_VARIANTS = 8


class SearchResults(builtins.list[Hit]):
    """The hits of a search (a list), with what the search could not do.

    ``degraded`` is None for a complete answer, else what was left out: ``"unexpanded"``
    when LLM expansion was asked for but the model failed or timed out, so these are the
    plain query's results; ``warning`` says why. ``variants`` are the phrasings searched.
    """

    degraded: str | None = None
    warning: str | None = None
    variants: tuple[str, ...] = ()

    def meta(self) -> dict[str, Any]:
        """What interfaces add beside the hits (nothing for a plain, complete search)."""
        data: dict[str, Any] = {}
        if self.variants:
            data["variants"] = list(self.variants)
        if self.degraded:
            data["degraded"] = self.degraded
            data["warning"] = self.warning
        return data


@dataclass(frozen=True)
class Variant:
    """One phrasing to search: its text and the mode it runs in (None: the caller's)."""

    query: str
    mode: str | None = None
    origin: str = "caller"  # caller | llm | passage


def clean(query: str, variants: Sequence[str] | str | None) -> list[str]:
    """The caller's variants, checked: strings, not blank, not the query again, each once."""
    if variants is None:
        return []
    if isinstance(variants, str) or not isinstance(variants, Sequence):
        raise InvalidQuery("variants must be a list of strings")
    if not all(isinstance(v, str) for v in variants):
        raise InvalidQuery("variants must be a list of strings")
    seen = {normalize(query)}
    kept = []
    for text in variants:
        key = normalize(text)
        if key and key not in seen:
            seen.add(key)
            kept.append(text.strip())
    if len(kept) > MAX_VARIANTS:
        raise InvalidQuery(f"at most {MAX_VARIANTS} variants, got {len(kept)}")
    return kept


def normalize(text: str) -> str:
    return " ".join(text.casefold().split())


def fuse(
    runs: Sequence[Variant], lists: Sequence[list[Hit]], *, limit: int, explain: bool
) -> list[Hit]:
    """Reciprocal-rank fusion of each run's hits; each document keeps its best hit."""
    rrf: dict[str, float] = {}
    best: dict[str, tuple[Hit, int]] = {}
    found: dict[str, list[dict[str, Any]]] = {}
    for index, (run, hits) in enumerate(zip(runs, lists, strict=True)):
        for rank, hit in enumerate(hits, 1):
            if hit.linked_from is not None:
                continue
            rrf[hit.doc_id] = rrf.get(hit.doc_id, 0.0) + 1.0 / (RRF_K + rank)
            kept = best.get(hit.doc_id)
            if kept is None or hit.score > kept[0].score:
                best[hit.doc_id] = (hit, index)
            found.setdefault(hit.doc_id, []).append(
                {"query": run.query, "origin": run.origin, "rank": rank, "score": hit.score}
            )
    order = sorted(rrf, key=lambda d: (-rrf[d], d))[:limit]
    out = []
    for doc_id in order:
        hit, index = best[doc_id]
        info = None
        if explain:  # found_by: the phrasing whose hit is kept (its score and snippet)
            info = {
                **(hit.explain or {}),
                "variant_fusion": "rrf",
                "found_by": runs[index].query,
                "found_by_origin": runs[index].origin,
                "variants": found[doc_id],
            }
        out.append(replace(hit, explain=info))
    return out
