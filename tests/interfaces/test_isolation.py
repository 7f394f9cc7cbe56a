"""Randomized isolation, CI-sized: no reader sees an item the rules keep from it, through
the library's workspace view, the HTTP API, MCP over stdio and MCP over streamable HTTP
(tools, resources, prompts and change notifications), on SQLite and PostgreSQL.

The machinery is tests/helpers/isolation.py; bench/reliability.py runs it at full size.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from contextlib import AbstractContextManager, ExitStack
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("fastapi", reason="needs the server extra")
pytest.importorskip("mcp", reason="needs the mcp extra")

import httpx

import trove
from helpers.isolation import (
    NAMESPACES,
    READER_SESSIONS,
    HttpReader,
    LibraryReader,
    McpReader,
    Tally,
    check,
    hear,
    populate,
    server_config,
    token,
)
from helpers.mcp_http import mcp_client, mcp_stdio
from trove.interfaces.http import SESSION_HEADER, create_app
from trove.interfaces.mcp import RequireToken, create_server

Serve = Callable[[Any], AbstractContextManager[str]]
READS = 3  # per reader and interface (x 12 readers x 4 interfaces x 2 backends)
# A subprocess each, the slowest part: over stdio, the readers with these sessions.
STDIO_SESSIONS = (None, "s1")


@pytest.fixture(params=["sqlite", "postgres"])
def target(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "postgres":
        return str(request.getfixturevalue("pg_target"))
    return str(tmp_path / "kb.db")


@pytest.mark.slow
def test_no_reader_sees_what_the_rules_keep_from_it(
    target: str, serve: Serve, tmp_path: Path
) -> None:
    rng = random.Random(20261204)
    config = server_config()
    tally = Tally()
    with trove.open(target, embedder="hash:64") as kb, ExitStack() as stack:
        world = populate(kb, rng)
        http_url = stack.enter_context(serve(create_app(kb, config)))
        mcp_app = RequireToken(create_server(kb, config).streamable_http_app(), config)
        mcp_url = stack.enter_context(serve(mcp_app)) + "/mcp"
        errlog = stack.enter_context((tmp_path / "mcp.log").open("a"))
        for namespace in NAMESPACES:
            for session in READER_SESSIONS:
                seed = rng.randrange(1 << 30)
                library = LibraryReader(kb, namespace, session)
                tally.add(check(library, world, namespace, session, seed, READS))
                headers = {"Authorization": f"Bearer {token(namespace, None)}"}
                if session:
                    headers[SESSION_HEADER] = session
                with httpx.Client(base_url=http_url, headers=headers, timeout=60) as http:
                    tally.add(check(HttpReader(http), world, namespace, session, seed, READS))
                # Over MCP the session is the token's (or, without one, the connection's
                # own, which holds no items): the same visibility as ``session``.
                with mcp_client(mcp_url, token(namespace, session)) as mcp:
                    tally.add(check(McpReader(mcp), world, namespace, session, seed, READS))
                    tally.add(hear(kb, mcp, world, namespace, session, rng))
                if session not in STDIO_SESSIONS:
                    continue
                args = ["--db", target, "--embedder", "hash:64", "mcp", "--namespace", namespace]
                with mcp_stdio(
                    *args, *(["--session", session] if session else []), errlog=errlog
                ) as mcp:
                    tally.add(check(McpReader(mcp), world, namespace, session, seed, READS))
                    if not target.startswith("postgresql"):  # there: this process's writes only
                        tally.add(hear(kb, mcp, world, namespace, session, rng))
    assert tally.leaks == 0, tally.examples
    assert tally.checks > 1000  # not vacuous
