"""The SQLite schema, built only by numbered migrations recorded in ``PRAGMA user_version``.

A migration is a function ``mNNN_name(conn)``; it runs once, in a transaction with the
version bump, so a file is always at exactly one schema version.
"""

from __future__ import annotations

from collections.abc import Callable

import apsw

from trove.backends import stemmer
from trove.backends.sqlite.bulk import BULK_SQL, NO_INSERT_TRIGGERS_SQL
from trove.backends.sqlite.chunk_text import m014_chunk_text_once
from trove.backends.sqlite.connection import SerializedConnection
from trove.backends.sqlite.enrich import ENRICHMENT_SQL
from trove.backends.sqlite.events import event_log_sql
from trove.backends.sqlite.files import FILE_STATE_SQL
from trove.backends.sqlite.in_order import m016_in_order_keys
from trove.backends.sqlite.originals import ORIGINALS_SQL
from trove.backends.sqlite.stats import TALLY_SQL
from trove.backends.sqlite.vector_index.codes import m015_vector_codes
from trove.errors import NotATroveStore, SchemaTooNew
from trove.search.cjk import cjk_text

# "TROV": marks the file as ours, so a foreign SQLite database is refused untouched.
APPLICATION_ID = 0x54524F56


def word_tokenizer(conn: apsw.Connection) -> apsw.FTS5Tokenizer:
    """The word index's tokenizer (``chunk_fts``, below), for tokenizing outside FTS5:
    snippets, and the in-memory word index that must count tokens exactly as FTS5 does."""
    return conn.fts5_tokenizer(stemmer.NAME, list(stemmer.ARGS))


def m001_initial(conn: apsw.Connection) -> None:
    conn.execute(
        """
        CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) STRICT;

        CREATE TABLE document (
            id TEXT PRIMARY KEY,
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
            expires_at REAL
        ) STRICT;
        CREATE INDEX document_source ON document (namespace, source, source_id);
        CREATE INDEX document_hash ON document (namespace, content_hash);
        CREATE INDEX document_time ON document (namespace, timestamp);
        CREATE INDEX document_updated ON document (namespace, updated_at);

        -- head = title + heading path: indexed with the chunk so titles are searchable.
        CREATE TABLE chunk (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            doc_id TEXT NOT NULL REFERENCES document (id) ON DELETE CASCADE,
            idx INTEGER NOT NULL,
            start_char INTEGER NOT NULL,
            end_char INTEGER NOT NULL,
            heading TEXT NOT NULL DEFAULT '',
            head TEXT NOT NULL DEFAULT '',
            text TEXT NOT NULL,
            text_hash TEXT NOT NULL,
            UNIQUE (doc_id, idx)
        ) STRICT;

        -- Both full-text indexes read their text from the chunk table (external content)
        -- and are kept in step by triggers, inside the writer's transaction.
        CREATE VIRTUAL TABLE chunk_fts USING fts5 (
            head, text, content='chunk', content_rowid='id',
            tokenize='porter unicode61 remove_diacritics 2'
        );
        CREATE VIRTUAL TABLE chunk_tri USING fts5 (
            head, text, content='chunk', content_rowid='id', tokenize='trigram'
        );
        CREATE TRIGGER chunk_ai AFTER INSERT ON chunk BEGIN
            INSERT INTO chunk_fts (rowid, head, text) VALUES (new.id, new.head, new.text);
            INSERT INTO chunk_tri (rowid, head, text) VALUES (new.id, new.head, new.text);
        END;
        CREATE TRIGGER chunk_ad AFTER DELETE ON chunk BEGIN
            INSERT INTO chunk_fts (chunk_fts, rowid, head, text)
                VALUES ('delete', old.id, old.head, old.text);
            INSERT INTO chunk_tri (chunk_tri, rowid, head, text)
                VALUES ('delete', old.id, old.head, old.text);
        END;

        CREATE TABLE edge (
            src TEXT NOT NULL REFERENCES document (id) ON DELETE CASCADE,
            dst TEXT NOT NULL REFERENCES document (id) ON DELETE CASCADE,
            type TEXT NOT NULL,
            weight REAL NOT NULL DEFAULT 1.0,
            created_at REAL NOT NULL,
            PRIMARY KEY (src, dst, type)
        ) STRICT;
        CREATE INDEX edge_dst ON edge (dst, type);
        """
    )


