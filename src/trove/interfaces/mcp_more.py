"""The rest of ``trove mcp``: more tools, document/stats/recent resources and prompts.

Tools: ``knowledge_restore``, ``knowledge_unlink``, ``knowledge_neighbors``,
``knowledge_stats``, ``knowledge_get_many`` (strict schemas, as in :mod:`.mcp`).
Resources: ``trove://documents/{id}`` (an item with its provenance), ``trove://stats``
and ``trove://recent`` (the newest items). Prompts: ``what_do_we_know`` (searches now and
asks for an answer that cites item ids) and ``summarise_thread``.
"""

# No `from __future__ import annotations`: the SDK reads these signatures at runtime.

import json
from collections.abc import Callable
from typing import Annotated, Any

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations
from pydantic import Field

from trove.interfaces.config import ServerConfig
from trove.interfaces.workspaces import Workspaces
from trove.models import Document

RECENT_ITEMS = 20
# summarise_thread reads at most this many of the newest items to find the thread's.
THREAD_SCAN = 2000
THREAD_ITEMS = 50
PROMPT_RESULTS = 8

Id = Annotated[str, Field(description="An item id, as returned by the other tools.")]


class MoreTools:
    """Tools bound to the same workspace rules as :class:`~.mcp.KnowledgeTools`."""

    def __init__(self, tools: Any) -> None:
        self.tools = tools  # KnowledgeTools: its _workspace and formatting

    def knowledge_get_many(
        self,
        ctx: Context,
        ids: Annotated[list[str], Field(min_length=1, max_length=100, description="Item ids.")],
    ) -> dict[str, Any]:
        """Read several items in full at once. Ids you cannot read (absent, deleted,
        expired) are listed under missing."""
        from trove.interfaces.mcp import _document

        with self.tools._workspace(ctx) as ws:
            docs = ws.get_many(ids)
        found = [_document(doc) for doc in docs if doc is not None]
        missing = [i for i, doc in zip(ids, docs, strict=True) if doc is None]
        return {"items": found, "missing": missing}

    def knowledge_neighbors(
        self,
        ctx: Context,
        id: Id,
        type: Annotated[str | None, Field(description="Only links of this type.")] = None,
    ) -> dict[str, Any]:
        """The links from and to an item (knowledge_link), with the other item's title."""
        with self.tools._workspace(ctx) as ws:
            edges = ws.neighbors(id, type)
            links = []
            for edge in edges:
                other = edge.dst if edge.src == id else edge.src
                doc = ws.get(other)
                direction = "to" if edge.src == id else "from"
                title = doc.title if doc else None
                links.append({**edge.to_dict(), "direction": direction, "title": title})
        return {"id": id, "links": links}

    def knowledge_unlink(
        self,
        ctx: Context,
        src: Annotated[str, Field(description="The id the link starts from.")],
        dst: Annotated[str, Field(description="The id the link points to.")],
        type: Annotated[str | None, Field(description="Only this type (default: all).")] = None,
    ) -> dict[str, Any]:
        """Remove links from src to dst (of one type, or all). Returns how many."""
        with self.tools._workspace(ctx, write=True) as ws:
            return {"removed": ws.unlink(src, dst, type)}

    def knowledge_restore(self, ctx: Context, id: Id) -> dict[str, Any]:
        """Bring back an item deleted with knowledge_delete (not a permanent delete)."""
        with self.tools._workspace(ctx, write=True) as ws:
            restored = ws.restore(id)
        return {"id": id, "restored": restored}

    def knowledge_stats(self, ctx: Context) -> dict[str, Any]:
        """How many items this workspace holds, by source and type, and their size."""
        with self.tools._workspace(ctx) as ws:
            return _stats(ws)


def _stats(ws: Any) -> dict[str, Any]:
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


_READ = ToolAnnotations(read_only_hint=True, destructive_hint=False, open_world_hint=False)


def _changing(destructive: bool) -> ToolAnnotations:
    return ToolAnnotations(
        read_only_hint=False,
        destructive_hint=destructive,
        idempotent_hint=True,
        open_world_hint=False,
    )


