"""Documents and their chunks in a few statements: every insert of a row, one or a batch.

Row by row, a batch of new one-chunk documents cost six statements each; here a batch is
one ``executemany`` per table, one read of the replaced documents' old chunk ids and one
delete. Chunk ids are given explicitly, from the table's AUTOINCREMENT counter, so they
are known without a round trip per row: the caller holds the write transaction
(``BEGIN IMMEDIATE``), so no other writer can take them, and an explicit id above the
counter moves it on (ids are still never reused, which the index caches rely on).

A new document is counted (stats.py) and logged (events.py), and a new chunk indexed and
counted, by one statement each for all the rows of a batch, which this module runs after
the rows: new chunks are found by their ids, new documents as the rows after the largest
rowid before them (SQLite gives a new row the next one). Schema 12 did this with insert
triggers that a batch skipped; schema 13 has none, because a trigger, even one whose
condition skips it, makes SQLite journal the pages each row touches for that row's
statement: half the time of a bulk write. So every insert of a document or chunk row
goes through here (:func:`write_documents`, :func:`insert_chunks`): the backend's
``put_document``, ``replace_chunks`` and ``put_many``. The closing statements run even
when a row failed (the rows before it are done, in the caller's transaction). Should the
statements themselves fail, the rows must not be committed unindexed: the connection is
marked broken and its transaction can only roll back (backend.py), whoever swallowed the
error. (A savepoint that undid just the batch cost the same journaling as a trigger, once
a page: into 1M chunks, two more syscalls for most pages a batch touched.) Updates,
deletes and every other write path go through their triggers as before.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from operator import itemgetter
from typing import TYPE_CHECKING, Any

from trove.backends.rows import CHUNK_COLUMNS
from trove.backends.sqlite.chunk_text import TEXT_OF_C, chunk_params
from trove.backends.sqlite.connection import SerializedConnection
from trove.backends.sqlite.events import WRITTEN_SQL, written_trigger_sql
from trove.backends.sqlite.stats import ADDED_SQL, added_trigger_sql
from trove.models import Document
from trove.search.cjk import cjk_text

if TYPE_CHECKING:  # only in signatures: opening a store makes neither dataclass
    from trove.backends.writes import ChunkRow, DocumentWrite

_PART = 500  # ids per IN (...) list, well under SQLite's parameter limit

_SESSION = "CASE WHEN d.scope = 'session' THEN '=' || d.session_id ELSE '' END"
_SKIP = "WHEN NOT EXISTS (SELECT 1 FROM bulk_batch)"
# Schema 12 (schema.py runs it; kept as it was, for files that migrate through it): the
# table, and the insert triggers of documents and chunks (schemas 4, 8 and 11: events.py,
# stats.py) again, each skipped during a batch. And two indexes of schema 1 that no query
# reads go: each cost a document write about a tenth of its time, and the one by content
# hash a page write per document in a large store (its keys are random).
BULK_SQL = f"""
CREATE TABLE IF NOT EXISTS bulk_batch (open INTEGER NOT NULL) STRICT;
DROP INDEX IF EXISTS document_hash;
DROP INDEX IF EXISTS document_updated;
DROP TRIGGER IF EXISTS chunk_ai;
CREATE TRIGGER chunk_ai AFTER INSERT ON chunk {_SKIP} BEGIN
    INSERT INTO chunk_fts (rowid, head, text) VALUES (new.id, new.head, new.text);
END;
DROP TRIGGER IF EXISTS doc_tally_ai;
{added_trigger_sql(_SKIP)}
DROP TRIGGER IF EXISTS document_event_ai;
{written_trigger_sql(_SKIP)}
DROP TRIGGER IF EXISTS chunk_tally_ai;
CREATE TRIGGER chunk_tally_ai AFTER INSERT ON chunk {_SKIP} BEGIN
    INSERT INTO chunk_tally SELECT d.namespace, {_SESSION}, 1
    FROM document d INDEXED BY document_visible WHERE d.id = NEW.doc_id
    ON CONFLICT DO UPDATE SET chunks = chunks + 1;
