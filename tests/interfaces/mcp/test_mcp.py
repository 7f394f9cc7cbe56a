"""The MCP server, driven by the official SDK's client: ``trove mcp`` over stdio as a real
subprocess (``python -m trove`` from the tree under test), and streamable HTTP on a
loopback port."""

from __future__ import annotations

import json
import sys
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import AbstractContextManager, asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp", reason="needs the mcp extra")
import httpx2
from anyio.from_thread import BlockingPortal, start_blocking_portal
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client

import trove
from helpers.llm_server import FakeLLM
from trove.interfaces.config import ServerConfig
from trove.interfaces.mcp import MCP_TOKENS, RequireToken, create_server
from trove.llm import ChatModel
from trove.search.calibration import MCP_FLOOR as FLOOR

# The tree under test, not whatever `trove` is installed or on PATH: the package these
# tests import, first on the subprocess's path.
TREE = {"PYTHONPATH": str(Path(trove.__file__).resolve().parents[1])}
Serve = Callable[[Any], AbstractContextManager[str]]
ALL_TOOLS = {
    "knowledge_write",
    "knowledge_search",
    "knowledge_get",
    "knowledge_update",
    "knowledge_list",
    "knowledge_delete",
    "knowledge_link",
    "knowledge_probe",
    "knowledge_cluster",
    "knowledge_restore",
    "knowledge_unlink",
    "knowledge_neighbors",
    "knowledge_stats",
    "knowledge_get_many",
    "knowledge_write_many",
    "knowledge_original",
    "knowledge_attach_original",
    "knowledge_canonicalize",
    "knowledge_clear",
}


class ToolFailed(Exception):
    pass


class Mcp:
    """A connected client session, called synchronously through an event-loop thread."""

    def __init__(self, portal: BlockingPortal, session: ClientSession) -> None:
        self.portal = portal
        self.session = session

    def call(self, tool: str, **arguments: Any) -> dict[str, Any]:
        result = self.portal.call(self.session.call_tool, tool, arguments)
        if result.is_error:
            raise ToolFailed(result.content[0].text)  # type: ignore[union-attr]
        assert isinstance(result.structured_content, dict)
        return result.structured_content

    def fail(self, tool: str, **arguments: Any) -> str:
        with pytest.raises(ToolFailed) as failure:
            self.call(tool, **arguments)
        return str(failure.value)

    def tools(self) -> dict[str, Any]:
        return {t.name: t for t in self.portal.call(self.session.list_tools).tools}


@contextmanager
def connected(session: Callable[[], Any]) -> Iterator[Mcp]:
    with start_blocking_portal() as portal, portal.wrap_async_context_manager(session()) as s:
        yield Mcp(portal, s)


@asynccontextmanager
async def initialized(streams: Any) -> AsyncIterator[ClientSession]:
    async with streams as (read, write), ClientSession(read, write) as client:
        await client.initialize()
        yield client


def trove_mcp(*args: str) -> StdioServerParameters:
    """``trove ARGS`` as ``python -m trove ARGS``, run from the tree under test."""
    return StdioServerParameters(command=sys.executable, args=["-m", "trove", *args], env=TREE)


@contextmanager
def stdio(db: Path, *args: str, log: Path) -> Iterator[Mcp]:
    """``trove --db DB --embedder hash:64 mcp ARGS`` as a subprocess, connected."""
    params = trove_mcp("--db", str(db), "--embedder", "hash:64", "mcp", *args)
    with (
        log.open("a") as errlog,
        connected(lambda: initialized(stdio_client(params, errlog=errlog))) as mcp,
    ):
        yield mcp


@contextmanager
def over_http(url: str, token: str) -> Iterator[Mcp]:
    @asynccontextmanager
    async def session() -> AsyncIterator[ClientSession]:
        auth = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"})
        async with auth, initialized(streamable_http_client(url, http_client=auth)) as client:
            yield client

    with connected(session) as mcp:
        yield mcp


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("mcp") / "kb.db"
    with trove.open(path, embedder="hash:64") as kb:
        kb.workspace("ops", allow_global=True).add(
            "the office wifi rotates monthly", scope="global"
        )
        kb.workspace("ana").add("an old reminder", expires_at="2000-01-01", dedupe_key="old")
    return path


