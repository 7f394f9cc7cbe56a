"""The HTTP server's contract: isolation, the edge checks, docs behind the token, schema."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from typing import Any

import httpx
import pytest

pytest.importorskip("fastapi", reason="needs the server extra")

import trove
from trove.interfaces.config import ServerConfig
from trove.interfaces.http import SESSION_HEADER, create_app

Serve = Callable[[Any], AbstractContextManager[str]]
TOKEN = "contract-token-0123456789"


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[trove.Store]:
    with trove.open(tmp_path_factory.mktemp("contract") / "kb.db", embedder="hash:64") as kb:
        yield kb


@pytest.fixture(scope="module")
def url(store: trove.Store, serve: Serve) -> Iterator[str]:
    config = ServerConfig.from_dict({"namespace": "team", "tokens": [{"token": TOKEN}]})
    with serve(create_app(store, config)) as base:
        yield base


def client(url: str, token: str | None = TOKEN, **headers: str) -> httpx.Client:
    if token is not None:
        headers["Authorization"] = f"Bearer {token}"
    return httpx.Client(base_url=url, headers=headers, timeout=60)


def error(response: httpx.Response, status: int, code: str) -> str:
    assert response.status_code == status, response.text
    body = response.json()["error"]
    assert body["code"] == code
    return str(body["message"])


def test_a_caller_without_a_session_sees_no_session_items(url: str) -> None:
    with client(url, **{SESSION_HEADER: "s-private"}) as owner:
        note = owner.post(
            "/v1/items", json={"text": "kestrel launch code 7731", "scope": "session"}
        ).json()["id"]
    with client(url) as anyone:
        for mode in ("keyword", "semantic", "hybrid"):
            body = {"query": "kestrel launch code", "mode": mode, "expand": 1}
            hits = anyone.post("/v1/search", json=body).json()["hits"]
            assert note not in [h["doc_id"] for h in hits], mode
        listed = anyone.get("/v1/items", params={"limit": 1000}).json()["items"]
        assert note not in [d["id"] for d in listed]
        assert "s-private" not in str(listed)
        error(anyone.get(f"/v1/items/{note}"), 404, "not_found")


def test_a_non_ascii_token_is_refused_not_a_crash(url: str) -> None:
    for bad in ("tökén", "токен-0123456789"):
        with httpx.Client(base_url=url, timeout=60) as c:
            headers = {"Authorization": f"Bearer {bad}".encode()}
            response = c.get("/v1/stats", headers=headers)  # type: ignore[arg-type]
            error(response, 401, "unauthorized")


def test_dns_rebinding_is_refused(url: str) -> None:
    with client(url) as c:
        assert c.get("/v1/stats").status_code == 200
        assert c.get("/v1/stats", headers={"Host": "localhost"}).status_code == 200
        assert "Host" in error(
            c.get("/v1/stats", headers={"Host": "evil.example"}), 421, "invalid_host"
        )
        evil = {"Origin": "http://evil.example"}
        error(c.get("/v1/stats", headers=evil), 403, "invalid_origin")
        same = {"Origin": url}
        assert c.get("/v1/stats", headers=same).status_code == 200


def test_docs_and_schema_need_the_token_and_no_cdn(url: str) -> None:
    with client(url, None) as stranger:
        for path in ("/docs", "/redoc", "/openapi.json"):
            error(stranger.get(path), 401, "unauthorized")
        health = stranger.get("/health")
        assert health.status_code == 200 and health.json()["status"] == "ok"
    with client(url) as c:
        page = c.get("/docs")
        assert page.status_code == 200 and "/v1/search" in page.text
        assert "<script" not in page.text and "cdn" not in page.text.lower()
        assert c.get("/redoc").status_code == 200


def test_unknown_query_parameters_are_errors(url: str) -> None:
    with client(url) as c:
        message = error(c.get("/v1/items", params={"limt": 5}), 400, "invalid_request")
        assert "limt" in message and "limit" in message
        error(c.get("/v1/stats", params={"namespace": "other"}), 400, "invalid_request")
        assert c.get("/v1/items", params={"limit": 5}).status_code == 200


def test_links_carry_created_at_and_relinking_keeps_it(url: str) -> None:
    with client(url) as c:
        a = c.post("/v1/items", json={"text": "link source note"}).json()["id"]
        b = c.post("/v1/items", json={"text": "link target note"}).json()["id"]
        first = c.post("/v1/links", json={"src": a, "dst": b}).json()
        assert first["created_at"]
        again = c.post("/v1/links", json={"src": a, "dst": b, "weight": 0.5}).json()
        assert again["created_at"] == first["created_at"] and again["weight"] == 0.5


def _properties(schema: dict[str, Any], ref: dict[str, Any]) -> set[str]:
    name = ref["$ref"].rsplit("/", 1)[-1]
    return set(schema["components"]["schemas"][name]["properties"])


def test_the_schema_describes_the_real_responses(url: str) -> None:
    with client(url) as c:
        schema = c.get("/openapi.json").json()
        doc_id = c.post("/v1/items", json={"text": "schema check", "tags": ["t"]}).json()["id"]
        real = {
            ("/v1/items/{doc_id}", "get"): c.get(f"/v1/items/{doc_id}").json(),
            ("/v1/items", "get"): c.get("/v1/items").json(),
            ("/v1/stats", "get"): c.get("/v1/stats").json(),
            ("/v1/search", "post"): c.post("/v1/search", json={"query": "schema"}).json(),
        }
        for (path, method), body in real.items():
            responses = schema["paths"][path][method]["responses"]
            ok = responses["200"]["content"]["application/json"]["schema"]
            assert set(body) <= _properties(schema, ok), path
            for status in ("400", "401", "404", "422"):
                err = responses[status]["content"]["application/json"]["schema"]
                assert _properties(schema, err) == {"error"}
        item = _properties(schema, {"$ref": "#/components/schemas/ItemOut"})
        assert set(real[("/v1/items/{doc_id}", "get")]) | {"vectors"} == item
        asked = c.get(f"/v1/items/{doc_id}", params={"with_vectors": "true"}).json()
        assert set(asked) == item  # vectors only when asked for
        hit = _properties(schema, {"$ref": "#/components/schemas/HitOut"})
        assert set(real[("/v1/search", "post")]["hits"][0]) <= hit
        write = schema["paths"]["/v1/items"]["post"]["responses"]
        assert {"403", "413"} <= set(write)
