"""Bad input at the library boundary: an InvalidInput/InvalidQuery naming the field, on
every backend, and nothing stored changes."""

from __future__ import annotations

import math
from typing import Any

import pytest

import trove
from trove.errors import InvalidInput, InvalidQuery


def deep(depth: int) -> dict[str, Any]:
    value: dict[str, Any] = {}
    for _ in range(depth):
        value = {"k": value}
    return value


@pytest.mark.parametrize(
    ("fields", "named"),
    [
        ({"text": ""}, "text"),
        ({"text": "  \n\t "}, "text"),
        ({"text": 5}, "text"),
        ({"title": "\udcff"}, "title"),
        ({"source": 5}, "source"),
        ({"source_id": "\udcff"}, "source_id"),
        ({"doc_type": math.nan}, "doc_type"),
        ({"tags": 5}, "tags"),
        ({"tags": ["\udcff"]}, "tags"),
        ({"importance": 1.5}, "importance"),
        ({"importance": -0.1}, "importance"),
        ({"importance": math.nan}, "importance"),
        ({"timestamp": 1e30}, "timestamp"),
        ({"timestamp": math.nan}, "timestamp"),
        ({"timestamp": math.inf}, "timestamp"),
        ({"timestamp": 2**80}, "timestamp"),
        ({"ttl": math.inf}, "ttl"),
        ({"metadata": {1: 2}}, "metadata"),
        ({"metadata": {"a\x00b": 1}}, "metadata"),
        ({"metadata": {"k": math.nan}}, "metadata"),
        ({"metadata": {"k": [math.inf]}}, "metadata"),
        ({"metadata": {"\udcff": 1}}, "metadata"),
        ({"metadata": deep(5000)}, "metadata"),
        ({"metadata": [1, 2]}, "metadata"),
    ],
)
def test_bad_fields_are_refused_by_name(
    kb: trove.Store, fields: dict[str, Any], named: str
) -> None:
    item = {"text": "a note", "source": "s", "source_id": "1", **fields}
    with pytest.raises(InvalidInput, match=named):
        kb.add(**item)
    assert kb.stats().documents == 0


@pytest.mark.parametrize(
    ("query", "options", "named"),
    [
        ("a\udcffb", {}, "query"),
        (5, {}, "query"),
        ("x", {"source": "\udcff"}, "source"),
        ("x", {"source": 5}, "source"),
        ("x", {"namespace": "\udcff"}, "namespace"),
        ("x", {"doc_type": math.nan}, "doc_type"),
        ("x", {"author": ["a", 5]}, "author"),
        ("x", {"metadata": {1: 2}}, "metadata"),
        ("x", {"metadata": {"a\x00": "b"}}, "metadata"),
        ("x", {"metadata": {"k": math.nan}}, "metadata"),
        ("x", {"since": 1e30}, "since"),
        ("x", {"until": math.nan}, "until"),
        ("x", {"session": 5}, "session"),
        ("x", {"limit": 2**63}, "limit"),
        ("x", {"limit": True}, "limit"),
        ("x", {"expand": "1"}, "expand"),
        ("x", {"expand": 100}, "expand"),
    ],
)
def test_bad_searches_are_refused_by_name(
    kb: trove.Store, query: Any, options: dict[str, Any], named: str
) -> None:
    kb.add("x marks the spot", source="s", source_id="1")
    with pytest.raises(InvalidQuery, match=named):
        kb.search(query, mode="keyword", **options)


def test_link_weight_is_a_share_and_get_takes_a_string(kb: trove.Store) -> None:
    a = kb.add("first", source="s", source_id="a")
    b = kb.add("second", source="s", source_id="b")
    for weight in (1.5, -0.5, math.nan, math.inf, "1", True):
        with pytest.raises(InvalidInput, match="weight"):
            kb.link(a, b, "relates_to", weight)  # type: ignore[arg-type]
    assert kb.link(a, b, "relates_to", 0.25).weight == 0.25
    with pytest.raises(InvalidQuery, match="doc_id"):
        kb.get(5)  # type: ignore[arg-type]
    with pytest.raises(InvalidQuery, match="doc_id"):
        kb.get("\udcff")


def test_update_validates_the_same_way(kb: trove.Store) -> None:
    doc = kb.add("a note", source="s", source_id="1", importance=0.5)
    for change in ({"text": " "}, {"importance": 2.0}, {"metadata": {"k": math.inf}}):
        with pytest.raises(InvalidInput):
            kb.update(doc, **change)
    stored = kb.get(doc)
    assert stored is not None and (stored.text, stored.importance) == ("a note", 0.5)


def test_a_workspace_search_cannot_name_another_session(kb: trove.Store) -> None:
    kb.add("one session's scratch", scope="session", session="s1", source="s", source_id="1")
    with pytest.raises(InvalidInput, match="session cannot be set by a caller"):
        kb.workspace("default", session="s2").search("scratch", session="s1")
