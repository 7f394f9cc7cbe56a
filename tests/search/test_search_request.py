"""One search request (trove.search.request.SearchRequest): checked once, its filters built
once per search whatever path the search takes, frozen, and the same messages as before."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import trove
from helpers.llm_server import FakeLLM
from trove.errors import InvalidQuery
from trove.llm import ChatModel
from trove.search.filters import Filters
from trove.search.request import SearchRequest


@pytest.fixture
def builds(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[dict[str, Any]]]:
    """Every Filters.build call from here on, by its arguments."""
    calls: list[dict[str, Any]] = []
    real = Filters.build.__func__  # type: ignore[attr-defined]

    def counted(cls: type[Filters], **given: Any) -> Filters:
        calls.append(given)
        return real(cls, **given)  # type: ignore[no-any-return]

    monkeypatch.setattr(Filters, "build", classmethod(counted))
    yield calls


@pytest.fixture
def kb(tmp_path: Path) -> Iterator[trove.Store]:
    with trove.open(tmp_path / "kb.db", embedder="hash:64") as store:
        first = store.add("Redis was dropped in favour of Postgres queues.", source_id="q")
        second = store.add("We picked SQLite for the local cache of embeddings.", source_id="c")
        store.add("The standup moved to ten o'clock on Mondays.", source_id="s")
        store.link(first, second, "relates_to")
        yield store


@pytest.mark.parametrize(
    "options",
    [
        {},
        {"mode": "keyword"},
        {"mode": "semantic"},
        {"explain": True, "tags": ["x"], "session": "s1", "scope": "workspace"},
        {"variants": ["sqlite cache", "postgres"]},
        {"expand": 2},
        {"rerank": "memory"},
        {"rerank": "memory", "expand": 1, "variants": ["queues"]},
        {"vector": [0.1] * 64},
        {"with_text": True, "context": 1, "max_tokens": 200, "min_score": 0.0},
        {"limit": 0},
    ],
)
def test_each_search_builds_its_filters_once(
    kb: trove.Store, builds: list[dict[str, Any]], options: dict[str, Any]
) -> None:
    kb.search("redis postgres", **options)
    assert len(builds) == 1
    given = {k: v for k, v in options.items() if k in ("tags", "session", "scope")}
    assert builds[0] == given


def test_a_store_with_enrichment_and_llm_expansion_builds_them_once(
    fake_llm: FakeLLM, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    text = "Sprint retro: the deploy broke twice."
    fake_llm.answers[text] = {"summary": "A postmortem.", "keywords": ["outage"], "entities": []}
    model = ChatModel("tiny", base_url=fake_llm.url, timeout=2.0)
    with trove.open(tmp_path / "kb.db", embedder=None, llm=model) as kb:
        kb.add(text, tags=["ops"], enrich=True)
        calls: list[dict[str, Any]] = []
        real = Filters.build.__func__  # type: ignore[attr-defined]

        def counted(cls: type[Filters], **given: Any) -> Filters:
            calls.append(given)
            return real(cls, **given)  # type: ignore[no-any-return]

        monkeypatch.setattr(Filters, "build", classmethod(counted))
        for options in ({}, {"expand": "llm"}, {"variants": ["deploy"]}, {"expand": 1}):
            calls.clear()
            assert kb.search("retro outage", tags="ops", **options)
            assert calls == [{"tags": "ops"}], options


def test_the_request_is_frozen_and_its_filters_built() -> None:
    request = SearchRequest.build("q", limit=3, tags="a", since="2024-01-01")
    assert request.filters == Filters.build(tags="a", since="2024-01-01")
    with pytest.raises(dataclasses.FrozenInstanceError):
        request.limit = 4  # type: ignore[misc]
    assert SearchRequest.build("q", True).filters.collapse  # duplicates fold by default
    assert not SearchRequest.build("q", True, collapse_duplicates=False).filters.collapse
    assert SearchRequest.build("q", context=2).with_text  # text comes with its context


@pytest.mark.parametrize(
    ("given", "message"),
    [
        ({"expand": 9}, 'expand (or "llm") must be an integer from 0 to 5, not 9'),
        ({"min_score": 2}, "min_score must be a number between 0 and 1"),
        ({"context": 11}, "context must be an integer between 0 and 10"),
        ({"max_tokens": 0}, "max_tokens must be a positive integer"),
        ({"rerank": "fast"}, "unknown rerank profile 'fast'"),
        ({"limit": -1}, "limit must be an integer from 0 to 1000, not -1"),
        ({"colour": "red"}, "unknown filter colour"),
        ({"duplicates": True}, "unknown filter duplicates"),
        ({"query": 3}, "query must be a string, not int"),
        ({"variants": "one"}, "variants must be a list of strings"),
        ({"mode": "fuzzy"}, "unknown mode 'fuzzy'"),
    ],
)
def test_bad_requests_are_refused_with_the_same_words(
    kb: trove.Store, given: dict[str, Any], message: str
) -> None:
    query = given.pop("query", "redis")
    with pytest.raises(InvalidQuery, match=message.replace("(", r"\(").replace(")", r"\)")):
        kb.search(query, **given)


def test_a_callers_vector_needs_no_query_and_ignores_variants(kb: trove.Store) -> None:
    hits = kb.search(None, vector=[0.1] * 64, variants="ignored")  # type: ignore[arg-type]
    assert hits
