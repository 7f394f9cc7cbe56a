"""Migration 7 upgrades a store written before the memory fields."""

from __future__ import annotations

from pathlib import Path

import apsw

import trove
from trove.backends.sqlite.schema import LATEST_VERSION


def test_a_schema_6_store_gains_the_memory_fields(tmp_path: Path) -> None:
    db = tmp_path / "kb.db"
    with trove.open(db, embedder=None) as kb:
        doc_id = kb.add("an old memory", tags=["t"])
    conn = apsw.Connection(str(db))
    columns = [
        "confidence",
        "compression_level",
        "entities",
        "source_turn_ids",
        "canonical_id",
        "access_count",
        "last_accessed",
        "indexed",
        "keyword_text",
        "semantic_text",
    ]
    conn.execute(
        "DROP TABLE cluster_member; DROP TABLE cluster; DROP INDEX document_canonical; "
        + "".join(f"ALTER TABLE document DROP COLUMN {c}; " for c in columns)
        + "UPDATE document SET importance = NULL; PRAGMA user_version = 6"
    )
    conn.close()
    with trove.open(db, embedder=None) as kb:
        doc = kb.get(doc_id)
        assert doc is not None and doc.text == "an old memory" and doc.tags == ("t",)
        assert (doc.importance, doc.confidence, doc.indexed, doc.access_count) == (
            0.5,
            1.0,
            "both",
            0,
        )
        assert kb.search("memory")[0].doc_id == doc_id
        assert kb.stats().schema_version == LATEST_VERSION
