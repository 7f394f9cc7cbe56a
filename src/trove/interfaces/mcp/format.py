"""Compact JSON for a model's context: what the MCP tools return."""

from __future__ import annotations

from typing import Any

from trove.hits import Hit
from trove.limits import fit
from trove.models import Document
from trove.search import budget

# Items in knowledge_list are previews; knowledge_get returns the whole text.
LIST_PREVIEW_CHARS = 500
# knowledge_search's default token budget: results fill about this much of a context.
MCP_TOKENS = 2000


def given(**values: Any) -> dict[str, Any]:
    """The arguments the model gave (None: left out, so the library's default applies)."""
    return {k: v for k, v in values.items() if v is not None}


def search_options(max_result_tokens: int, **arguments: Any) -> dict[str, Any]:
    """knowledge_search's arguments (but the query) as ``Workspace.search``'s options, each
    under its :class:`~trove.search.request.SearchRequest` name (the argument's own): the
    ones left out take the library's default, and the token budget is capped at the
    server's."""
    options = given(**arguments)
    options["max_tokens"] = min(options["max_tokens"], max_result_tokens)
    return options


def compact(data: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in data.items() if v not in ("", None, [], {}, ())}


def hit_result(hit: Hit) -> dict[str, Any]:
    data = hit.to_dict()
    del data["doc_id"], data["chunk"]  # character offsets mean nothing to a model
    if hit.chunk.heading:
        data["heading"] = hit.chunk.heading
    data["score"] = round(hit.score, 4)
    return {"id": hit.doc_id, **compact(data)}


def document(doc: Document) -> dict[str, Any]:
    data = doc.to_dict()
    for internal in ("content_hash", "session_id", "deleted", "expired"):
        data.pop(internal)
    return compact(data)


def preview(doc: Document) -> dict[str, Any]:
    data = document(doc)
    if len(doc.text) > LIST_PREVIEW_CHARS:
        data["text"] = doc.text[:LIST_PREVIEW_CHARS]
        data["text_truncated"] = True
    data.update({k: True for k in ("expired", "deleted") if getattr(doc, k)})
    return data


def search_reply(hits: Any, max_tokens: int, result_tokens: int) -> dict[str, Any]:
    """knowledge_search's reply: the hits (a :class:`~trove.search.variants.SearchResults`,
    with its meta) as results, never more than the server's ``result_tokens``."""
    # Whole results, best first.
    results, cut = fit([hit_result(found) for found in hits], result_tokens)
    tokens = {"budget": max_tokens, "counter": budget.counter().name}
    reply: dict[str, Any] = {
        "results": results,
        "tokens": tokens,
        **getattr(hits, "meta", dict)(),
    }
    if cut:
        reply["truncated"] = f"results cut to fit {result_tokens} tokens"
    return reply


def workspace_stats(ws: Any) -> dict[str, Any]:
    stats = ws.stats()
    return {
        "documents": stats.documents,
        "chunks": stats.chunks,
        "deleted": stats.deleted,
        "expired": stats.expired,
        "by_source": stats.by_source,
        "by_doc_type": stats.by_doc_type,
        "text_bytes": stats.text_bytes,
    }