@pytest.fixture(scope="module")
def ana(db: Path) -> Iterator[Mcp]:
    # Through a config file shared with `trove serve`: its tokens are for HTTP callers;
    # over stdio the caller is whoever started the process and gets the top-level rights.
    config = db.with_name("trove.toml")
    config.write_text('namespace = "ana"\n[[tokens]]\ntoken = "for-http-callers-only-123"\n')
    args = ["--config", str(config), "--session", "s1"]
    with stdio(db, *args, log=db.with_suffix(".1.log")) as mcp:
        yield mcp


@pytest.fixture(scope="module")
def ana_other_session(db: Path) -> Iterator[Mcp]:
    with stdio(db, "--namespace", "ana", "--session", "s2", log=db.with_suffix(".2.log")) as mcp:
        yield mcp


def library(db: Path) -> trove.Store:
    return trove.open(db)  # another connection, as another process would (its own embedder)


# --- the tools --------------------------------------------------------------------------


def test_tools_have_schemas_descriptions_and_hints(ana: Mcp) -> None:
    tools = ana.tools()
    assert set(tools) == ALL_TOOLS
    write = tools["knowledge_write"]
    properties = write.input_schema["properties"]
    assert write.input_schema["required"] == ["text"]
    assert {"text", "scope", "dedupe_key", "tags", "ttl_seconds"} <= set(properties)
    assert not {"namespace", "author_tier", "session"} & set(properties)
    assert all(p.get("description") for p in properties.values())
    assert (
        "dedupe_key" in write.description or "replaces" in properties["dedupe_key"]["description"]
    )
    assert "cursor" in tools["knowledge_list"].description
    assert "expand" in tools["knowledge_search"].input_schema["properties"]
    for name in ("knowledge_search", "knowledge_get", "knowledge_list"):
        assert tools[name].annotations.read_only_hint is True
    for name in ("knowledge_write", "knowledge_update", "knowledge_delete"):
        hints = tools[name].annotations
        assert hints.read_only_hint is False and hints.destructive_hint is True
    assert tools["knowledge_link"].annotations.destructive_hint is False
    for tool in tools.values():
        assert tool.input_schema["additionalProperties"] is False, tool.name
    assert {"author", "doc_type"} <= set(tools["knowledge_search"].input_schema["properties"])


def test_an_agent_writes_a_memory_and_finds_it(ana: Mcp) -> None:
    written = ana.call(
        "knowledge_write",
        text="Ana prefers green tea in the afternoon",
        title="Ana's drink",
        tags=["preference"],
        importance=0.8,
    )
    # min_score=0: the hash test embedder's scores are not calibrated
    query = "what does ana like to drink"
    results = ana.call("knowledge_search", query=query, min_score=0)["results"]
    assert results[0]["id"] == written["id"]
    assert results[0]["title"] == "Ana's drink" and "snippet" in results[0]
    doc = ana.call("knowledge_get", id=written["id"])
    assert doc["text"] == "Ana prefers green tea in the afternoon"
    assert (doc["namespace"], doc["author_tier"], doc["importance"]) == ("ana", "llm", 0.8)


def test_the_model_cannot_choose_namespace_or_author_tier(ana: Mcp, db: Path) -> None:
    message = ana.fail(
        "knowledge_write", text="planted for bo", namespace="bo", author_tier="human"
    )
    assert message.startswith("invalid_request: ")
    assert "namespace: unknown argument" in message and "author_tier" in message
    doc_id = ana.call("knowledge_write", text="planted for ana")["id"]
    with library(db) as kb:
        doc = kb.get(doc_id)
        assert doc is not None and (doc.namespace, doc.author_tier) == ("ana", "llm")
        assert doc_id not in [h.doc_id for h in kb.workspace("bo").search("planted")]
        assert kb.workspace("bo").list().items == []


def test_unknown_arguments_are_errors_and_author_doc_type_filter(ana: Mcp, db: Path) -> None:
    message = ana.fail("knowledge_search", query="x", authr=["ana"])
    assert message == "invalid_request: authr: unknown argument"
    with library(db) as kb:
        kb.workspace("ana").add("memo by zed about otters", author="zed", doc_type="memo")
        kb.workspace("ana").add("email by amy about otters", author="amy", doc_type="email")
    found = ana.call(
        "knowledge_search", query="otters", mode="keyword", author=["zed"], min_score=0
    )
    assert [r["author"] for r in found["results"]] == ["zed"]
    found = ana.call(
        "knowledge_search", query="otters", mode="keyword", doc_type=["email"], min_score=0
    )
    assert [r["author"] for r in found["results"]] == ["amy"]


