"""Events: the new kinds, their payloads, the live feed, and nothing for rolled-back writes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import trove
from trove.errors import InvalidInput
from trove.live import EventFeed

PAYLOAD = {"kind", "id", "namespace", "scope", "session_id", "source", "doc_type", "importance"}


def test_every_change_is_an_event_with_source_and_doc_type(kb: trove.Store) -> None:
    events: list[dict[str, Any]] = []
    kb.subscribe(events.append)
    doc = kb.add("hello", source="chat", doc_type="note", source_id="1")
    kb.add("hello again", source="chat", doc_type="note", source_id="1")
    kb.delete(doc)
    kb.restore(doc)
    kb.delete(doc)
    kb.add("hello again", source="chat", doc_type="note", source_id="1")  # a write restores
    kb.delete(doc)
    assert kb.purge() == 1
    kinds = [e["kind"] for e in events]
    assert kinds == [
        "written",
        "updated",
        "deleted",
        "restored",
        "deleted",
        "restored",
        "deleted",
        "purged",
    ]
    for event in events:
        assert set(event) == PAYLOAD
        assert (event["id"], event["source"], event["doc_type"]) == (doc, "chat", "note")


def test_reads_are_events_only_when_asked_for(durable_target: str) -> None:
    with trove.open(durable_target, embedder=None) as quiet:
        reads: list[dict[str, Any]] = []
        quiet.subscribe(reads.append, kinds=["retrieved"])
        doc = quiet.add("a secret", source="vault")
        quiet.get(doc)
        quiet.search("secret")
        assert reads == []
    with trove.open(durable_target, embedder=None, record_retrievals=True) as audited:
        audited.subscribe(reads.append, kinds=["retrieved"])
        ws = audited.workspace("default")
        ws.write({"text": "a secret", "source": "vault"})  # trove's own checks: no reads
        audited.update(doc, title="secret")
        audited.link(doc, ws.add("another"))
        assert reads == []
        audited.get(doc)
        audited.search("secret")
        assert [(e["kind"], e["id"], e["source"]) for e in reads] == [
            ("retrieved", doc, "vault"),
            ("retrieved", doc, "vault"),
        ]


def test_a_rolled_back_write_is_never_heard(tmp_path: Path) -> None:
    # The feed reads the file's log, written inside the transaction. (In-process
    # subscribers of a caller's own multi-write transaction: Store.transaction, issue 16.)
    with trove.open(tmp_path / "kb.db", embedder=None) as kb:
        feed = EventFeed(kb)
        with pytest.raises(RuntimeError), kb.backend.transaction():
            kb.add("never committed")
            raise RuntimeError("roll back")
        assert feed.poll() == []
        kb.add("committed")
        assert [e["kind"] for e in feed.poll()] == ["written"]


def test_the_feed_hears_other_connections_and_scopes_to_a_caller(tmp_path: Path) -> None:
    path = tmp_path / "kb.db"
    with trove.open(path, embedder=None) as kb, trove.open(path, embedder=None) as other:
        ana = EventFeed(kb, namespace="ana", session="s1")
        everyone = EventFeed(kb, kinds=["written"])
        other.add("ana's", namespace="ana")
        other.add("bo's", namespace="bo")
        other.add("for all", namespace="bo", scope="global")
        other.add("ana s1", namespace="ana", scope="session", session="s1")
        other.add("ana s2", namespace="ana", scope="session", session="s2")
        seen = [(e["namespace"], e["scope"], e["session_id"]) for e in ana.wait(5)]
        assert seen == [
            ("ana", "workspace", ""),
            ("bo", "global", ""),
            ("ana", "session", "s1"),
        ]
        assert len(everyone.poll()) == 5
        with pytest.raises(InvalidInput, match="unknown event kind"):
            EventFeed(kb, kinds=["exploded"])


def test_the_feed_works_in_process_on_postgres(pg_target: str) -> None:
    with trove.open(pg_target, embedder=None) as kb:
        feed = EventFeed(kb)
        doc = kb.add("hello", source="chat")
        kb.delete(doc)
        assert [e["kind"] for e in feed.wait(5)] == ["written", "deleted"]


def test_the_feed_carries_this_processs_reads(tmp_path: Path) -> None:
    with trove.open(tmp_path / "kb.db", embedder=None, record_retrievals=True) as kb:
        doc = kb.add("a secret", namespace="ana", source="vault")
        with EventFeed(kb, namespace="ana") as feed, EventFeed(kb, namespace="bo") as other:
            kb.search("secret", namespace="ana")
            assert [(e["kind"], e["id"]) for e in feed.poll()] == [("retrieved", doc)]
            assert other.poll() == []


def test_reads_are_written_to_the_event_log_as_on_the_stream(tmp_path: Path) -> None:
    path = tmp_path / "kb.db"
    with trove.open(path, embedder=None) as kb:
        mine = kb.add("a secret plan", namespace="ana", source="vault")
        private = kb.add("a secret aside", namespace="ana", scope="session", session="s1")
        kb.add("a secret elsewhere", namespace="bo")
    # Another process (here: another connection) follows the file's log.
    with trove.open(path, embedder=None) as follower:
        ana = EventFeed(follower, kinds=["retrieved"], namespace="ana", session="s2")
        everyone = EventFeed(follower, kinds=["retrieved"])
        with trove.open(path, embedder=None, record_retrievals=True) as audited:
            streamed: list[dict[str, Any]] = []
            audited.subscribe(streamed.append, kinds=["retrieved"])
            own = EventFeed(audited, kinds=["retrieved"])
            audited.get(mine)
            audited.search("secret", namespace="ana", session="s1")
            audited.get(private)
            heard = own.poll()  # this process's reads, once each, from the log
            assert [e["id"] for e in heard] == [e["id"] for e in streamed]
            assert all(e["kind"] == "retrieved" and e["seq"] > 0 for e in heard)
        assert [e["id"] for e in everyone.wait(5)] == [e["id"] for e in streamed]
        assert {e["id"] for e in ana.poll()} == {mine}  # another session's aside is not heard
    with trove.open(path, embedder=None) as quiet:  # without record_retrievals: none logged
        feed = EventFeed(quiet, kinds=["retrieved"])
        quiet.get(mine)
        quiet.search("secret", namespace="ana")
        assert feed.poll() == []


def test_a_reranked_search_reports_only_what_it_returns(tmp_path: Path) -> None:
    # Reranking searches a wider list first; only the hits returned are reads.
    with trove.open(tmp_path / "kb.db", embedder=None, record_retrievals=True) as kb:
        ids = [kb.add(f"secret number {n}", source="vault") for n in range(5)]
        reads: list[dict[str, Any]] = []
        kb.subscribe(reads.append, kinds=["retrieved"])
        hits = kb.search("secret", rerank="memory", limit=2)
        assert len(hits) == 2 and {h.doc_id for h in hits} <= set(ids)
        assert [e["id"] for e in reads] == [h.doc_id for h in hits]
