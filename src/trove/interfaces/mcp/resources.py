"""MCP resources beside the subscribable ones (:mod:`.events`): ``trove://documents/{id}``
(an item with its provenance), ``trove://stats`` and ``trove://recent`` (the newest items).
"""

# No `from __future__ import annotations`: the SDK reads these signatures at runtime.

import json
from typing import Any

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError

from trove.interfaces.mcp import format as reply
from trove.interfaces.mcp.callers import Callers
from trove.models import Document

RECENT_ITEMS = 20


def add_more_resources(server: MCPServer, callers: Callers) -> None:
    @server.resource(
        "trove://documents/{id}",
        name="document",
        description="One item: its exact text and provenance (source, author, time, tags).",
        mime_type="application/json",
    )
    def document(id: str) -> str:
        with callers.open() as ws:
            doc = ws.get(id)
        if doc is None:
            raise ToolError(f"not_found: no item with id {id!r}")
        return json.dumps(reply.document(doc))

    @server.resource(
        "trove://stats",
        name="stats",
        description="This workspace's counts and sizes.",
        mime_type="application/json",
    )
    def stats() -> str:
        with callers.open() as ws:
            return json.dumps(reply.workspace_stats(ws))

    @server.resource(
        "trove://recent",
        name="recent",
        description=f"The {RECENT_ITEMS} newest items (id, title, time, a preview).",
        mime_type="application/json",
    )
    def recent() -> str:
        with callers.open() as ws:
            page = ws.list(limit=RECENT_ITEMS)
        return json.dumps({"items": [_line(doc) for doc in page.items]})


def _line(doc: Document) -> dict[str, Any]:
    return {
        "id": doc.id,
        "title": doc.title,
        "timestamp": doc.timestamp,
        "preview": doc.text[:200],
    }
