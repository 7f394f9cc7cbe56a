"""Memory upkeep an agent needs, over HTTP and MCP (streamable HTTP), on SQLite and
PostgreSQL, against real servers on loopback ports: originals up and down, folding
near-duplicates and clearing a workspace, each within the caller's sight only; and the
memory fields (compression level, keys, a batch with links, confidence, own vectors)."""

from __future__ import annotations

import base64
from collections.abc import Iterator
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path

import pytest

pytest.importorskip("fastapi", reason="needs the server extra")
pytest.importorskip("mcp", reason="needs the mcp extra")
import httpx

import trove
from helpers.isolation import server_config, token
from helpers.loopback import serving
from helpers.mcp_http import McpClient, ToolFailed, mcp_client
from trove.interfaces.http import create_app
from trove.interfaces.http.auth import SESSION_HEADER
from trove.interfaces.mcp import RequireToken, create_server

DUPLICATE = "the standup moved to ten on tuesdays for the whole platform team"


@dataclass
class Servers:
    kb: trove.Store
    http: httpx.Client  # namespace north, session s1
    mcp: McpClient  # namespace north, session s1
    other: McpClient  # namespace north, session s2


@pytest.fixture(params=["sqlite", "postgres"])
def servers(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Servers]:
    if request.param == "postgres":
        target = str(request.getfixturevalue("pg_target"))
    else:
        target = str(tmp_path / "kb.db")
    config = server_config(namespaces=("north",), sessions=("s1", "s2"))
    with trove.open(target, embedder="hash:64") as kb, ExitStack() as stack:
        url = stack.enter_context(serving(create_app(kb, config)))
        mcp_app = RequireToken(create_server(kb, config).streamable_http_app(), config)
        mcp_url = stack.enter_context(serving(mcp_app)) + "/mcp"
        headers = {"Authorization": f"Bearer {token('north', 's1')}", SESSION_HEADER: "s1"}
        http = stack.enter_context(httpx.Client(base_url=url, headers=headers, timeout=60))
        mcp = stack.enter_context(mcp_client(mcp_url, token("north", "s1")))
        other = stack.enter_context(mcp_client(mcp_url, token("north", "s2")))
        yield Servers(kb, http, mcp, other)


def failure(call: McpClient, tool: str, **arguments: object) -> str:
    with pytest.raises(ToolFailed) as failed:
        call(tool, **arguments)
    return str(failed.value)


def test_originals_go_up_and_come_back_on_both_interfaces(servers: Servers) -> None:
    s = servers
    doc = s.mcp("knowledge_write", text="minutes of the design review")["id"]
    pdf = bytes(range(256)) * 3
    put = s.http.put(
        f"/v1/items/{doc}/original",
        params={"name": "review.pdf"},
        content=pdf,
        headers={"Content-Type": "application/pdf"},
    )
    assert put.status_code == 200, put.text
    assert put.json() | {"sha256": ""} == {
        "id": doc,
        "name": "review.pdf",
        "media_type": "application/pdf",
        "size": len(pdf),
        "sha256": "",
    }
    got = s.mcp("knowledge_original", id=doc)
    assert base64.b64decode(got["data_base64"]) == pdf
    assert (got["name"], got["media_type"], "text" in got) == (
        "review.pdf",
        "application/pdf",
        False,
    )

    note = "# Notes\nréunion à dix heures\n".encode()
    sent = base64.b64encode(note).decode()
    attached = s.mcp("knowledge_attach_original", id=doc, data_base64=sent, name="notes.md")
    assert attached["size"] == len(note)
    assert s.mcp("knowledge_original", id=doc)["text"] == note.decode()
    assert s.http.get(f"/v1/items/{doc}/original").content == note

    # Another session's item looks absent; bad input is refused; nothing changed.
    theirs = s.other("knowledge_write", text="a private aside", scope="session")["id"]
    assert failure(s.mcp, "knowledge_original", id=theirs).startswith("not_found")
    refused = failure(s.mcp, "knowledge_attach_original", id=theirs, data_base64=sent)
    assert refused.startswith("not_found")
    assert s.http.put(f"/v1/items/{theirs}/original", content=b"x").status_code == 404
    assert s.http.get(f"/v1/items/{theirs}/original").status_code == 404
    bad = failure(s.mcp, "knowledge_attach_original", id=doc, data_base64="not base64!")
    assert bad.startswith("invalid_request")
    odd_type = {"Content-Type": "not a media type"}
    assert s.http.put(f"/v1/items/{doc}/original", content=b"x", headers=odd_type).is_client_error
    assert s.http.get(f"/v1/items/{doc}/original").content == note
    assert failure(s.mcp, "knowledge_original", id=theirs + "0").startswith("not_found")


def test_duplicates_fold_within_the_callers_sight(servers: Servers) -> None:
    s = servers
    first = s.mcp("knowledge_write", text=DUPLICATE)["id"]
    second = s.mcp("knowledge_write", text=DUPLICATE + ".", tags=["copy"])["id"]
    theirs = s.other("knowledge_write", text=DUPLICATE, scope="session")["id"]

    dry = s.http.post("/v1/canonicalize", json={"threshold": 0.9, "dry_run": True})
    assert dry.status_code == 200, dry.text
    (group,) = dry.json()["groups"]
    assert {group["canonical"], *group["duplicates"]} == {first, second}  # not theirs
    found = s.mcp("knowledge_search", query="standup tuesdays", min_score=0)["results"]
    assert {first, second} <= {r["id"] for r in found}  # a dry run marks nothing

    folded = s.mcp("knowledge_canonicalize", threshold=0.9)
    assert folded["groups"] == [group] and folded["dry_run"] is False
    found = s.mcp("knowledge_search", query="standup tuesdays", min_score=0)["results"]
    assert len({first, second} & {r["id"] for r in found}) == 1
    assert s.kb.get(theirs, record_access=False).canonical_id is None  # type: ignore[union-attr]
    assert s.http.post("/v1/canonicalize", json={"threshold": 2}).status_code == 422
    assert failure(s.mcp, "knowledge_canonicalize", rule="oldest").startswith("invalid_request")


