"""The HTTP API, driven over real HTTP against uvicorn on a loopback port."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

import httpx
import pytest

pytest.importorskip("fastapi", reason="needs the server extra")

import trove
from helpers.threads import run_threads
from trove.interfaces.config import ServerConfig
from trove.interfaces.http import SESSION_HEADER, create_app

ANA = "ana-token-0123456789"
BO = "bo-token-0123456789"
OPS = "ops-token-0123456789"
READER = "reader-token-0123456789"
HUMAN = "human-token-0123456789"
PINNED = "pinned-token-0123456789"
Serve = Callable[[Any], AbstractContextManager[str]]
CONFIG = {
    "namespace": "ana",
    "tokens": [
        {"name": "ana", "token": ANA},
        {"name": "bo", "token": BO, "namespace": "bo"},
        {"name": "ops", "token": OPS, "namespace": "ops", "allow_global": True},
        {"name": "reader", "token": READER, "allow_write": False, "allow_delete": False},
        {"name": "human", "token": HUMAN, "author_tier": "human"},
        {"name": "pinned", "token": PINNED, "session": "pinned"},
    ],
}


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[trove.Store]:
    with trove.open(tmp_path_factory.mktemp("http") / "kb.db", embedder="hash:64") as kb:
        yield kb


@pytest.fixture(scope="module")
def url(store: trove.Store, serve: Serve) -> Iterator[str]:
    with serve(create_app(store, ServerConfig.from_dict(CONFIG))) as base:
        yield base


def client(
    url: str, token: str | None = ANA, *, limits: httpx.Limits | None = None, **headers: str
) -> httpx.Client:
    if token:
        headers["Authorization"] = f"Bearer {token}"
    pool = limits or httpx.Limits()
    return httpx.Client(base_url=url, headers=headers, timeout=60, limits=pool)


@pytest.fixture
def ana(url: str) -> Iterator[httpx.Client]:
    with client(url) as c:
        yield c


def error(response: httpx.Response, status: int, code: str) -> str:
    assert response.status_code == status, response.text
    body = response.json()["error"]
    assert body["code"] == code
    return str(body["message"])


# --- auth -----------------------------------------------------------------------------


def test_missing_or_wrong_token_is_refused(url: str) -> None:
    for token in (None, "not-the-right-token-at-all"):
        with client(url, token) as c:
            for response in (c.post("/v1/search", json={"query": "x"}), c.get("/v1/stats")):
                assert "bearer token" in error(response, 401, "unauthorized")
                assert response.headers["www-authenticate"] == "Bearer"
    with client(url, None, Authorization=f"Basic {ANA}") as c:
        error(c.get("/v1/stats"), 401, "unauthorized")


def test_openapi_schema_is_published(url: str, ana: httpx.Client) -> None:
    schema = ana.get("/openapi.json").json()
    for path in ("/v1/search", "/v1/items", "/v1/items/{doc_id}", "/v1/links", "/v1/stats"):
        assert path in schema["paths"]
    assert "HTTPBearer" in schema["components"]["securitySchemes"]


# --- workspaces -----------------------------------------------------------------------


def test_each_token_sees_only_its_namespace(url: str, ana: httpx.Client) -> None:
    doc_id = ana.post("/v1/items", json={"text": "ana's secret recipe: cardamom"}).json()["id"]
    assert ana.get(f"/v1/items/{doc_id}").json()["namespace"] == "ana"
    with client(url, BO) as bo:
        assert "recipe" not in error(bo.get(f"/v1/items/{doc_id}"), 404, "not_found")
        assert bo.post("/v1/search", json={"query": "secret recipe"}).json()["hits"] == []
        assert bo.get("/v1/items").json()["items"] == []
        assert bo.get("/v1/stats").json()["documents"] == 0
        error(bo.patch(f"/v1/items/{doc_id}", json={"text": "x"}), 404, "not_found")
        error(bo.delete(f"/v1/items/{doc_id}"), 404, "not_found")


def test_writing_to_another_namespace_is_forbidden(ana: httpx.Client, store: trove.Store) -> None:
    response = ana.post("/v1/items", json={"text": "planted", "namespace": "bo"})
    assert "cannot reach others" in error(response, 403, "forbidden")
    error(ana.post("/v1/search", json={"query": "x", "namespace": "bo"}), 403, "forbidden")
    assert store.workspace("bo").search("planted") == []


def test_global_items_need_the_right_to_write(url: str, ana: httpx.Client) -> None:
    error(ana.post("/v1/items", json={"text": "x", "scope": "global"}), 403, "forbidden")
    with client(url, OPS) as ops:
        fact = ops.post(
            "/v1/items", json={"text": "the wifi password rotates monthly", "scope": "global"}
        ).json()["id"]
    hits = ana.post("/v1/search", json={"query": "wifi password"}).json()["hits"]
    assert fact in [h["doc_id"] for h in hits]
    error(ana.patch(f"/v1/items/{fact}", json={"text": "hacked"}), 403, "forbidden")
    error(ana.delete(f"/v1/items/{fact}"), 403, "forbidden")


def test_session_items_stay_in_their_session(url: str) -> None:
    with client(url, ANA, **{SESSION_HEADER: "s1"}) as one:
        note = one.post(
            "/v1/items", json={"text": "scratch: the deploy key is in vault", "scope": "session"}
        ).json()["id"]
        assert one.get(f"/v1/items/{note}").status_code == 200
    with client(url, ANA, **{SESSION_HEADER: "s2"}) as two:
        error(two.get(f"/v1/items/{note}"), 404, "not_found")
        hits = two.post("/v1/search", json={"query": "deploy key vault"}).json()["hits"]
        assert note not in [h["doc_id"] for h in hits]
        assert note not in [d["id"] for d in two.get("/v1/items").json()["items"]]
    with client(url, ANA) as sessionless:
        error(sessionless.get(f"/v1/items/{note}"), 404, "not_found")
    # A token with a fixed session keeps it, whatever the request claims.
    with client(url, PINNED, **{SESSION_HEADER: "s1"}) as pinned:
        error(pinned.get(f"/v1/items/{note}"), 404, "not_found")


def test_author_tier_comes_from_the_token_not_the_input(url: str, ana: httpx.Client) -> None:
    body = {"text": "claimed to be human", "author_tier": "human"}
    assert "author_tier" in error(ana.post("/v1/items", json=body), 422, "invalid_input")
    with client(url, HUMAN) as human:
        doc_id = human.post("/v1/items", json={"text": "typed by a person"}).json()["id"]
    assert ana.get(f"/v1/items/{doc_id}").json()["author_tier"] == "human"
    # An edit by another tier leaves the item its author's.
    ana.patch(f"/v1/items/{doc_id}", json={"text": "typed by a person, edited"})
    assert ana.get(f"/v1/items/{doc_id}").json()["author_tier"] == "human"
    patch = ana.patch(f"/v1/items/{doc_id}", json={"author_tier": "explicit"})
    error(patch, 422, "invalid_input")


def test_denied_writes_and_deletes(url: str, ana: httpx.Client) -> None:
    doc_id = ana.post("/v1/items", json={"text": "read only for some"}).json()["id"]
    with client(url, READER) as reader:
        assert reader.get(f"/v1/items/{doc_id}").status_code == 200
        error(reader.post("/v1/items", json={"text": "x"}), 403, "forbidden")
        error(reader.patch(f"/v1/items/{doc_id}", json={"text": "x"}), 403, "forbidden")
        error(reader.delete(f"/v1/items/{doc_id}"), 403, "forbidden")


# --- items ----------------------------------------------------------------------------


def test_expired_item_is_absent_by_id_and_flagged_in_list(ana: httpx.Client) -> None:
    body = {"text": "a stale reminder", "expires_at": "2000-01-01T00:00:00Z"}
    doc_id = ana.post("/v1/items", json=body).json()["id"]
    error(ana.get(f"/v1/items/{doc_id}"), 404, "not_found")
    error(ana.patch(f"/v1/items/{doc_id}", json={"text": "revived"}), 404, "not_found")
    listed = {d["id"]: d for d in ana.get("/v1/items", params={"limit": 1000}).json()["items"]}
    assert listed[doc_id]["expired"] is True


def test_update_keeps_id_and_cannot_change_scope(ana: httpx.Client) -> None:
    doc_id = ana.post("/v1/items", json={"text": "v1", "dedupe_key": "upd"}).json()["id"]
    created = ana.get(f"/v1/items/{doc_id}").json()["created_at"]
    message = error(
        ana.patch(f"/v1/items/{doc_id}", json={"scope": "global"}), 422, "invalid_input"
    )
    assert "cannot change scope" in message
    assert ana.patch(f"/v1/items/{doc_id}", json={"text": "v2", "tags": ["t"]}).json() == {
        "id": doc_id
    }
    doc = ana.get(f"/v1/items/{doc_id}").json()
    assert (doc["text"], doc["tags"], doc["scope"], doc["created_at"]) == (
        "v2",
        ["t"],
        "workspace",
        created,
    )


def test_dedupe_key_upserts(ana: httpx.Client) -> None:
    first = ana.post("/v1/items", json={"text": "tz: UTC", "dedupe_key": "user:tz"}).json()
    second = ana.post("/v1/items", json={"text": "tz: CET", "dedupe_key": "user:tz"}).json()
    assert first == second
    assert ana.get(f"/v1/items/{first['id']}").json()["text"] == "tz: CET"


def test_list_pages_with_a_cursor(url: str) -> None:
    with client(url, ANA, **{SESSION_HEADER: "pager"}) as c:
        ids = [
            c.post("/v1/items", json={"text": f"page item {i}", "scope": "session"}).json()["id"]
            for i in range(5)
        ]
        seen: list[str] = []
        cursor = None
        while True:
            params = {"scope": "session", "limit": 2, **({"cursor": cursor} if cursor else {})}
            page = c.get("/v1/items", params=params).json()
            seen += [d["id"] for d in page["items"]]
            cursor = page["cursor"]
            if cursor is None:
                break
        assert seen == ids[::-1]
        error(c.get("/v1/items", params={"cursor": "garbage!"}), 400, "invalid_query")


def test_delete_link_neighbors_expand_and_stats(ana: httpx.Client) -> None:
    a = ana.post("/v1/items", json={"text": "decision: drop redis", "title": "d"}).json()["id"]
    b = ana.post("/v1/items", json={"text": "benchmark of the cache"}).json()["id"]
    edge = ana.post("/v1/links", json={"src": a, "dst": b, "type": "derived_from"}).json()
    assert (edge["src"], edge["dst"], edge["type"]) == (a, b, "derived_from")
    assert [e["dst"] for e in ana.get(f"/v1/items/{a}/links").json()["edges"]] == [b]
    body = {"query": "drop redis", "expand": 1, "mode": "keyword"}
    hits = ana.post("/v1/search", json=body).json()["hits"]
    linked = {h["doc_id"]: h.get("linked_from") for h in hits}
    assert linked[b] == {"doc_id": a, "type": "derived_from", "weight": 1.0}
    assert ana.delete("/v1/links", params={"src": a, "dst": b}).json() == {"removed": 1}
    first = {"id": b, "deleted": True, "already_deleted": False}
    assert ana.delete(f"/v1/items/{b}").json() == first
    error(ana.get(f"/v1/items/{b}"), 404, "not_found")
    # Deleting again is a success that says so (idempotent, as the MCP tool promises).
    assert ana.delete(f"/v1/items/{b}").json() == {**first, "already_deleted": True}
    stats = ana.get("/v1/stats").json()
    assert stats["by_namespace"].keys() == {"ana"} and stats["documents"] >= 1


def test_search_filters_and_bad_queries(ana: httpx.Client) -> None:
    ana.post("/v1/items", json={"text": "tagged memo about kittens", "tags": ["pets"]})
    hits = ana.post("/v1/search", json={"query": "kittens", "tags": ["pets"]}).json()["hits"]
    assert [h["tags"] for h in hits] == [["pets"]]
    assert "unknown filter" in error(
        ana.post("/v1/search", json={"query": "x", "colour": "red"}), 400, "invalid_query"
    )
    error(ana.post("/v1/search", json={"query": "x", "limit": -1}), 422, "invalid_request")


# --- bad requests -----------------------------------------------------------------------


def test_malformed_json_and_wrong_types(ana: httpx.Client) -> None:
    headers = {"Content-Type": "application/json"}
    response = ana.post("/v1/items", content=b'{"text": "unterminated', headers=headers)
    assert "not valid JSON" in error(response, 400, "malformed_json")
    response = ana.post("/v1/items", json={"text": 5})
    details = response.json()["error"]["details"]
    error(response, 422, "invalid_request")
    assert details[0]["loc"] == ["body", "text"]
    assert "unknown field" in error(
        ana.post("/v1/items", json={"text": "x", "colour": "red"}), 422, "invalid_input"
    )


def test_a_10_mb_write_is_rejected_with_a_clear_error(ana: httpx.Client) -> None:
    response = ana.post("/v1/items", json={"text": "x" * (10 * 1024 * 1024)})
    message = error(response, 413, "payload_too_large")
    assert "at most 1048576 bytes" in message and "max_body_bytes" in message
    # Without a Content-Length (chunked), the body is counted as it arrives.
    chunks = (b"x" * 65536 for _ in range(32))
    response = ana.post("/v1/items", content=chunks, headers={"Content-Type": "application/json"})
    error(response, 413, "payload_too_large")


def test_the_body_limit_is_configurable(store: trove.Store, serve: Serve) -> None:
    config = ServerConfig().override(max_body_bytes=4096)
    with serve(create_app(store, config)) as base, httpx.Client(base_url=base) as c:
        error(c.post("/v1/items", json={"text": "y" * 5000}), 413, "payload_too_large")
        assert c.post("/v1/items", json={"text": "y" * 3000}).status_code == 200


def test_100_concurrent_writes_to_one_dedupe_key(url: str, store: trove.Store) -> None:
    events: list[str] = []
    stop = store.subscribe(lambda e: events.append(e["kind"]))
    limits = httpx.Limits(max_connections=100)
    start = threading.Barrier(100)
    with client(url, OPS, limits=limits) as c:

        def write(i: int) -> httpx.Response:
            c.get("/v1/stats")  # open a connection first, so that the writes arrive together
            start.wait()
            body = {"text": f"counter n{i:03d}x now", "dedupe_key": "ctr", "metadata": {"i": i}}
            return c.post("/v1/items", json=body)

        responses = run_threads(write, 100)
    stop()
    assert [r.status_code for r in responses] == [200] * 100
    assert len({r.json()["id"] for r in responses}) == 1
    # Writes took turns: the first added the item, every later one updated it.
    assert events == ["written"] + ["updated"] * 99
    ops = store.workspace("ops")
    items = [d for d in ops.list(limit=1000).items if d.dedupe_key == "ctr"]
    assert len(items) == 1
    last = items[0]
    # The surviving write is whole (text and metadata from the same request), and the
    # index holds only it: none of the 99 overwritten texts can be found.
    assert last.text == f"counter n{last.metadata['i']:03d}x now"
    for i in range(100):
        hits = ops.search(f"n{i:03d}x", mode="keyword")
        assert [h.doc_id for h in hits] == ([last.id] if i == last.metadata["i"] else [])


def test_concurrent_reads_and_writes_never_collide(url: str) -> None:
    # One apsw connection refuses two threads at once; the server's guard takes turns.
    limits = httpx.Limits(max_connections=64)
    with client(url, ANA, limits=limits) as c, ThreadPoolExecutor(max_workers=64) as pool:

        def call(i: int) -> int:
            if i % 3 == 0:
                return c.post("/v1/items", json={"text": f"mixed load item {i}"}).status_code
            if i % 3 == 1:
                return c.post("/v1/search", json={"query": f"mixed load {i}"}).status_code
            return c.get("/v1/items", params={"limit": 5}).status_code

        assert set(pool.map(call, range(300))) == {200}


def test_refuses_other_addresses_without_a_token(tmp_path: Path) -> None:
    with pytest.raises(trove.TroveError, match=r"refusing to listen on 0\.0\.0\.0"):
        ServerConfig().check_bind("0.0.0.0")
    ServerConfig().override(token=ANA).check_bind("0.0.0.0")
    for host in ("127.0.0.1", "::1", "localhost", "127.0.0.2"):
        ServerConfig().check_bind(host)


def test_memory_routes_upsert_vectors_clusters_and_hard_delete(ana: httpx.Client) -> None:
    first = ana.post("/v1/items", json={"text": "cat facts", "dedupe_key": "cat", "author": "x"})
    doc_id = first.json()["id"]
    merged = ana.post(
        "/v1/items", json={"text": "cat facts v2", "dedupe_key": "cat", "on_conflict": "merge"}
    )
    assert merged.json()["id"] == doc_id
    assert ana.get(f"/v1/items/{doc_id}").json()["author"] == "x"
    hits = ana.post("/v1/search", json={"query": "cat facts", "rerank": "memory"}).json()
    assert hits["hits"][0]["doc_id"] == doc_id
    made = ana.post("/v1/clusters", json={"name": "cats", "ids": [doc_id], "summary": "felines"})
    cluster = made.json()
    assert made.status_code == 200 and cluster["members"] == [doc_id]
    decided = ana.post(f"/v1/clusters/{cluster['id']}/decisions", json={"text": "more cats"})
    assert decided.json()["decision_log"][0]["text"] == "more cats"
    inside = ana.post("/v1/search", json={"query": "cat", "cluster": cluster["id"]}).json()
    assert [h["doc_id"] for h in inside["hits"]] == [doc_id]
    error(ana.post("/v1/clusters/nope/members", json={"ids": [doc_id]}), 404, "not_found")
    assert ana.delete(f"/v1/clusters/{cluster['id']}").json()["deleted"] is True
    assert ana.delete(f"/v1/items/{doc_id}", params={"hard": "true"}).json()["deleted"] is True
    error(ana.get(f"/v1/items/{doc_id}"), 404, "not_found")


def test_an_item_brings_its_own_vector_and_is_found_by_it(ana: httpx.Client) -> None:
    """POST /v1/items takes the `vector` its schema advertises (issue 30): it was refused."""
    mine = [0.0] * 63 + [1.0]  # the store's hash:64 dimension
    made = ana.post("/v1/items", json={"text": "an owl at dusk", "vector": mine})
    assert made.status_code == 200, made.text
    found = ana.post("/v1/search", json={"query": "", "vector": mine, "limit": 1}).json()
    assert found["hits"][0]["doc_id"] == made.json()["id"]
    wrong = ana.post("/v1/items", json={"text": "a wren", "vector": [1.0, 0.0]})
    assert "64" in error(wrong, 422, "invalid_input")
    batch = ana.post("/v1/items/batch", json={"items": [{"text": "a lark", "vector": mine}]})
    assert batch.status_code == 200, batch.text
    read = ana.get(f"/v1/items/{made.json()['id']}", params={"with_vectors": "true"}).json()
    assert read["vectors"] == [pytest.approx(mine)]
    assert "vectors" not in ana.get(f"/v1/items/{made.json()['id']}").json()


def test_an_item_is_read_back_by_the_key_it_was_written_with(ana: httpx.Client, url: str) -> None:
    """GET /v1/items/by-key (issue 30): by dedupe_key, or by source and source_id; another
    namespace's or session's key reads as absent."""
    keyed = ana.post("/v1/items", json={"text": "oolong", "dedupe_key": "ana:tea"}).json()["id"]
    sourced = ana.post(
        "/v1/items", json={"text": "minutes", "source": "notes", "source_id": "m.md"}
    ).json()["id"]
    assert ana.get("/v1/items/by-key", params={"dedupe_key": "ana:tea"}).json()["id"] == keyed
    by_source = ana.get("/v1/items/by-key", params={"source": "notes", "source_id": "m.md"})
    assert by_source.json()["id"] == sourced
    error(ana.get("/v1/items/by-key", params={"dedupe_key": "nope"}), 404, "not_found")
    error(ana.get("/v1/items/by-key"), 422, "invalid_input")
    with client(url, BO) as bo:
        error(bo.get("/v1/items/by-key", params={"dedupe_key": "ana:tea"}), 404, "not_found")


def test_compression_level_is_set_and_filtered(ana: httpx.Client) -> None:
    """compression_level on write and update, max_compression on list and search, and
    min_confidence, in the schema as well as accepted (issue 30)."""
    old = ana.post("/v1/items", json={"text": "the moth notes", "compression_level": 0}).json()
    done = ana.post("/v1/items", json={"text": "the moth summary", "confidence": 0.4}).json()
    assert ana.patch(f"/v1/items/{old['id']}", json={"compression_level": 2}).status_code == 200
    assert ana.get(f"/v1/items/{old['id']}").json()["compression_level"] == 2
    listed = ana.get("/v1/items", params={"max_compression": 0, "limit": 1000}).json()["items"]
    assert done["id"] in {i["id"] for i in listed} and old["id"] not in {i["id"] for i in listed}
    body = {"query": "moth", "mode": "keyword", "max_compression": 1}
    assert [h["doc_id"] for h in ana.post("/v1/search", json=body).json()["hits"]] == [done["id"]]
    sure = ana.post("/v1/search", json={"query": "moth", "mode": "keyword", "min_confidence": 0.5})
    assert [h["doc_id"] for h in sure.json()["hits"]] == [old["id"]]
    schema = ana.get("/openapi.json").json()["components"]["schemas"]
    assert {"max_compression", "min_confidence"} <= set(schema["SearchBody"]["properties"])
    assert "compression_level" in schema["UpdateBody"]["properties"]
    error(
        ana.patch(f"/v1/items/{old['id']}", json={"compression_level": -1}), 422, "invalid_request"
    )


def test_a_batch_with_links_is_one_transaction(ana: httpx.Client) -> None:
    """POST /v1/items/batch takes links among its items (#N) and to readable items."""
    older = ana.post("/v1/items", json={"text": "the old plan"}).json()["id"]
    body = {
        "items": [{"text": "new plan: two ponds"}, {"text": "why: the egrets"}],
        "links": [
            {"src": "#0", "dst": "#1", "type": "derived_from"},
            {"src": "#0", "dst": older, "type": "supersedes"},
        ],
    }
    plan, why = ana.post("/v1/items/batch", json=body).json()["ids"]
    edges = ana.get(f"/v1/items/{plan}/links").json()["edges"]
    assert {(e["dst"], e["type"]) for e in edges} == {(why, "derived_from"), (older, "supersedes")}
    bad = {"items": [{"text": "never kept"}], "links": [{"src": "#0", "dst": "no-such-id"}]}
    error(ana.post("/v1/items/batch", json=bad), 404, "not_found")
    found = ana.post("/v1/search", json={"query": "never kept", "mode": "keyword"}).json()
    assert found["hits"] == []


# --- results an agent can act on (issue 15) ----------------------------------------------


def test_search_takes_min_score_text_context_and_a_token_budget(ana: httpx.Client) -> None:
    ana.post("/v1/items", json={"text": "The heron fishes at dawn. It waits very still."})
    body = {"query": "heron", "mode": "keyword", "with_text": True, "context": 1}
    (hit,) = ana.post("/v1/search", json=body).json()["hits"]
    assert 0 <= hit["score"] <= 1 and "heron fishes" in hit["text"]
    assert hit["context"] == [] and hit["truncated"] is False
    cut = ana.post("/v1/search", json={**body, "max_tokens": 8}).json()["hits"]
    assert cut[0]["truncated"] and cut[0]["text"].endswith("…")
    above = ana.post("/v1/search", json={**body, "min_score": 1.0}).json()["hits"]
    assert above == [] or above[0]["score"] == 1.0
    error(ana.post("/v1/search", json={"query": "heron", "min_score": 2}), 422, "invalid_request")


# --- batches, restore, version ------------------------------------------------------------


def test_batch_add_and_get_many(ana: httpx.Client) -> None:
    items = [{"text": "batch one", "tags": ["b"]}, {"text": "batch two", "dedupe_key": "b2"}]
    ids = ana.post("/v1/items/batch", json={"items": items}).json()["ids"]
    assert len(ids) == 2
    got = ana.post("/v1/items/get", json={"ids": [ids[1], "nope", ids[0]]}).json()["items"]
    assert [g and g["text"] for g in got] == ["batch two", None, "batch one"]
    # One bad item: nothing of the batch is written.
    bad = [{"text": "kept? no"}, {"text": "x", "namespace": "bo"}]
    error(ana.post("/v1/items/batch", json={"items": bad}), 403, "forbidden")
    hits = ana.post("/v1/search", json={"query": "kept", "mode": "keyword"}).json()["hits"]
    assert hits == []
    error(ana.post("/v1/items/batch", json={"items": []}), 422, "invalid_request")
    error(ana.post("/v1/items/get", json={"ids": ["a"], "x": 1}), 422, "invalid_request")


def test_batch_get_sees_only_the_callers_namespace(url: str, ana: httpx.Client) -> None:
    mine = ana.post("/v1/items", json={"text": "ana's batch secret"}).json()["id"]
    with client(url, BO) as bo:
        assert bo.post("/v1/items/get", json={"ids": [mine]}).json() == {"items": [None]}
        error(bo.post(f"/v1/items/{mine}/restore"), 404, "not_found")


def test_restore_brings_back_a_deleted_item(url: str, ana: httpx.Client) -> None:
    doc = ana.post("/v1/items", json={"text": "restore me"}).json()["id"]
    ana.delete(f"/v1/items/{doc}")
    assert ana.get(f"/v1/items/{doc}").status_code == 404
    assert ana.post(f"/v1/items/{doc}/restore").json() == {"id": doc, "restored": True}
    assert ana.get(f"/v1/items/{doc}").json()["text"] == "restore me"
    assert ana.post(f"/v1/items/{doc}/restore").json()["restored"] is False
    with client(url, READER) as reader:
        error(reader.post(f"/v1/items/{doc}/restore"), 403, "forbidden")


def test_only_callers_allowed_global_restore_global_items(url: str, ana: httpx.Client) -> None:
    with client(url, OPS) as ops:
        doc = ops.post("/v1/items", json={"text": "global rule", "scope": "global"}).json()["id"]
        ops.delete(f"/v1/items/{doc}")
        error(ana.post(f"/v1/items/{doc}/restore"), 403, "forbidden")
        assert ops.post(f"/v1/items/{doc}/restore").json()["restored"] is True


def test_version(url: str, ana: httpx.Client) -> None:
    assert ana.get("/v1/version").json() == {"version": trove.__version__, "api": "v1"}
    with client(url, None) as anonymous:
        error(anonymous.get("/v1/version"), 401, "unauthorized")


def test_a_batch_of_two_vector_widths_into_a_new_store_is_refused(
    tmp_path: Path, serve: Serve
) -> None:
    """A keyword-only store takes the first vector's width; a batch with another width is
    a 422 that writes nothing, as the library's add_many refuses it."""
    items = [{"text": "four", "vector": [1.0, 0, 0, 0]}, {"text": "three", "vector": [1.0, 0, 0]}]
    with (
        trove.open(tmp_path / "kb.db", embedder=None) as kb,
        serve(create_app(kb, ServerConfig())) as base,
        httpx.Client(base_url=base) as c,
    ):
        assert "3 dimensions" in error(
            c.post("/v1/items/batch", json={"items": items}), 422, "invalid_input"
        )
        assert kb.stats().documents == 0
