"""The PostgreSQL schema of one store, built only by numbered migrations.

A store lives in its own schema (``?schema=NAME``), so several stores share a database.
Each migration ``mNNN_name(conn)`` runs once, in one transaction with the row that
records it in ``trove_migrations``; an advisory lock keeps two processes that open a new
store at the same moment from both building it.
"""

from __future__ import annotations

from collections.abc import Callable

import psycopg
from psycopg import sql

from trove.backends.postgres import locks
from trove.backends.postgres.files import M006
from trove.backends.postgres.originals import M005
from trove.backends.postgres.postings import m007_postings, m008_posting_log
from trove.errors import NotATroveStore, SchemaTooNew, StoreError

# Times are epoch seconds (double precision) exactly as in the SQLite file, so cursors,
# range filters and round trips behave the same on both backends.
M001 = """
CREATE TABLE meta (key text PRIMARY KEY, value text NOT NULL);

CREATE TABLE document (
    id text PRIMARY KEY,
    namespace text NOT NULL,
    scope text NOT NULL DEFAULT 'workspace',
    session_id text NOT NULL DEFAULT '',
    source text NOT NULL DEFAULT '',
    source_id text,
    dedupe_key text,
    doc_type text NOT NULL DEFAULT '',
    title text NOT NULL DEFAULT '',
    author text NOT NULL DEFAULT '',
    participants text[] NOT NULL DEFAULT '{}',
    timestamp double precision,
    url text NOT NULL DEFAULT '',
    thread_id text NOT NULL DEFAULT '',
    channel text NOT NULL DEFAULT '',
    tags text[] NOT NULL DEFAULT '{}',
    -- metadata: the JSON text exactly as written (jsonb would reorder keys and turn 1e100
    -- into an integer); meta: the same as jsonb, for filters only.
    metadata text NOT NULL DEFAULT '{}',
    meta jsonb NOT NULL DEFAULT '{}',
    text text NOT NULL,
    text_bytes bigint NOT NULL,
    content_hash text NOT NULL,
    importance double precision,
    author_tier text NOT NULL DEFAULT '',
    created_at double precision NOT NULL,
    updated_at double precision NOT NULL,
    deleted_at double precision,
    expires_at double precision
);
CREATE INDEX document_source ON document (namespace, source, source_id);
CREATE INDEX document_hash ON document (namespace, content_hash);
CREATE INDEX document_time ON document (namespace, timestamp);
CREATE INDEX document_updated ON document (namespace, updated_at);
CREATE INDEX document_created ON document (namespace, created_at, id);
CREATE INDEX document_global ON document (scope) WHERE scope = 'global';
CREATE INDEX document_tags ON document USING gin (tags);

-- words: stemmed words of head + text; grams: CJK unigrams and bigrams. Both are written
-- by the writer in the same statement as the chunk, with their token counts for BM25.
CREATE TABLE chunk (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    doc_id text NOT NULL REFERENCES document (id) ON DELETE CASCADE,
    idx integer NOT NULL,
    start_char bigint NOT NULL,
    end_char bigint NOT NULL,
    heading text NOT NULL DEFAULT '',
    head text NOT NULL DEFAULT '',
    text text NOT NULL,
    text_hash text NOT NULL,
    words tsvector NOT NULL,
    words_len integer NOT NULL,
    grams tsvector NOT NULL,
    grams_len integer NOT NULL,
    UNIQUE (doc_id, idx)
);
CREATE INDEX chunk_words ON chunk USING gin (words);
CREATE INDEX chunk_grams ON chunk USING gin (grams);
CREATE INDEX chunk_hash ON chunk (text_hash);

CREATE TABLE edge (
    src text NOT NULL REFERENCES document (id) ON DELETE CASCADE,
    dst text NOT NULL REFERENCES document (id) ON DELETE CASCADE,
    type text NOT NULL,
    weight double precision NOT NULL DEFAULT 1.0,
    created_at double precision NOT NULL,
    PRIMARY KEY (src, dst, type)
);
CREATE INDEX edge_dst ON edge (dst, type);
"""

# English stemming without a stop list: trove drops stop words from queries itself, and a
# query made only of stop words ("OR") must still find the documents that contain them.
M002 = """
CREATE TEXT SEARCH DICTIONARY trove_stem (TEMPLATE = pg_catalog.snowball, language = english);
CREATE TEXT SEARCH CONFIGURATION trove_words (COPY = pg_catalog.english);
ALTER TEXT SEARCH CONFIGURATION trove_words
    ALTER MAPPING REPLACE pg_catalog.english_stem WITH trove_stem;
"""


# What ingest saw of each file it stored (see trove.ingest.known); keyed by file.
M003 = """
CREATE TABLE file_stat (
    namespace text NOT NULL,
    source text NOT NULL,
    path text NOT NULL,
    size bigint NOT NULL,
    mtime_ns bigint NOT NULL,
    ctime_ns bigint NOT NULL,
    content_hash text NOT NULL,
    PRIMARY KEY (namespace, source, path)
);
"""


