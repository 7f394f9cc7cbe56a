"""MCP client sessions called synchronously, over streamable HTTP with a bearer token or
over stdio (``trove mcp`` as a subprocess): ``with mcp_client(url, token) as call:
call("knowledge_get", id=...)``; resources, prompts and change notifications too."""

from __future__ import annotations

import json
import sys
from collections.abc import AsyncIterator, Iterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager, contextmanager
from pathlib import Path
from typing import IO, Any

import httpx2
from anyio.from_thread import BlockingPortal, start_blocking_portal
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

import trove

# The tree under test, not whatever `trove` is installed: first on the subprocess's path.
TREE = {"PYTHONPATH": str(Path(trove.__file__).resolve().parents[1])}


class ToolFailed(Exception):
    """A tool's error reply; its text starts with the trove error code."""


class McpClient:
    def __init__(self, portal: BlockingPortal, session: ClientSession, heard: list[str]) -> None:
        self.portal = portal
        self.session = session
        self.heard = heard  # URIs of resources/updated notifications, in order

    def __call__(self, tool: str, **arguments: Any) -> Any:
        result = self.portal.call(self.session.call_tool, tool, arguments)
        if result.is_error:
            raise ToolFailed(result.content[0].text)  # type: ignore[union-attr]
        return result.structured_content

    def read(self, uri: str) -> Any:
        """The resource's JSON, or None when the server refuses to read it."""
        try:
            result = self.portal.call(self.session.read_resource, uri)
        except MCPError:
            return None
        return json.loads(result.contents[0].text)  # type: ignore[union-attr]

    def prompt(self, name: str, **arguments: str) -> str | None:
        """The prompt's text, or None when the server refuses it."""
        try:
            result = self.portal.call(self.session.get_prompt, name, arguments)
        except MCPError:
            return None
        return str(result.messages[0].content.text)  # type: ignore[union-attr]

    def subscribe(self, uris: list[str]) -> None:
        for uri in uris:
            self.portal.call(self.session.subscribe_resource, uri)


Streams = AbstractAsyncContextManager[Any]


@asynccontextmanager
async def _session(streams: Streams, heard: list[str]) -> AsyncIterator[ClientSession]:
    async def collect(message: Any) -> None:
        uri = getattr(getattr(getattr(message, "root", message), "params", None), "uri", None)
        if uri is not None:
            heard.append(str(uri))

    async with (
        streams as (read, write, *_),
        ClientSession(read, write, message_handler=collect) as client,
    ):
        await client.initialize()
        yield client


@contextmanager
def _connected(streams: Streams) -> Iterator[McpClient]:
    heard: list[str] = []
    with (
        start_blocking_portal() as portal,
        portal.wrap_async_context_manager(_session(streams, heard)) as s,
    ):
        yield McpClient(portal, s, heard)


@contextmanager
def mcp_client(url: str, token: str) -> Iterator[McpClient]:
    """A session with the streamable HTTP server at ``url`` (``.../mcp``)."""

    @asynccontextmanager
    async def streams() -> AsyncIterator[Any]:
        # The MCP transports' own timeouts (a 300 s read: the server holds its stream of
        # notifications open); httpx's 5 s would drop it after a quiet spell.
        timeout = httpx2.Timeout(30.0, read=300.0)
        auth = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=timeout)
        async with auth, streamable_http_client(url, http_client=auth) as opened:
            yield opened

    with _connected(streams()) as client:
        yield client


@contextmanager
def mcp_stdio(*args: str, errlog: IO[str] = sys.stderr) -> Iterator[McpClient]:
    """``trove ARGS`` (``python -m trove ARGS`` from the tree under test), connected."""
    params = StdioServerParameters(command=sys.executable, args=["-m", "trove", *args], env=TREE)
    with _connected(stdio_client(params, errlog=errlog)) as client:
        yield client
