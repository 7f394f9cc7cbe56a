"""Clusters: members, rolling summary (searchable), decision log, cluster search."""

from __future__ import annotations

import pytest

import trove
from trove import InvalidInput, NotFound


def test_cluster_lifecycle(kb: trove.Store) -> None:
    a = kb.add("redis cache eviction tuning")
    b = kb.add("redis cluster failover drill")
    c = kb.add("redis on the laptop of ana")
    made = kb.clusters.create("redis work", members=[a, b], key_entities=["Redis"])
    assert made.members == (a, b) and made.key_entities == ("Redis",)
    assert {h.doc_id for h in kb.search("redis", cluster=made.id)} == {a, b}
    assert {h.doc_id for h in kb.search("redis")} == {a, b, c}
    kb.clusters.add(made.id, [c])
    kb.clusters.remove(made.id, [a])
    assert kb.clusters.get(made.id).members == (b, c)
    updated = kb.clusters.append_decision(made.id, "move sessions off redis", author="ana")
    kb.clusters.append_decision(made.id, "keep the cache")
    log = kb.clusters.get(made.id).decision_log
    assert [e["text"] for e in log] == ["move sessions off redis", "keep the cache"]
    assert log[0]["author_tier"] == "explicit" and log[0]["at"]
    assert updated.decision_log[0] == log[0]
    assert [cl.id for cl in kb.clusters.list()] == [made.id]


def test_summary_is_searchable_and_names_the_cluster(kb: trove.Store) -> None:
    made = kb.clusters.create("db", summary="we are phasing out the legacy oracle database")
    hits = kb.search("oracle")
    assert hits and hits[0].doc_type == "cluster_summary"
    assert hits[0].metadata["cluster_id"] == made.id
    kb.clusters.update(made.id, summary="now it is all postgres")
    assert kb.search("oracle") == []
    assert kb.search("postgres")[0].metadata["cluster_id"] == made.id
    assert kb.clusters.get(made.id).rolling_summary == "now it is all postgres"
    assert kb.clusters.delete(made.id) is True
    assert kb.search("postgres") == [] and kb.clusters.delete(made.id) is False
    with pytest.raises(NotFound):
        kb.clusters.get(made.id)


def test_deleting_a_member_leaves_the_cluster_which_survives(kb: trove.Store) -> None:
    a = kb.add("only member")
    b = kb.add("second member")
    made = kb.clusters.create("small", members=[a, b])
    kb.delete(a)
    kb.purge(ids=[b])
    cluster = kb.clusters.get(made.id)
    assert cluster.members == () and cluster.name == "small"
    kb.restore(a)
    assert kb.clusters.get(made.id).members == ()  # deleting took it out for good


def test_bad_cluster_input(kb: trove.Store) -> None:
    a = kb.add("member")
    made = kb.clusters.create("c1")
    with pytest.raises(NotFound):
        kb.clusters.add(made.id, [a, "no-such-doc"])
    assert kb.clusters.get(made.id).members == ()
    with pytest.raises(InvalidInput):
        kb.clusters.create("c1")
    with pytest.raises(InvalidInput):
        kb.clusters.create(" ")
    with pytest.raises(NotFound):
        kb.clusters.add("nope", [a])
    with pytest.raises(InvalidInput):
        kb.clusters.append_decision(made.id, "")
    other = kb.add("elsewhere", namespace="other")
    with pytest.raises(NotFound):
        kb.clusters.add(made.id, [other])
