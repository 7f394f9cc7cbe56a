"""``GET /v1/events``: a store's live events as Server-Sent Events.

Scoped like every other route: a caller hears about its own namespace, global items,
and session items of its own session only. Each event is ``event: KIND`` with the
payload as JSON ``data``; its ``id`` (SQLite) lets a client resume with
``Last-Event-ID``. A comment line every ``KEEPALIVE`` quiet seconds keeps proxies from
closing an idle stream.
"""

# No `from __future__ import annotations`: FastAPI reads these signatures at runtime.

import asyncio
import json
import time
from collections.abc import AsyncIterator
from typing import Annotated, Any

from fastapi import FastAPI, Header, Query, Request
from fastapi.responses import StreamingResponse

from ..events import EVENT_KINDS
from ..live import POLL_SECONDS, EventFeed
from ..store import Store

KEEPALIVE = 15.0


def add_event_routes(app: FastAPI, store: Store, auth: Any) -> None:
    """Add the route; ``auth`` is the app's authentication dependency (Annotated)."""

    @app.get("/v1/events", tags=["read"], response_class=StreamingResponse)
    def events(
        request: Request,
        who: auth,
        kinds: Annotated[
            list[str] | None,
            Query(description=f"Only these kinds (repeatable): {', '.join(EVENT_KINDS)}."),
        ] = None,
        last_event_id: Annotated[str | None, Header(alias="Last-Event-ID")] = None,
    ) -> StreamingResponse:
        """Live events (text/event-stream): written, updated, deleted, restored, purged,
        and retrieved when the server records reads."""
        after = int(last_event_id) if last_event_id and last_event_id.isdigit() else None
        feed = EventFeed(
            store,
            kinds or EVENT_KINDS,
            namespace=who.rights.namespace,
            session=who.rights.session or who.session,
            after=after,
        )
        headers = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}
        return StreamingResponse(
            _stream(request, feed), media_type="text/event-stream", headers=headers
        )


async def _stream(request: Request, feed: EventFeed) -> AsyncIterator[str]:
    try:
        yield ": trove events\n\n"  # sent at once: the client knows it is subscribed
        quiet_since = time.monotonic()
        while not await request.is_disconnected():
            # In a thread: a write transaction holds the connection, and the event loop
            # must not wait for it.
            found = await asyncio.to_thread(feed.poll)
            for event in found:
                yield _frame(event)
            if found:
                quiet_since = time.monotonic()
            elif time.monotonic() - quiet_since > KEEPALIVE:
                quiet_since = time.monotonic()
                yield ": keep-alive\n\n"
            await asyncio.sleep(POLL_SECONDS)
    finally:
        feed.close()


def _frame(event: dict[str, Any]) -> str:
    seq = event.get("seq")
    head = f"id: {seq}\n" if seq is not None else ""
    return f"{head}event: {event['kind']}\ndata: {json.dumps(event, ensure_ascii=False)}\n\n"
