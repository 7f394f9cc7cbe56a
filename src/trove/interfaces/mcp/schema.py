"""Strict tool schemas for ``trove mcp``: unknown arguments are errors, with trove codes.

Every error a tool returns starts with the trove error code (``not_found: ...``,
``invalid_request: ...``), the same codes as HTTP and ``trove --json``.

A model that adds an argument a tool does not have (``author`` on a search that had no
author filter) would otherwise have it dropped in silence and believe it filtered. So
every tool's input schema says ``additionalProperties: false`` and its argument model
forbids extras; a call that does not match the schema gets ``invalid_request: ...``
naming the fields, as HTTP does, without pydantic's documentation links.
"""

# No `from __future__ import annotations`: like tools.py, the SDK reads signatures at runtime.

from collections.abc import Callable
from typing import Any

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.mcpserver.tools import Tool
from mcp.types import ToolAnnotations
from pydantic import ConfigDict, ValidationError

# The SDK's own arguments: never part of what a model sends.
_UNKNOWN = "extra_forbidden"


# What a tool does, for the client (read-only, or changing; destructive or not).
READ_ONLY = ToolAnnotations(read_only_hint=True, destructive_hint=False, open_world_hint=False)


def changing(*, destructive: bool) -> ToolAnnotations:
    return ToolAnnotations(
        read_only_hint=False,
        destructive_hint=destructive,
        idempotent_hint=True,
        open_world_hint=False,
    )


def strict_tool(fn: Callable[..., Any], title: str, annotations: ToolAnnotations) -> Tool:
    """A tool whose arguments must all be in its schema."""
    tool = Tool.from_function(fn, title=title, annotations=annotations)
    base = tool.fn_metadata.arg_model
    config = ConfigDict(**{**base.model_config, "extra": "forbid"})
    tool.fn_metadata.arg_model = type(base.__name__, (base,), {"model_config": config})
    tool.parameters["additionalProperties"] = False
    return tool


def validation_message(exc: ValidationError) -> str:
    """``invalid_request: limit: ...; author: unknown argument`` (no input echoed, no URL)."""
    problems = []
    for error in exc.errors(include_url=False, include_input=False):
        where = ".".join(str(part) for part in error["loc"]) or "arguments"
        reason = "unknown argument" if error["type"] == _UNKNOWN else error["msg"]
        problems.append(f"{where}: {reason}")
    return "invalid_request: " + "; ".join(problems)


class StrictServer(MCPServer):
    """An MCP server whose argument errors read like every other trove error."""

    async def call_tool(
        self, name: str, arguments: dict[str, Any], context: Context | None = None
    ) -> Any:
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as exc:
            cause = exc.__cause__
            if isinstance(cause, ValidationError):
                raise ToolError(validation_message(cause)) from cause
            if type(cause) is ToolError:
                # Our own "code: message", without the SDK's "Error executing tool X: ".
                raise ToolError(str(cause)) from cause
            raise
