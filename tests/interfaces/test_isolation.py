"""Randomized isolation: no reader ever sees an item the rules keep from it.

Documents are written into several namespaces x scopes x sessions, linked at random,
then read many times at random through the library's workspace view, HTTP and MCP, in
every mode (keyword, semantic, hybrid, with ``expand``), by get, list, links and stats,
on SQLite and PostgreSQL. The rule (README, "Agent memory"): a reader of namespace N
with session S sees global items, and N's items that are not session-scoped or belong
to S; a reader without a session sees no session-scoped item at all.
"""

from __future__ import annotations

import random
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import AbstractContextManager, ExitStack, asynccontextmanager, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("fastapi", reason="needs the server extra")
pytest.importorskip("mcp", reason="needs the mcp extra")

import httpx
import httpx2
from anyio.from_thread import start_blocking_portal
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

import trove
from trove.errors import NotFound
from trove.interfaces.config import ServerConfig
from trove.interfaces.http import SESSION_HEADER, create_app
from trove.interfaces.mcp import RequireToken, create_server

Serve = Callable[[Any], AbstractContextManager[str]]
NAMESPACES = ("north", "south", "east")
SESSIONS = ("s1", "s2")
READER_SESSIONS = (None, "s1", "s2", "s3")
WORDS = [
    "apple",
    "river",
    "stone",
    "cloud",
    "maple",
    "ember",
    "harbor",
    "violet",
    "copper",
    "meadow",
]
MODES = ("keyword", "semantic", "hybrid")
READS = 12  # per reader and interface (x 12 readers x 3 interfaces x 2 backends)


@dataclass(frozen=True)
class Item:
    id: str
    namespace: str
    scope: str
    session: str | None
    source: str


def allowed(item: Item, namespace: str, session: str | None) -> bool:
    if item.scope == "global":
        return True
    if item.namespace != namespace:
        return False
    return item.scope != "session" or (session is not None and item.session == session)


def populate(kb: trove.Store, rng: random.Random) -> list[Item]:
    items = []
    for namespace in NAMESPACES:
        places = [("workspace", None), ("global", None)] + [("session", s) for s in SESSIONS]
        for scope, session in places:
            for n in range(3):
                text = " ".join(rng.choices(WORDS, k=6)) + f" {namespace} {scope} {session} {n}"
                source = f"src-{namespace}-{scope}-{session}"
                doc_id = kb.add(
                    text, namespace=namespace, scope=scope, session=session, source=source
                )
                items.append(Item(doc_id, namespace, scope, session, source))
    for _ in range(len(items) * 2):
        src, dst = rng.sample(items, 2)
        kb.link(src.id, dst.id, rng.choice(("relates_to", "supersedes")), rng.random())
    return items


class Reader:
    """One caller's reads through one interface; each returns the ids it saw."""

    def search(self, query: str, mode: str, expand: int) -> list[str]:
        raise NotImplementedError

    def get(self, doc_id: str) -> str | None:
        raise NotImplementedError

    def list(self) -> list[str]:
        raise NotImplementedError

    def links(self, doc_id: str) -> list[str] | None:
        """Ids at the other end of the item's links; None when the item is not found."""
        return []

    def stats(self) -> dict[str, Any] | None:
        return None


class LibraryReader(Reader):
    def __init__(self, kb: trove.Store, namespace: str, session: str | None) -> None:
        self.ws = kb.workspace(namespace, session=session)

    def search(self, query: str, mode: str, expand: int) -> list[str]:
        return [h.doc_id for h in self.ws.search(query, mode=mode, expand=expand, limit=50)]

    def get(self, doc_id: str) -> str | None:
        doc = self.ws.get(doc_id)
        return None if doc is None else doc.id

    def list(self) -> list[str]:
        return [d.id for d in self.ws.list(limit=1000).items]

    def links(self, doc_id: str) -> list[str] | None:
        try:
            edges = self.ws.neighbors(doc_id)
        except NotFound:
            return None
        return [e.dst if e.src == doc_id else e.src for e in edges]

    def stats(self) -> dict[str, Any] | None:
        return self.ws.stats().to_dict()


class HttpReader(Reader):
    def __init__(self, client: httpx.Client) -> None:
        self.http = client

    def search(self, query: str, mode: str, expand: int) -> list[str]:
        body = {"query": query, "mode": mode, "expand": expand, "limit": 50}
        response = self.http.post("/v1/search", json=body)
        return [h["doc_id"] for h in response.json()["hits"]]

    def get(self, doc_id: str) -> str | None:
        response = self.http.get(f"/v1/items/{doc_id}")
        return str(response.json()["id"]) if response.status_code == 200 else None

    def list(self) -> list[str]:
        return [
            d["id"] for d in self.http.get("/v1/items", params={"limit": 1000}).json()["items"]
        ]

    def links(self, doc_id: str) -> list[str] | None:
        response = self.http.get(f"/v1/items/{doc_id}/links")
        if response.status_code == 404:
            return None
        edges = response.json()["edges"]
        return [e["dst"] if e["src"] == doc_id else e["src"] for e in edges]

    def stats(self) -> dict[str, Any] | None:
        return dict(self.http.get("/v1/stats").json())


