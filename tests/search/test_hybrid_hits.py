"""How search builds its hits without the dataclasses' per-field constructors: the hit
on a document (search/hybrid.document_hit) and a document's header row (the SQLite
backend's mapping) must equal what the constructors give, field for field; and the one
read (a backend's hit_details) that gives what the hits show."""

from __future__ import annotations

from dataclasses import fields
from pathlib import Path

import trove
from trove.backends.ranking import collapse
from trove.backends.rows import HEADER_COLUMNS, to_document
from trove.backends.sqlite.documents import _read_list, document
from trove.models import Chunk, ChunkHit, Document, Hit
from trove.search.filters import Filters
from trove.search.hybrid import document_hit
from trove.search.query import parse
from trove.timeutil import now


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
            fast = document(HEADER_COLUMNS, row)
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


def test_hit_details_gives_what_the_separate_reads_give(kb: trove.Store) -> None:
    cache = kb.add("Redis caches keys in memory.\n\nIt evicts the least used.", title="Cache")
    stream = kb.add("Kafka streams events to consumers.", title="Stream")
    query = parse("redis caches")
    [hit] = kb.backend.keyword_search(query, Filters.build(), 10, now())
    # A chunk replaced since it was ranked has no row: the document's chunk of now shows.
    gone = hit.chunk_id + 1000
    details = kb.backend.hit_details(query, [(hit.doc_id, hit.chunk_id), (stream, gone)], 12)
    assert details.documents == kb.backend.get_documents([cache, stream])
    assert details.texts == {cache: "Redis caches", stream: "Kafka stream"}
    chosen = details.passages.chosen()
    [(now_id, chunk)] = [chosen.chunks[stream]]
    assert chunk == Chunk(0, 0, len("Kafka streams events to consumers."))
    assert chosen.chunks[cache] == (hit.chunk_id, hit.chunk)
    assert chosen.snippets == kb.backend.snippets(query, [hit.chunk_id, now_id])
    assert chosen.snippets[hit.chunk_id].startswith("«Redis» «caches»")


def test_hit_details_cuts_texts_at_characters(kb: trove.Store) -> None:
    short = kb.add("Grüße")  # 5 characters, 7 bytes: all of it, however it is read
    long = kb.add("Köln am Rhein")
    details = kb.backend.hit_details(parse("köln"), [(short, 0), (long, 0)], 6)
    assert details.texts == {short: "Grüße", long: "Köln a"}


def test_hit_details_is_one_statement_in_sqlite(tmp_path: Path) -> None:
    with trove.open(tmp_path / "kb.db", embedder=None) as kb:
        kb.add_many([{"text": f"note {i} about redis"} for i in range(20)])
        query = parse("redis")
        hits = kb.backend.keyword_search(query, Filters.build(), 10, now())
        statements: list[str] = []
        raw = kb.backend.conn.raw  # type: ignore[attr-defined]
        raw.exec_trace = lambda _cursor, sql, _bindings: statements.append(sql) or True
        details = kb.backend.hit_details(query, [(h.doc_id, h.chunk_id) for h in hits], 100)
        raw.exec_trace = None
        assert len(details.documents) == len(details.passages.chosen().snippets) == 10
        assert len(statements) == 1
