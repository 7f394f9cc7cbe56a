"""JSON and JSONL records, with a field mapping."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import trove
from trove.ingest.readers.records import ContentKeys


def docs(kb: trove.Store) -> dict[str, trove.Document]:
    found = {}
    for sid, doc_id, _, deleted in kb.iter_source("default", "vault"):
        doc = kb.get(doc_id)
        if doc is not None and not deleted:
            found[sid] = doc
    return found


def lines(*records: object) -> str:
    return "".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in records)


def test_jsonl_with_a_malformed_line_stores_the_others(store: trove.Store, vault: Path) -> None:
    (vault / "chat.jsonl").write_text(
        lines(
            {"id": "a1", "text": "we should drop redis", "author": "ana", "ts": 1762160400},
            '{"id": "a2", "text": "broken',
            {"id": "a3", "text": "agreed", "author": "bob", "channel": "eng", "tags": ["x"]},
            "",
            [1, 2, 3],
            {"id": "a5", "no_text_here": True},
        ),
        encoding="utf-8",
    )
    report = store.ingest(vault)
    assert report.added == 2
    assert [p for p, _ in report.failed] == ["chat.jsonl#line 2", "chat.jsonl#line 5"]
    assert "not valid JSON" in report.failed[0][1]
    assert report.skipped == [
        ("chat.jsonl#line 6", "no text field ('text' or 'content' or 'body' or 'message')")
    ]
    found = docs(store)
    assert set(found) == {"chat.jsonl#a1", "chat.jsonl#a3"}
    first = found["chat.jsonl#a1"]
    assert (first.text, first.author, first.doc_type) == ("we should drop redis", "ana", "record")
    assert first.timestamp == "2025-11-03T09:00:00Z"
    assert found["chat.jsonl#a3"].channel == "eng" and found["chat.jsonl#a3"].tags == ("x",)


def test_a_field_mapping_reads_another_tools_export(store: trove.Store, vault: Path) -> None:
    (vault / "export.ndjson").write_text(
        lines(
            {
                "uuid": "m-1",
                "message": {"content": "deploy friday?", "sent_ms": 1762160400123},
                "user": {"name": "ana"},
                "conversation": "c-9",
                "subject": "Deploys",
                "kind": "chat",
                "score": 3,
            }
        ),
        encoding="utf-8",
    )
    report = store.ingest(
        vault,
        fields={
            "text": "message.content",
            "id": "uuid",
            "time": "message.sent_ms",
            "author": "user.name",
            "thread": "conversation",
            "title": "subject",
            "type": "kind",
        },
    )
    assert report.added == 1
    doc = docs(store)["export.ndjson#m-1"]
    assert (doc.text, doc.author, doc.thread_id, doc.title) == (
        "deploy friday?",
        "ana",
        "c-9",
        "Deploys",
    )
    assert doc.doc_type == "chat" and doc.timestamp == "2025-11-03T09:00:00.123000Z"
    assert doc.metadata == {"score": 3}


def key(record: object, times: int = 1) -> str:
    """The key of a record without an id: a hash of its content (see ContentKeys)."""
    keys = ContentKeys()
    return [keys(record) for _ in range(times)][-1]


def test_records_without_ids_are_keyed_by_content_and_bad_times_fail(
    store: trove.Store, vault: Path
) -> None:
    (vault / "log.jsonl").write_text(
        lines({"text": "first"}, {"text": "second", "time": "yesterday"}, {"text": "third"}),
        encoding="utf-8",
    )
    report = store.ingest(vault)
    assert set(docs(store)) == {
        f"log.jsonl#{key({'text': 'first'})}",
        f"log.jsonl#{key({'text': 'third'})}",
    }
    assert report.failed == [("log.jsonl#line 2", "time: 'yesterday' is not a time")]


def test_a_line_inserted_at_the_top_relabels_nothing(store: trove.Store, vault: Path) -> None:
    log = vault / "log.jsonl"
    log.write_text(lines({"text": "first"}, {"text": "second"}, {"text": "first"}))
    store.ingest(vault)
    before = {sid: doc.id for sid, doc in docs(store).items()}
    assert f"log.jsonl#{key({'text': 'first'}, 2)}" in before  # a repeat is numbered
    log.write_text(lines({"text": "new on top"}) + log.read_text())
    report = store.ingest(vault)
    assert (report.added, report.updated, report.unchanged) == (1, 0, 3)
    after = {sid: doc.id for sid, doc in docs(store).items()}
    assert {sid: after[sid] for sid in before} == before


def test_another_field_mapping_reads_the_file_again(store: trove.Store, vault: Path) -> None:
    (vault / "notes.jsonl").write_text(lines({"body": "the body", "summary": "the summary"}))
    store.ingest(vault)
    assert [d.text for d in docs(store).values()] == ["the body"]
    report = store.ingest(vault, fields={"text": "summary"})
    assert report.updated == 1  # the same record (same key), read with the new mapping
    assert [d.text for d in docs(store).values()] == ["the summary"]
    assert store.ingest(vault, fields={"text": "summary"}).unchanged == 1


def test_force_reads_unchanged_files_again(store: trove.Store, vault: Path) -> None:
    (vault / "notes.jsonl").write_text(lines({"text": "one"}, {"text": "two"}))
    (vault / "note.md").write_text("# Note\n\nSome text.")
    store.ingest(vault)
    written: list[int] = []  # documents passed to the store (unchanged files are not)
    store.ingest(vault, progress=lambda p: written.append(p.documents))
    assert written[-1] == 0
    report = store.ingest(vault, force=True, progress=lambda p: written.append(p.documents))
    assert (report.unchanged, report.added, written[-1]) == (3, 0, 3)


def test_json_documents_lists_and_wrapped_lists(store: trove.Store, vault: Path) -> None:
    (vault / "list.json").write_text(
        json.dumps([{"id": 1, "text": "one"}, {"id": 2, "body": "two"}]), encoding="utf-8"
    )
    (vault / "slack.json").write_text(
        json.dumps({"channel": "general", "messages": [{"ts": "1762160400.5", "text": "hi"}]}),
        encoding="utf-8",
    )
    (vault / "single.json").write_text(json.dumps({"title": "Memo", "content": "solo"}))
    (vault / "config.json").write_text(json.dumps({"compilerOptions": {"strict": True}}))
    (vault / "bad.json").write_text("{not json", encoding="utf-8")
    report = store.ingest(vault)
    found = docs(store)
    slack = f"slack.json#{key({'ts': '1762160400.5', 'text': 'hi'})}"
    single = f"single.json#{key({'title': 'Memo', 'content': 'solo'})}"
    assert set(found) == {"list.json#1", "list.json#2", slack, single}
    assert found[slack].timestamp == "2025-11-03T09:00:00.500000Z"
    assert found[single].title == "Memo"
    assert [p for p, _ in report.skipped] == ["config.json#record 1"]
    assert report.failed[0][0] == "bad.json" and "not valid JSON" in report.failed[0][1]


def test_records_option_names_the_list(store: trove.Store, vault: Path) -> None:
    (vault / "dump.json").write_text(
        json.dumps({"meta": {"n": 1}, "data": {"items": [{"text": "deep"}]}, "other": [{}]})
    )
    store.ingest(vault, records="data.items")
    assert set(docs(store)) == {f"dump.json#{key({'text': 'deep'})}"}


def test_an_unknown_mapping_is_refused_before_reading(store: trove.Store, vault: Path) -> None:
    with pytest.raises(trove.InvalidInput, match="cannot map a record field to 'colour'"):
        store.ingest(vault, fields={"colour": "c"})