class McpReader(Reader):
    """MCP has no links or stats tools: search, get and list."""

    def __init__(self, call: Callable[..., Any]) -> None:
        self.call = call

    def search(self, query: str, mode: str, expand: int) -> list[str]:
        found = self.call("knowledge_search", query=query, mode=mode, expand=min(expand, 2))
        return [r["id"] for r in found["results"]]

    def get(self, doc_id: str) -> str | None:
        result = self.call("knowledge_get", id=doc_id)
        return None if result is None else str(result["id"])

    def list(self) -> list[str]:
        return [d["id"] for d in self.call("knowledge_list", limit=100)["items"]]


def token(namespace: str, session: str | None) -> str:
    return f"tok-{namespace}-{session or 'none'}-0123456789"


def server_config() -> ServerConfig:
    tokens = [
        {"token": token(ns, s), "namespace": ns, **({"session": s} if s else {})}
        for ns in NAMESPACES
        for s in READER_SESSIONS
    ]
    return ServerConfig.from_dict({"tokens": tokens})


@contextmanager
def mcp_reader(url: str, bearer: str) -> Iterator[McpReader]:
    @asynccontextmanager
    async def session() -> AsyncIterator[ClientSession]:
        auth = httpx2.AsyncClient(headers={"Authorization": f"Bearer {bearer}"})
        async with (
            auth,
            streamable_http_client(url, http_client=auth) as (read, write, *_),
            ClientSession(read, write) as client,
        ):
            await client.initialize()
            yield client

    with start_blocking_portal() as portal, portal.wrap_async_context_manager(session()) as s:

        def call(tool: str, **arguments: Any) -> Any:
            result = portal.call(s.call_tool, tool, arguments)
            if result.is_error:
                text = result.content[0].text  # type: ignore[union-attr]
                assert text.startswith("not_found"), text
                return None
            return result.structured_content

        yield McpReader(call)


def check(reader: Reader, items: list[Item], namespace: str, session: str | None, seed: int):
    rng = random.Random(seed)
    by_id = {item.id: item for item in items}

    def visible(doc_id: str) -> bool:
        return allowed(by_id[doc_id], namespace, session)

    where = f"reader {namespace}/{session} seed {seed}"
    for _ in range(READS):
        query = " ".join(rng.sample(WORDS, rng.randint(1, 3)))
        mode, expand = rng.choice(MODES), rng.randint(0, 2)
        seen = reader.search(query, mode, expand)
        assert all(visible(d) for d in seen), (where, query, mode, expand)
        item = rng.choice(items)
        assert (reader.get(item.id) == item.id) == visible(item.id), (where, item)
        linked = reader.links(item.id)
        if linked is None:
            assert not visible(item.id) or isinstance(reader, McpReader), (where, item)
        else:
            assert all(visible(d) for d in linked), (where, item)
    listed = reader.list()
    assert all(visible(d) for d in listed), where
    stats = reader.stats()
    if stats is not None:
        mine = [i for i in items if i.namespace == namespace and visible(i.id)]
        assert stats["documents"] == len(mine), where
        assert set(stats["by_source"]) == {i.source for i in mine}, where


@pytest.fixture(params=["sqlite", "postgres"])
def target(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "postgres":
        return str(request.getfixturevalue("pg_target"))
    return str(tmp_path / "kb.db")


@pytest.mark.slow
def test_no_reader_sees_what_the_rules_keep_from_it(target: str, serve: Serve) -> None:
    rng = random.Random(20261201)
    config = server_config()
    with trove.open(target, embedder="hash:64") as kb, ExitStack() as stack:
        items = populate(kb, rng)
        http_url = stack.enter_context(serve(create_app(kb, config)))
        mcp_app = RequireToken(create_server(kb, config).streamable_http_app(), config)
        mcp_url = stack.enter_context(serve(mcp_app)) + "/mcp"
        for namespace in NAMESPACES:
            for session in READER_SESSIONS:
                seed = rng.randrange(1 << 30)
                check(LibraryReader(kb, namespace, session), items, namespace, session, seed)
                headers = {"Authorization": f"Bearer {token(namespace, None)}"}
                if session:
                    headers[SESSION_HEADER] = session
                with httpx.Client(base_url=http_url, headers=headers, timeout=60) as http:
                    check(HttpReader(http), items, namespace, session, seed)
                # Over MCP the session is the token's (or, without one, the connection's
                # own, which holds no items): the same visibility as ``session``.
                with mcp_reader(mcp_url, token(namespace, session)) as mcp:
                    check(mcp, items, namespace, session, seed)
