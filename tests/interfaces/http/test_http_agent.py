"""The agent loop over HTTP: variants, LLM expansion's fallback, the probe, write limits."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

pytest.importorskip("fastapi", reason="needs the server extra")

import trove
from trove.interfaces.config import ServerConfig
from trove.interfaces.http import create_app

TOKEN = "ana-token-0123456789"
READER = "reader-token-0123456789"
CONFIG = {
    "namespace": "ana",
    "limits": {"max_content_tokens": 40},
    "tokens": [
        {"name": "ana", "token": TOKEN},
        {"name": "reader", "token": READER, "allow_write": False},
    ],
}


@pytest.fixture
def client(tmp_path: Path, serve: Any) -> Iterator[httpx.Client]:
    headers = {"Authorization": f"Bearer {TOKEN}"}
    with (
        trove.open(tmp_path / "kb.db", embedder=None, llm=None) as kb,
        serve(create_app(kb, ServerConfig.from_dict(CONFIG))) as url,
        httpx.Client(base_url=url, headers=headers, timeout=30) as http,
    ):
        yield http


def test_search_takes_variants_and_says_when_expansion_degraded(client: httpx.Client) -> None:
    client.post("/v1/items", json={"text": "The birthday party is in May", "source_id": "b"})
    plain = client.post("/v1/search", json={"query": "celebration"}).json()
    assert plain == {"hits": []}
    body = {"query": "celebration", "variants": ["birthday party"], "explain": True}
    found = client.post("/v1/search", json=body).json()
    assert [h["source_id"] for h in found["hits"]] == ["b"]
    assert found["variants"] == ["birthday party"]
    assert found["hits"][0]["explain"]["found_by"] == "birthday party"
    degraded = client.post("/v1/search", json={"query": "birthday", "expand": "llm"}).json()
    assert [h["source_id"] for h in degraded["hits"]] == ["b"]
    assert degraded["degraded"] == "unexpanded" and "TROVE_LLM" in degraded["warning"]
    too_many = client.post(
        "/v1/search", json={"query": "x", "variants": ["a"] * 3 + list("bcdefghij")}
    )
    assert too_many.status_code == 400 and too_many.json()["error"]["code"] == "invalid_query"


def test_writes_over_the_token_limit_get_413(client: httpx.Client) -> None:
    response = client.post("/v1/items", json={"text": "word " * 100})
    assert response.status_code == 413
    error = response.json()["error"]
    assert error["code"] == "content_too_large" and "max_content_tokens" in error["message"]
    item = client.post("/v1/items", json={"text": "short"}).json()["id"]
    patch = client.patch(f"/v1/items/{item}", json={"text": "word " * 100})
    assert patch.status_code == 413
    assert client.get(f"/v1/items/{item}").json()["text"] == "short"


def test_the_probe_runs_inline_or_stored_pairs(client: httpx.Client) -> None:
    item = client.post("/v1/items", json={"text": "The wifi password is on the fridge"}).json()
    pairs = [{"query": "wifi password", "expected_doc": item["id"]}]
    report = client.post("/v1/probe", json={"pairs": pairs, "save": True}).json()
    assert report["recall"] == {"recall@1": 1.0, "recall@5": 1.0, "recall@10": 1.0}
    assert report["passed"] and len(report["checks"]) == 4
    stored = client.post("/v1/probe", json={}).json()
    assert stored["pairs"] == 1 and stored["recall"]["recall@1"] == 1.0
    reader = {"Authorization": f"Bearer {READER}"}
    refused = client.post("/v1/probe", json={"pairs": pairs, "save": True}, headers=reader)
    assert refused.status_code == 403