def more_tools(tools: Any, config: ServerConfig) -> list[tuple[Callable[..., Any], str, Any]]:
    """The extra tools the configuration allows, as (function, title, annotations)."""
    more = MoreTools(tools)
    offered: list[tuple[Callable[..., Any], str, Any]] = [
        (more.knowledge_get_many, "Read several items", _READ),
        (more.knowledge_neighbors, "Links of an item", _READ),
        (more.knowledge_stats, "Workspace statistics", _READ),
    ]
    if config.rights.allow_write:
        offered.append((more.knowledge_unlink, "Unlink two items", _changing(True)))
    if config.rights.allow_delete:
        offered.append((more.knowledge_restore, "Restore a deleted item", _changing(False)))
    return offered


def add_more_resources(server: MCPServer, guard: Workspaces, config: ServerConfig) -> None:
    @server.resource(
        "trove://documents/{id}",
        name="document",
        description="One item: its exact text and provenance (source, author, time, tags).",
        mime_type="application/json",
    )
    def document(id: str) -> str:
        with guard.read(config.rights) as ws:
            doc = ws.get(id)
        if doc is None:
            raise ValueError(f"not_found: no item with id {id!r}")
        return json.dumps(_full(doc))

    @server.resource(
        "trove://stats",
        name="stats",
        description="This workspace's counts and sizes.",
        mime_type="application/json",
    )
    def stats() -> str:
        with guard.read(config.rights) as ws:
            return json.dumps(_stats(ws))

    @server.resource(
        "trove://recent",
        name="recent",
        description=f"The {RECENT_ITEMS} newest items (id, title, time, a preview).",
        mime_type="application/json",
    )
    def recent() -> str:
        with guard.read(config.rights) as ws:
            page = ws.list(limit=RECENT_ITEMS)
        return json.dumps({"items": [_line(doc) for doc in page.items]})


def add_prompts(server: MCPServer, guard: Workspaces, config: ServerConfig) -> None:
    @server.prompt(
        name="what_do_we_know",
        title="What do we know about…",
        description="Search the knowledge base for a topic and answer from the results, "
        "citing item ids.",
    )
    def what_do_we_know(topic: str) -> str:
        with guard.read(config.rights) as ws:
            hits = ws.search(topic, limit=PROMPT_RESULTS, with_text=True)
        found = "\n\n".join(
            f"[{hit.doc_id}] {hit.title or '(untitled)'} (score {hit.score:.2f})\n"
            f"{hit.text or hit.snippet}"
            for hit in hits
        )
        return (
            f"What do we know about {topic}? Answer only from the items below, and cite "
            "each claim with its item id in square brackets, e.g. [id]. Say plainly what "
            "the items do not cover; use knowledge_get to read an item in full.\n\n"
            f"Items found for {topic!r}:\n\n{found or '(nothing found)'}"
        )

    @server.prompt(
        name="summarise_thread",
        title="Summarise a thread",
        description="Summarise a conversation thread: give its thread id (or any item's id "
        "in it); its messages are included oldest first.",
    )
    def summarise_thread(thread: str) -> str:
        with guard.read(config.rights) as ws:
            messages = _thread(ws, thread)
        if not messages:
            raise ToolError(f"not_found: no thread {thread!r} in this workspace")
        body = "\n\n".join(
            f"[{doc.id}] {doc.author or 'unknown'} ({doc.timestamp or 'no time'}):\n{doc.text}"
            for doc in messages
        )
        return (
            "Summarise this thread: the question or topic, what was decided, open points, "
            "and who said what that matters. Cite item ids in square brackets.\n\n" + body
        )


def _thread(ws: Any, thread: str) -> list[Document]:
    start = ws.get(thread)
    thread_id = start.thread_id if start is not None and start.thread_id else thread
    found: list[Document] = []
    cursor, seen = None, 0
    while seen < THREAD_SCAN:
        page = ws.list(cursor=cursor, limit=500)
        seen += len(page.items)
        found += [doc for doc in page.items if doc.thread_id == thread_id and not doc.expired]
        cursor = page.cursor
        if cursor is None:
            break
    if not found and start is not None:
        found = [start]
    found.sort(key=lambda doc: (doc.timestamp or "", doc.id))
    return found[-THREAD_ITEMS:]


def _full(doc: Document) -> dict[str, Any]:
    data = doc.to_dict()
    for internal in ("content_hash", "session_id", "deleted", "expired"):
        data.pop(internal, None)
    return {k: v for k, v in data.items() if v not in ("", None, [], {})}


def _line(doc: Document) -> dict[str, Any]:
    return {
        "id": doc.id,
        "title": doc.title,
        "timestamp": doc.timestamp,
        "preview": doc.text[:200],
    }
