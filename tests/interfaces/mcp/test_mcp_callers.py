"""MCP resources, prompts and change notifications answer from the caller's workspace (its
token's namespace and its session), as the tools do; ``initialize`` names the version.

Over streamable HTTP on a loopback port, one server, tokens for two namespaces."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp", reason="needs the mcp extra")
import anyio
import httpx2
from anyio.from_thread import BlockingPortal, start_blocking_portal
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

import trove
from trove.interfaces.config import ServerConfig
from trove.interfaces.mcp import RequireToken, create_server
from trove.interfaces.mcp.events import KNOWLEDGE_URI, item_uri

ANA, BO = "ana-token-0123456789", "bo-token-0123456789"
CONFIG = {
    "namespace": "ana",
    "tokens": [{"token": ANA, "namespace": "ana"}, {"token": BO, "namespace": "bo"}],
}


class Client:
    def __init__(self, portal: BlockingPortal, session: ClientSession) -> None:
        self.portal = portal
        self.session = session

    def call(self, tool: str, **arguments: Any) -> dict[str, Any]:
        result = self.portal.call(self.session.call_tool, tool, arguments)
        assert not result.is_error, result.content
        assert isinstance(result.structured_content, dict)
        return result.structured_content

    def read(self, uri: str) -> Any:
        """The resource's JSON, or None when the server refuses to read it."""
        try:
            result = self.portal.call(self.session.read_resource, uri)
        except MCPError:
            return None
        return json.loads(result.contents[0].text)  # type: ignore[union-attr]

    def prompt(self, name: str, **arguments: str) -> str:
        result = self.portal.call(self.session.get_prompt, name, arguments)
        return str(result.messages[0].content.text)  # type: ignore[union-attr]


@contextmanager
def client(
    url: str, token: str, heard: list[str] | None = None, *, protocol_2026: bool = False
) -> Iterator[Client]:
    async def collect(message: Any) -> None:
        uri = getattr(getattr(getattr(message, "root", message), "params", None), "uri", None)
        if uri is not None and heard is not None:
            heard.append(str(uri))

    @asynccontextmanager
    async def session() -> AsyncIterator[ClientSession]:
        auth = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"})
        async with (
            auth,
            streamable_http_client(url, http_client=auth) as (read, write, *_),
            ClientSession(read, write, message_handler=collect) as s,
        ):
            # discover(): the 2026-07-28 protocol (subscriptions/listen)
            await (s.discover() if protocol_2026 else s.initialize())
            yield s

    with start_blocking_portal() as portal, portal.wrap_async_context_manager(session()) as s:
        yield Client(portal, s)


@pytest.fixture
def server(tmp_path: Path, serve: Any) -> Iterator[tuple[trove.Store, str]]:
    config = ServerConfig.from_dict(CONFIG, origin="test")
    with trove.open(tmp_path / "kb.db", embedder="hash:64") as kb:
        app = RequireToken(create_server(kb, config).streamable_http_app(), config)
        with serve(app) as url:
            yield kb, f"{url}/mcp"


def test_resources_and_prompts_answer_from_the_callers_namespace(
    server: tuple[trove.Store, str],
) -> None:
    kb, url = server
    secret = kb.workspace("ana").add("ana's salary review is in march", title="Salary")
    with client(url, BO) as bo:
        mine = bo.call("knowledge_write", text="bo's own note about kiwis")["id"]
        assert bo.read(f"trove://documents/{secret}") is None
        assert bo.read(f"trove://items/{secret}") is None
        assert [i["id"] for i in bo.read("trove://recent")["items"]] == [mine]
        assert bo.read("trove://stats")["documents"] == 1
        assert bo.read(KNOWLEDGE_URI)["documents"] == 1
        assert bo.read(f"trove://documents/{mine}")["text"] == "bo's own note about kiwis"
        text = bo.prompt("what_do_we_know", topic="salary review march")
        assert "is in march" not in text and secret not in text
        assert "kiwis" in bo.prompt("what_do_we_know", topic="kiwis")


def test_a_caller_reads_its_own_session_items_as_resources(
    server: tuple[trove.Store, str],
) -> None:
    _, url = server
    with client(url, ANA) as one, client(url, ANA) as two:
        note = one.call("knowledge_write", text="a session-private note", scope="session")["id"]
        assert one.read(f"trove://items/{note}")["text"] == "a session-private note"
        assert one.read(f"trove://documents/{note}")["text"] == "a session-private note"
        assert note in [i["id"] for i in one.read("trove://recent")["items"]]
        assert two.read(f"trove://items/{note}") is None
        assert note not in [i["id"] for i in two.read("trove://recent")["items"]]
        assert "session-private" not in two.prompt("what_do_we_know", topic="session note")


# Clients of MCP 2025-11-25 (today's) subscribe this way; the SDK warns it is gone in 2026.
@pytest.mark.filterwarnings("ignore:resources/subscribe is removed")
def test_subscribers_hear_only_changes_in_their_own_workspace(
    server: tuple[trove.Store, str],
) -> None:
    kb, url = server
    ana_item = kb.workspace("ana").add("ana's item")
    heard: list[str] = []
    with client(url, BO, heard) as bo:
        bo_item = bo.call("knowledge_write", text="bo's item")["id"]

        async def watch() -> None:
            await bo.session.subscribe_resource(KNOWLEDGE_URI)
            await bo.session.subscribe_resource(item_uri(ana_item))
            await bo.session.subscribe_resource(item_uri(bo_item))
            await anyio.sleep(1)  # bo's write above may still be on its way: not heard here
            heard.clear()
            await anyio.to_thread.run_sync(lambda: kb.workspace("ana").update(ana_item, text="x"))
            await anyio.to_thread.run_sync(lambda: kb.workspace("bo").update(bo_item, text="y"))
            with anyio.fail_after(20):
                while len(heard) < 2:
                    await anyio.sleep(0.05)
            await anyio.sleep(0.5)  # anything more would arrive by now

        bo.portal.call(watch)
    assert heard == [item_uri(bo_item), KNOWLEDGE_URI]


def test_listeners_hear_only_changes_in_their_own_workspace(
    server: tuple[trove.Store, str],
) -> None:
    from mcp.client.subscriptions import listen

    kb, url = server
    ana_item = kb.workspace("ana").add("ana's item")
    with client(url, BO, protocol_2026=True) as bo:
        bo_item = bo.call("knowledge_write", text="bo's item")["id"]
        watched = [item_uri(ana_item), item_uri(bo_item)]

        def change(namespace: str, doc_id: str) -> None:
            kb.workspace(namespace).update(doc_id, text="changed")

        async def first_heard() -> str:
            async with listen(bo.session, resource_subscriptions=watched) as events:
                await anyio.to_thread.run_sync(change, "ana", ana_item)
                await anyio.to_thread.run_sync(change, "bo", bo_item)
                with anyio.fail_after(20):
                    async for event in events:
                        return str(event.uri)
            return ""

        assert bo.portal.call(first_heard) == item_uri(bo_item)


def test_initialize_names_the_server_version(server: tuple[trove.Store, str]) -> None:
    _, url = server

    with client(url, ANA) as ana:
        init = ana.portal.call(ana.session.initialize)
        assert init.server_info.version == trove.__version__
