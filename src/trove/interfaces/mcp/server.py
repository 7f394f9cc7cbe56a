"""The MCP server: the knowledge tools the configuration allows, with resources and
prompts, over stdio or streamable HTTP (behind :class:`RequireToken`)."""

# No `from __future__ import annotations`: the SDK reads tool signatures at runtime.

from collections.abc import Callable
from typing import Any

from trove import __version__
from trove.errors import MissingDependency
from trove.interfaces.config import ServerConfig, bearer_token
from trove.store import Store

try:
    from mcp.server.mcpserver import MCPServer
    from mcp.types import ToolAnnotations
    from starlette.datastructures import Headers
    from starlette.responses import JSONResponse
    from starlette.types import ASGIApp, Receive, Scope, Send
except ImportError as exc:  # pragma: no cover - depends on the install
    raise MissingDependency(exc.name or "mcp", "mcp", "trove mcp") from None

from trove.interfaces.mcp.callers import CallerServer
from trove.interfaces.mcp.events import Subscribers, add_resources, publishing
from trove.interfaces.mcp.more_tools import more_tools
from trove.interfaces.mcp.prompts import add_prompts
from trove.interfaces.mcp.resources import add_more_resources
from trove.interfaces.mcp.schema import READ_ONLY, changing, strict_tool
from trove.interfaces.mcp.tools import KnowledgeTools
from trove.interfaces.mcp.upkeep_tools import upkeep_tools

INSTRUCTIONS = """\
A long-term memory and knowledge base shared across conversations. Search it before \
answering questions about past decisions, preferences, people or projects \
(knowledge_search), and save what will matter later as self-contained notes \
(knowledge_write; use a dedupe_key for facts that change, so they are updated rather \
than duplicated). The workspace is fixed by the server: you see only its items, items \
of your own session, and global items; so do its resources, prompts and notifications."""


def create_server(store: Store, config: ServerConfig) -> MCPServer:
    """An MCP server with the knowledge tools the configuration allows.

    Tools the configuration denies are not offered at all (the library would refuse them
    anyway), so a model does not plan around tools it cannot use.
    """
    tools = KnowledgeTools(store, config)
    rights = config.rights
    offered: list[tuple[Callable[..., Any], str, ToolAnnotations]] = [
        (tools.knowledge_search, "Search knowledge", READ_ONLY),
        (tools.knowledge_get, "Read an item", READ_ONLY),
        (tools.knowledge_list, "List items", READ_ONLY),
        (tools.knowledge_probe, "Probe recall", READ_ONLY),
    ]
    if rights.allow_write:
        offered.append((tools.knowledge_cluster, "Clusters of items", changing(destructive=True)))
    if rights.allow_write:
        offered += [
            (tools.knowledge_write, "Save a memory", changing(destructive=True)),
            (tools.knowledge_update, "Update an item", changing(destructive=True)),
            (tools.knowledge_link, "Link two items", changing(destructive=False)),
        ]
    if rights.allow_delete:
        offered.append((tools.knowledge_delete, "Delete an item", changing(destructive=True)))
    offered += more_tools(tools, config)
    offered += upkeep_tools(tools, config)
    subscribers = Subscribers(tools.callers)
    server = CallerServer(
        name="trove",
        version=__version__,
        instructions=INSTRUCTIONS,
        tools=[strict_tool(fn, title, annotations) for fn, title, annotations in offered],
        subscriptions=subscribers.bus,
        lifespan=publishing(store, subscribers),
    )
    subscribers.install(server)
    add_resources(server, tools.callers)
    add_more_resources(server, tools.callers)
    add_prompts(server, tools.callers)
    return server


def run_stdio(store: Store, config: ServerConfig) -> None:
    create_server(store, config).run("stdio")


def run_http(store: Store, config: ServerConfig, *, log_level: str = "info") -> None:
    """Streamable HTTP at ``/mcp``, with the same bind and token rules as ``trove serve``."""
    import uvicorn

    config.check_bind(config.host)
    app = create_server(store, config).streamable_http_app(
        host=config.host, max_request_body_size=config.max_body_bytes
    )
    uvicorn.run(RequireToken(app, config), host=config.host, port=config.port, log_level=log_level)


class RequireToken:
    """Refuse HTTP requests without a valid bearer token when tokens are configured."""

    def __init__(self, app: ASGIApp, config: ServerConfig) -> None:
        self.app = app
        self.config = config

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            authorization = Headers(scope=scope).get("authorization")
            if self.config.authenticate(bearer_token(authorization)) is None:
                error = {"code": "unauthorized", "message": "a valid bearer token is required"}
                headers = {"WWW-Authenticate": "Bearer"}
                await JSONResponse({"error": error}, 401, headers)(scope, receive, send)
                return
        await self.app(scope, receive, send)
