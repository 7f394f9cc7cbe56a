"""Search filters (trove.search.filters.Filters.build), directly: what each good input
becomes, and the InvalidQuery each bad one raises, with its message."""

from __future__ import annotations

import re
from datetime import datetime, timezone
from typing import Any

import pytest

import trove
from trove.errors import InvalidQuery
from trove.search.filters import FILTER_NAMES, Filters

LONE = "contains lone surrogates; it is not valid Unicode"
NUL_KEYS = "metadata filter keys must be strings without NUL characters"
ISO = "2026-11-03T09:00:00Z)"
PAST_64_BITS = "must be an integer from -2**63 to 2**63-1"
NOV_3 = datetime(2026, 11, 3, 9, tzinfo=timezone.utc).timestamp()


def test_no_arguments_are_the_defaults() -> None:
    assert Filters.build() == Filters()
    assert Filters().namespace == "default" and Filters().scope == ()


def test_good_inputs_are_normalized() -> None:
    built = Filters.build(
        namespace="ops",
        scope="session",
        session="s1",
        source="notes",
        doc_type=["markdown", "text"],
        author=("ana",),
        tags=["a", "b"],
        since="2026-11-03T09:00:00Z",
        until=NOV_3 + 60,
        metadata={"b": 2, "a": "x", "c": None, "d": True, "e": 1.5},
        entities="kafka",
        min_importance=1,
        min_confidence=0.5,
        max_compression=2,
        collapse=1,
        cluster="c7",
    )
    assert built == Filters(
        namespace="ops",
        scope=("session",),
        session="s1",
        source=("notes",),
        doc_type=("markdown", "text"),
        author=("ana",),
        tags=("a", "b"),
        since=NOV_3,
        until=NOV_3 + 60,
        metadata=(("a", "x"), ("b", 2), ("c", None), ("d", True), ("e", 1.5)),
        entities=("kafka",),
        min_importance=1.0,
        min_confidence=0.5,
        max_compression=2,
        collapse=True,
        cluster="c7",
    )
    assert isinstance(built.min_importance, float)


@pytest.mark.parametrize("scope", ["workspace", "session", "global"])
def test_every_scope_is_accepted(scope: str) -> None:
    assert Filters.build(scope=[scope]).scope == (scope,)


def test_unknown_filters_are_named_with_the_known_ones() -> None:
    with pytest.raises(InvalidQuery) as caught:
        Filters.build(colour="red", bogus=1)
    assert str(caught.value) == (
        f"unknown filter bogus, colour; known filters: {', '.join(FILTER_NAMES)}"
    )


@pytest.mark.parametrize(
    ("given", "message"),
    [
        ({"namespace": ""}, "namespace must be a non-empty string"),
        ({"namespace": 3}, "namespace must be a non-empty string"),
        ({"namespace": "\ud800"}, f"namespace {LONE}"),
        ({"session": 3}, "session must be a string, not int"),
        ({"scope": "team"}, "unknown scope 'team'; use one of: workspace, session, global"),
        ({"scope": ["global", "x"]}, "unknown scope 'x'; use one of: workspace, session, global"),
        ({"scope": 1}, "scope filter must be a string or a list of strings"),
        ({"source": 3}, "source filter must be a string or a list of strings"),
        ({"tags": ["a", 1]}, "tags filter must be a string or a list of strings"),
        ({"doc_type": {"kind": "x"}}, "doc_type filter must be a string or a list of strings"),
        ({"author": ["\udfff"]}, f"author filter {LONE}"),
        ({"metadata": [("a", 1)]}, "metadata filter must be a mapping of key to value"),
        ({"metadata": {1: "x"}}, NUL_KEYS),
        ({"metadata": {"a\x00": 1}}, NUL_KEYS),
        ({"metadata": {"\ud800": 1}}, f"metadata filter key {LONE}"),
        ({"metadata": {"k": "\ud800"}}, f"metadata filter 'k' {LONE}"),
        ({"metadata": {"k": float("nan")}}, "metadata filter 'k': nan is not a JSON number"),
        ({"metadata": {"k": float("inf")}}, "metadata filter 'k': inf is not a JSON number"),
        ({"metadata": {"k": [1]}}, "metadata filter 'k': only scalar values can be matched"),
        ({"metadata": {"k": 2**63}}, f"metadata filter 'k' {PAST_64_BITS}, not {2**63}"),
        (
            {"metadata": {"k": -(2**63) - 1}},
            f"metadata filter 'k' {PAST_64_BITS}, not {-(2**63) - 1}",
        ),
        ({"since": "yesterday"}, "since: 'yesterday' is not an ISO-8601 time (e.g. " + ISO),
        ({"until": True}, "until: expected a time, got True"),
        ({"since": 1e20}, "since: 1e+20 is not a time between years 1 and 9999"),
        ({"entities": 7}, "entities filter must be a string or a list of strings"),
        ({"min_importance": "high"}, "min_importance must be a number"),
        ({"min_importance": True}, "min_importance must be a number"),
        ({"min_confidence": float("nan")}, "min_confidence must be a number"),
        ({"max_compression": 1.5}, "max_compression must be an integer"),
        ({"max_compression": False}, "max_compression must be an integer"),
        ({"max_compression": 10**30}, f"max_compression {PAST_64_BITS}, not {10**30}"),
        (
            {"min_importance": 10**400},
            "min_importance must be a number, not an integer of that size",
        ),
        ({"cluster": 5}, "cluster must be a cluster id (a string)"),
    ],
)
def test_each_bad_input_is_an_invalid_query_naming_it(given: dict[str, Any], message: str) -> None:
    with pytest.raises(InvalidQuery) as caught:
        Filters.build(**given)
    assert str(caught.value) == message


@pytest.mark.parametrize("mode", ["keyword", "semantic", "hybrid"])
def test_a_metadata_integer_past_64_bits_is_refused_on_every_backend(
    store_target: str, mode: str
) -> None:
    # It was an OverflowError binding the value (an HTTP 500) in every mode.
    with trove.open(store_target, embedder="hash:64") as kb:
        kb.add("otters hold hands", source="s", source_id="1", metadata={"k": 2**63 - 1})
        for value in (2**63, -(2**63) - 1, 10**30):
            with pytest.raises(InvalidQuery, match=re.escape(PAST_64_BITS)):
                kb.search("otters", mode=mode, metadata={"k": value})
        hits = kb.search("otters", mode=mode, metadata={"k": 2**63 - 1})
        assert [hit.source_id for hit in hits] == ["1"]
