"""Who calls the MCP server, and so which workspace answers: the one place where tools,
resources, prompts and change notifications learn the caller's rights and session.

Over stdio the caller is whoever started ``trove mcp``: the configuration's top-level
rights and its session (or one per server process). Over streamable HTTP each request
carries its bearer token, whose rights apply, and its MCP session id, which is the
caller's session unless the token fixes one.

The SDK hands tools a :class:`Context`; it cannot hand one to a resource without URI
parameters, so :class:`CallerServer` keeps the request in progress where resources and
prompts (which then take no context argument) read it (:data:`_REQUEST`).
"""

# No `from __future__ import annotations`: the SDK reads signatures of this module's
# server subclass at runtime, like tools.py.

import uuid
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError
from mcp.shared.exceptions import MCPError
from mcp_types import INVALID_PARAMS

from trove.errors import TroveError
from trove.interfaces.codes import error_code
from trove.interfaces.config import Rights, ServerConfig, bearer_token
from trove.interfaces.mcp.schema import StrictServer
from trove.interfaces.workspaces import Workspaces
from trove.workspace import Workspace

# The SDK's request context of the resource read or prompt being served, if any.
_REQUEST: ContextVar[Any] = ContextVar("trove_mcp_request", default=None)


class Callers:
    """Callers' workspaces over one store, as the server's configuration allows."""

    def __init__(self, workspaces: Workspaces, config: ServerConfig) -> None:
        self.workspaces = workspaces
        self.config = config
        # Without a configured session, one per server process: over stdio that is one
        # client connection. Over HTTP each MCP session gets its own.
        self.process_session = uuid.uuid4().hex

    def who(self, request: Any) -> tuple[Rights, str]:
        """The rights and session of the caller of ``request`` (the SDK's request
        context, or None for the request in progress)."""
        request = request if request is not None else _REQUEST.get()
        if _outside(request):  # never fall back to the server's own workspace
            raise ToolError("internal_error: no request to take the caller from")
        headers = _headers(request)
        if headers is None:  # stdio; over HTTP the request always has headers
            return self.config.rights, self.process_session
        rights = self.config.authenticate(bearer_token(headers.get("authorization")))
        if rights is None:  # RequireToken refuses these before they get here
            raise ToolError("unauthorized: a valid bearer token is required")
        return rights, headers.get("mcp-session-id") or self.process_session

    def view(self, request: Any) -> Workspace:
        """The caller's workspace without taking the store's lock: for deciding what it
        may hear of (:meth:`Workspace.sees`), not for reading."""
        return self.workspaces.workspace(*self.who(request))

    @contextmanager
    def open(self, request: Any = None, *, write: bool = False) -> Iterator[Workspace]:
        """The caller's workspace under the store's read (or write) lock; library errors
        become ``code: message`` errors the client shows."""
        rights, session = self.who(request)
        enter = self.workspaces.write if write else self.workspaces.read
        try:
            with enter(rights, session) as ws:
                yield ws
        except TroveError as exc:
            # ToolError: the model sees the message (other errors reach it as a bare
            # "Error executing tool"), with a code it can act on.
            raise ToolError(f"{error_code(exc)[1]}: {exc}") from exc


def _outside(request: Any) -> bool:
    if request is None:
        return True
    if isinstance(request, Context):
        try:
            request.request_context  # noqa: B018 - raises outside a request
        except ValueError:
            return True
    return False


def _headers(request: Any) -> Mapping[str, str] | None:
    if isinstance(request, Context):
        return request.headers
    return getattr(getattr(request, "request", None), "headers", None)


class CallerServer(StrictServer):
    """Keeps each resource read and prompt's request where :class:`Callers` finds it.

    A resource or prompt refuses with :class:`ToolError` (``code: message``, as a tool
    does); the client gets that message as an invalid-params error, not the SDK's
    "Error rendering prompt" with a logged traceback."""

    async def read_resource(self, uri: Any, context: Context | None = None) -> Any:
        with _answering(context):
            return await super().read_resource(uri, context)

    async def get_prompt(
        self, name: str, arguments: dict[str, Any] | None = None, context: Context | None = None
    ) -> Any:
        with _answering(context):
            return await super().get_prompt(name, arguments, context)


@contextmanager
def _answering(context: Context | None) -> Iterator[None]:
    """While a resource or prompt answers: the request at hand, and a refusal as the
    client should see it."""
    token = _REQUEST.set(context)
    try:
        yield
    except Exception as exc:
        refusal = _refusal(exc)
        if refusal is None:
            raise
        raise refusal from None
    finally:
        _REQUEST.reset(token)


def _refusal(exc: BaseException | None) -> MCPError | None:
    """The ToolError behind ``exc`` (the SDK wraps it), as the client should see it."""
    while exc is not None and not isinstance(exc, ToolError):
        exc = exc.__cause__
    return None if exc is None else MCPError(INVALID_PARAMS, str(exc))