def test_session_items_are_invisible_to_other_sessions(ana: Mcp, ana_other_session: Mcp) -> None:
    note = ana.call("knowledge_write", text="scratch: the staging password", scope="session")
    assert ana.call("knowledge_get", id=note["id"])["scope"] == "session"
    other = ana_other_session
    assert other.fail("knowledge_get", id=note["id"]).endswith(
        f"not_found: no item with id {note['id']!r} (it may be deleted or expired)"
    )
    found = other.call("knowledge_search", query="staging password")["results"]
    assert note["id"] not in [r["id"] for r in found]
    listed = other.call("knowledge_list", scope=["session"])["items"]
    assert note["id"] not in [d["id"] for d in listed]
    # The same text in the other session is its own item, not a clash with the first.
    twin = other.call("knowledge_write", text="scratch: the staging password", scope="session")
    assert twin["id"] != note["id"]


def test_global_items_are_read_but_not_written_without_the_right(ana: Mcp) -> None:
    query = {"query": "office wifi", "mode": "keyword", "min_score": 0}
    results = ana.call("knowledge_search", **query)["results"]
    assert [r["scope"] for r in results] == ["global"]
    message = ana.fail("knowledge_write", text="a global claim", scope="global")
    assert "forbidden: this caller may not write global items" in message
    message = ana.fail("knowledge_update", id=results[0]["id"], text="hacked")
    assert "forbidden" in message


def test_an_expired_item_is_not_found_by_id_but_listed_as_expired(ana: Mcp, db: Path) -> None:
    with library(db) as kb:
        old = kb.workspace("ana").list(limit=1000).items
    [expired] = [d for d in old if d.dedupe_key == "old"]
    assert "not_found" in ana.fail("knowledge_get", id=expired.id)
    listed = {d["id"]: d for d in ana.call("knowledge_list", limit=100)["items"]}
    assert listed[expired.id]["expired"] is True


def test_update_keeps_the_id_and_cannot_change_scope(ana: Mcp) -> None:
    first = ana.call("knowledge_write", text="timezone: UTC", dedupe_key="user:tz")
    again = ana.call("knowledge_write", text="timezone: CET", dedupe_key="user:tz")
    assert again["id"] == first["id"]
    message = ana.fail("knowledge_update", id=first["id"], text="x", scope="global")
    assert message == "invalid_request: scope: unknown argument"
    updated = ana.call("knowledge_update", id=first["id"], text="timezone: JST")
    assert updated == {"id": first["id"]}
    doc = ana.call("knowledge_get", id=first["id"])
    assert (doc["text"], doc["scope"], doc["dedupe_key"]) == (
        "timezone: JST",
        "workspace",
        "user:tz",
    )


def test_list_pages_with_a_cursor(ana: Mcp) -> None:
    ids = [
        ana.call("knowledge_write", text=f"paged note {i}", tags=["paged"])["id"] for i in range(5)
    ]
    seen: list[str] = []
    cursor = None
    while True:
        page = ana.call("knowledge_list", limit=2, **({"cursor": cursor} if cursor else {}))
        seen += [d["id"] for d in page["items"]]
        cursor = page.get("cursor")
        if cursor is None:
            break
    assert seen[:5] == ids[::-1]


def test_link_expand_and_delete(ana: Mcp) -> None:
    decision = ana.call("knowledge_write", text="decision: move the cache in process")["id"]
    evidence = ana.call("knowledge_write", text="p99 fell from 40 ms to 3 ms")["id"]
    edge = ana.call("knowledge_link", src=decision, dst=evidence, type="derived_from")
    assert (edge["src"], edge["dst"], edge["type"]) == (decision, evidence, "derived_from")
    # Keyword mode: the hash test embedder finds some likeness in anything.
    query = {"query": "cache decision", "mode": "keyword", "min_score": 0}
    assert evidence not in [r["id"] for r in ana.call("knowledge_search", **query)["results"]]
    results = ana.call("knowledge_search", expand=1, **query)["results"]
    linked = {r["id"]: r.get("linked_from") for r in results}
    assert linked[evidence]["doc_id"] == decision
    deleted = {"id": evidence, "deleted": True, "already_deleted": False}
    assert ana.call("knowledge_delete", id=evidence) == deleted
    assert "not_found" in ana.fail("knowledge_get", id=evidence)
    # Idempotent, as the tool's annotation promises: the second delete says so.
    assert ana.call("knowledge_delete", id=evidence) == {**deleted, "already_deleted": True}


