"""The write path on its own: a Writer over a backend and a vectorizer, with no Store."""

from __future__ import annotations

from pathlib import Path

import trove
from trove.embedders.vectorizer import Vectorizer
from trove.models import Document
from trove.write import Chunker, Writer, prepare


def test_a_writer_needs_only_its_parts(tmp_path: Path) -> None:
    with trove.open(tmp_path / "kb.db", embedder="hash:32") as kb:
        heard: list[tuple[str, str]] = []

        def notify(kind: str, doc: Document) -> None:
            heard.append((kind, doc.id))

        writer = Writer(kb.backend, Vectorizer(kb.backend, "hash:32"), Chunker(200, 20), notify)
        doc = prepare({"text": "word " * 120, "source": "s", "source_id": "1"})
        plans = writer.plan([doc])
        assert plans[doc.id].action == "added" and len(plans[doc.id].chunks) > 1
        [added] = writer.commit([doc], plans, {})
        assert (added.action, added.chunks) == ("added", len(plans[doc.id].chunks))
        assert writer.write([doc]) == [trove.WriteResult(doc.id, "unchanged", 0)]
        changed = prepare({"text": "other words", "source": "s", "source_id": "1"})
        assert [r.action for r in writer.write([changed])] == ["updated"]
        assert heard == [("written", doc.id), ("updated", doc.id)]
        stats = kb.stats()
        assert stats.documents == 1 and stats.chunks == stats.vectors == 1


def test_the_last_write_of_an_id_wins(tmp_path: Path) -> None:
    with trove.open(tmp_path / "kb.db", embedder=None) as kb:
        first = prepare({"text": "one", "dedupe_key": "k"})
        second = prepare({"text": "two", "dedupe_key": "k"})
        results = kb.writer.write([first, second])
        assert [r.id for r in results] == [first.id, first.id]
        assert kb.get(first.id).text == "two"  # type: ignore[union-attr]


def test_a_document_copied_with_changes_equals_dataclasses_replace() -> None:
    # write._evolve stands in for dataclasses.replace on the bulk path; it is only right
    # while Document stays a plain dataclass (no __post_init__, no slots).
    from dataclasses import replace

    from trove.write import _evolve

    assert not hasattr(Document, "__post_init__") and not hasattr(Document, "__slots__")
    doc = prepare(
        {"text": "t", "tags": ["a"], "metadata": {"k": 1}, "timestamp": 5, "confidence": 0.5}
    )
    changes = {"created_at": "2026-01-01T00:00:00Z", "access_count": 3, "canonical_id": "x"}
    copied = _evolve(doc, **changes)
    assert copied == replace(doc, **changes) and copied is not doc
    assert doc.created_at is None  # the original is untouched


def test_items_without_memory_fields_or_lists_prepare_as_before() -> None:
    # prepare() skips validating what an item does not give; given, it is still checked.
    plain = prepare({"text": "t"})
    assert (plain.tags, plain.participants, plain.indexed, plain.confidence) == (
        (),
        (),
        "both",
        1.0,
    )
    assert prepare({"text": "t", "tags": []}) == plain
    given = prepare({"text": "t", "tags": [" a ", "a", ""], "index": "keyword"})
    assert (given.tags, given.indexed) == (("a",), "keyword")
    for bad in ({"tags": 3}, {"tags": [1]}, {"confidence": 2}, {"index": "x"}):
        try:
            prepare({"text": "t", **bad})
        except trove.InvalidInput:
            continue
        raise AssertionError(f"{bad} was accepted")


def test_every_vector_of_a_batch_is_checked_against_the_store(tmp_path: Path) -> None:
    # The dimension is read once a batch (memory/upsert.py); a later item's wrong one is
    # still refused, before anything of its batch is written.
    with trove.open(tmp_path / "kb.db", embedder=None) as kb:
        kb.add_many([{"text": "a", "vector": [1.0, 0.0, 0.0]}])
        good = [{"text": f"t{i}", "vector": [0.0, 1.0, float(i)]} for i in range(3)]
        for bad in ([1.0, 0.0], [1.0, 0.0, 0.0, 0.0]):
            try:
                kb.add_many([*good, {"text": "bad", "vector": bad}, *good])
            except trove.InvalidInput as exc:
                assert "dimensions" in str(exc)
            else:
                raise AssertionError(f"a {len(bad)}-dimensional vector was accepted")
        assert kb.stats().documents == 1
        kb.add_many(good, batch_size=2)  # the dimension read again after each flush
        assert kb.stats().vectors == 4
