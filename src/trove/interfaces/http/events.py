"""``GET /v1/events``: a store's live events as Server-Sent Events.

Scoped like every other route: a caller hears about its own namespace, global items,
and session items of its own session only. Each event is ``event: KIND`` with the
payload as JSON ``data``; its ``id`` (SQLite) lets a client resume with
``Last-Event-ID``. sse-starlette (extra ``server``) frames the stream, pings every
``KEEPALIVE`` seconds so proxies keep an idle stream open, notices a client gone, and
ends open streams when the server shuts down (Ctrl-C does not wait for clients).
"""

# No `from __future__ import annotations`: FastAPI reads these signatures at runtime.

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Annotated, Any

from fastapi import FastAPI, Header, Query
from fastapi.responses import StreamingResponse

from trove.errors import MissingDependency
from trove.events import EVENT_KINDS
from trove.live import POLL_SECONDS, EventFeed
from trove.store import Store

KEEPALIVE = 15.0


def add_event_routes(app: FastAPI, store: Store, auth: Any) -> None:
    """Add the route; ``auth`` is the app's authentication dependency (Annotated)."""

    @app.get("/v1/events", tags=["read"], response_class=StreamingResponse)
    def events(
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
        try:
            from sse_starlette import EventSourceResponse
        except ImportError as exc:  # pragma: no cover - depends on the install
            raise MissingDependency("sse-starlette", "server", "GET /v1/events") from exc
        return EventSourceResponse(_stream(feed), ping=KEEPALIVE, sep="\n")  # type: ignore[return-value]


async def _stream(feed: EventFeed) -> AsyncIterator[dict[str, Any]]:
    try:
        yield {"comment": "trove events"}  # at once: the client knows it is subscribed
        while True:
            # In a thread: a write transaction holds the connection, and the event loop
            # must not wait for it.
            for event in await asyncio.to_thread(feed.poll):
                seq = event.get("seq")
                yield {
                    "event": event["kind"],
                    "data": json.dumps(event, ensure_ascii=False),
                    **({"id": str(seq)} if seq is not None else {}),
                }
            await asyncio.sleep(POLL_SECONDS)
    finally:
        feed.close()
