"""More MCP tools, offered after the core ones (:mod:`.tools`) with the same workspace
rules and strict schemas: ``knowledge_get_many``, ``knowledge_neighbors``,
``knowledge_stats``, ``knowledge_write_many``, ``knowledge_unlink`` and
``knowledge_restore``.
"""

# No `from __future__ import annotations`: the SDK reads these signatures at runtime.

import inspect
from collections.abc import Callable
from typing import Annotated, Any

from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import Field

from trove.interfaces.config import ServerConfig
from trove.interfaces.mcp.format import document, workspace_stats
from trove.interfaces.mcp.params import Id
from trove.interfaces.mcp.schema import READ_ONLY, changing


class MoreTools:
    """Tools bound to the same workspace rules as :class:`~.tools.KnowledgeTools`."""

    def __init__(self, tools: Any) -> None:
        self.tools = tools  # KnowledgeTools: its _workspace and formatting

    def knowledge_get_many(
        self,
        ctx: Context,
        ids: Annotated[list[str], Field(min_length=1, max_length=100, description="Item ids.")],
    ) -> dict[str, Any]:
        """Read several items in full at once. Ids you cannot read (absent, deleted,
        expired) are listed under missing."""
        with self.tools._workspace(ctx) as ws:
            docs = ws.get_many(ids)
        found = [document(doc) for doc in docs if doc is not None]
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

    def knowledge_write_many(
        self,
        ctx: Context,
        items: Annotated[
            list[dict[str, Any]],
            Field(
                min_length=1,
                max_length=100,
                description="Memories, each with the fields of knowledge_write (text, "
                "title, tags, scope, dedupe_key, importance, ...).",
            ),
        ],
        links: Annotated[
            list[dict[str, Any]] | None,
            Field(
                max_length=100,
                description="Links to make with them: src, dst, type, weight; src or dst "
                "may be #N, the Nth item of items (from 0), e.g. a decision derived_from "
                "its evidence.",
            ),
        ] = None,
    ) -> dict[str, Any]:
        """Save several memories and the links between them at once: all are kept, or none
        if one is refused. Returns their ids in order."""
        with self.tools._workspace(ctx, write=True) as ws:
            return {"ids": ws.write_many([self._item(item) for item in items], links or ())}

    def _item(self, item: dict[str, Any]) -> dict[str, Any]:
        """A batch item in knowledge_write's terms, as the library takes it."""
        fields = set(inspect.signature(self.tools.knowledge_write).parameters) - {"ctx"}
        unknown = set(item) - fields
        if unknown:
            name = sorted(unknown)[0]
            raise ToolError(f"invalid_request: items: {name}: unknown argument")
        if "text" not in item:
            raise ToolError("invalid_request: items: text: required")
        ttl = item.get("ttl_seconds")
        return {k: v for k, v in item.items() if k != "ttl_seconds"} | (
            {} if ttl is None else {"ttl": ttl}
        )

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
            return workspace_stats(ws)


def more_tools(tools: Any, config: ServerConfig) -> list[tuple[Callable[..., Any], str, Any]]:
    """The extra tools the configuration allows, as (function, title, annotations)."""
    more = MoreTools(tools)
    offered: list[tuple[Callable[..., Any], str, Any]] = [
        (more.knowledge_get_many, "Read several items", READ_ONLY),
        (more.knowledge_neighbors, "Links of an item", READ_ONLY),
        (more.knowledge_stats, "Workspace statistics", READ_ONLY),
    ]
    if config.rights.allow_write:
        offered.append((more.knowledge_unlink, "Unlink two items", changing(destructive=True)))
        batch = (more.knowledge_write_many, "Save several memories", changing(destructive=True))
        offered.append(batch)
    if config.rights.allow_delete:
        restore = (more.knowledge_restore, "Restore a deleted item", changing(destructive=False))
        offered.append(restore)
    return offered
