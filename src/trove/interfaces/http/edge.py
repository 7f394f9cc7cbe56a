"""What ``trove serve`` checks before a route runs, and its offline API docs page.

:class:`HostCheck` defends a loopback server against DNS rebinding: a web page on
``evil.example`` whose name is made to resolve to 127.0.0.1 sends requests with
``Host: evil.example`` (and its own ``Origin``), so a loopback server answers only to
loopback names, as the MCP server over HTTP already does.
"""

from __future__ import annotations

import html
import json
from typing import Any
from urllib.parse import urlsplit

from starlette.datastructures import Headers
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from trove.interfaces.config import is_loopback

LOOPBACK_NAMES = ("127.0.0.1", "localhost", "::1")


def _hostname(netloc: str) -> str:
    """``[::1]:8765`` -> ``::1``, ``localhost:80`` -> ``localhost``."""
    try:
        return (urlsplit(f"//{netloc}").hostname or "").lower()
    except ValueError:  # a malformed port or bracket
        return ""


class HostCheck:
    """Refuse requests whose Host (or Origin) is not this machine, when bound to loopback."""

    def __init__(self, app: ASGIApp, bind_host: str) -> None:
        self.app = app
        self.active = is_loopback(bind_host)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not self.active:
            await self.app(scope, receive, send)
            return
        headers = Headers(scope=scope)
        host = headers.get("host", "")
        origin = headers.get("origin")
        if _hostname(host) not in LOOPBACK_NAMES:
            problem = (421, "invalid_host", f"Host {host!r} is not this server's address")
        elif origin is not None and _hostname(urlsplit(origin).netloc) not in LOOPBACK_NAMES:
            problem = (403, "invalid_origin", f"requests from {origin!r} are not allowed")
        else:
            await self.app(scope, receive, send)
            return
        status, code, message = problem
        body = {"error": {"code": code, "message": f"{message} (DNS rebinding protection)"}}
        await JSONResponse(body, status)(scope, receive, send)


def docs_page(schema: dict[str, Any]) -> str:
    """The API reference as one self-contained HTML page: no scripts, no CDN."""
    parts = [
        "<!doctype html><meta charset=utf-8>",
        f"<title>{html.escape(schema['info']['title'])} API</title>",
        "<style>body{font:15px system-ui,sans-serif;max-width:60em;margin:2em auto}"
        "pre{background:#f4f4f4;padding:.5em;overflow:auto}code{font-weight:bold}</style>",
        f"<h1>{html.escape(schema['info']['title'])} {html.escape(schema['info']['version'])}"
        "</h1>",
        f"<p>{html.escape(schema['info'].get('description', ''))} "
        "The machine-readable schema is at <a href=/openapi.json>/openapi.json</a>.</p>",
    ]
    for path, operations in schema.get("paths", {}).items():
        for method, op in operations.items():
            parts.append(f"<h2><code>{method.upper()} {html.escape(path)}</code></h2>")
            parts.append(f"<p>{html.escape(op.get('description') or op.get('summary', ''))}</p>")
            params = [
                f"{p['name']} ({p['in']}{', required' if p.get('required') else ''})"
                for p in op.get("parameters", [])
            ]
            if params:
                parts.append(f"<p>Parameters: {html.escape(', '.join(params))}</p>")
            codes = ", ".join(sorted(op.get("responses", {})))
            parts.append(f"<p>Responses: {html.escape(codes)}</p>")
    parts.append("<h2>Schemas</h2>")
    for name, body in schema.get("components", {}).get("schemas", {}).items():
        parts.append(f"<h3>{html.escape(name)}</h3>")
        parts.append(f"<pre>{html.escape(json.dumps(body, indent=1))}</pre>")
    return "\n".join(parts)
