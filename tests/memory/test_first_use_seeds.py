"""Seed features an agent meets first (issue 30): purges are events, hits say who wrote
them, and deleting an expired item is a no-op."""

from __future__ import annotations

import time
from typing import Any

import trove


def test_purge_of_ids_and_clear_are_purged_events(kb: trove.Store) -> None:
    events: list[dict[str, Any]] = []
    kb.subscribe(events.append)
    live = kb.add("live note")
    tomb = kb.add("deleted note")
    kb.delete(tomb)
    other = kb.add("in another namespace", namespace="scratch")
    events.clear()
    assert kb.purge([live, tomb]) == 2
    assert [(e["kind"], e["id"]) for e in events] == [
        ("deleted", live),  # a live one is tombstoned first, then gone
        ("purged", live),
        ("purged", tomb),
    ]
    events.clear()
    assert kb.clear("scratch") == 1
    assert [(e["kind"], e["id"], e["namespace"]) for e in events] == [
        ("deleted", other, "scratch"),
        ("purged", other, "scratch"),
    ]


def test_hits_carry_the_author_tier(kb: trove.Store) -> None:
    derived = kb.workspace("default", author_tier="derived").add("otters hold hands asleep")
    [hit] = kb.search("otters")
    assert (hit.doc_id, hit.author_tier) == (derived, "derived")
    assert hit.to_dict()["author_tier"] == "derived"


def test_deleting_an_expired_item_is_a_no_op(kb: trove.Store) -> None:
    ws = kb.workspace("default")
    doc_id = ws.add("a short-lived note", ttl=1)
    time.sleep(1.1)
    assert kb.get(doc_id) is None  # expired: gone from get and search
    assert ws.delete(doc_id) is False
    assert ws.delete(doc_id, hard=True) is False
