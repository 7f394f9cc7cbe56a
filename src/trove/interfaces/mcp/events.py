"""MCP resources for the store, and resource-updated notifications when it changes.

``trove://knowledge`` is the workspace (read: its counts); ``trove://items/{id}`` one
item. A client subscribed to either (``resources/subscribe`` up to MCP 2025-11-25, or
``subscriptions/listen`` from 2026-07-28) hears ``notifications/resources/updated``
after each committed change in its own workspace, from this process or any other
writing the same file (:mod:`trove.live`).
Each subscriber hears what its caller's workspace sees (:class:`.callers.Callers`, as
for the tools: over HTTP its token's namespace and its session), nothing else.
"""

# No `from __future__ import annotations`: the SDK reads resource signatures at runtime.

import json
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Any

import anyio
import anyio.lowlevel
import anyio.to_thread
import mcp_types as types
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.subscriptions import (
    InMemorySubscriptionBus,
    ListenHandler,
    ResourceUpdated,
    ServerEvent,
)

from trove.interfaces.mcp.callers import Callers
from trove.live import EventFeed
from trove.store import Store
from trove.workspace import Workspace

KNOWLEDGE_URI = "trove://knowledge"
CHANGE_KINDS = ("written", "updated", "deleted", "restored", "purged")
# How long one wait for events lasts before the publisher checks it is still wanted.
_WAIT_SECONDS = 1.0


def item_uri(doc_id: str) -> str:
    return f"trove://items/{doc_id}"


Listener = Callable[[ServerEvent], None]


class Subscribers:
    """Who listens for which changes, each with its caller's workspace.

    Sessions subscribed with ``resources/subscribe`` (MCP up to 2025-11-25) are kept by
    URI; newer clients' ``subscriptions/listen`` streams are served here too (not by the
    SDK's own handler, which would tell every stream of every change)."""

    def __init__(self, callers: Callers) -> None:
        self.callers = callers
        # The SDK's bus, for the server's constructor: nothing is published on it.
        self.bus = InMemorySubscriptionBus()
        self.sessions: dict[str, list[tuple[Any, Workspace]]] = {}
        self.listeners: dict[object, tuple[Workspace, Listener]] = {}

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
        lowlevel.add_request_handler(
            "subscriptions/listen", types.SubscriptionsListenRequestParams, self._listen
        )

    async def _subscribe(self, ctx: Any, params: types.SubscribeRequestParams) -> Any:
        sessions = self.sessions.setdefault(str(params.uri), [])
        if all(session is not ctx.session for session, _ in sessions):
            sessions.append((ctx.session, self.callers.view(ctx)))
        return types.EmptyResult()

    async def _unsubscribe(self, ctx: Any, params: types.UnsubscribeRequestParams) -> Any:
        sessions = self.sessions.get(str(params.uri), [])
        sessions[:] = [(s, view) for s, view in sessions if s is not ctx.session]
        return types.EmptyResult()

    async def _listen(self, ctx: Any, params: types.SubscriptionsListenRequestParams) -> Any:
        return await ListenHandler(_Seen(self, self.callers.view(ctx)))(ctx, params)

    async def changed(self, batch: list[dict[str, Any]]) -> None:
        """Tell each subscriber of the changed items (then the workspace) its caller sees."""
        for view, deliver in list(self.listeners.values()):
            for uri in _uris(view, batch):
                deliver(ResourceUpdated(uri=uri))
        await anyio.lowlevel.checkpoint()
        for uri in _uris(None, batch):
            sessions = self.sessions.get(uri, [])
            for session, view in list(sessions):
                if uri not in _uris(view, batch):
                    continue
                try:
                    await session.send_resource_updated(uri)
                except Exception:  # a closed session: forget it
                    sessions.remove((session, view))


def _uris(view: Workspace | None, batch: list[dict[str, Any]]) -> list[str]:
    """The changed items' URIs, then the workspace's, that ``view`` sees (None: all)."""
    seen = [item_uri(e["id"]) for e in batch if view is None or view.sees(e)]
    return [*dict.fromkeys(seen), KNOWLEDGE_URI] if seen else []


class _Seen:
    """One listen stream's bus: it hears what its caller's workspace sees."""

    def __init__(self, subscribers: Subscribers, view: Workspace) -> None:
        self.subscribers = subscribers
        self.view = view

    async def publish(self, event: ServerEvent) -> None:  # pragma: no cover - unused
        raise NotImplementedError("changes are published through Subscribers.changed")

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        key = object()
        self.subscribers.listeners[key] = (self.view, listener)
        return lambda: self.subscribers.listeners.pop(key, None) and None


def publishing(
    store: Store, subscribers: Subscribers
) -> Callable[[Any], AbstractAsyncContextManager[dict[str, Any]]]:
    """A server lifespan that publishes the store's changes while the server runs."""

    @asynccontextmanager
    async def lifespan(server: Any) -> AsyncIterator[dict[str, Any]]:
        feed = EventFeed(store, CHANGE_KINDS)  # all of them: each subscriber's are chosen
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
        if batch:
            await subscribers.changed(batch)


def add_resources(server: MCPServer, callers: Callers) -> None:
    @server.resource(
        KNOWLEDGE_URI,
        name="knowledge",
        description="This workspace's knowledge: how many items, by source and type. "
        "Listen to it to hear when anything in the workspace changes.",
        mime_type="application/json",
    )
    def knowledge() -> str:
        with callers.open() as ws:
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
        with callers.open() as ws:
            doc = ws.get(id)
        if doc is None:
            raise ToolError(f"not_found: no item with id {id!r}")
        return json.dumps({"id": doc.id, "title": doc.title, "text": doc.text})
