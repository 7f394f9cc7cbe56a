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
