"""Agent memory rules: scopes, sessions, dedupe keys, update, list, edges, events."""

from __future__ import annotations

import pytest

import trove
from helpers.threads import run_threads
from trove import Forbidden, InvalidInput, InvalidQuery, NotFound


def test_dedupe_key_id_is_deterministic_per_namespace_and_scope(kb: trove.Store) -> None:
    a = kb.add("likes tea", dedupe_key="pref:drink")
    assert kb.add("likes coffee", dedupe_key="pref:drink") == a
    assert kb.add("likes coffee", dedupe_key="pref:drink", namespace="other") != a
    assert kb.add("likes coffee", dedupe_key="pref:drink", scope="global") != a
    with trove.open(":memory:", embedder=None) as other:
        assert other.add("anything", dedupe_key="pref:drink") == a


def test_update_keeps_id_provenance_and_created_at(kb: trove.Store) -> None:
    doc_id = kb.add("first", source="chat", source_id="m1", author="ana", title="T", tags=["a"])
    before = kb.get(doc_id)
    assert kb.update(doc_id, text="second", metadata={"k": 1}, importance=0.9) == doc_id
    after = kb.get(doc_id)
    assert after is not None and before is not None
    assert (after.text, after.metadata, after.importance) == ("second", {"k": 1}, 0.9)
    assert (after.source, after.source_id, after.author, after.title, after.tags) == (
        "chat",
        "m1",
        "ana",
        "T",
        ("a",),
    )
    assert after.created_at == before.created_at
    assert kb.search("second")[0].doc_id == doc_id and kb.search("first") == []


def test_update_of_content_addressed_document_keeps_its_id(kb: trove.Store) -> None:
    doc_id = kb.add("a note without any key")
    kb.update(doc_id, text="rewritten note")
    assert kb.get(doc_id).text == "rewritten note"  # type: ignore[union-attr]


@pytest.mark.parametrize("field", ["scope", "dedupe_key", "namespace", "source", "author"])
def test_update_cannot_change_identity_or_provenance(kb: trove.Store, field: str) -> None:
    doc_id = kb.add("x", dedupe_key="k")
    with pytest.raises(InvalidInput, match=f"cannot change {field}"):
        kb.update(doc_id, **{field: "global"})


def test_update_of_missing_or_expired_item_is_not_found(kb: trove.Store) -> None:
    gone = kb.add("old", expires_at="2000-01-01")
    for doc_id in ("nope", gone):
        with pytest.raises(NotFound):
            kb.update(doc_id, text="new")


def test_ttl_expires_items(kb: trove.Store) -> None:
    doc_id = kb.add("short lived", ttl=3600)
    doc = kb.get(doc_id)
    assert doc is not None and doc.expires_at is not None and not doc.expired
    with pytest.raises(InvalidInput, match="ttl"):
        kb.add("x", ttl=-1)
    with pytest.raises(InvalidInput, match="not both"):
        kb.add("x", ttl=5, expires_at="2099-01-01")


def test_list_pages_newest_first_with_a_stable_cursor(kb: trove.Store) -> None:
    ids = [kb.add(f"memory {i}", dedupe_key=str(i)) for i in range(7)]
    seen: list[str] = []
    page = kb.list(limit=3)
    while True:
        seen.extend(d.id for d in page.items)
        if page.cursor is None:
            break
        kb.add("written while paging", dedupe_key="late")  # does not shift later pages
        page = kb.list(limit=3, cursor=page.cursor)
    assert seen == list(reversed(ids))
    with pytest.raises(InvalidQuery, match="cursor"):
        kb.list(cursor="garbage!")


def test_list_flags_expired_and_shows_deleted_on_request(kb: trove.Store) -> None:
    expired = kb.add("expired", expires_at="2000-01-01")
    deleted = kb.add("deleted")
    kb.delete(deleted)
    listed = {d.id: d for d in kb.list().items}
    assert listed[expired].expired and deleted not in listed
    everything = {d.id: d for d in kb.list(include_deleted=True).items}
    assert everything[deleted].deleted


def test_list_filters_by_scope(kb: trove.Store) -> None:
    kb.add("w")
    g = kb.add("g", scope="global")
    assert [d.id for d in kb.list(scope="global").items] == [g]