def test_bad_arguments_get_a_readable_error(ana: Mcp) -> None:
    for message in (
        ana.fail("knowledge_search", query="x", limit=500),
        ana.fail("knowledge_search", query="x", mode="fuzzy"),
    ):
        assert message.startswith("invalid_request: ")
        assert "pydantic" not in message and "http" not in message
    assert "limit" in ana.fail("knowledge_search", query="x", limit=500)
    assert "mode" in ana.fail("knowledge_search", query="x", mode="fuzzy")
    assert "invalid_query" in ana.fail("knowledge_list", cursor="garbage!")
    assert "not_found" in ana.fail("knowledge_link", src="nope", dst="nada")


def test_denied_writes_and_deletes_are_not_offered(tmp_path: Path) -> None:
    args = ("--create", "--deny-write", "--deny-delete")
    with stdio(tmp_path / "kb.db", *args, log=tmp_path / "log") as mcp:
        assert set(mcp.tools()) == {
            "knowledge_search",
            "knowledge_get",
            "knowledge_list",
            "knowledge_probe",
            "knowledge_get_many",
            "knowledge_neighbors",
            "knowledge_stats",
            "knowledge_original",
        }
        assert "Unknown tool" in mcp.fail("knowledge_write", text="x")
        assert "Unknown tool" in mcp.fail("knowledge_clear", confirm=True)
        assert "Unknown tool" in mcp.fail("knowledge_restore", id="x")


# --- streamable HTTP --------------------------------------------------------------------

TOKEN = "mcp-http-token-0123456789"


def test_streamable_http_needs_a_token_and_gives_each_session_its_own(
    tmp_path: Path, serve: Serve
) -> None:
    config = ServerConfig.from_dict(
        {"tokens": [{"token": TOKEN, "namespace": "team"}]}, origin="test"
    )
    with trove.open(tmp_path / "kb.db", embedder="hash:64") as kb:
        app = RequireToken(create_server(kb, config).streamable_http_app(), config)
        with serve(app) as url:
            assert httpx2.post(f"{url}/mcp", json={}).status_code == 401
            # A token with non-ASCII characters is a wrong token (401), not a crash (500).
            accented = {"Authorization": "Bearer tökén-0123456789".encode()}
            response = httpx2.post(f"{url}/mcp", json={}, headers=accented)  # type: ignore[arg-type]
            assert response.status_code == 401

            with over_http(f"{url}/mcp", TOKEN) as one, over_http(f"{url}/mcp", TOKEN) as two:
                note = one.call("knowledge_write", text="http session note", scope="session")
                shared = one.call("knowledge_write", text="http team note")
                assert one.call("knowledge_get", id=note["id"])["namespace"] == "team"
                assert "not_found" in two.fail("knowledge_get", id=note["id"])
                assert two.call("knowledge_get", id=shared["id"])["text"] == "http team note"


def test_memory_tools_upsert_rerank_clusters_and_hard_delete(ana: Mcp) -> None:
    first = ana.call("knowledge_write", text="bo likes jazz", dedupe_key="bo:music", tags=["t"])
    kept = ana.call(
        "knowledge_write", text="bo likes pop", dedupe_key="bo:music", on_conflict="keep"
    )
    assert kept["id"] == first["id"]
    assert ana.call("knowledge_get", id=first["id"])["text"] == "bo likes jazz"
    ana.call(
        "knowledge_write", text="bo likes jazz a lot", dedupe_key="bo:music", on_conflict="merge"
    )
    assert ana.call("knowledge_get", id=first["id"])["tags"] == ["t"]
    hidden = ana.call("knowledge_write", text="secret index free note", index="none")
    assert ana.call("knowledge_search", query="secret index free", mode="keyword")["results"] == []
    found = ana.call("knowledge_search", query="bo music jazz", rerank="memory", min_score=0)[
        "results"
    ]
    assert found[0]["id"] == first["id"]
    made = ana.call("knowledge_cluster", action="create", name="bo", ids=[first["id"]])
    assert made["members"] == [first["id"]]
    ana.call("knowledge_cluster", action="decide", cluster_id=made["id"], decision="ask bo")
    got = ana.call("knowledge_cluster", action="get", cluster_id=made["id"])
    assert got["decision_log"][0]["author_tier"] == "llm"
    inside = ana.call("knowledge_search", query="jazz", cluster=made["id"], min_score=0)["results"]
    assert [r["id"] for r in inside] == [first["id"]]
    gone = ana.call("knowledge_delete", id=hidden["id"], permanent=True)
    assert gone["deleted"] is True
    assert "not_found" in ana.fail("knowledge_get", id=hidden["id"])
    assert "not_found" in ana.fail("knowledge_cluster", action="get", cluster_id="nope")


