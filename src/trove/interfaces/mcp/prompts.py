"""MCP prompts: ``what_do_we_know`` (searches now and asks for an answer that cites item
ids) and ``summarise_thread``."""

# No `from __future__ import annotations`: the SDK reads these signatures at runtime.

from typing import Any

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError

from trove.interfaces.mcp.callers import Callers
from trove.models import Document

# summarise_thread reads at most this many of the newest items to find the thread's.
THREAD_SCAN = 2000
THREAD_ITEMS = 50
PROMPT_RESULTS = 8


def add_prompts(server: MCPServer, callers: Callers) -> None:
    @server.prompt(
        name="what_do_we_know",
        title="What do we know about…",
        description="Search the knowledge base for a topic and answer from the results, "
        "citing item ids.",
    )
    def what_do_we_know(topic: str) -> str:
        with callers.open() as ws:
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
        with callers.open() as ws:
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
