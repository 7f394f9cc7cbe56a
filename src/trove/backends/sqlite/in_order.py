"""Keys in insertion order (schema 16): a batch of new documents writes few pages.

A document's id is a hash (ids.py), so every index keyed by it puts a new document on a
random page: into 1M chunks, one 1,000-document batch dirtied ~5,400 pages, about one a
document for each of four such indexes (docs/benchmarks.md, issue 33). Schema 16 keys
everything but the id itself by a number given in insertion order:

- ``document.seq``, the table's ``INTEGER PRIMARY KEY`` (its rowid, never changed by
  ``VACUUM``): new documents get the next numbers, so their rows share the last pages.
  The id keeps its own unique index (the one random page a new document must write): the
  public id, what other tables reference and every look-up by id goes through.
- ``document_visible``, the covering index of the visibility columns that search reads
  for its ranked chunks, is keyed by ``seq``, not the id.
- ``chunk.doc``: the ``seq`` of the chunk's document, whose foreign key (with its cascade)
  and unique ``(doc, idx)`` key replace those of the text ``doc_id``. ``doc_id`` stays in
  the row, unindexed, for the many reads that want the public id; every read of a
  document's chunks goes by ``doc``.

The tally's triggers that count or find chunks by document (stats.py) move to ``doc`` and
``seq``. ``trove check`` verifies that each chunk's ``doc_id`` is its document's id.
"""

from __future__ import annotations

import apsw

from trove.backends.sqlite.stats import IN_ORDER_TALLY_SQL
from trove.errors import StoreError

_DOCUMENT_COLUMNS = (
    "id, namespace, scope, source, source_id, dedupe_key, doc_type, title, author, "
    "participants, timestamp, url, thread_id, channel, tags, metadata, text, content_hash, "
    "importance, author_tier, created_at, updated_at, deleted_at, expires_at, session_id, "
    "confidence, compression_level, entities, source_turn_ids, canonical_id, access_count, "
    "last_accessed, indexed, keyword_text, semantic_text"
)
# Schema 15's columns in their order (``SELECT *`` stays as it was), and ``seq``.
_DOCUMENT_SQL = """
CREATE TABLE document_new (
    id TEXT NOT NULL UNIQUE,
    namespace TEXT NOT NULL,
    scope TEXT NOT NULL DEFAULT 'workspace',
    source TEXT NOT NULL DEFAULT '',
    source_id TEXT,
    dedupe_key TEXT,
    doc_type TEXT NOT NULL DEFAULT '',
    title TEXT NOT NULL DEFAULT '',
    author TEXT NOT NULL DEFAULT '',
    participants TEXT NOT NULL DEFAULT '[]',
    timestamp REAL,
    url TEXT NOT NULL DEFAULT '',
    thread_id TEXT NOT NULL DEFAULT '',
    channel TEXT NOT NULL DEFAULT '',
    tags TEXT NOT NULL DEFAULT '[]',
    metadata TEXT NOT NULL DEFAULT '{}',
    text TEXT NOT NULL,
    content_hash TEXT NOT NULL,
    importance REAL,
    author_tier TEXT NOT NULL DEFAULT '',
    created_at REAL NOT NULL,
    updated_at REAL NOT NULL,
    deleted_at REAL,
    expires_at REAL,
    session_id TEXT NOT NULL DEFAULT '',
    confidence REAL NOT NULL DEFAULT 1.0,
    compression_level INTEGER NOT NULL DEFAULT 0,
    entities TEXT NOT NULL DEFAULT '[]',
    source_turn_ids TEXT NOT NULL DEFAULT '[]',
    canonical_id TEXT,
    access_count INTEGER NOT NULL DEFAULT 0,
    last_accessed REAL,
    indexed TEXT NOT NULL DEFAULT 'both',
    keyword_text TEXT,
    semantic_text TEXT,
    seq INTEGER PRIMARY KEY
) STRICT;
"""
_CHUNK_COLUMNS = "id, doc_id, idx, start_char, end_char, heading, head, text, text_hash"
_CHUNK_SQL = """
CREATE TABLE chunk_new (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    doc_id TEXT NOT NULL,
    idx INTEGER NOT NULL,
    start_char INTEGER NOT NULL,
    end_char INTEGER NOT NULL,
    heading TEXT NOT NULL DEFAULT '',
    head TEXT NOT NULL DEFAULT '',
    text TEXT,
    text_hash TEXT NOT NULL,
    doc INTEGER NOT NULL REFERENCES document (seq) ON DELETE CASCADE,
    UNIQUE (doc, idx)
) STRICT;
"""
# A document's seq by its id (``?``), and the seqs of a JSON array of ids: how a read of
# documents' chunks by id finds them.
SEQ_OF_ID = "(SELECT seq FROM document WHERE id = ?)"
SEQS_OF_IDS = "SELECT seq FROM document WHERE id IN (SELECT value FROM json_each(?))"
VISIBLE_SQL = (
    "CREATE INDEX document_visible "
    "ON document (seq, namespace, scope, session_id, deleted_at, expires_at)"
)
# Made again with the new bodies (stats.py), not copied; chunk_hash before the copy.
_REPLACED = {
    "document_visible",
    "doc_tally_bd",
    "chunk_tally_au",
    "chunk_tally_ad",
    "chunk_hash",
}