# --- the agent loop: variants, probe, limits ---------------------------------------------


def test_a_memory_brings_its_own_vector(ana: Mcp) -> None:
    """knowledge_write takes the `vector` its schema advertises (issue 30): it was refused."""
    mine = [0.0] * 62 + [1.0, 0.0]  # the store's hash:64 dimension
    written = ana.call("knowledge_write", text="a badger digs at night", vector=mine)
    found = ana.call("knowledge_search", query="", vector=mine, limit=1, min_score=0)
    assert found["results"][0]["id"] == written["id"]
    read = ana.call("knowledge_get", id=written["id"], with_vectors=True)
    assert read["vectors"] == [pytest.approx(mine)]
    assert "64" in ana.fail("knowledge_write", text="a vole", vector=[1.0, 0.0])


def test_search_follows_the_store_setting_for_llm_expansion_and_takes_min_confidence(
    tmp_path: Path, serve: Serve, fake_llm: FakeLLM
) -> None:
    """knowledge_search passed expand=0, so `trove settings expand=llm` never applied over
    MCP (issue 30); min_confidence was missing."""
    config = ServerConfig.from_dict({"tokens": [{"token": TOKEN}]}, origin="test")
    model = ChatModel("tiny", base_url=fake_llm.url)
    with trove.open(tmp_path / "kb.db", embedder="hash:64", llm=model) as kb:
        kb.settings(expand="llm")
        app = RequireToken(create_server(kb, config).streamable_http_app(), config)
        with serve(app) as url, over_http(f"{url}/mcp", TOKEN) as mcp:
            sure = mcp.call("knowledge_write", text="sqlite is the store", confidence=0.9)
            mcp.call("knowledge_write", text="sqlite might be slow", confidence=0.2)
            found = mcp.call("knowledge_search", query="sqlite", min_score=0)
            assert len(fake_llm.requests) == 1 and found.get("variants")
            mcp.call("knowledge_search", query="sqlite store", min_score=0, expand=0)
            assert len(fake_llm.requests) == 1  # a caller can still say no
            confident = mcp.call(
                "knowledge_search", query="sqlite", min_score=0, min_confidence=0.5, expand=0
            )
            assert [r["id"] for r in confident["results"]] == [sure["id"]]


def test_an_item_is_read_back_by_its_key(ana: Mcp, ana_other_session: Mcp) -> None:
    """knowledge_get by dedupe_key or source/source_id as well as by id (issue 30)."""
    kept = ana.call("knowledge_write", text="ana is in lisbon", dedupe_key="ana:city")
    assert ana.call("knowledge_get", dedupe_key="ana:city")["text"] == "ana is in lisbon"
    mine = ana.call("knowledge_write", text="draft", dedupe_key="d", scope="session")
    assert ana.call("knowledge_get", dedupe_key="d", scope="session")["id"] == mine["id"]
    assert "not_found" in ana_other_session.fail("knowledge_get", dedupe_key="d", scope="session")
    assert ana_other_session.call("knowledge_get", dedupe_key="ana:city")["id"] == kept["id"]
    assert "invalid_request" in ana.fail("knowledge_get", id=kept["id"], dedupe_key="ana:city")


