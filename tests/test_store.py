"""Writing and reading documents: ids, upserts, exact text, tombstones, expiry."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import trove
from trove import InvalidInput, NotFound


def test_get_returns_exactly_what_was_added(kb: trove.Store) -> None:
    text = "line one\r\nline two\ttabbed 😀 中文 العربية\n\n  trailing  \x00nul"
    doc_id = kb.add(text, title="t")
    doc = kb.get(doc_id)
    assert doc is not None
    assert doc.text == text
    assert doc.text.encode("utf-8") == text.encode("utf-8")


@settings(max_examples=60, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=st.text().filter(str.strip), title=st.text(max_size=20))
def test_get_round_trips_arbitrary_unicode(kb: trove.Store, text: str, title: str) -> None:
    key = (title + "|" + text[:10]).replace("\x00", "")  # NUL is refused in a key
    doc_id = kb.add(text, title=title, source="prop", source_id=key)
    doc = kb.get(doc_id)
    assert doc is not None
    assert (doc.text, doc.title) == (text, title)


def test_provenance_fields_round_trip(kb: trove.Store) -> None:
    doc_id = kb.add(
        "hello",
        source="mail",
        source_id="<m1@example.org>",
        doc_type="email",
        title="Hi",
        author="ana@example.org",
        participants=["bo@example.org", "chen@example.org"],
        timestamp="2026-11-03T09:00:00+01:00",
        url="https://example.org/m1",
        thread_id="t1",
        channel="inbox",
        tags=["work", "urgent"],
        metadata={"size": 5, "flags": ["seen"], "spam": False},
        expires_at="2099-01-01",
    )
    doc = kb.get(doc_id)
    assert doc is not None
    assert doc.source == "mail" and doc.source_id == "<m1@example.org>"
    assert doc.doc_type == "email" and doc.title == "Hi" and doc.author == "ana@example.org"
    assert doc.participants == ("bo@example.org", "chen@example.org")
    assert doc.timestamp == "2026-11-03T08:00:00Z"
    assert doc.url == "https://example.org/m1"
    assert (doc.thread_id, doc.channel) == ("t1", "inbox")
    assert doc.tags == ("work", "urgent")
    assert doc.metadata == {"size": 5, "flags": ["seen"], "spam": False}
    assert doc.expires_at == "2099-01-01T00:00:00Z"
    assert doc.created_at and doc.updated_at


def test_timestamps_accept_datetimes_and_epochs(kb: trove.Store) -> None:
    moment = datetime(2026, 1, 2, 3, 4, 5, tzinfo=timezone.utc)
    a = kb.add("a", timestamp=moment)
    b = kb.add("b", timestamp=moment.timestamp())
    assert kb.get(a).timestamp == kb.get(b).timestamp == "2026-01-02T03:04:05Z"  # type: ignore[union-attr]


def test_same_natural_key_updates_in_place(kb: trove.Store) -> None:
    first = kb.add("version one", source="notes", source_id="a.md", title="A")
    second = kb.add("version two", source="notes", source_id="a.md", title="A2")
    assert first == second
    doc = kb.get(first)
    assert doc is not None and doc.text == "version two" and doc.title == "A2"
    assert kb.search("one") == []
    assert [h.doc_id for h in kb.search("two")] == [first]
    assert kb.stats().documents == 1


def test_update_keeps_created_at(kb: trove.Store) -> None:
    doc_id = kb.add("v1", source="s", source_id="1")
    created = kb.get(doc_id).created_at  # type: ignore[union-attr]
    kb.add("v2", source="s", source_id="1")
    doc = kb.get(doc_id)
    assert doc is not None and doc.created_at == created and doc.updated_at >= created  # type: ignore[operator]


def test_identical_content_is_a_noop(kb: trove.Store) -> None:
    results = kb.write_many([{"text": "same", "source": "s", "source_id": "1"}] * 1)
    again = kb.write_many([{"text": "same", "source": "s", "source_id": "1"}])
    assert results[0].action == "added" and again[0].action == "unchanged"
    updated_at = kb.get(results[0].id).updated_at  # type: ignore[union-attr]
    kb.add("same", source="s", source_id="1")
    assert kb.get(results[0].id).updated_at == updated_at  # type: ignore[union-attr]


def test_text_without_key_is_identified_by_content(kb: trove.Store) -> None:
    assert kb.add("hello world") == kb.add("hello world")
    assert kb.add("hello world") != kb.add("hello there")
    assert kb.add("hello world", namespace="other") != kb.add("hello world")


def test_dedupe_key_updates_the_same_document(kb: trove.Store) -> None:
    first = kb.add("prefers dark mode", dedupe_key="pref:theme")
    second = kb.add("prefers light mode", dedupe_key="pref:theme")
    assert first == second
    assert kb.get(first).text == "prefers light mode"  # type: ignore[union-attr]


def test_metadata_only_change_updates_without_reindexing(kb: trove.Store) -> None:
    doc_id = kb.add("stable text", source="s", source_id="1", tags=["a"])
    result = kb.write_many(
        [{"text": "stable text", "source": "s", "source_id": "1", "tags": ["b"]}]
    )
    assert result[0].action == "updated"
    assert kb.get(doc_id).tags == ("b",)  # type: ignore[union-attr]
    assert [h.doc_id for h in kb.search("stable", tags=["b"])] == [doc_id]


def test_title_change_is_searchable(kb: trove.Store) -> None:
    doc_id = kb.add("body", source="s", source_id="1", title="alpha")
    kb.add("body", source="s", source_id="1", title="omega")
    assert kb.search("alpha") == []
    assert [h.doc_id for h in kb.search("omega")] == [doc_id]


def test_add_many_returns_ids_in_order_and_last_write_wins(kb: trove.Store) -> None:
    items = [{"text": f"doc {i}", "source": "bulk", "source_id": str(i)} for i in range(1200)]
    items.append({"text": "doc 0 again", "source": "bulk", "source_id": "0"})
    ids = kb.add_many(items, batch_size=100)
    assert len(ids) == 1201 and len(set(ids)) == 1200
    assert ids[0] == ids[-1]
    assert kb.get(ids[0]).text == "doc 0 again"  # type: ignore[union-attr]
    assert kb.stats().documents == 1200


def test_add_many_in_one_batch_repeats_an_id(kb: trove.Store) -> None:
    ids = kb.add_many([{"text": "a", "source_id": "x"}, {"text": "b", "source_id": "x"}])
    assert ids[0] == ids[1]
    assert kb.get(ids[0]).text == "b"  # type: ignore[union-attr]


def test_delete_restore_purge(kb: trove.Store) -> None:
    doc_id = kb.add("ephemeral thought", source="s", source_id="1")
    kb.delete(doc_id)
    assert kb.get(doc_id) is None
    assert kb.search("ephemeral") == []
    assert kb.stats().deleted == 1
    kb.restore(doc_id)
    assert kb.get(doc_id) is not None
    assert [h.doc_id for h in kb.search("ephemeral")] == [doc_id]
    kb.delete(doc_id)
    assert kb.purge() == 1
    with pytest.raises(NotFound):
        kb.restore(doc_id)
    assert kb.stats().chunks == 0


def test_readding_a_deleted_document_restores_it(kb: trove.Store) -> None:
    doc_id = kb.add("back again", source="s", source_id="1")
    kb.delete(doc_id)
    result = kb.write_many([{"text": "back again", "source": "s", "source_id": "1"}])
    assert result[0].action == "restored"
    assert kb.get(doc_id) is not None


def test_delete_unknown_id_raises_not_found(kb: trove.Store) -> None:
    with pytest.raises(NotFound, match="nope"):
        kb.delete("nope")


def test_expired_documents_vanish_and_are_purged(kb: trove.Store) -> None:
    gone = kb.add("expired memo", expires_at="2000-01-01T00:00:00Z")
    kept = kb.add("fresh memo", expires_at="2999-01-01T00:00:00Z")
    assert kb.get(gone) is None
    assert [h.doc_id for h in kb.search("memo")] == [kept]
    stats = kb.stats()
    assert (stats.documents, stats.expired) == (1, 1)
    assert kb.purge() == 1
    assert kb.get(kept) is not None


def test_stats_counts_by_source_and_type(kb: trove.Store) -> None:
    kb.add("a", source="notes", doc_type="markdown")
    kb.add("b", source="notes", doc_type="text")
    kb.add("c", source="mail", doc_type="email")
    stats = kb.stats()
    assert stats.documents == 3
    assert stats.by_source == {"notes": 2, "mail": 1}
    assert stats.by_doc_type == {"markdown": 1, "text": 1, "email": 1}
    assert stats.text_bytes == 3
    assert stats.embedder is None


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("timestamp", "yesterday", "not an ISO-8601 time"),
        ("expires_at", "soon", "not an ISO-8601 time"),
        ("metadata", {"x": object()}, "not a JSON value"),
        ("tags", [1, 2], "list of strings"),
        ("title", 5, "title must be a string"),
    ],
)
def test_bad_fields_raise_invalid_input_and_store_nothing(
    kb: trove.Store, field: str, value: object, message: str
) -> None:
    with pytest.raises(InvalidInput, match=message):
        kb.add("text", **{field: value})  # type: ignore[arg-type]
    assert kb.stats().documents == 0


def test_text_must_be_a_string(kb: trove.Store) -> None:
    with pytest.raises(InvalidInput, match="text must be a string"):
        kb.add(b"bytes")  # type: ignore[arg-type]
    with pytest.raises(InvalidInput, match="lone surrogates"):
        kb.add("bad \ud800 text")


def test_a_failed_batch_leaves_earlier_documents_intact(kb: trove.Store) -> None:
    doc_id = kb.add("kept safe", source="s", source_id="1")
    with pytest.raises(InvalidInput):
        kb.add_many([{"text": "new", "source_id": "2"}, {"text": "x", "timestamp": "bad"}])
    assert kb.get(doc_id).text == "kept safe"  # type: ignore[union-attr]
    assert kb.stats().documents == 1


def test_unknown_field_in_add_many(kb: trove.Store) -> None:
    with pytest.raises(InvalidInput, match="unknown field colour"):
        kb.add_many([{"text": "x", "colour": "red"}])


def test_file_store_persists(durable_target: str) -> None:
    path = durable_target
    with trove.open(path) as kb:
        doc_id = kb.add("persisted", title="P")
    with trove.open(path) as kb:
        assert kb.get(doc_id).title == "P"  # type: ignore[union-attr]
        assert kb.search("persisted")[0].doc_id == doc_id


def test_warm_changes_no_result(kb: trove.Store) -> None:
    for i in range(30):
        kb.add(f"note {i} on graphs and {'vectors ' * (i % 3)}", source="s", source_id=str(i))
    before = kb.search("graphs vectors", mode="keyword", limit=20)
    kb.warm()
    kb.warm()  # twice: a no-op the second time
    after = kb.search("graphs vectors", mode="keyword", limit=20)
    assert [h.doc_id for h in after] == [h.doc_id for h in before]
    assert [h.score for h in after] == pytest.approx([h.score for h in before], rel=1e-9)
    kb.add("graphs vectors vectors", source="s", source_id="late")
    assert kb.search("graphs vectors", mode="keyword", limit=1)[0].source_id == "late"