def m002_memory(conn: apsw.Connection) -> None:
    """Agent memory: session-scoped items, and paging newest first."""
    conn.execute(
        """
        ALTER TABLE document ADD COLUMN session_id TEXT NOT NULL DEFAULT '';
        CREATE INDEX document_created ON document (namespace, created_at, id);
        CREATE INDEX document_global ON document (scope) WHERE scope = 'global';
        """
    )


def m003_chunk_hash(conn: apsw.Connection) -> None:
    """Vectors are reused by chunk text hash: look them up by index, not by a scan."""
    conn.execute("CREATE INDEX chunk_hash ON chunk (text_hash)")


def m004_cjk_bigrams(conn: apsw.Connection) -> None:
    """CJK text gets a bigram index that only chunks holding CJK write to; the trigram
    index, which every chunk paid for (two thirds of ingest time), is dropped.

    ``chunk_cjk`` is contentless: its text is not the chunk's but the grams of it
    (:func:`trove.search.query.cjk_text`), written by the backend beside each chunk row;
    the delete trigger keeps it in step. ``chunk_fts_vocab`` lists the word index's terms,
    where partial words are looked up.
    """
    conn.execute(
        """
        CREATE VIRTUAL TABLE chunk_cjk USING fts5 (
            grams, content='', contentless_delete=1,
            tokenize='unicode61 remove_diacritics 2'
        );
        CREATE VIRTUAL TABLE chunk_fts_vocab USING fts5vocab (chunk_fts, 'row');
        DROP TRIGGER chunk_ai;
        DROP TRIGGER chunk_ad;
        DROP TABLE chunk_tri;
        CREATE TRIGGER chunk_ai AFTER INSERT ON chunk BEGIN
            INSERT INTO chunk_fts (rowid, head, text) VALUES (new.id, new.head, new.text);
        END;
        CREATE TRIGGER chunk_ad AFTER DELETE ON chunk BEGIN
            INSERT INTO chunk_fts (chunk_fts, rowid, head, text)
                VALUES ('delete', old.id, old.head, old.text);
            DELETE FROM chunk_cjk WHERE rowid = old.id;
        END;
        """
    )
    last = 0
    while True:  # a page at a time: a large store's text need not fit in memory
        rows = conn.execute(
            "SELECT id, head, text FROM chunk WHERE id > ? ORDER BY id LIMIT 2000", (last,)
        ).fetchall()
        if not rows:
            break
        for chunk_id, head, text in rows:
            last = int(str(chunk_id))
            grams = cjk_text(str(head), str(text))
            if grams is not None:
                conn.execute(
                    "INSERT INTO chunk_cjk (rowid, grams) VALUES (?, ?)", (chunk_id, grams)
                )


def m005_document_visible(conn: apsw.Connection) -> None:
    """Search turns ranked chunks into visible documents by id, hundreds a query: an index
    covering the visibility columns spares a read of each document row (which holds the
    text, and puts these columns after it). That step gets markedly faster."""
    conn.execute(
        "CREATE INDEX document_visible "
        "ON document (id, namespace, scope, session_id, deleted_at, expires_at)"
    )