def test_an_agent_compresses_its_memories(ana_other_session: Mcp) -> None:
    """Set and filter compression_level over MCP (issue 30): list what is not summarised,
    write the summary, mark the sources."""
    mcp = ana_other_session
    raw = [
        mcp.call("knowledge_write", text=f"standup {i}: the quokka pen floods", scope="session")
        for i in range(2)
    ]
    fresh = mcp.call("knowledge_list", scope=["session"], max_compression=0)["items"]
    assert {r["id"] for r in raw} <= {item["id"] for item in fresh}
    summary = mcp.call("knowledge_write", text="the quokka pen floods", scope="session")
    for item in raw:
        mcp.call("knowledge_update", id=item["id"], compression_level=1)
        mcp.call("knowledge_link", src=summary["id"], dst=item["id"], type="derived_from")
    left = mcp.call("knowledge_list", scope=["session"], max_compression=0)["items"]
    assert not {r["id"] for r in raw} & {item["id"] for item in left}
    found = mcp.call(
        "knowledge_search",
        query="quokka pen floods",
        mode="keyword",
        scope=["session"],
        max_compression=0,
        min_score=0,
    )
    assert [r["id"] for r in found["results"]] == [summary["id"]]
    assert mcp.call("knowledge_get", id=raw[0]["id"])["compression_level"] == 1


def test_memories_and_their_links_are_written_in_one_transaction(ana: Mcp) -> None:
    """knowledge_write_many: a batch with links, all or none (issue 30)."""
    made = ana.call(
        "knowledge_write_many",
        items=[
            {"text": "decision: the koi pond gets a net", "tags": ["decision"]},
            {"text": "evidence: two koi went missing", "ttl_seconds": 3600},
        ],
        links=[{"src": "#0", "dst": "#1", "type": "derived_from"}],
    )
    decision, evidence = made["ids"]
    links = ana.call("knowledge_neighbors", id=decision)["links"]
    assert [(link["dst"], link["type"]) for link in links] == [(evidence, "derived_from")]
    before = ana.call("knowledge_stats")["documents"]
    refused = ana.fail(
        "knowledge_write_many", items=[{"text": "kept?"}], links=[{"src": "#0", "dst": "#5"}]
    )
    assert refused.startswith("invalid_input") and "#5" in refused
    assert ana.call("knowledge_stats")["documents"] == before  # none of it was written
    assert "author" in ana.fail("knowledge_write_many", items=[{"text": "x", "author": "bo"}])


def test_the_model_writes_its_own_variants(ana: Mcp) -> None:
    search = ana.tools()["knowledge_search"]
    assert "variants" in search.input_schema["properties"]
    assert "rephras" in search.input_schema["properties"]["variants"]["description"]
    ana.call("knowledge_write", text="Bo's birthday is on the 3rd of May", source="chat")
    plain = ana.call("knowledge_search", query="when to send a card", mode="keyword", min_score=0)
    assert plain["results"] == [] and "variants" not in plain
    found = ana.call(
        "knowledge_search",
        query="when to send a card",
        mode="keyword",
        variants=["birthday"],
        min_score=0,
    )
    assert found["variants"] == ["birthday"]
    assert "birthday" in found["results"][0]["snippet"]


def test_knowledge_probe_reports_recall_and_contract_lines(ana: Mcp) -> None:
    written = ana.call("knowledge_write", text="The VPN password rotates every ninety days")
    report = ana.call(
        "knowledge_probe",
        pairs=[
            {"query": "vpn password rotation", "expected_doc": written["id"]},
            {"query": "something never written", "expected_doc": "nope"},
        ],
    )
    assert report["pairs"] == 2
    assert report["recall"]["recall@10"] == 0.5
    assert report["misses"] == [{"query": "something never written", "expected_doc": "nope"}]
    assert report["passed"] is True
    checks = [line for line in report["lines"] if line.startswith(("PASS", "FAIL"))]
    assert [line.split(":")[0] for line in checks] == [
        "PASS isolation",
        "PASS dedupe-key upsert",
        "PASS tombstone",
        "PASS ttl",
    ]


def test_agent_writes_over_the_token_limit_are_refused(tmp_path: Path) -> None:
    config = tmp_path / "trove.toml"
    config.write_text("[limits]\nmax_content_tokens = 50\nmax_result_tokens = 200\n")
    args = ["--create", "--config", str(config)]
    with stdio(tmp_path / "kb.db", *args, log=tmp_path / "log") as mcp:
        message = mcp.fail("knowledge_write", text="word " * 300)
        assert "content_too_large: text is about" in message
        assert "max_content_tokens" in message and "at most 50" in message
        for i in range(10):
            mcp.call("knowledge_write", text=f"note {i} about the garden " + "x" * 150)
        reply = mcp.call("knowledge_search", query="garden note", limit=10, min_score=0)
        from trove.limits import count

        assert sum(count(json_dumps(r)) for r in reply["results"]) <= 200
        assert 0 < len(reply["results"]) < 10 and "truncated" in reply


