"""The isolation check at any size: every reader (3 namespaces x 4 sessions) through the
library, HTTP, MCP over streamable HTTP and MCP over stdio, against real servers on
loopback ports (``trove mcp`` as one subprocess per stdio reader), in rounds until
``checks`` checks are made. bench/reliability.py runs it with ≥ 100,000."""

from __future__ import annotations

import random
import tempfile
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import httpx

import trove
from helpers.isolation import (
    NAMESPACES,
    READER_SESSIONS,
    Tally,
    check,
    hear,
    populate,
    server_config,
    token,
)
from helpers.loopback import serving
from helpers.mcp_http import McpClient, mcp_client, mcp_stdio
from helpers.readers import HttpReader, LibraryReader, McpReader, Reader
from trove.interfaces.http import SESSION_HEADER, create_app
from trove.interfaces.mcp import RequireToken, create_server

INTERFACES = ("library", "http", "mcp-http", "mcp-stdio")


def run(
    target: str,
    checks: int,
    *,
    reads: int = 10,
    seed: int = 0,
    stdio_sessions: tuple[str | None, ...] = READER_SESSIONS,
) -> dict[str, Any]:
    """At least ``checks`` checks (``reads`` random reads per reader and interface a
    round, and each MCP session's notifications once a round); the tally by interface.
    Over stdio (a subprocess each, the slowest part), the readers of ``stdio_sessions``."""
    rng = random.Random(seed)
    config = server_config()
    by_interface = {name: Tally() for name in INTERFACES}
    rounds = 0
    with trove.open(target, embedder="hash:64") as kb, ExitStack() as stack:
        world = populate(kb, rng)
        http_url = stack.enter_context(serving(create_app(kb, config)))
        mcp_app = RequireToken(create_server(kb, config).streamable_http_app(), config)
        mcp_url = stack.enter_context(serving(mcp_app)) + "/mcp"
        log = Path(stack.enter_context(tempfile.TemporaryDirectory())) / "mcp.log"
        errlog = stack.enter_context(log.open("a"))
        readers: list[tuple[str, str, str | None, Reader, McpClient | None]] = []
        for namespace in NAMESPACES:
            for session in READER_SESSIONS:
                headers = {"Authorization": f"Bearer {token(namespace, None)}"}
                if session:
                    headers[SESSION_HEADER] = session
                http = httpx.Client(base_url=http_url, headers=headers, timeout=60)
                stack.enter_context(http)
                over_http = stack.enter_context(mcp_client(mcp_url, token(namespace, session)))
                readers += [
                    ("library", namespace, session, LibraryReader(kb, namespace, session), None),
                    ("http", namespace, session, HttpReader(http), None),
                    ("mcp-http", namespace, session, McpReader(over_http), over_http),
                ]
                if session not in stdio_sessions:
                    continue
                args = ["--db", target, "--embedder", "hash:64", "mcp", "--namespace", namespace]
                args += ["--session", session] if session else []
                over_stdio = stack.enter_context(mcp_stdio(*args, errlog=errlog))
                readers.append(
                    ("mcp-stdio", namespace, session, McpReader(over_stdio), over_stdio)
                )
        # Over PostgreSQL a server hears its own process's writes only: not the stdio one.
        local_only = target.startswith("postgresql")
        while sum(t.checks for t in by_interface.values()) < checks:
            rounds += 1
            for name, namespace, session, reader, client in readers:
                tally = by_interface[name]
                tally.add(check(reader, world, namespace, session, rng.randrange(1 << 30), reads))
                if client is not None and not (local_only and name == "mcp-stdio"):
                    tally.add(hear(kb, client, world, namespace, session, rng))
    total = Tally()
    for tally in by_interface.values():
        total.add(tally)
    return {
        **total.to_dict(),
        "rounds": rounds,
        "readers": len(NAMESPACES) * len(READER_SESSIONS),
        "by_interface": {name: t.to_dict() for name, t in by_interface.items()},
    }