def test_edges_and_neighbors(kb: trove.Store) -> None:
    a, b, c = (kb.add(t) for t in ("alpha decision", "beta followup", "gamma"))
    kb.link(a, b, "supersedes", 0.8)
    kb.link(c, a, "relates_to")
    assert {(e.src, e.dst, e.type) for e in kb.neighbors(a)} == {
        (a, b, "supersedes"),
        (c, a, "relates_to"),
    }
    assert [e.dst for e in kb.neighbors(a, type="supersedes")] == [b]
    kb.delete(b)
    assert [e.src for e in kb.neighbors(a)] == [c]
    assert kb.unlink(c, a) == 1
    with pytest.raises(NotFound):
        kb.link(a, "missing")
    with pytest.raises(InvalidInput):
        kb.link(a, a)


def test_search_expand_adds_linked_documents_marked(kb: trove.Store) -> None:
    a = kb.add("the decision to drop redis", title="decision")
    b = kb.add("benchmarks of the in-process cache", title="evidence")
    c = kb.add("unrelated grocery list", title="groceries")
    kb.link(a, b, "derived_from", 0.5)
    kb.link(b, c, "relates_to")
    hits = kb.search("redis", expand=1)
    assert [h.doc_id for h in hits] == [a, b]
    assert hits[0].linked_from is None
    assert hits[1].linked_from == {"doc_id": a, "type": "derived_from", "weight": 0.5}
    assert [h.doc_id for h in kb.search("redis", expand=2)] == [a, b, c]
    assert [h.doc_id for h in kb.search("redis")] == [a]


def test_events_after_commit_never_for_noops(kb: trove.Store) -> None:
    events: list[dict] = []
    stop = kb.subscribe(events.append)
    doc_id = kb.add("hello", dedupe_key="k", importance=0.5)
    kb.add("hello", dedupe_key="k", importance=0.5)  # no-op
    kb.update(doc_id, text="hello again")
    kb.delete(doc_id)
    assert [(e["kind"], e["id"]) for e in events] == [
        ("written", doc_id),
        ("updated", doc_id),
        ("deleted", doc_id),
    ]
    assert events[0] == {
        "kind": "written",
        "id": doc_id,
        "namespace": "default",
        "scope": "workspace",
        "session_id": "",
        "source": "",
        "doc_type": "",
        "importance": 0.5,
    }
    stop()
    kb.add("after unsubscribe")
    assert len(events) == 3


def test_events_can_be_filtered_and_a_failing_listener_does_not_undo(kb: trove.Store) -> None:
    deletes: list[dict] = []
    kb.subscribe(deletes.append, kinds=["deleted"])
    kb.subscribe(lambda e: 1 / 0)
    doc_id = kb.add("x")
    assert kb.get(doc_id) is not None and deletes == []
    with pytest.raises(InvalidInput):
        kb.subscribe(print, kinds=["exploded"])


# --- workspaces: what MCP and HTTP callers get ------------------------------------------


def test_workspaces_are_isolated(kb: trove.Store) -> None:
    ana = kb.workspace("ana")
    bo = kb.workspace("bo")
    secret = ana.add("ana's secret recipe")
    assert bo.get(secret) is None
    assert bo.search("secret recipe") == []
    assert bo.list().items == []
    assert bo.stats().documents == 0
    for action in (
        lambda: bo.update(secret, text="x"),
        lambda: bo.delete(secret),
        lambda: bo.link(secret, secret),
    ):
        with pytest.raises(NotFound) as err:
            action()
        assert "recipe" not in str(err.value)


def test_workspace_cannot_write_to_another_namespace(kb: trove.Store) -> None:
    with pytest.raises(Forbidden, match="cannot reach others"):
        kb.workspace("ana").add("x", namespace="bo")
    with pytest.raises(Forbidden):
        kb.workspace("ana").search("x", namespace="bo")


def test_session_items_are_private_to_their_session(kb: trove.Store) -> None:
    one = kb.workspace("ana", session="s1")
    two = kb.workspace("ana", session="s2")
    note = one.add("scratch thought about tokens", scope="session")
    shared = one.add("shared fact about tokens")
    assert one.get(note) is not None and two.get(note) is None
    assert [h.doc_id for h in two.search("tokens")] == [shared]
    assert {h.doc_id for h in one.search("tokens")} == {note, shared}
    assert [d.id for d in two.list().items] == [shared]