END;
"""
# Schema 13: the insert triggers go, with the table that skipped them; this module does
# their work for every insert.
NO_INSERT_TRIGGERS_SQL = """
DROP TRIGGER IF EXISTS chunk_ai;
DROP TRIGGER IF EXISTS chunk_tally_ai;
DROP TRIGGER IF EXISTS doc_tally_ai;
DROP TRIGGER IF EXISTS document_event_ai;
DROP TABLE IF EXISTS bulk_batch;
"""
# What the chunk insert triggers did, for the chunks with ids ?1 to ?2.
_WORDS = (
    "INSERT INTO chunk_fts (rowid, head, text) "
    f"SELECT c.id, c.head, {TEXT_OF_C} FROM chunk c WHERE c.id BETWEEN ?1 AND ?2"
)
_TALLY = (
    f"INSERT INTO chunk_tally SELECT d.namespace, {_SESSION}, count(*) "
    "FROM chunk c JOIN document d INDEXED BY document_visible ON d.seq = c.doc "
    "WHERE c.id BETWEEN ?1 AND ?2 GROUP BY 1, 2 "
    "ON CONFLICT DO UPDATE SET chunks = chunks + excluded.chunks"
)
# A chunk's ``doc`` is its document's ``seq`` (in_order.py), found by the id (?2) on the
# page the document's write just read.
_CHUNK_SQL = (
    f"INSERT INTO chunk (id, {CHUNK_COLUMNS}, doc) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, "
    "(SELECT seq FROM document WHERE id = ?2))"
)
_DOCS_COUNTED = (
    "INSERT INTO doc_tally VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO UPDATE "
    "SET docs = docs + excluded.docs, text_bytes = text_bytes + excluded.text_bytes"
)
_TALLY_COUNTED = (
    "INSERT INTO chunk_tally VALUES (?, ?, ?) "
    "ON CONFLICT DO UPDATE SET chunks = chunks + excluded.chunks"
)


def put_many(
    conn: SerializedConnection,
    writes: Sequence[DocumentWrite],
    columns: Sequence[str],
    row: Callable[[Document], dict[str, Any]],
) -> tuple[list[int], list[int]]:
    """Write documents (and, where ``reindex``, replace their chunks); returns (old chunk
    ids, new chunk ids in the order of ``writes`` and their chunks)."""
    names, marks = ", ".join(columns), ", ".join("?" * len(columns))
    new = [w.doc for w in writes if w.fresh]
    if new:
        write_documents(
            conn,
            f"INSERT INTO document ({names}) VALUES ({marks})",
            list(map(itemgetter(*columns), map(row, new))),
            new,
        )
    full = [w.doc for w in writes if w.reindex and not w.fresh]
    if full:
        write_documents(conn, upsert_sql(columns), list(map(itemgetter(*columns), map(row, full))))
    header = [w.doc for w in writes if not w.reindex]
    if header:
        kept = [c for c in columns if c not in ("id", "text")]
        sets = ", ".join(f"{c} = ?" for c in kept)
        values = [row(doc) for doc in header]
        conn.executemany(
            f"UPDATE document SET {sets} WHERE id = ?",
            [(*(v[c] for c in kept), v["id"]) for v in values],
        )
    dropped = _drop_chunks(conn, [w.doc.id for w in writes if w.reindex and not w.fresh])
    chunks = [(w.doc.id, _tally_key(w.doc), w.chunks, w.doc.text) for w in writes if w.reindex]
    return dropped, _insert_chunks(conn, chunks)


def upsert_sql(columns: Sequence[str]) -> str:
    """Insert documents, or update those whose id is stored."""
    updates = ", ".join(f"{c} = excluded.{c}" for c in columns if c != "id")
    return (
        f"INSERT INTO document ({', '.join(columns)}) VALUES ({', '.join('?' * len(columns))}) "
        f"ON CONFLICT (id) DO UPDATE SET {updates}"
    )


def write_documents(
    conn: SerializedConnection,
    sql: str,
    rows: Sequence[tuple[Any, ...]],
    new: Sequence[Document] | None = None,
) -> None:
    """Run ``sql``, an insert (or upsert) of document rows, for each of ``rows``, then count
    and log the documents it added: the rows after the largest rowid before them.
    ``new``: the documents of ``rows`` when each is new, counted from themselves."""
    last = conn.execute("SELECT coalesce(max(rowid), 0) FROM document")[0][0]
    _batch(
        conn,
        lambda: conn.executemany(sql, rows),
        [(WRITTEN_SQL[0], (last,)), (WRITTEN_SQL[1], ()), (ADDED_SQL, (last,))],
        None if new is None else lambda: conn.executemany(_DOCS_COUNTED, _doc_tally(new)),
    )


def insert_chunks(conn: SerializedConnection, doc_id: str, rows: Sequence[ChunkRow]) -> list[int]:
    """Add chunks of a stored document (indexed and counted); returns their ids."""
    found = conn.execute("SELECT text FROM document WHERE id = ?", (doc_id,))
    return _insert_chunks(conn, [(doc_id, None, rows, str(found[0][0]) if found else None)])


def _tally_key(doc: Document) -> tuple[str, str]:
    """The chunk tally's key of a document's chunks (stats.py)."""
    return doc.namespace, "=" + doc.session_id if doc.scope == "session" else ""


def _doc_tally(docs: Sequence[Document]) -> list[tuple[Any, ...]]:
    """The document tally's rows for new documents (stats.py's key), from the documents
    themselves: ``ADDED_SQL`` reads each text back (a copy of a 50 MB one)."""
    counts: dict[tuple[Any, ...], list[int]] = {}
    for d in docs:
        session = "=" + d.session_id if d.scope == "session" else ""
        key = (d.namespace, session, d.source, d.doc_type, int(d.deleted_at is not None))
        size = len(d.text) if d.text.isascii() else len(d.text.encode("utf-8"))
        tally = counts.setdefault(key, [0, 0])
        tally[0] += 1
        tally[1] += size
    return [(*key, docs, size) for key, (docs, size) in counts.items()]


def _batch(
    conn: SerializedConnection,
    write: Callable[[], None],
    then: Sequence[tuple[str, tuple[Any, ...]]],
    tally: Callable[[], None] | None = None,
) -> None:
    """``write``, then ``then``'s statements, which do for its rows what insert triggers
    would: even when a row of ``write`` failed (the rows before it stay in the caller's
    transaction, indexed and counted). ``tally``: a cheaper last statement when every row
    was written. Should those statements fail, the transaction is broken: it rolls back,
    rows and all, never committing them unindexed and uncounted."""
    failure: BaseException | None = None
    try:
        write()
    except BaseException as e:
        failure = e
    try:
        for sql, params in then[:-1] if tally is not None and failure is None else then:
            conn.execute(sql, params)
        if tally is not None and failure is None:
            tally()
    except BaseException as e:
        conn.broken = e
        raise
    if failure is not None:
        raise failure


def _drop_chunks(conn: SerializedConnection, doc_ids: Sequence[str]) -> list[int]:
    dropped: list[int] = []
    for start in range(0, len(doc_ids), _PART):
        part = tuple(doc_ids[start : start + _PART])
        marks = ", ".join("?" * len(part))
        docs = f"SELECT seq FROM document WHERE id IN ({marks})"
        found = conn.execute(f"SELECT id FROM chunk WHERE doc IN ({docs})", part)
        if found:
            dropped.extend(int(r[0]) for r in found)
            conn.execute(f"DELETE FROM chunk WHERE doc IN ({docs})", part)
    return dropped


def _insert_chunks(
    conn: SerializedConnection,
    chunks: Sequence[tuple[str, tuple[str, str] | None, Sequence[ChunkRow], str | None]],
) -> list[int]:
    """Chunks by document id, each with its tally key (None: read from the document) and
    its document's text (None: unknown; the chunks keep their own, chunk_text.py)."""
    count = sum(len(rows) for _, _, rows, _ in chunks)
    if not count:
        return []
    # The counter, or the largest id if the counter lags (a table never written through
    # AUTOINCREMENT's path); both under the write lock the caller holds.
    first = 1 + int(
        conn.execute(
            "SELECT max(coalesce((SELECT seq FROM sqlite_sequence WHERE name = 'chunk'), 0), "
            "coalesce((SELECT max(id) FROM chunk), 0))"
        )[0][0]
    )
    ids = list(range(first, first + count))
    params = []
    grams = []
    # The chunk tally's keys, from the documents just written (the statement _TALLY
    # reads them back, a random look-up a chunk: a tenth of a chunk's time at 100k).
    counts: Counter[tuple[str, str]] = Counter()
    known = True
    it = iter(ids)
    for doc_id, key, rows, text in chunks:
        if key is None:
            known = False
        else:
            counts[key] += len(rows)
        for r in rows:
            chunk_id = next(it)
            params.append(chunk_params(chunk_id, doc_id, r, text))
            cjk = cjk_text(r.head, r.text)
            if cjk is not None:  # only text with CJK pays for the bigram index
                grams.append((chunk_id, cjk))
    _batch(
        conn,
        lambda: conn.executemany(
            _CHUNK_SQL,
            params,
        ),
        [(_WORDS, (first, ids[-1])), (_TALLY, (first, ids[-1]))],
        (lambda: conn.executemany(_TALLY_COUNTED, [(*k, n) for k, n in counts.items()]))
        if known
        else None,
    )
    if grams:
        conn.executemany("INSERT INTO chunk_cjk (rowid, grams) VALUES (?, ?)", grams)
    return ids