def json_dumps(value: Any) -> str:
    import json

    return json.dumps(value, ensure_ascii=False)


# Clients of MCP 2025-11-25 (today's) subscribe this way; the SDK warns it is gone in 2026.
@pytest.mark.filterwarnings("ignore:resources/subscribe is removed")
def test_subscribers_hear_when_another_process_changes_the_workspace(
    tmp_path: Path,
) -> None:
    import anyio

    from trove.interfaces.mcp.events import KNOWLEDGE_URI, item_uri

    db = tmp_path / "kb.db"
    with trove.open(db, embedder=None) as kb:
        kept = kb.workspace("ana").add("an item to watch")
    heard: list[str] = []

    async def collect(message: Any) -> None:
        params = getattr(getattr(message, "root", message), "params", None)
        uri = getattr(params, "uri", None)
        if uri is not None:
            heard.append(str(uri))

    def write() -> None:
        with trove.open(db, embedder=None) as kb:  # another connection, as another process
            kb.workspace("bo").add("not ana's business")
            kb.workspace("ana").update(kept, text="changed")

    async def watch(session: ClientSession) -> None:
        await session.subscribe_resource(KNOWLEDGE_URI)
        await session.subscribe_resource(item_uri(kept))
        await anyio.to_thread.run_sync(write)
        with anyio.fail_after(20):
            while len(heard) < 2:
                await anyio.sleep(0.05)

    params = trove_mcp("--db", str(db), "--embedder", "none", "mcp", "--namespace", "ana")

    @asynccontextmanager
    async def session() -> AsyncIterator[ClientSession]:
        async with (
            stdio_client(params) as (read, write_stream),
            ClientSession(read, write_stream, message_handler=collect) as client,
        ):
            await client.initialize()
            yield client

    with connected(session) as mcp:
        resources = mcp.portal.call(mcp.session.list_resources).resources
        assert KNOWLEDGE_URI in {str(r.uri) for r in resources}
        mcp.portal.call(watch, mcp.session)
    # one update per changed item of ana's, then the workspace; nothing for bo's write
    assert heard == [item_uri(kept), KNOWLEDGE_URI]


def test_listeners_of_the_2026_protocol_hear_changes_too(tmp_path: Path) -> None:
    import anyio
    from mcp.client.subscriptions import listen

    from trove.interfaces.mcp.events import KNOWLEDGE_URI

    db = tmp_path / "kb.db"
    trove.open(db, embedder=None).close()

    def write() -> None:
        with trove.open(db, embedder=None) as kb:  # another connection, as another process
            kb.workspace("ana").add("news")

    async def heard(session: ClientSession) -> str:
        async with listen(session, resource_subscriptions=[KNOWLEDGE_URI]) as subscription:
            await anyio.to_thread.run_sync(write)
            with anyio.fail_after(20):
                async for event in subscription:
                    return str(event.uri)
        return ""

    params = trove_mcp("--db", str(db), "--embedder", "none", "mcp", "--namespace", "ana")

    @asynccontextmanager
    async def session() -> AsyncIterator[ClientSession]:
        async with (
            stdio_client(params) as (read, write_stream),
            ClientSession(read, write_stream) as client,
        ):
            await client.discover()  # the 2026-07-28 protocol: subscriptions/listen
            yield client

    with connected(session) as mcp:
        assert mcp.portal.call(heard, mcp.session) == KNOWLEDGE_URI


def test_search_has_a_floor_and_a_token_budget_by_default(ana: Mcp) -> None:
    schema = ana.tools()["knowledge_search"]
    properties = schema.input_schema["properties"]
    assert properties["min_score"]["default"] == FLOOR
    assert properties["max_tokens"]["default"] == MCP_TOKENS
    assert "0.3" in (schema.description or "") and "2000" in (schema.description or "")
    ana.call("knowledge_write", text="Herons fish at dawn. " * 300, title="Herons")
    found = ana.call("knowledge_search", query="herons fish", mode="keyword", min_score=0)
    assert found["tokens"]["budget"] == MCP_TOKENS
    assert found["tokens"]["counter"] in ("estimate", "tiktoken:cl100k_base")
    (hit,) = [r for r in found["results"] if r.get("title") == "Herons"]
    assert hit["text"].startswith("Herons fish")
    small = ana.call(
        "knowledge_search", query="herons", mode="keyword", max_tokens=60, min_score=0
    )
    assert small["results"][0]["truncated"] is True
    everything = ana.call("knowledge_search", query="dawn", min_score=0)["results"]
    floored = ana.call("knowledge_search", query="dawn")["results"]
    assert all(r["score"] >= FLOOR for r in floored) and len(everything) >= len(floored)