# Agent memory (issue 16); the same columns as SQLite's m007_memory_fields.
M004 = """
ALTER TABLE document
    ADD COLUMN confidence double precision NOT NULL DEFAULT 1.0,
    ADD COLUMN compression_level integer NOT NULL DEFAULT 0,
    ADD COLUMN entities text[] NOT NULL DEFAULT '{}',
    ADD COLUMN source_turn_ids text[] NOT NULL DEFAULT '{}',
    ADD COLUMN canonical_id text,
    ADD COLUMN access_count bigint NOT NULL DEFAULT 0,
    ADD COLUMN last_accessed double precision,
    ADD COLUMN indexed text NOT NULL DEFAULT 'both',
    ADD COLUMN keyword_text text,
    ADD COLUMN semantic_text text;
UPDATE document SET importance = 0.5 WHERE importance IS NULL;
CREATE INDEX document_canonical ON document (canonical_id) WHERE canonical_id IS NOT NULL;
CREATE INDEX document_entities ON document USING gin (entities);

CREATE TABLE cluster (
    id text PRIMARY KEY,
    namespace text NOT NULL,
    data text NOT NULL
);
CREATE TABLE cluster_member (
    cluster_id text NOT NULL REFERENCES cluster (id) ON DELETE CASCADE,
    doc_id text NOT NULL REFERENCES document (id) ON DELETE CASCADE,
    added_at double precision NOT NULL,
    PRIMARY KEY (cluster_id, doc_id)
);
CREATE INDEX cluster_member_doc ON cluster_member (doc_id);
"""


def m001_initial(conn: psycopg.Connection) -> None:
    conn.execute(M001)


def m002_text_search(conn: psycopg.Connection) -> None:
    conn.execute(M002)


def m003_file_stat(conn: psycopg.Connection) -> None:
    conn.execute(M003)


def m004_memory_fields(conn: psycopg.Connection) -> None:
    conn.execute(M004)


def m005_originals(conn: psycopg.Connection) -> None:
    conn.execute(M005)


def m006_file_state(conn: psycopg.Connection) -> None:
    conn.execute(M006)


MIGRATIONS: list[Callable[[psycopg.Connection], None]] = [
    m001_initial,
    m002_text_search,
    m003_file_stat,
    m004_memory_fields,
    m005_originals,
    m006_file_state,
    m007_postings,
    m008_posting_log,
]
LATEST_VERSION = len(MIGRATIONS)


def migrate(conn: psycopg.Connection, schema: str) -> int:
    """Create or upgrade ``schema`` to ``LATEST_VERSION``; returns the version it is at.

    A schema that exists with tables but without trove's record is refused untouched, as
    is one recorded by a newer trove.
    """
    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(%s, hashtext(%s))", (locks.MIGRATIONS, schema))
        version = _version(conn, schema)
        if version > LATEST_VERSION:
            raise SchemaTooNew(
                f"schema {schema} has trove schema version {version}, newer than this trove "
                f"understands ({LATEST_VERSION}); upgrade trove to open it"
            )
        if version == LATEST_VERSION:
            return version
        ident = sql.Identifier(schema)
        conn.execute(sql.SQL("CREATE SCHEMA IF NOT EXISTS {}").format(ident))
        conn.execute(
            sql.SQL(
                "CREATE TABLE IF NOT EXISTS {}.trove_migrations (version integer PRIMARY KEY, "
                "name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())"
            ).format(ident)
        )
        for number in range(version + 1, LATEST_VERSION + 1):
            step = MIGRATIONS[number - 1]
            with conn.transaction():
                step(conn)
                conn.execute(
                    sql.SQL(
                        "INSERT INTO {}.trove_migrations (version, name) VALUES (%s, %s)"
                    ).format(ident),
                    (number, _name(number)),
                )
    return LATEST_VERSION


def current_version(conn: psycopg.Connection, schema: str) -> int:
    return _version(conn, schema)


def _version(conn: psycopg.Connection, schema: str) -> int:
    tables = {
        str(r[0])
        for r in conn.execute(
            "SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
            "WHERE n.nspname = %s AND c.relkind IN ('r', 'p', 'v')",
            (schema,),
        )
    }
    if "trove_migrations" not in tables:
        if tables:
            raise NotATroveStore(
                f"schema {schema} holds tables but is not a trove store; "
                "choose another schema with ?schema=NAME"
            )
        return 0
    row = conn.execute(
        sql.SQL("SELECT coalesce(max(version), 0) FROM {}.trove_migrations").format(
            sql.Identifier(schema)
        )
    ).fetchone()
    return int(row[0]) if row else 0


def _name(number: int) -> str:
    step = MIGRATIONS[number - 1]
    return getattr(step, "__name__", f"m{number:03d}")


def ensure_vector_extension(conn: psycopg.Connection) -> tuple[str, str]:
    """pgvector's schema and version, creating the extension if this role may."""
    row = conn.execute(
        "SELECT n.nspname, e.extversion FROM pg_extension e "
        "JOIN pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = 'vector'"
    ).fetchone()
    if row is not None:
        return str(row[0]), str(row[1])
    try:
        with conn.transaction():
            conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
    except psycopg.errors.InsufficientPrivilege:
        raise StoreError(
            "the pgvector extension is not installed in this database and this role may not "
            "create it; ask an administrator to run CREATE EXTENSION vector"
        ) from None
    except psycopg.errors.FeatureNotSupported as exc:
        raise StoreError(f"pgvector is not available on this server: {exc}") from None
    except psycopg.errors.UndefinedFile:
        raise StoreError(
            "pgvector is not available on this server (no vector extension files); "
            "install pgvector, see https://github.com/pgvector/pgvector"
        ) from None
    return ensure_vector_extension(conn)