def test_global_items_are_readable_everywhere_writable_only_if_allowed(kb: trove.Store) -> None:
    admin = kb.workspace("ops", allow_global=True)
    fact = admin.add("the office wifi password rotates monthly", scope="global")
    ana = kb.workspace("ana")
    assert ana.get(fact) is not None
    assert [h.doc_id for h in ana.search("wifi password")] == [fact]
    with pytest.raises(Forbidden, match="global"):
        ana.add("x", scope="global")
    with pytest.raises(Forbidden, match="global"):
        ana.update(fact, text="hacked")
    with pytest.raises(Forbidden, match="global"):
        ana.delete(fact)


def test_author_tier_is_stamped_never_taken_from_input(kb: trove.Store) -> None:
    agent = kb.workspace("ana", author_tier="llm")
    with pytest.raises(InvalidInput, match="author_tier cannot be set"):
        agent.write({"text": "a claim", "author_tier": "human"})
    doc_id = agent.write({"text": "a claim"})
    assert kb.get(doc_id).author_tier == "llm"  # type: ignore[union-attr]
    with pytest.raises(InvalidInput, match="author_tier cannot be set"):
        agent.update(doc_id, text="a revised claim", author_tier="human")
    assert kb.get(kb.add("library write")).author_tier == "explicit"  # type: ignore[union-attr]


def test_an_edit_keeps_the_original_author_tier(kb: trove.Store) -> None:
    human = kb.workspace("ana", author_tier="human")
    doc_id = human.add("the human's note")
    kb.workspace("ana", author_tier="llm").update(doc_id, text="the human's note, edited")
    doc = kb.get(doc_id)
    assert doc is not None and doc.text.endswith("edited") and doc.author_tier == "human"


def test_denied_writes_and_deletes(kb: trove.Store) -> None:
    reader = kb.workspace("ana", allow_write=False, allow_delete=False)
    doc_id = kb.workspace("ana").add("existing")
    with pytest.raises(Forbidden, match="writes"):
        reader.add("x")
    with pytest.raises(Forbidden, match="deletes"):
        reader.delete(doc_id)
    assert reader.get(doc_id) is not None


def test_concurrent_writes_to_one_dedupe_key_make_one_item(durable_target: str) -> None:
    path = durable_target
    with trove.open(path, embedder=None) as kb:
        kb.add("seed", dedupe_key="counter")

    def write(i: int) -> None:
        with trove.open(path, embedder=None) as kb:
            kb.add(f"value {i}", dedupe_key="counter")

    run_threads(write, 20)
    with trove.open(path, embedder=None) as kb:
        assert kb.stats().documents == 1
        assert kb.list().items[0].text.startswith("value ")


def test_sessions_writing_the_same_key_or_text_get_separate_items(kb: trove.Store) -> None:
    # An id shared across sessions would make the second write fail, telling its caller
    # that another session holds that exact key or text.
    one = kb.workspace("ana", session="s1")
    two = kb.workspace("ana", session="s2")
    for fields in ({}, {"dedupe_key": "scratch"}, {"source": "chat", "source_id": "m1"}):
        mine = one.add("the launch code is 1234", scope="session", **fields)
        theirs = two.add("the launch code is 1234", scope="session", **fields)
        assert mine != theirs
        assert one.get(theirs) is None and two.get(mine) is None


def test_a_write_in_another_scope_never_takes_over_an_item(kb: trove.Store) -> None:
    fact = kb.workspace("ops", allow_global=True).add("rotate keys monthly", scope="global")
    ops = kb.workspace("ops", session="s1")
    for scope in ("workspace", "session"):
        assert ops.add("rotate keys monthly", scope=scope) != fact
    assert kb.get(fact).scope == "global"  # type: ignore[union-attr]


def test_workspace_items_keep_the_ids_existing_files_have(kb: trove.Store) -> None:
    # Keying session and global items apart must not move workspace items: re-ingesting
    # a folder into an existing file has to find the same documents.
    assert kb.add("x", source="notes", source_id="a.md") == "37b1bf2fd7d7f5955c18"
    assert kb.add("y", dedupe_key="k") == "a3354eb00b669708ba8e"


def test_racing_writers_of_a_new_key_make_one_written_event(tmp_path) -> None:
    with trove.open(tmp_path / "kb.db", embedder=None) as kb:
        events: list[dict] = []
        kb.subscribe(events.append)

        def write(i: int) -> None:
            kb.add(f"value {i}", dedupe_key="fresh")

        run_threads(write, 30, together=True)
        assert [e["kind"] for e in events].count("written") == 1
        assert kb.stats().documents == 1
