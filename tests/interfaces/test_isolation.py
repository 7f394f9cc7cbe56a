"""Randomized isolation, CI-sized: no reader sees an item the rules keep from it, through
the library's workspace view, the HTTP API (every JSON route), MCP over stdio and MCP
over streamable HTTP (tools, resources, prompts and change notifications), on SQLite and
PostgreSQL, against real servers on loopback ports.

The machinery is tests/helpers/isolation.py (the rules, the checks), readers.py (one
reader per interface) and isolation_run.py; bench/reliability.py runs it at full size.
"""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("fastapi", reason="needs the server extra")
pytest.importorskip("mcp", reason="needs the mcp extra")

from helpers.isolation_run import INTERFACES, run


@pytest.fixture(params=["sqlite", "postgres"])
def target(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "postgres":
        return str(request.getfixturevalue("pg_target"))
    return str(tmp_path / "kb.db")


@pytest.mark.slow
def test_no_reader_sees_what_the_rules_keep_from_it(target: str) -> None:
    # One round: 3 reads per reader and interface; over stdio (a subprocess each) the
    # readers without a session and of session s1.
    result = run(target, checks=1, reads=3, seed=20261204, stdio_sessions=(None, "s1"))
    assert result["leaks"] == 0, result["examples"]
    assert set(result["by_interface"]) == set(INTERFACES)
    assert all(t["checks"] > 200 for t in result["by_interface"].values()), result  # not vacuous
