"""Property-based fuzz of the HTTP API: any JSON body is answered with a 2xx or 4xx, never
a 500, and within a time bound."""

from __future__ import annotations

import json
import math
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

pytest.importorskip("fastapi", reason="needs the server extra")

import trove
from trove.interfaces.config import ServerConfig
from trove.interfaces.http import create_app

TOKEN = "fuzz-token-0123456789"
BOUND_S = 10.0

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=False, allow_infinity=False),  # JSON has neither
    st.text(max_size=40),
    st.sampled_from(["", " ", "\x00", "\udcff", "a" * 9_000, "中" * 3000, "2026-13-45", "1e30"]),
    st.sampled_from([math.nan, math.inf, 1e30, 2**63]),  # Python's json writes NaN too
)
values = st.recursive(
    scalars,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=8,
)
SEARCH_KEYS = [
    "query",
    "mode",
    "limit",
    "expand",
    "source",
    "doc_type",
    "author",
    "tags",
    "since",
    "until",
    "metadata",
    "raw",
    "explain",
    "scope",
]
ITEM_KEYS = [
    "text",
    "title",
    "source",
    "source_id",
    "tags",
    "metadata",
    "timestamp",
    "importance",
    "ttl",
    "scope",
    "doc_type",
    "participants",
    "chunks",
    "index",
]


def bodies(keys: list[str], required: str) -> st.SearchStrategy[dict[str, Any]]:
    base = st.fixed_dictionaries({required: st.one_of(st.text(max_size=60), values)})
    extra = st.dictionaries(st.sampled_from(keys), values, max_size=4)
    return st.builds(lambda a, b: {**a, **b}, base, extra)


@pytest.fixture(scope="module")
def http(tmp_path_factory: pytest.TempPathFactory, serve: Any) -> Iterator[httpx.Client]:
    path: Path = tmp_path_factory.mktemp("fuzz") / "kb.db"
    config = ServerConfig.from_dict({"tokens": [{"name": "f", "token": TOKEN}]})
    with trove.open(path, embedder="hash:64") as kb, serve(create_app(kb, config)) as url:
        kb.add("a first note about caches", source="s", source_id="1")
        headers = {"Authorization": f"Bearer {TOKEN}"}
        with httpx.Client(base_url=url, headers=headers, timeout=60) as client:
            yield client


def _post(http: httpx.Client, path: str, body: dict[str, Any]) -> None:
    start = time.monotonic()
    # Written by hand: httpx refuses NaN and lone surrogates, a hostile client does not
    # (ASCII JSON carries a surrogate as an escape, "\udcff").
    payload = json.dumps(body, allow_nan=True).encode()
    response = http.post(path, content=payload, headers={"Content-Type": "application/json"})
    assert response.status_code < 500, (body, response.text)
    assert time.monotonic() - start < BOUND_S, body


@settings(max_examples=150, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(body=bodies(SEARCH_KEYS, "query"))
# What a probe from outside found answered 500 (or held the server for 30 s).
@example(body={"query": "x", "session": "s"})
@example(body={"query": "x", "metadata": {"a\x00": 1}})
@example(body={"query": "a" * 99_000})
def test_search_answers_4xx_not_500(http: httpx.Client, body: dict[str, Any]) -> None:
    _post(http, "/v1/search", body)


@settings(max_examples=150, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(body=bodies(ITEM_KEYS, "text"))
@example(body={"text": "x", "metadata": {"a\x00b": 1}})
@example(body={"text": "x", "timestamp": 1e30})
@example(body={"text": "x", "metadata": {"k": math.nan}})
def test_items_answer_4xx_not_500(http: httpx.Client, body: dict[str, Any]) -> None:
    _post(http, "/v1/items", body)


links = st.dictionaries(
    st.sampled_from(["src", "dst", "type", "weight", "kind"]), values, max_size=4
)


@settings(max_examples=100, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(items=st.lists(bodies(ITEM_KEYS, "text"), min_size=0, max_size=3), edges=st.lists(links))
@example(items=[{"text": "x"}], edges=[{"src": "#0", "dst": "#9"}])
@example(items=[{"text": "x"}], edges=[{"src": "#-1", "dst": "#0", "weight": math.nan}])
def test_batches_with_links_answer_4xx_not_500(
    http: httpx.Client, items: list[dict[str, Any]], edges: list[dict[str, Any]]
) -> None:
    _post(http, "/v1/items/batch", {"items": items, "links": edges})


@settings(max_examples=100, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    params=st.dictionaries(
        st.sampled_from(["dedupe_key", "source", "source_id", "scope", "with_vectors"]),
        st.text(max_size=30),
        max_size=4,
    )
)
def test_reads_by_key_answer_4xx_not_500(http: httpx.Client, params: dict[str, str]) -> None:
    response = http.get("/v1/items/by-key", params=params)
    assert response.status_code < 500, (params, response.text)


@settings(max_examples=100, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    body=st.dictionaries(
        st.sampled_from(["threshold", "text_threshold", "rule", "dry_run", "namespace"]),
        values,
        max_size=4,
    )
)
@example(body={"threshold": 1e-300, "text_threshold": None, "dry_run": True})
def test_canonicalize_answers_4xx_not_500(http: httpx.Client, body: dict[str, Any]) -> None:
    _post(http, "/v1/canonicalize", body)


@settings(max_examples=100, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    data=st.binary(max_size=2000),
    name=st.text(max_size=300),
    kind=st.text(alphabet=st.characters(min_codepoint=32, max_codepoint=126), max_size=80),
    doc=st.sampled_from(["", "nosuchid", "0" * 20, "../../etc", "%00"]),
)
def test_original_uploads_answer_4xx_not_500(
    http: httpx.Client, data: bytes, name: str, kind: str, doc: str
) -> None:
    mine = {"text": "an item to keep originals of", "dedupe_key": "originals"}
    doc_id = doc or http.post("/v1/items", json=mine).json()["id"]
    response = http.put(
        f"/v1/items/{doc_id}/original",
        params={"name": name},
        content=data,
        headers={"Content-Type": kind.strip()} if kind.strip() else {},
    )
    assert response.status_code < 500, (name, kind, response.text)
    if response.status_code == 200:
        assert http.get(f"/v1/items/{doc_id}/original").content == data