def m006_file_stat(conn: apsw.Connection) -> None:
    """Ingest records each stored file's size and times with its hash, so that a file whose
    size and times have not changed since is known unchanged without being read (see
    :mod:`trove.ingest.known`). Keyed by file, not document: an mbox holds many."""
    conn.execute(
        """
        CREATE TABLE file_stat (
            namespace TEXT NOT NULL,
            source TEXT NOT NULL,
            path TEXT NOT NULL,
            size INTEGER NOT NULL,
            mtime_ns INTEGER NOT NULL,
            ctime_ns INTEGER NOT NULL,
            content_hash TEXT NOT NULL,
            PRIMARY KEY (namespace, source, path)
        ) STRICT, WITHOUT ROWID;
        """
    )


def m007_memory_fields(conn: apsw.Connection) -> None:
    """Agent memory (issue 16): confidence, compression, entities, source turns, canonical
    duplicates, use (count and last access), and entry control (which indexes hold an
    entry, and the texts they index). Importance now defaults to 0.5."""
    conn.execute(
        """
        ALTER TABLE document ADD COLUMN confidence REAL NOT NULL DEFAULT 1.0;
        ALTER TABLE document ADD COLUMN compression_level INTEGER NOT NULL DEFAULT 0;
        ALTER TABLE document ADD COLUMN entities TEXT NOT NULL DEFAULT '[]';
        ALTER TABLE document ADD COLUMN source_turn_ids TEXT NOT NULL DEFAULT '[]';
        ALTER TABLE document ADD COLUMN canonical_id TEXT;
        ALTER TABLE document ADD COLUMN access_count INTEGER NOT NULL DEFAULT 0;
        ALTER TABLE document ADD COLUMN last_accessed REAL;
        ALTER TABLE document ADD COLUMN indexed TEXT NOT NULL DEFAULT 'both';
        ALTER TABLE document ADD COLUMN keyword_text TEXT;
        ALTER TABLE document ADD COLUMN semantic_text TEXT;
        UPDATE document SET importance = 0.5 WHERE importance IS NULL;
        CREATE INDEX document_canonical ON document (canonical_id)
            WHERE canonical_id IS NOT NULL;

        -- A cluster's fields other than its id live in one JSON object (see
        -- trove.memory.clusters); its members are rows, gone with their document.
        CREATE TABLE cluster (
            id TEXT PRIMARY KEY,
            namespace TEXT NOT NULL,
            data TEXT NOT NULL
        ) STRICT;
        CREATE TABLE cluster_member (
            cluster_id TEXT NOT NULL REFERENCES cluster (id) ON DELETE CASCADE,
            doc_id TEXT NOT NULL REFERENCES document (id) ON DELETE CASCADE,
            added_at REAL NOT NULL,
            PRIMARY KEY (cluster_id, doc_id)
        ) STRICT;
        CREATE INDEX cluster_member_doc ON cluster_member (doc_id);
        """
    )


def m008_agent_loop(conn: apsw.Connection) -> None:
    """The agent loop (issue 17). An event log: every committed change of a document, for
    live events across processes; triggers write it in the writer's own transaction, so a
    rolled-back write logs nothing and every process writing the file is heard (see
    :mod:`trove.live`). And write-time enrichment beside each document, indexed on its
    own (see :mod:`trove.backends.sqlite.enrich`). Idempotent (IF NOT EXISTS): a file
    whose version was set back re-runs it harmlessly."""
    conn.execute(event_log_sql())
    conn.execute(ENRICHMENT_SQL)


def m009_originals(conn: apsw.Connection) -> None:
    """Originals (issue 19): the source bytes of a document, content-addressed (one row
    per distinct content), and which document holds which. A blob goes with the last
    document that refers to it: the triggers keep that true on every path that removes a
    document row (purge, clear, purge by id), so no caller has to remember."""
    conn.execute(ORIGINALS_SQL)


def m010_file_state(conn: apsw.Connection) -> None:
    """File state in one table (issue 13): the hashes ingest kept in ``meta`` move into
    ``file_stat`` (see :mod:`trove.backends.sqlite.files`)."""
    conn.execute(FILE_STATE_SQL)


