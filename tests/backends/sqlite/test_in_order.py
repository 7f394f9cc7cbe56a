"""Schema 16: documents and chunks keyed in insertion order (``document.seq``,
``chunk.doc``); the migration from schema 15, and the paths that find a document's
chunks after it (replace, delete, purge, tallies, check)."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import apsw
import pytest

import trove
from trove.backends.sqlite.schema import LATEST_VERSION
from trove.check import check

pytestmark = pytest.mark.sqlite_only

FIXTURE = Path(__file__).parent / "fixtures" / "schema15.db"
EMBEDDER = "hash:16"  # the fixture's (make_schema15.py)


def _conn(kb: trove.Store) -> Any:
    return kb.backend.conn  # type: ignore[attr-defined]


def _rows(conn: Any, sql: str) -> list[tuple[Any, ...]]:
    return [tuple(r) for r in conn.execute(sql)]


def _index_columns(conn: Any, table: str) -> dict[str, list[str]]:
    """Each index of ``table``: its columns."""
    return {
        str(index[1]): [str(c[2]) for c in conn.execute(f"PRAGMA index_info('{index[1]}')")]
        for index in conn.execute(f"PRAGMA index_list('{table}')")
    }


def _raw(path: Path) -> dict[str, list[tuple[Any, ...]]]:
    conn = apsw.Connection(str(path))
    try:
        return {
            "documents": _rows(
                conn, "SELECT rowid, id, text, deleted_at FROM document ORDER BY 1"
            ),
            "chunks": _rows(conn, "SELECT id, doc_id, idx, text, text_hash FROM chunk ORDER BY 1"),
            "counter": _rows(conn, "SELECT seq FROM sqlite_sequence WHERE name = 'chunk'"),
            "tallies": _rows(conn, "SELECT * FROM doc_tally ORDER BY 1, 2, 3, 4, 5")
            + _rows(conn, "SELECT * FROM chunk_tally ORDER BY 1, 2"),
            "edges": _rows(conn, "SELECT src, dst, type FROM edge"),
        }
    finally:
        conn.close()


def test_a_schema_15_store_migrates_keeping_ids_rowids_and_counts(tmp_path: Path) -> None:
    path = tmp_path / "kb.db"
    shutil.copy(FIXTURE, path)
    before = _raw(path)
    assert len(before["chunks"]) > len(before["documents"]) == 6  # the long one has several
    with trove.open(path, embedder=EMBEDDER) as kb:
        assert kb.stats().schema_version == LATEST_VERSION == 16
        conn = _conn(kb)
        # Each document's seq is the rowid it had; each chunk's doc is its document's seq.
        assert (
            _rows(conn, "SELECT seq, id, text, deleted_at FROM document ORDER BY 1")
            == (before["documents"])
        )
        assert (
            _rows(conn, "SELECT id, doc_id, idx, text, text_hash FROM chunk ORDER BY 1")
            == (before["chunks"])
        )
        assert not _rows(
            conn,
            "SELECT c.id FROM chunk c JOIN document d ON d.seq = c.doc WHERE d.id <> c.doc_id",
        )
        assert (
            _rows(conn, "SELECT seq FROM sqlite_sequence WHERE name = 'chunk'")
            == (before["counter"])
        )
        assert (
            _rows(conn, "SELECT * FROM doc_tally ORDER BY 1, 2, 3, 4, 5")
            + _rows(conn, "SELECT * FROM chunk_tally ORDER BY 1, 2")
            == before["tallies"]
        )
        assert _rows(conn, "SELECT src, dst, type FROM edge") == before["edges"]
        assert check(kb).ok, check(kb).problems
        assert kb.search("walrus ice floes", mode="keyword", limit=1)[0].source_id == "long"
        assert kb.search("walrus ice floes", mode="semantic", limit=1)[0].source_id == "long"
        otter = kb.get_by_key("fixture", "otter")
        assert otter is not None
        assert [e.dst for e in kb.neighbors(otter.id)] == [before["edges"][0][1]]
        # The visibility columns, read through document_visible by seq: another session's
        # note stays hidden, a deleted document too.
        assert kb.search("seals", mode="keyword", limit=5, session="s2") == []
        found = kb.search("seals", mode="keyword", limit=5, session="s1")
        assert [h.scope for h in found] == ["session"]
        assert kb.search("gulls fishing boats", mode="keyword", limit=5) == []


def test_writes_after_the_migration_find_chunks_by_their_document(tmp_path: Path) -> None:
    path = tmp_path / "kb.db"
    shutil.copy(FIXTURE, path)
    with trove.open(path, embedder=EMBEDDER) as kb:
        conn = _conn(kb)
        long, otter = kb.get_by_key("fixture", "long"), kb.get_by_key("fixture", "otter")
        assert long is not None and otter is not None
        old = {int(r[0]) for r in conn.execute("SELECT id FROM chunk")}
        # A new text replaces the long document's chunks; a purge takes the otter's along.
        kb.add("The walrus now sleeps. " * 80, source="fixture", source_id="long")
        kb.delete(otter.id)
        kb.purge([otter.id])
        kb.add_many([{"text": f"new note {i} about auks", "source": "new"} for i in range(30)])
        chunks = {int(r[0]): str(r[1]) for r in conn.execute("SELECT id, doc_id FROM chunk")}
        assert otter.id not in chunks.values()
        assert min(set(chunks) - old) > max(old)  # new ids, never reused
        assert (
            kb.stats().chunks == len(chunks) and kb.stats().documents == 34
        )  # and the deleted gull
        assert kb.get_by_key("fixture", "long").text.startswith("The walrus now")  # type: ignore[union-attr]
        assert kb.neighbors(otter.id) == []  # its edge went with it
        assert check(kb).ok, check(kb).problems
        [(first, last)] = _rows(
            conn, "SELECT min(seq), max(seq) FROM document WHERE source = 'new'"
        )
        assert last - first == 29  # a batch's documents take consecutive numbers


def test_a_new_store_keys_documents_and_chunks_in_insertion_order(tmp_path: Path) -> None:
    with trove.open(tmp_path / "kb.db", embedder=None) as kb:
        kb.add_many(
            [{"text": f"note {i} on terns", "source": "s", "source_id": str(i)} for i in range(5)]
        )
        conn = _conn(kb)
        chunk = _index_columns(conn, "chunk")
        document = _index_columns(conn, "document")
        # Random keys: only the id's own unique index and the text hash's (vector reuse).
        assert sorted(chunk.values()) == [["doc", "idx"], ["text_hash"]]
        assert document["document_visible"][0] == "seq"
        assert [cols for cols in document.values() if cols[0] == "id"] == [["id"]]
        seqs = _rows(conn, "SELECT d.seq, c.doc FROM document d JOIN chunk c ON c.doc_id = d.id")
        assert all(seq == doc for seq, doc in seqs)
        assert [r[0] for r in _rows(conn, "SELECT source_id FROM document ORDER BY seq")] == [
            str(i) for i in range(5)
        ]


def test_check_finds_a_chunk_that_names_another_document(tmp_path: Path) -> None:
    with trove.open(tmp_path / "kb.db", embedder=None) as kb:
        kb.add_many([{"text": "one note on skuas"}, {"text": "another on shags"}])
        assert check(kb).ok
        _conn(kb).execute("UPDATE chunk SET doc_id = 'elsewhere' WHERE id = 1")
        report = check(kb)
        assert not report.ok
        assert "chunk: 1 chunks name a document other than theirs" in report.problems
