"""An MCP client session over streamable HTTP with a bearer token, called synchronously:
``with mcp_client(url, token) as call: call("knowledge_get", id=...)``."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager
from typing import Any

import httpx2
from anyio.from_thread import BlockingPortal, start_blocking_portal
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client


class ToolFailed(Exception):
    """A tool's error reply; its text starts with the trove error code."""


class McpClient:
    def __init__(self, portal: BlockingPortal, session: ClientSession) -> None:
        self.portal = portal
        self.session = session

    def __call__(self, tool: str, **arguments: Any) -> Any:
        result = self.portal.call(self.session.call_tool, tool, arguments)
        if result.is_error:
            raise ToolFailed(result.content[0].text)  # type: ignore[union-attr]
        return result.structured_content


@asynccontextmanager
async def _session(url: str, token: str) -> AsyncIterator[ClientSession]:
    auth = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"})
    async with (
        auth,
        streamable_http_client(url, http_client=auth) as (read, write, *_),
        ClientSession(read, write) as client,
    ):
        await client.initialize()
        yield client


@contextmanager
def mcp_client(url: str, token: str) -> Iterator[McpClient]:
    session: Callable[[], Any] = lambda: _session(url, token)  # noqa: E731
    with start_blocking_portal() as portal, portal.wrap_async_context_manager(session()) as s:
        yield McpClient(portal, s)