def m011_tally(conn: apsw.Connection) -> None:
    """Counts without scans (issue 14): documents, chunks and text bytes per namespace,
    session, source, type and deleted flag, kept by triggers; an index of the documents
    that can expire (see :mod:`trove.backends.sqlite.stats`). Fills the tally from the
    rows already there (one scan, once)."""
    conn.execute(TALLY_SQL)


def m012_bulk_batch(conn: apsw.Connection) -> None:
    """Bulk writes (issue 14): a batch of new chunks fills the word index and the chunk
    tally in one statement each, and their per-row triggers skip it (see
    :mod:`trove.backends.sqlite.bulk`)."""
    conn.execute(BULK_SQL)


def m013_no_insert_triggers(conn: apsw.Connection) -> None:
    """Bulk writes (issue 14): documents and chunks have no insert triggers; every insert
    counts, logs and indexes its rows in one statement a batch (see
    :mod:`trove.backends.sqlite.bulk`): a trigger made SQLite journal each row's pages."""
    conn.execute(NO_INSERT_TRIGGERS_SQL)


MIGRATIONS: list[Callable[[apsw.Connection], None]] = [
    m001_initial,
    m002_memory,
    m003_chunk_hash,
    m004_cjk_bigrams,
    m005_document_visible,
    m006_file_stat,
    m007_memory_fields,
    m008_agent_loop,
    m009_originals,
    m010_file_state,
    m011_tally,
    m012_bulk_batch,
    m013_no_insert_triggers,
    m014_chunk_text_once,
    m015_vector_codes,
    m016_in_order_keys,
]
LATEST_VERSION = len(MIGRATIONS)
# Migrations that rebuild a table others reference: they run with foreign keys off (a
# dropped parent table would cascade), as SQLite's way to change a table's columns asks,
# and check the keys themselves.
_REBUILDS_PARENT = {m016_in_order_keys}


def migrate(conn: apsw.Connection, current: int) -> None:
    """Bring a file from ``current`` to ``LATEST_VERSION``, one transaction per step.

    Each step takes the write lock first and re-reads the version, so two connections
    opening a new file at once do not both create it.
    """
    for version in range(current + 1, LATEST_VERSION + 1):
        step = MIGRATIONS[version - 1]
        keys = next(conn.execute("PRAGMA foreign_keys"))[0]
        if step in _REBUILDS_PARENT:  # outside a transaction, or it does nothing
            conn.execute("PRAGMA foreign_keys = OFF")
        try:
            _step(conn, version, step)
        finally:
            conn.execute(f"PRAGMA foreign_keys = {int(keys)}")


def _step(conn: apsw.Connection, version: int, step: Callable[[apsw.Connection], None]) -> None:
    conn.execute("BEGIN IMMEDIATE")
    try:
        done = next(conn.execute("PRAGMA user_version"))[0] >= version
        if not done:
            step(conn)
            conn.execute(f"PRAGMA application_id = {APPLICATION_ID}")
            conn.execute(f"PRAGMA user_version = {version}")
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")


def check_is_trove(conn: SerializedConnection, path: str) -> int:
    """Schema version of the file; refuses foreign and newer files before any write."""
    # One statement, so one snapshot: another connection may be creating the file.
    [row] = conn.execute(
        "SELECT (SELECT application_id FROM pragma_application_id), "
        "(SELECT user_version FROM pragma_user_version), (SELECT count(*) FROM sqlite_schema)"
    )
    app_id, version, objects = row[0], int(row[1]), row[2]
    if app_id != APPLICATION_ID:
        if objects:
            raise NotATroveStore(
                f"{path} is a SQLite database but not a trove store; "
                "give trove a new path or a trove file"
            )
        return 0
    if version > LATEST_VERSION:
        raise SchemaTooNew(
            f"{path} has schema version {version}, newer than this trove "
            f"understands ({LATEST_VERSION}); upgrade trove to open it"
        )
    return version
