"""HTTP's and MCP's search parameters map onto one search request
(trove.search.request.SearchRequest): every option and filter of the request is a parameter
of ``POST /v1/search`` and of ``knowledge_search`` under its own name, or is listed below
with the reason it is not. A new request field fails here until an interface offers it or
it is listed; each interface's parameters, sent over a real server, reach
``SearchRequest.build`` unchanged."""

from __future__ import annotations

import inspect
from collections.abc import Iterator
from dataclasses import fields
from pathlib import Path
from typing import Any

import httpx
import pytest

pytest.importorskip("fastapi", reason="needs the server extra")
pytest.importorskip("mcp", reason="needs the mcp extra")

import trove
from helpers.loopback import serving
from helpers.mcp_http import mcp_client
from trove.interfaces.config import ServerConfig
from trove.interfaces.http import create_app
from trove.interfaces.http.bodies import SearchBody
from trove.interfaces.mcp import RequireToken, create_server
from trove.interfaces.mcp.tools import KnowledgeTools
from trove.search.filters import Filters
from trove.search.request import OPTIONS, SearchRequest

TOKEN = "mapping-token-0123456789"
# Everything a search request takes by name: its options and its filters.
NAMES = {*OPTIONS, *(f.name for f in fields(Filters))}
# Set for the caller on every interface, never by it.
SET_FOR_CALLER = {
    "namespace": "the workspace's: the server's configuration or the token's",
    "session": "the reader's session: from the token, the header or the MCP session",
    "collapse": "set by collapse_duplicates when the store holds duplicate groups",
}
LIBRARY_ONLY = {"raw": "the query in FTS5 syntax: interfaces take plain words"}
NOT_OVER_MCP = {
    "explain": "each retriever's ranks and scores, for tuning a ranking, not for a model",
    "with_text": "always on: knowledge_search's results carry their text within max_tokens",
}
# A value for each parameter that a search accepts (vector: hash:64's dimension).
SAMPLES: dict[str, Any] = {
    "query": "redis queues",
    "limit": 7,
    "mode": "keyword",
    "vector": [0.25] * 64,
    "explain": True,
    "expand": 1,
    "variants": ["postgres"],
    "rerank": "memory",
    "collapse_duplicates": False,
    "min_score": 0.0,
    "with_text": True,
    "context": 1,
    "max_tokens": 400,
    "scope": ["workspace"],
    "source": ["chat"],
    "doc_type": ["note"],
    "author": ["ana"],
    "tags": ["ops"],
    "since": "2020-01-01",
    "until": "2030-01-01",
    "metadata": {"team": "infra"},
    "entities": ["Redis"],
    "min_importance": 0.1,
    "min_confidence": 0.5,
    "max_compression": 0,
    "cluster": "c1",
}


def http_names() -> set[str]:
    return set(SearchBody.model_fields)


def mcp_names() -> set[str]:
    parameters = inspect.signature(KnowledgeTools.knowledge_search).parameters
    return set(parameters) - {"self", "ctx"}


def test_every_request_option_is_offered_or_listed() -> None:
    listed = {*SET_FOR_CALLER, *LIBRARY_ONLY, *NOT_OVER_MCP}
    assert listed <= NAMES  # no stale entry
    assert http_names() == NAMES - set(SET_FOR_CALLER) - set(LIBRARY_ONLY)
    assert mcp_names() == NAMES - set(SET_FOR_CALLER) - set(LIBRARY_ONLY) - set(NOT_OVER_MCP)
    assert set(SAMPLES) == http_names() | mcp_names()


@pytest.fixture
def built(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[dict[str, Any]]]:
    """What each search passed to SearchRequest.build, by name (the query too)."""
    calls: list[dict[str, Any]] = []
    real = SearchRequest.build.__func__  # type: ignore[attr-defined]

    def build(cls: type[SearchRequest], query: Any = "", *rest: Any, **given: Any) -> Any:
        calls.append({"query": query, **given})
        return real(cls, query, *rest, **given)

    monkeypatch.setattr(SearchRequest, "build", classmethod(build))
    yield calls


@pytest.fixture
def kb(tmp_path: Path) -> Iterator[trove.Store]:
    with trove.open(tmp_path / "kb.db", embedder="hash:64") as store:
        yield store


def test_http_parameters_reach_the_request_by_their_names(
    kb: trove.Store, built: list[dict[str, Any]]
) -> None:
    config = ServerConfig.from_dict({"namespace": "ana", "tokens": [{"token": TOKEN}]})
    body = {name: SAMPLES[name] for name in http_names()}
    auth = {"Authorization": f"Bearer {TOKEN}"}
    with serving(create_app(kb, config)) as url, httpx.Client(base_url=url, headers=auth) as c:
        response = c.post("/v1/search", json=body)
    assert response.status_code == 200, response.text
    [given] = built
    assert {name: given[name] for name in body} == body
    assert given["namespace"] == "ana"


def test_mcp_parameters_reach_the_request_by_their_names(
    kb: trove.Store, built: list[dict[str, Any]]
) -> None:
    config = ServerConfig.from_dict({"namespace": "ana", "tokens": [{"token": TOKEN}]})
    arguments = {name: SAMPLES[name] for name in mcp_names()}
    app = RequireToken(create_server(kb, config).streamable_http_app(), config)
    with serving(app) as url, mcp_client(url + "/mcp", TOKEN) as call:
        call("knowledge_search", **arguments)
    [given] = built
    assert {name: given[name] for name in arguments} == arguments
    assert given["namespace"] == "ana"


# The CLI's `trove search`: its options under the request's names, but these of its own.
CLI_OWN = {
    "meta": "KEY=VALUE pairs, read into the metadata filter",
    "min_score": "a display floor: hidden hits are counted, not dropped by the search",
    "show_all": "shows the hits below the display floor",
    "as_json": "output format",
    "output": "output format",
}
NOT_ON_CLI = {
    "vector": "a query vector is not typed on a command line",
    "scope": "the CLI reads every scope",
    "min_importance": "agent-memory filters are offered to agents (MCP, HTTP)",
    "min_confidence": "agent-memory filters are offered to agents (MCP, HTTP)",
    "max_compression": "agent-memory filters are offered to agents (MCP, HTTP)",
    "metadata": "given as --meta KEY=VALUE",
}


def test_the_cli_search_options_are_request_names_or_listed() -> None:
    from trove.interfaces.cli.commands import search

    cli_names = {p.name for p in search.params if p.name is not None}
    assert cli_names - set(CLI_OWN) <= NAMES
    unoffered = NAMES - cli_names - set(SET_FOR_CALLER) - {"collapse"}
    assert unoffered == set(NOT_ON_CLI)
