"""``trove mcp``: knowledge tools for agents over the Model Context Protocol (stdio or HTTP).

:mod:`.server` builds the server from the core tools (:mod:`.tools`; their parameter
types in :mod:`.params`, their replies in :mod:`.format`), more tools
(:mod:`.more_tools`), resources (:mod:`.events`, subscribable; :mod:`.resources`) and
prompts (:mod:`.prompts`); :mod:`.schema` makes every tool's arguments strict.
"""

from trove.interfaces.mcp.format import MCP_TOKENS
from trove.interfaces.mcp.server import RequireToken, create_server, run_http, run_stdio

__all__ = ["MCP_TOKENS", "RequireToken", "create_server", "run_http", "run_stdio"]
