"""One contract for search input on every interface: the library, the CLI, HTTP and MCP
(over HTTP, real servers on loopback) accept and refuse the same queries, raw or plain,
long or short, with the same error code; the web page says the same in its words.

The cases the contract broke: a raw query skipped the length limit (a 100 KB one ran for
minutes); an integer past 64 bits in a metadata filter was an OverflowError (HTTP 500)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import AbstractContextManager, asynccontextmanager
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

pytest.importorskip("fastapi", reason="needs the server extra")
pytest.importorskip("mcp", reason="needs the mcp extra")

import httpx
import httpx2
from anyio.from_thread import start_blocking_portal
from click.testing import CliRunner
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

import trove
from helpers.web import sign_in
from trove.errors import TroveError
from trove.interfaces.cli import cli
from trove.interfaces.codes import error_code
from trove.interfaces.config import ServerConfig
from trove.interfaces.http import create_app
from trove.interfaces.mcp import RequireToken, create_server
from trove.search.query import MAX_QUERY_CHARS

Serve = Callable[[Any], AbstractContextManager[str]]
TOKEN = "contract-token-0123456789"
CONFIG = {"tokens": [{"name": "t", "token": TOKEN}], "http": {"max_body_bytes": 4 * 1024 * 1024}}
INT64 = (-(2**63), 2**63 - 1)

queries = st.one_of(
    st.text(max_size=40),
    st.sampled_from(["otters", "otters OR rivers", '"open', "NEAR(a b, 2)", "a AND", "中文"]),
    # Around the limit, and far past it (up to a megabyte), as words and as raw ORs.
    st.builds(
        lambda n, unit: (unit * (n // len(unit) + 1))[:n].strip() or "x",
        st.sampled_from([MAX_QUERY_CHARS - 1, MAX_QUERY_CHARS, MAX_QUERY_CHARS + 1, 100_000]),
        st.sampled_from(["a", "otter ", "w OR ", "中"]),
    ),
)
integers = st.one_of(
    st.integers(min_value=-(2**70), max_value=2**70),
    st.sampled_from([INT64[0], INT64[1], INT64[0] - 1, INT64[1] + 1, 10**30, -(10**30)]),
)


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    path = tmp_path_factory.mktemp("contract") / "kb.db"
    with trove.open(path, embedder="hash:64") as kb:
        kb.add("otters hold hands while they sleep", source="s", source_id="1", metadata={"k": 1})
        yield path


class Interfaces:
    """One search through each interface, answered as "ok" or the error's code."""

    def __init__(self, db: Path, http: httpx.Client, web: httpx.Client, mcp: Any, portal: Any):
        self.db, self.http, self.web, self.mcp, self.portal = db, http, web, mcp, portal

    def library(self, query: str, raw: bool, meta: dict[str, Any]) -> str:
        with trove.open(self.db, embedder="hash:64") as kb:
            try:
                kb.search(query, raw=raw, metadata=meta, mode="keyword")
            except TroveError as exc:
                return error_code(exc)[1]
        return "ok"

    def cli(self, query: str, raw: bool, meta: dict[str, Any]) -> str:
        args = ["--db", str(self.db), "search", "--mode", "keyword", "--json"]
        args += ["--raw"] * raw + [f"--meta={k}={json.dumps(v)}" for k, v in meta.items()]
        args += ["--", query]  # a query such as "-0" is the query, not an option
        result = CliRunner(env={"TROVE_EMBEDDER": "hash:64"}).invoke(cli, args)
        if result.exit_code == 0:
            return "ok"
        return str(json.loads(result.stdout)["error"]["code"])

    def http_api(self, query: str, raw: bool, meta: dict[str, Any]) -> str:
        body = {"query": query, "raw": raw, "metadata": meta, "mode": "keyword"}
        response = self.http.post("/v1/search", json=body)
        if response.status_code == 200:
            return "ok"
        assert response.status_code < 500, response.text
        return str(response.json()["error"]["code"])

    def web_page(self, query: str) -> str:
        page = self.web.get("/", params={"q": query, "mode": "keyword"})
        if page.status_code == 200:
            return "ok"
        assert page.status_code < 500, page.text
        return next(code for code in ("invalid_query", "invalid_input") if code in page.text)

    def mcp_tool(self, query: str, meta: dict[str, Any]) -> str:
        arguments = {"query": query, "metadata": meta, "mode": "keyword"}
        result = self.portal.call(self.mcp.call_tool, "knowledge_search", arguments)
        if not result.is_error:
            return "ok"
        text = result.content[0].text
        return next(code for code in ("invalid_query", "invalid_input") if code in text)


@pytest.fixture(scope="module")
def interfaces(db: Path, serve: Serve) -> Iterator[Interfaces]:
    config = ServerConfig.from_dict(CONFIG, origin="test")
    with trove.open(db, embedder="hash:64") as kb:
        mcp_app = RequireToken(create_server(kb, config).streamable_http_app(), config)
        with serve(create_app(kb, config)) as url, serve(mcp_app) as mcp_url:

            @asynccontextmanager
            async def session() -> AsyncIterator[ClientSession]:
                auth = httpx2.AsyncClient(headers={"Authorization": f"Bearer {TOKEN}"})
                streams = streamable_http_client(f"{mcp_url}/mcp", http_client=auth)
                async with auth, streams as (read, write), ClientSession(read, write) as client:
                    await client.initialize()
                    yield client

            headers = {"Authorization": f"Bearer {TOKEN}"}
            with (
                httpx.Client(base_url=url, headers=headers, timeout=60) as http,
                httpx.Client(base_url=url, timeout=60) as web,
                start_blocking_portal() as portal,
                portal.wrap_async_context_manager(session()) as mcp,
            ):
                assert sign_in(web, TOKEN).status_code == 303
                yield Interfaces(db, http, web, mcp, portal)


@settings(max_examples=40, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(query=queries, raw=st.booleans(), value=st.one_of(st.none(), integers))
@example(query="w OR " * 20_000 + "w", raw=True, value=None)  # 100 KB of raw ORs
@example(query="a" * (MAX_QUERY_CHARS + 1), raw=True, value=None)
@example(query="中" * MAX_QUERY_CHARS, raw=False, value=None)  # at the limit, CJK
@example(query="otters", raw=False, value=10**30)
@example(query="otters", raw=True, value=INT64[1] + 1)
@example(query="otters", raw=False, value=INT64[1])
def test_every_interface_accepts_and_refuses_the_same_searches(
    interfaces: Interfaces, query: str, raw: bool, value: int | None
) -> None:
    meta = {} if value is None else {"k": value}
    expected = interfaces.library(query, raw, meta)
    too_long = len(query.strip()) > MAX_QUERY_CHARS
    out_of_range = value is not None and not INT64[0] <= value <= INT64[1]
    if too_long or out_of_range:
        assert expected == "invalid_query"
    assert interfaces.cli(query, raw, meta) == expected
    assert interfaces.http_api(query, raw, meta) == expected
    if not raw:  # the MCP tool takes plain words only
        assert interfaces.mcp_tool(query, meta) == expected
    # The web form has neither raw nor metadata; its URL carries at most 64 KB.
    if not raw and not meta and len(quote(query)) < 60_000:
        assert interfaces.web_page(query) == expected