def test_clearing_a_workspace_leaves_other_sessions_items(servers: Servers) -> None:
    s = servers
    for n in range(3):
        s.mcp("knowledge_write", text=f"a note to clear {n}")
    s.mcp("knowledge_write", text="my own aside", scope="session")
    theirs = s.other("knowledge_write", text="their own aside", scope="session")["id"]
    s.kb.workspace("south").add("another team's note")

    assert failure(s.mcp, "knowledge_clear", confirm=False).startswith("invalid_request")
    assert s.mcp("knowledge_clear", confirm=True) == {"removed": 4}
    assert s.mcp("knowledge_list")["items"] == []
    assert [d["id"] for d in s.other("knowledge_list")["items"]] == [theirs]
    assert s.kb.stats("south").documents == 1
    s.mcp("knowledge_write", text="written again")
    assert s.http.post("/v1/clear").json() == {"removed": 1}
    assert s.http.post("/v1/clear").json() == {"removed": 0}


def test_memory_fields_on_both_interfaces(servers: Servers) -> None:
    s = servers
    ids = s.mcp(
        "knowledge_write_many",
        items=[
            {"text": "raw log: the cache missed at noon", "confidence": 0.4},
            {"text": "summary: the cache misses at noon", "compression_level": 1},
        ],
        links=[{"src": "#1", "dst": "#0", "type": "derived_from"}],
    )["ids"]
    assert [x["dst"] for x in s.mcp("knowledge_neighbors", id=ids[1])["links"]] == [ids[0]]
    raw = s.http.get("/v1/items", params={"max_compression": 0}).json()["items"]
    assert [d["id"] for d in raw] == [ids[0]]
    sure = s.mcp("knowledge_search", query="cache noon", min_confidence=0.5, min_score=0)
    assert [r["id"] for r in sure["results"]] == [ids[1]]

    keyed = s.mcp("knowledge_write", text="tz is CET", dedupe_key="user:tz")["id"]
    by_key = s.http.get("/v1/items/by-key", params={"dedupe_key": "user:tz"}).json()
    assert by_key["id"] == s.mcp("knowledge_get", dedupe_key="user:tz")["id"] == keyed
    sourced = s.http.post("/v1/items", json={"text": "mail", "source": "m", "source_id": "1"})
    by_source = s.mcp("knowledge_get", source="m", source_id="1")
    assert by_source["id"] == sourced.json()["id"]

    vector = [1.0] + [0.0] * 63
    own = s.mcp("knowledge_write", text="a point of my own", vector=vector)["id"]
    back = s.http.get(f"/v1/items/{own}", params={"with_vectors": "true"}).json()["vectors"]
    assert back == [pytest.approx(vector)]
    via_http = s.http.post("/v1/items", json={"text": "another point", "vector": vector})
    assert via_http.status_code == 200, via_http.text
    assert s.mcp("knowledge_get", id=via_http.json()["id"], with_vectors=True)["vectors"] == [
        pytest.approx(vector)
    ]


def test_a_payload_only_entry_over_both_interfaces(servers: Servers) -> None:
    s = servers
    sent = s.http.post("/v1/items", json={"text": "", "index": "none", "metadata": {"n": 1}})
    assert sent.status_code == 200, sent.text
    payload = s.mcp("knowledge_write", text="", index="none", metadata={"n": 2})["id"]
    assert s.mcp("knowledge_get", id=sent.json()["id"])["metadata"] == {"n": 1}
    assert s.http.get(f"/v1/items/{payload}").json()["text"] == ""
    assert s.mcp("knowledge_search", query="n", min_score=0)["results"] == []
    refused = s.http.post("/v1/items", json={"text": "", "metadata": {"n": 3}})
    assert refused.status_code == 422 and refused.json()["error"]["code"] == "invalid_input"


def test_chunks_cut_by_the_caller_over_both_interfaces(servers: Servers) -> None:
    s = servers
    text = "# Alpha\nthe walrus sleeps on ice.\n\n# Beta\nthe otter swims in kelp.\n"
    b = text.index("# Beta")
    spans = [[0, b, "Alpha"], [b, len(text), "Beta"]]
    sent = s.http.post("/v1/items", json={"text": text, "chunks": spans, "source": "h"})
    assert sent.status_code == 200, sent.text
    written = s.mcp(
        "knowledge_write", text=text + "mcp\n", chunks=[*spans, [len(text), len(text) + 4]]
    )
    assert len(s.mcp("knowledge_get", id=written["id"], with_vectors=True)["vectors"]) == 3
    found = s.mcp("knowledge_search", query="otter kelp", min_score=0)["results"]
    assert {r.get("heading") for r in found} == {"Beta"}
    bad = s.http.post("/v1/items", json={"text": text, "chunks": [[0, 5]]})
    assert bad.status_code == 422 and bad.json()["error"]["code"] == "invalid_input"
    refused = failure(s.mcp, "knowledge_write", text=text, chunks=[[5, 0]])
    assert refused.startswith("invalid_input")
