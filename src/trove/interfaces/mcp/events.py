"""MCP resources for the store, and resource-updated notifications when it changes.

``trove://knowledge`` is the workspace (read: its counts); ``trove://items/{id}`` one
item. A client subscribed to either (``resources/subscribe`` up to MCP 2025-11-25, or
``subscriptions/listen`` from 2026-07-28) hears ``notifications/resources/updated``
after each committed change in the server's workspace, from this process or any other
writing the same file (:mod:`trove.live`).
Notifications follow the server's own workspace (its top-level namespace and session),
the one a stdio client works in.
"""

# No `from __future__ import annotations`: the SDK reads resource signatures at runtime.

import json
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Any

import anyio
import anyio.to_thread
import mcp_types as types
from mcp.server.mcpserver import MCPServer
from mcp.server.subscriptions import InMemorySubscriptionBus, ResourceUpdated

from trove.interfaces.config import ServerConfig
from trove.interfaces.workspaces import Workspaces
from trove.live import EventFeed
from trove.store import Store

KNOWLEDGE_URI = "trove://knowledge"
CHANGE_KINDS = ("written", "updated", "deleted", "restored", "purged")
# How long one wait for events lasts before the publisher checks it is still wanted.
_WAIT_SECONDS = 1.0


def item_uri(doc_id: str) -> str:
    return f"trove://items/{doc_id}"


class Subscribers:
    """Sessions subscribed with ``resources/subscribe`` (MCP up to 2025-11-25), by URI.

    Newer clients listen through the SDK's subscription bus instead; both hear the same
    updates."""

    def __init__(self) -> None:
        self.bus = InMemorySubscriptionBus()
        self.sessions: dict[str, list[Any]] = {}

    def install(self, server: MCPServer) -> None:
        # MCPServer serves only subscriptions/listen; the SDK's lowlevel server is where
        # the older subscribe methods are registered (and advertised as a capability).
        lowlevel = server._lowlevel_server
        lowlevel.add_request_handler(
            "resources/subscribe", types.SubscribeRequestParams, self._subscribe
        )
        lowlevel.add_request_handler(
            "resources/unsubscribe", types.UnsubscribeRequestParams, self._unsubscribe
        )

    async def _subscribe(self, ctx: Any, params: types.SubscribeRequestParams) -> Any:
        sessions = self.sessions.setdefault(str(params.uri), [])
        if ctx.session not in sessions:
            sessions.append(ctx.session)
        return types.EmptyResult()

    async def _unsubscribe(self, ctx: Any, params: types.UnsubscribeRequestParams) -> Any:
        sessions = self.sessions.get(str(params.uri), [])
        if ctx.session in sessions:
            sessions.remove(ctx.session)
        return types.EmptyResult()

    async def updated(self, uri: str) -> None:
        await self.bus.publish(ResourceUpdated(uri=uri))
        for session in list(self.sessions.get(uri, ())):
            try:
                await session.send_resource_updated(uri)
            except Exception:  # a closed session: forget it
                self.sessions[uri].remove(session)


def publishing(
    store: Store, config: ServerConfig, subscribers: Subscribers
) -> Callable[[Any], AbstractAsyncContextManager[dict[str, Any]]]:
    """A server lifespan that publishes the workspace's changes while the server runs."""

    @asynccontextmanager
    async def lifespan(server: Any) -> AsyncIterator[dict[str, Any]]:
        feed = EventFeed(
            store, CHANGE_KINDS, namespace=config.rights.namespace, session=config.rights.session
        )
        try:
            async with anyio.create_task_group() as group:
                group.start_soon(_publish, feed, subscribers)
                yield {}
                group.cancel_scope.cancel()
        finally:
            feed.close()

    return lifespan


async def _publish(feed: EventFeed, subscribers: Subscribers) -> None:
    while True:
        batch = await anyio.to_thread.run_sync(feed.wait, _WAIT_SECONDS, abandon_on_cancel=True)
        if not batch:
            continue
        for uri in dict.fromkeys([item_uri(e["id"]) for e in batch]):
            await subscribers.updated(uri)
        await subscribers.updated(KNOWLEDGE_URI)


def add_resources(server: MCPServer, workspaces: Workspaces, config: ServerConfig) -> None:
    @server.resource(
        KNOWLEDGE_URI,
        name="knowledge",
        description="This workspace's knowledge: how many items, by source and type. "
        "Listen to it to hear when anything in the workspace changes.",
        mime_type="application/json",
    )
    def knowledge() -> str:
        with workspaces.read(config.rights) as ws:
            stats = ws.stats()
        return json.dumps(
            {
                "documents": stats.documents,
                "by_source": stats.by_source,
                "by_doc_type": stats.by_doc_type,
            }
        )

    @server.resource(
        "trove://items/{id}",
        name="item",
        description="One item with its text; listen to hear when it changes.",
        mime_type="application/json",
    )
    def item(id: str) -> str:
        with workspaces.read(config.rights) as ws:
            doc = ws.get(id)
        if doc is None:
            raise ValueError(f"no item with id {id!r}")
        return json.dumps({"id": doc.id, "title": doc.title, "text": doc.text})
