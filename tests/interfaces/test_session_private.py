"""Session-private data stays in its session through namespace-level features: saved
probe pairs and cluster members, in the library and over HTTP and MCP (issue 28)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

pytest.importorskip("fastapi", reason="needs the server extra")
pytest.importorskip("mcp", reason="needs the mcp extra")

import trove
from helpers.mcp_http import mcp_client
from trove.interfaces.config import ServerConfig
from trove.interfaces.http import SESSION_HEADER, create_app
from trove.interfaces.mcp import RequireToken, create_server
from trove.probe import probe, save_pairs

TOKEN = "team-token-0123456789"
S1, S2 = "team-s1-token-0123456789", "team-s2-token-0123456789"
CONFIG = {
    "namespace": "team",
    "tokens": [
        {"token": TOKEN},
        {"token": S1, "session": "s1"},
        {"token": S2, "session": "s2"},
    ],
}
PAIRS = [{"query": "my private plan", "expected_doc": "x"}]


@pytest.fixture
def kb(tmp_path: Path) -> Iterator[trove.Store]:
    with trove.open(tmp_path / "kb.db", embedder="hash:64", llm=None) as store:
        yield store


def test_saved_probe_pairs_stay_in_their_session(kb: trove.Store) -> None:
    s1, s2 = kb.workspace("team", session="s1"), kb.workspace("team", session="s2")
    nobody = kb.workspace("team")
    save_pairs(s1, PAIRS)
    assert probe(s1).pairs == 1
    assert probe(s2).pairs == 0 and probe(nobody).pairs == 0
    # The namespace's pairs (saved without a session) are every session's default.
    save_pairs(nobody, PAIRS * 2)
    assert (probe(nobody).pairs, probe(s2).pairs, probe(s1).pairs) == (2, 2, 1)
    assert probe(kb.workspace("other", session="s1")).pairs == 0


def test_a_cluster_shows_only_the_members_a_caller_can_see(kb: trove.Store) -> None:
    s1 = kb.workspace("team", session="s1")
    shared, private = s1.add("shared note"), s1.add("s1's note", scope="session")
    made = kb.clusters.create("c", namespace="team", members=[shared, private])
    assert sorted(s1.cluster(made.id).members) == sorted([shared, private])
    for other in (kb.workspace("team", session="s2"), kb.workspace("team")):
        assert other.cluster(made.id).members == (shared,)
        assert [c.members for c in other.clusters()] == [(shared,)]


@pytest.fixture
def urls(kb: trove.Store, serve: Any) -> Iterator[tuple[str, str]]:
    config = ServerConfig.from_dict(CONFIG)
    mcp = RequireToken(create_server(kb, config).streamable_http_app(), config)
    with serve(create_app(kb, config)) as http, serve(mcp) as mcp_url:
        yield http, f"{mcp_url}/mcp"


def http(url: str, session: str | None) -> httpx.Client:
    headers = {"Authorization": f"Bearer {TOKEN}"}
    if session:
        headers[SESSION_HEADER] = session
    return httpx.Client(base_url=url, headers=headers, timeout=30)


def test_over_http_pairs_and_members_stay_in_their_session(urls: tuple[str, str]) -> None:
    url, _ = urls
    with http(url, "s1") as s1, http(url, "s2") as s2, http(url, None) as nobody:
        private = s1.post("/v1/items", json={"text": "s1 plan", "scope": "session"}).json()
        shared = s1.post("/v1/items", json={"text": "team plan"}).json()
        saved = s1.post("/v1/probe", json={"pairs": PAIRS, "save": True}).json()
        assert saved["pairs"] == 1 and s1.post("/v1/probe", json={}).json()["pairs"] == 1
        assert s2.post("/v1/probe", json={}).json()["pairs"] == 0
        assert nobody.post("/v1/probe", json={}).json()["pairs"] == 0
        body = {"name": "plans", "ids": [shared["id"], private["id"]]}
        made = s1.post("/v1/clusters", json=body).json()
        assert sorted(made["members"]) == sorted([shared["id"], private["id"]])
        for other in (s2, nobody):
            assert other.get(f"/v1/clusters/{made['id']}").json()["members"] == [shared["id"]]
            listed = other.get("/v1/clusters").json()["clusters"]
            assert [c["members"] for c in listed] == [[shared["id"]]]


def test_over_mcp_pairs_and_members_stay_in_their_session(
    kb: trove.Store, urls: tuple[str, str]
) -> None:
    _, url = urls
    s1 = kb.workspace("team", session="s1")
    private, shared = s1.add("s1 plan", scope="session"), s1.add("team plan")
    save_pairs(s1, PAIRS)
    made = kb.clusters.create("plans", namespace="team", members=[shared, private])
    with mcp_client(url, S1) as one, mcp_client(url, S2) as two:
        assert one("knowledge_probe")["pairs"] == 1
        assert two("knowledge_probe")["pairs"] == 0
        get = {"action": "get", "cluster_id": made.id}
        assert sorted(one("knowledge_cluster", **get)["members"]) == sorted([shared, private])
        assert two("knowledge_cluster", **get)["members"] == [shared]
        listed = two("knowledge_cluster", action="list")["clusters"]
        assert [c["members"] for c in listed] == [[shared]]
