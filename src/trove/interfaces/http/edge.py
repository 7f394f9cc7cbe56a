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


def _origin(url: str) -> tuple[str, str, int] | None:
    """(scheme, host, port) of an origin, the port filled in; None when malformed."""
    try:
        parts = urlsplit(url)
        port = parts.port or {"http": 80, "https": 443}.get(parts.scheme.lower(), 0)
    except ValueError:  # a malformed port or bracket
        return None
    if not parts.hostname:
        return None
    return parts.scheme.lower(), parts.hostname.lower(), port


class HostCheck:
    """Refuse requests whose Host is not this machine, when bound to loopback, and those
    from a page of any other origin: an Origin must be this server's own scheme, host and
    port (another program on a loopback port is another site; its pages must not post
    the web page's forms with the browser's cookie)."""

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
        elif origin is not None and _origin(origin) != _origin(f"{scope['scheme']}://{host}"):
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
