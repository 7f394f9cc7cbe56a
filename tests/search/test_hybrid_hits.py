"""How search builds its hits without the dataclasses' per-field constructors: the hit
on a document (search/hybrid.document_hit) and a document's header row (the SQLite
backend's mapping) must equal what the constructors give, field for field."""

from __future__ import annotations

from dataclasses import fields
from pathlib import Path

import trove
from trove.backends.rows import HEADER_COLUMNS, to_document
from trove.backends.sqlite.documents import _document, _read_list
from trove.models import Chunk, ChunkHit, Document, Hit
from trove.search.hybrid import document_hit
from trove.search.ranking import collapse


def test_document_hit_sets_every_field_as_the_constructor_does() -> None:
    doc = Document(
        id="d1",
        text="body",
        title="T",
        source="s",
        source_id="7",
        tags=("a", "b"),
        metadata={"k": 1},
        importance=0.5,
        entities=("e",),
        access_count=3,
        created_at="2026-01-02T03:04:05Z",
    )
    chunk = Chunk(index=2, start=5, end=9, heading="H")
    built = document_hit(doc, 0.25, "snip", chunk, {"why": 1})
    carried = {
        f.name: getattr(doc, f.name)
        for f in fields(Hit)
        if f.name in {g.name for g in fields(Document)} and f.name != "text"
    }
    carried.pop("id", None)
    expected = Hit(
        doc_id="d1", score=0.25, snippet="snip", chunk=chunk, explain={"why": 1}, **carried
    )
    assert built == expected
    assert vars(built) == vars(expected)  # every field, none left unset or extra


def test_a_header_row_maps_to_the_document_to_document_gives(tmp_path: Path) -> None:
    with trove.open(tmp_path / "kb.db", embedder=None) as kb:
        plain = kb.add("plain text")
        rich = kb.add(
            "tagged text",
            title="Title",
            tags=["x", "y"],
            metadata={"k": [1, 2]},
            timestamp="2026-03-04T05:06:07.5Z",
            expires_at="2099-01-01T00:00:00Z",
        )
        conn = kb.backend.conn  # type: ignore[attr-defined]
        sql = f"SELECT {', '.join(HEADER_COLUMNS)} FROM document WHERE id = ?"
        for doc_id in (plain, rich):
            row = conn.execute(sql, (doc_id,))[0]
            fast = _document(HEADER_COLUMNS, row)
            slow = to_document(HEADER_COLUMNS, row, _read_list)
            assert vars(fast) == vars(slow)
            assert fast == slow


def test_collapse_builds_the_hits_the_constructors_would() -> None:
    allowed = {1: ("a", (0, 0, 5, "")), 2: ("a", (1, 5, 9, "H")), 3: ("b", Chunk(2, 9, 12, ""))}
    got = collapse([(2, 3.0), (1, 2.0), (3, 1.0), (4, 0.5)], allowed, 10)
    assert got == [
        ChunkHit("a", 2, 3.0, Chunk(1, 5, 9, "H")),
        ChunkHit("b", 3, 1.0, Chunk(2, 9, 12, "")),
    ]
    assert all(vars(h).keys() == {"doc_id", "chunk_id", "score", "chunk"} for h in got)