def m016_in_order_keys(conn: apsw.Connection) -> None:
    """Schema 16: the document table rebuilt with ``seq`` as its rowid (the rowids it had),
    the chunk table with ``doc``; their other indexes and triggers made again as they
    were, and those named in ``_REPLACED`` made anew. The text hash's index is filled row
    by row, as writes leave it, not packed by ``CREATE INDEX``: packed full, its pages
    split at the next writes, ~3.6 pages a new chunk into 1M chunks (1.4 otherwise).
    Runs with foreign keys off (schema.py: dropping the old document table must not
    cascade), and checks the chunks' before it ends. Runs again harmlessly on a file
    already at 16 (its version set back)."""
    kept = [
        str(sql)
        for name, sql in conn.execute(
            "SELECT name, sql FROM sqlite_schema WHERE tbl_name IN ('document', 'chunk') "
            "AND type IN ('index', 'trigger') AND sql IS NOT NULL"
        )
        if name not in _REPLACED
    ]
    seq = conn.execute("SELECT seq FROM sqlite_sequence WHERE name = 'chunk'").fetchall()
    # The replaced triggers go first: made again below, for either shape of the tables.
    conn.execute(
        "DROP TRIGGER IF EXISTS doc_tally_bd; DROP TRIGGER IF EXISTS chunk_tally_au; "
        "DROP TRIGGER IF EXISTS chunk_tally_ad;"
    )
    # A chunk without its document (written by a tool without foreign keys) has no seq to
    # take: it goes, through its triggers (its words, its vector), not silently (the
    # tally counts it nowhere already).
    conn.execute("DELETE FROM chunk WHERE doc_id NOT IN (SELECT id FROM document)")
    conn.execute(
        f"""
        {_DOCUMENT_SQL}
        INSERT INTO document_new ({_DOCUMENT_COLUMNS}, seq)
            SELECT {_DOCUMENT_COLUMNS}, rowid FROM document ORDER BY rowid;
        {_CHUNK_SQL}
        DROP INDEX IF EXISTS chunk_hash;
        CREATE INDEX chunk_hash ON chunk_new (text_hash);
        INSERT INTO chunk_new ({_CHUNK_COLUMNS}, doc)
            SELECT {", ".join(f"c.{c}" for c in _CHUNK_COLUMNS.split(", "))}, d.seq
            FROM chunk c JOIN document_new d ON d.id = c.doc_id ORDER BY c.id;
        DROP TABLE chunk;
        DROP TABLE document;
        """
    )
    # Triggers of other tables name both tables, gone for the moment: the renames must not
    # parse them (SQLite's own twelve-step way to change a table's columns).
    conn.execute("PRAGMA legacy_alter_table = ON")
    try:
        conn.execute("ALTER TABLE document_new RENAME TO document")
        conn.execute("ALTER TABLE chunk_new RENAME TO chunk")
    finally:
        conn.execute("PRAGMA legacy_alter_table = OFF")
    for sql in kept:
        conn.execute(sql)
    conn.execute(VISIBLE_SQL)
    conn.execute(IN_ORDER_TALLY_SQL)
    if seq:  # the rename took chunk_new's counter (if it had one): at least the old one
        conn.execute("DELETE FROM sqlite_sequence WHERE name = 'chunk'")
        conn.execute(
            "INSERT INTO sqlite_sequence (name, seq) "
            "VALUES ('chunk', max(?, (SELECT coalesce(max(id), 0) FROM chunk)))",
            (seq[0][0],),
        )
    # The renames with foreign keys off must leave the chunks' key pointing at documents
    # (other tables' references are as they were: their own business).
    broken = conn.execute("PRAGMA foreign_key_check(chunk)").fetchall()
    if broken:
        raise StoreError(
            f"schema 16: {len(broken)} chunks refer to no document "
            f"(first: {broken[0]}); the store is left at schema 15"
        )


def chunk_doc_problems(conn: apsw.Connection) -> list[str]:
    """Chunks whose ``doc_id`` is not the id of their document (``doc``)."""
    [(count,)] = conn.execute(
        "SELECT count(*) FROM chunk c JOIN document d ON d.seq = c.doc WHERE d.id <> c.doc_id"
    )
    return [f"chunk: {count} chunks name a document other than theirs"] if count else []
