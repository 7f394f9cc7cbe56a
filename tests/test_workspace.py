"""The workspace's writes: each item validated and hashed once, whatever the mode."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import trove
from trove import write
from trove.errors import Forbidden, InvalidInput
from trove.store import Store


@pytest.fixture
def kb(tmp_path: Path) -> Iterator[Store]:
    with trove.open(tmp_path / "kb.db", embedder="hash:32") as store:
        yield store


@pytest.fixture
def prepared(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    """The items write.prepare is called with, in order (every caller goes through it)."""
    calls: list[dict[str, Any]] = []
    real = write.prepare

    def counting(item: Any, **options: Any) -> Any:
        calls.append(dict(item))
        return real(item, **options)

    monkeypatch.setattr(write, "prepare", counting)
    return calls


@pytest.mark.parametrize("on_conflict", [None, "replace", "merge", "keep"])
def test_a_new_item_is_prepared_once(
    kb: Store, prepared: list[dict[str, Any]], on_conflict: str | None
) -> None:
    ws = kb.workspace("ops", author_tier="human")
    item = {"text": "the deploy runbook", "source": "notes", "source_id": "runbook"}
    if on_conflict:
        item["on_conflict"] = on_conflict
    doc_id = ws.write(item)
    assert len(prepared) == 1
    doc = kb.get(doc_id)
    assert doc is not None and doc.author_tier == "human" and doc.namespace == "ops"


def test_a_replace_over_a_stored_item_is_prepared_once(
    kb: Store, prepared: list[dict[str, Any]]
) -> None:
    ws = kb.workspace("ops")
    first = ws.write({"text": "v1", "dedupe_key": "k"})
    prepared.clear()
    assert ws.write({"text": "v2", "dedupe_key": "k"}) == first
    assert len(prepared) == 1
    assert kb.get(first).text == "v2"  # type: ignore[union-attr]


def test_a_merge_prepares_the_merged_record_too(kb: Store, prepared: list[dict[str, Any]]) -> None:
    ws = kb.workspace("ops")
    doc_id = ws.write({"text": "v1", "dedupe_key": "k", "title": "kept"})
    prepared.clear()
    ws.write({"text": "v2", "dedupe_key": "k", "on_conflict": "merge"})
    # The item once, then the stored record with the item's fields applied.
    assert [call["text"] for call in prepared] == ["v2", "v2"]
    assert prepared[1]["title"] == "kept"
    doc = kb.get(doc_id)
    assert doc is not None and (doc.text, doc.title) == ("v2", "kept")


def test_keep_leaves_the_stored_item(kb: Store, prepared: list[dict[str, Any]]) -> None:
    ws = kb.workspace("ops")
    doc_id = ws.write({"text": "v1", "dedupe_key": "k"})
    prepared.clear()
    assert ws.write({"text": "v2", "dedupe_key": "k", "on_conflict": "keep"}) == doc_id
    assert len(prepared) == 1
    assert kb.get(doc_id).text == "v1"  # type: ignore[union-attr]


def test_refusals_are_unchanged(kb: Store) -> None:
    mine = kb.workspace("ops", session="s1")
    with pytest.raises(Forbidden, match="may not write global items"):
        mine.write({"text": "x", "scope": "global"})
    # A caller's own vector is taken (issue 30), and checked against the store's dimension.
    with pytest.raises(InvalidInput, match="vector has 2 dimensions"):
        mine.write({"text": "x", "vector": [1.0, 0.0]})
    with pytest.raises(InvalidInput, match="unknown field colour"):
        mine.write({"text": "x", "colour": "red"})
    with pytest.raises(InvalidInput, match="on_conflict must be one of"):
        mine.write({"text": "x", "on_conflict": "overwrite"})


def test_a_batch_links_its_items_and_refuses_a_link_it_may_not_make(kb: Store) -> None:
    """write_many(items, links): "#N" names the batch's Nth item; a link to an item of
    another namespace, an unknown field or a "#N" past the batch writes nothing."""
    ws = kb.workspace("ana")
    theirs = kb.workspace("bo").add("bo's private note")
    a, b = ws.write_many(
        [{"text": "a claim"}, {"text": "its source"}], [{"src": "#0", "dst": "#1"}]
    )
    assert [(e.src, e.dst) for e in ws.neighbors(a)] == [(a, b)]
    for links, error in (
        ([{"src": "#0", "dst": theirs}], trove.NotFound),
        ([{"src": "#0", "dst": "#1"}], InvalidInput),
        ([{"src": "#0", "dst": "#0", "kind": "x"}], InvalidInput),
        ([{"src": 0, "dst": "#0"}], InvalidInput),
    ):
        with pytest.raises(error):
            ws.write_many([{"text": "a zebra refused with its batch"}], links)
    assert not ws.search("zebra", mode="keyword")