# --- the rest: restore, unlink, neighbors, stats, get_many, resources, prompts -------


def test_restore_unlink_neighbors_get_many_and_stats(ana: Mcp) -> None:
    a = ana.call("knowledge_write", text="the deploy runbook lives in ops/deploy.md")["id"]
    b = ana.call("knowledge_write", text="deploys happen on tuesdays", title="Deploy day")["id"]
    ana.call("knowledge_link", src=a, dst=b, type="relates_to")
    links = ana.call("knowledge_neighbors", id=b)["links"]
    assert [(x["src"], x["direction"], x["title"]) for x in links] == [(a, "from", "")]
    assert ana.call("knowledge_neighbors", id=a)["links"][0]["title"] == "Deploy day"
    got = ana.call("knowledge_get_many", ids=[b, "nope", a])
    assert [item["id"] for item in got["items"]] == [b, a] and got["missing"] == ["nope"]
    assert ana.call("knowledge_unlink", src=a, dst=b) == {"removed": 1}
    assert ana.call("knowledge_neighbors", id=b)["links"] == []
    before = ana.call("knowledge_stats")["documents"]
    ana.call("knowledge_delete", id=b)
    assert ana.call("knowledge_stats")["documents"] == before - 1
    assert ana.call("knowledge_restore", id=b) == {"id": b, "restored": True}
    assert ana.call("knowledge_get", id=b)["text"] == "deploys happen on tuesdays"
    assert ana.call("knowledge_restore", id=b) == {"id": b, "restored": False}
    assert "not_found" in ana.fail("knowledge_restore", id="nope")
    assert "unknown argument" in ana.fail("knowledge_stats", namespace="other")
    assert "invalid_request" in ana.fail("knowledge_get_many", ids=[])


def test_resources_documents_stats_recent(ana: Mcp) -> None:
    doc = ana.call("knowledge_write", text="resource body", tags=["res"], source="chat")["id"]
    listed = ana.portal.call(ana.session.list_resources).resources
    assert {"trove://knowledge", "trove://stats", "trove://recent"} <= {str(r.uri) for r in listed}
    templates = ana.portal.call(ana.session.list_resource_templates).resource_templates
    assert {"trove://items/{id}", "trove://documents/{id}"} <= {t.uri_template for t in templates}

    def read(uri: str) -> Any:
        result = ana.portal.call(ana.session.read_resource, uri)
        return json.loads(result.contents[0].text)  # type: ignore[union-attr]

    document = read(f"trove://documents/{doc}")
    assert (document["text"], document["tags"], document["source"]) == (
        "resource body",
        ["res"],
        "chat",
    )
    assert read("trove://stats")["documents"] >= 1
    assert read("trove://recent")["items"][0]["id"] == doc
    assert read(f"trove://items/{doc}")["text"] == "resource body"  # the old one still works


def test_prompts_search_and_cite_and_summarise_a_thread(ana: Mcp) -> None:
    first = ana.call("knowledge_write", text="should we move standup to 10?", metadata={"k": 1})[
        "id"
    ]
    ana.call("knowledge_write", text="the kiwi launch slipped to march", title="Kiwi")
    prompts = {p.name for p in ana.portal.call(ana.session.list_prompts).prompts}
    assert {"what_do_we_know", "summarise_thread"} <= prompts
    result = ana.portal.call(ana.session.get_prompt, "what_do_we_know", {"topic": "kiwi launch"})
    text = result.messages[0].content.text  # type: ignore[union-attr]
    assert "kiwi launch slipped" in text and "cite" in text
    kiwi = ana.call("knowledge_search", query="kiwi launch", mode="keyword")["results"][0]
    assert f"[{kiwi['id']}]" in text
    thread = ana.portal.call(ana.session.get_prompt, "summarise_thread", {"thread": first})
    assert "standup to 10" in thread.messages[0].content.text  # type: ignore[union-attr]
