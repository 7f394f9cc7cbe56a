"""Write-time enrichment of a SQLite store: an LLM's summary, keywords and entities per
document, kept beside the document (never in its text) and indexed on their own.

A row records which version of the text it describes (``content_hash``): a changed
document counts as un-enriched until enriched again, and its old enrichment is not
searched. ``status`` is ``done`` or ``failed`` (with the error).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from trove.backends.sqlite.parts import SQLiteParts
    from trove.backends.sqlite.word_index.fts import any_of
else:  # the query syntax's module loads at the first search, not when a store opens
    from trove import lazy

    lazy.functions(globals(), "trove.backends.sqlite.word_index.fts", "any_of")

ENRICHMENT_SQL = """
    CREATE TABLE IF NOT EXISTS enrichment (
        doc_id TEXT PRIMARY KEY REFERENCES document (id) ON DELETE CASCADE,
        content_hash TEXT NOT NULL,
        status TEXT NOT NULL,
        summary TEXT NOT NULL DEFAULT '',
        keywords TEXT NOT NULL DEFAULT '',
        entities TEXT NOT NULL DEFAULT '',
        model TEXT NOT NULL,
        error TEXT NOT NULL DEFAULT '',
        at REAL NOT NULL
    ) STRICT;
    CREATE VIRTUAL TABLE IF NOT EXISTS enrichment_fts USING fts5 (
        summary, keywords, entities, content='enrichment', content_rowid='rowid',
        tokenize='porter unicode61 remove_diacritics 2'
    );
    CREATE TRIGGER IF NOT EXISTS enrichment_ai AFTER INSERT ON enrichment BEGIN
        INSERT INTO enrichment_fts (rowid, summary, keywords, entities)
            VALUES (new.rowid, new.summary, new.keywords, new.entities);
    END;
    CREATE TRIGGER IF NOT EXISTS enrichment_ad AFTER DELETE ON enrichment BEGIN
        INSERT INTO enrichment_fts (enrichment_fts, rowid, summary, keywords, entities)
            VALUES ('delete', old.rowid, old.summary, old.keywords, old.entities);
    END;
    CREATE TRIGGER IF NOT EXISTS enrichment_au AFTER UPDATE ON enrichment BEGIN
        INSERT INTO enrichment_fts (enrichment_fts, rowid, summary, keywords, entities)
            VALUES ('delete', old.rowid, old.summary, old.keywords, old.entities);
        INSERT INTO enrichment_fts (rowid, summary, keywords, entities)
            VALUES (new.rowid, new.summary, new.keywords, new.entities);
    END;
"""
# Keywords and entities are stored one per line: indexed as words, read back as lists.
_SEP = "\n"


class Enrichments:
    """The enrichment rows of one SQLite store."""

    def __init__(self, backend: SQLiteParts) -> None:
        self.backend = backend

    def put(
        self,
        doc_id: str,
        content_hash: str,
        model: str,
        at: float,
        *,
        fields: dict[str, Any] | None = None,
        error: str = "",
    ) -> None:
        data = fields or {}
        row = (
            doc_id,
            content_hash,
            "failed" if error else "done",
            data.get("summary", ""),
            _SEP.join(data.get("keywords", ())),
            _SEP.join(data.get("entities", ())),
            model,
            error,
            at,
        )
        with self.backend.transaction():
            if self.backend.get_document(doc_id, with_text=False) is None:
                return  # purged meanwhile: nothing to describe
            self.backend.conn.execute(
                "INSERT INTO enrichment (doc_id, content_hash, status, summary, keywords, "
                "entities, model, error, at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) "
                "ON CONFLICT (doc_id) DO UPDATE SET content_hash = excluded.content_hash, "
                "status = excluded.status, summary = excluded.summary, "
                "keywords = excluded.keywords, entities = excluded.entities, "
                "model = excluded.model, error = excluded.error, at = excluded.at",
                row,
            )

    def get(self, doc_id: str) -> dict[str, Any] | None:
        rows = self.backend.conn.execute(
            "SELECT e.status, e.summary, e.keywords, e.entities, e.model, e.error, "
            "e.content_hash = d.content_hash FROM enrichment e JOIN document d "
            "ON d.id = e.doc_id WHERE e.doc_id = ?",
            (doc_id,),
        )
        if not rows:
            return None
        status, summary, keywords, entities, model, error, current = rows[0]
        return {
            "status": status if current else "stale",
            "summary": summary,
            "keywords": [k for k in keywords.split(_SEP) if k],
            "entities": [e for e in entities.split(_SEP) if e],
            "model": model,
            "error": error,
        }

    def missing(self, limit: int = 1000) -> list[str]:
        """Live documents without a current, successful enrichment."""
        rows = self.backend.conn.execute(
            "SELECT d.id FROM document d LEFT JOIN enrichment e ON e.doc_id = d.id "
            "AND e.content_hash = d.content_hash AND e.status = 'done' "
            "WHERE e.doc_id IS NULL AND d.deleted_at IS NULL ORDER BY d.id LIMIT ?",
            (limit,),
        )
        return [str(r[0]) for r in rows]

    def any(self) -> bool:
        return bool(self.backend.conn.execute("SELECT 1 FROM enrichment_fts LIMIT 1"))

    def search(self, words: Sequence[str], limit: int) -> list[tuple[str, float, str]]:
        """(doc id, BM25 score, its enrichment as one line) of current enrichments that
        hold any of the words."""
        rows = self.backend.conn.execute(
            "SELECT e.doc_id, -bm25(enrichment_fts), concat_ws(' · ', nullif(e.summary, ''), "
            "nullif(replace(e.keywords, char(10), ', '), ''), "
            "nullif(replace(e.entities, char(10), ', '), '')) FROM enrichment_fts f "
            "JOIN enrichment e ON e.rowid = f.rowid JOIN document d ON d.id = e.doc_id "
            "WHERE enrichment_fts MATCH ? AND e.status = 'done' "
            "AND e.content_hash = d.content_hash ORDER BY bm25(enrichment_fts) LIMIT ?",
            (any_of(words), limit),
        )
        return [(str(r[0]), float(r[1]), str(r[2])) for r in rows]

    def counts(self, doc_ids: Sequence[str] = ()) -> dict[str, int]:
        rows = self.backend.conn.execute("SELECT status, count(*) FROM enrichment GROUP BY status")
        return {str(r[0]): int(r[1]) for r in rows}


def dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)
