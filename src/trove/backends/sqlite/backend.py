"""The SQLite backend: one file (or ``:memory:``), through apsw, with FTS5 and sqlite-vec."""

from __future__ import annotations

import contextlib
import json
import os
import time
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import apsw
import numpy as np

from trove.backends.base import ChunkRow, DocumentWrite, FileStat
from trove.backends.sqlite.bulk import put_many
from trove.backends.sqlite.clusters import ClusterStorage
from trove.backends.sqlite.connection import SerializedConnection
from trove.backends.sqlite.keyword import Ranker, cjk_match, quote, word_match
from trove.backends.sqlite.lifecycle import LifecycleStorage, memory_clauses
from trove.backends.sqlite.memory import MemoryStorage
from trove.backends.sqlite.originals import OriginalStorage
from trove.backends.sqlite.schema import (
    APPLICATION_ID,
    LATEST_VERSION,
    migrate,
    word_tokenizer,
)
from trove.backends.sqlite.vectors import VectorStorage, load_extension
from trove.backends.sqlite.word_searcher import WordSearcher
from trove.errors import (
    CorruptStore,
    InvalidQuery,
    NotATroveStore,
    QueryTimeout,
    SchemaTooNew,
    StoreError,
)
from trove.models import DOCUMENT_FIELDS, Chunk, ChunkHit, Document
from trove.search import snippet
from trove.search.bounds import SEARCH_BUDGET_S
from trove.search.filters import Filters
from trove.search.query import ParsedQuery, cjk_text, has_cjk
from trove.search.ranking import (
    WIDEN,
    collapse,
    first_window,
    merge_evidence,
    substring_scores,
)
from trove.timeutil import to_epoch, to_iso

_SQLITE_MAGIC = b"SQLite format 3\x00"
# Indexed words tried for one partial query word ("kube" -> "kubernet", "kubectl", ...).
_PARTIAL_TERMS = 16

_DOC_COLUMNS = list(DOCUMENT_FIELDS)
_HEADER_COLUMNS = [c for c in _DOC_COLUMNS if c != "text"]
_TIME_COLUMNS = (
    "timestamp",
    "created_at",
    "updated_at",
    "deleted_at",
    "expires_at",
    "last_accessed",
)
_JSON_LIST_COLUMNS = ("participants", "tags", "entities", "source_turn_ids")


class SQLiteBackend(
    VectorStorage, MemoryStorage, LifecycleStorage, ClusterStorage, OriginalStorage
):
    """Everything trove stores, in one SQLite file. Thread-safe: one statement at a time."""

    def __init__(self, path: str | os.PathLike[str], *, busy_timeout_ms: int = 5000) -> None:
        self.path = str(path)
        self.memory = self.path == ":memory:"
        if not self.memory:
            _check_is_sqlite(Path(self.path))
            _create_private(Path(self.path))
        try:
            raw = apsw.Connection(self.path)
            raw.set_busy_timeout(busy_timeout_ms)
            self.conn = SerializedConnection(raw)
            version = self._check_is_trove()
        except apsw.NotADBError:
            raise NotATroveStore(f"{self.path} is not a SQLite database") from None
        except apsw.CorruptError:
            raise CorruptStore(_DAMAGED.format(path=self.path)) from None
        except apsw.CantOpenError as exc:
            raise StoreError(f"cannot open {self.path}: {exc}") from None
        self._depth = 0
        if not self.memory:
            self._use_wal(busy_timeout_ms)
            self.conn.execute("PRAGMA synchronous = NORMAL")
            # 32 MB of page cache (SQLite's default is 2 MB): a batch write into a large
            # store touches index pages all over the file (random document ids).
            self.conn.execute("PRAGMA cache_size = -32000")
        self.conn.execute("PRAGMA foreign_keys = ON")
        load_extension(raw)
        migrate(raw, version)
        self._word_tokenizer = word_tokenizer(raw)
        self._words = WordSearcher(self)
        # Chunk ids dropped and added by the open transaction, told to the in-memory
        # word index when it commits.
        self._chunk_changes: tuple[list[int], list[int]] = ([], [])

    def _use_wal(self, timeout_ms: int) -> None:
        """Put the file in WAL mode (a property of the file: whoever comes first sets it).

        Switching needs a lock SQLite does not wait for (the busy handler is not called),
        so a connection racing another's first migration retries until the busy timeout.
        """
        deadline = time.monotonic() + timeout_ms / 1000
        while True:
            try:
                if self.conn.execute("PRAGMA journal_mode")[0][0] != "wal":
                    self.conn.execute("PRAGMA journal_mode = WAL")
                return
            except apsw.BusyError:
                if time.monotonic() > deadline:
                    raise StoreError(f"{self.path} is locked by another process") from None
                time.sleep(0.005)

    def _check_is_trove(self) -> int:
        """Schema version of the file; refuses foreign and newer files before any write."""
        # One statement, so one snapshot: another connection may be creating the file.
        row = self._one(
            "SELECT (SELECT application_id FROM pragma_application_id), "
            "(SELECT user_version FROM pragma_user_version), (SELECT count(*) FROM sqlite_schema)"
        )
        assert row is not None
        app_id, version, objects = row[0], int(row[1]), row[2]
        if app_id != APPLICATION_ID:
            if objects:
                raise NotATroveStore(
                    f"{self.path} is a SQLite database but not a trove store; "
                    "give trove a new path or a trove file"
                )
            return 0
        if version > LATEST_VERSION:
            raise SchemaTooNew(
                f"{self.path} has schema version {version}, newer than this trove "
                f"understands ({LATEST_VERSION}); upgrade trove to open it"
            )
        return version

    def close(self) -> None:
        self._words.close()
        self.close_vectors()
        self.conn.close()

    def warm(self) -> None:
        """Load the in-memory indexes now rather than at the first query that needs them."""
        self._words.warm()
        self.warm_vectors()

    @contextlib.contextmanager
    def transaction(self) -> Iterator[None]:
        """One atomic write; nests (inner blocks join the outer transaction)."""
        with self.conn.lock:
            if self._depth:
                self._depth += 1
                try:
                    yield
                finally:
                    self._depth -= 1
                return
            # IMMEDIATE takes the write lock up front (waiting up to the busy timeout): a
            # transaction that reads first and then writes could not wait, since SQLite
            # refuses to upgrade a reader while another connection writes.
            self.conn.execute("BEGIN IMMEDIATE")
            self._depth = 1
            try:
                try:
                    yield
                except BaseException:
                    self.conn.execute("ROLLBACK")
                    raise
                else:
                    self.conn.execute("COMMIT")
            except _UNWRITABLE as exc:
                if not self.conn.raw.getautocommit():  # a failed COMMIT leaves it open
                    with contextlib.suppress(apsw.Error):
                        self.conn.execute("ROLLBACK")
                raise StoreError(f"cannot write to {self.path}: {exc} (disk full?)") from None
            else:
                dropped, added = self._chunk_changes
                if dropped or added:  # told in commit order: still under the lock
                    self._words.committed(dropped, added)
            finally:
                self._depth = 0
                self._chunk_changes = ([], [])

    # --- meta -------------------------------------------------------------------------

    def get_meta(self, key: str) -> str | None:
        value = self._scalar("SELECT value FROM meta WHERE key = ?", (key,))
        return None if value is None else str(value)

    def set_meta(self, key: str, value: str | None) -> None:
        with self.transaction():
            if value is None:
                self.conn.execute("DELETE FROM meta WHERE key = ?", (key,))
            else:
                self.conn.execute(
                    "INSERT INTO meta (key, value) VALUES (?, ?) "
                    "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                    (key, value),
                )

    # --- documents --------------------------------------------------------------------

    def get_document(self, doc_id: str, *, with_text: bool = True) -> Document | None:
        columns = _DOC_COLUMNS if with_text else _HEADER_COLUMNS
        row = self._one(f"SELECT {', '.join(columns)} FROM document WHERE id = ?", (doc_id,))
        return None if row is None else _document(columns, row)

    def _documents(self, where: str, params: Sequence[Any], tail: str = "") -> list[Document]:
        sql = f"SELECT {', '.join(_DOC_COLUMNS)} FROM document WHERE {where} {tail}"
        return [_document(_DOC_COLUMNS, row) for row in self.conn.execute(sql, tuple(params))]

    def get_documents(self, doc_ids: Sequence[str]) -> dict[str, Document]:
        """Headers (no text) of several documents, by id."""
        found: dict[str, Document] = {}
        for start in range(0, len(doc_ids), 500):
            part = doc_ids[start : start + 500]
            marks = ", ".join("?" * len(part))
            sql = f"SELECT {', '.join(_HEADER_COLUMNS)} FROM document WHERE id IN ({marks})"
            for row in self.conn.execute(sql, tuple(part)):
                doc = _document(_HEADER_COLUMNS, row)
                found[doc.id] = doc
        return found

    def put_document(self, doc: Document, *, text: bool = True) -> None:
        """Insert or replace the row; ``text=False`` updates an existing row, text untouched."""
        values = _row(doc)
        with self.transaction():
            if not text:
                sets = ", ".join(f"{c} = ?" for c in _HEADER_COLUMNS if c != "id")
                params = [values[c] for c in _HEADER_COLUMNS if c != "id"]
                self.conn.execute(f"UPDATE document SET {sets} WHERE id = ?", (*params, doc.id))
                return
            updates = ", ".join(f"{c} = excluded.{c}" for c in _DOC_COLUMNS if c != "id")
            self.conn.execute(
                f"INSERT INTO document ({', '.join(_DOC_COLUMNS)}) "
                f"VALUES ({', '.join('?' * len(_DOC_COLUMNS))}) "
                f"ON CONFLICT (id) DO UPDATE SET {updates}",
                tuple(values[c] for c in _DOC_COLUMNS),
            )

    def replace_chunks(
        self, doc_id: str, chunks: Sequence[ChunkRow]
    ) -> tuple[list[int], list[int]]:
        """Swap a document's chunks (index triggers follow); returns (old ids, new ids)."""
        with self.transaction():
            dropped = [
                int(r[0])
                for r in self.conn.execute("SELECT id FROM chunk WHERE doc_id = ?", (doc_id,))
            ]
            self.conn.execute("DELETE FROM chunk WHERE doc_id = ?", (doc_id,))
            ids: list[int] = []
            for row in chunks:
                self.conn.execute(
                    "INSERT INTO chunk (doc_id, idx, start_char, end_char, heading, head, text, "
                    "text_hash) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                    (
                        doc_id,
                        row.chunk.index,
                        row.chunk.start,
                        row.chunk.end,
                        row.chunk.heading,
                        row.head,
                        row.text,
                        row.text_hash,
                    ),
                )
                ids.append(self.conn.last_insert_rowid())
                grams = cjk_text(row.head, row.text)
                if grams is not None:  # only text with CJK pays for the bigram index
                    self.conn.execute(
                        "INSERT INTO chunk_cjk (rowid, grams) VALUES (?, ?)", (ids[-1], grams)
                    )
            self._chunk_changes[0].extend(dropped)
            self._chunk_changes[1].extend(ids)
            return dropped, ids

    def put_many(self, writes: Sequence[DocumentWrite]) -> tuple[list[int], list[int]]:
        """:meth:`put_document` and :meth:`replace_chunks` for a batch, in a few
        statements (sqlite_bulk.py); returns (old chunk ids, new chunk ids)."""
        with self.transaction():
            dropped, ids = put_many(self.conn, writes, _DOC_COLUMNS, _row)
            self._chunk_changes[0].extend(dropped)
            self._chunk_changes[1].extend(ids)
            return dropped, ids

    def export_chunks(
        self, doc_ids: Sequence[str], table: str | None
    ) -> dict[str, list[tuple[ChunkRow, np.ndarray | None]]]:
        """The stored chunks of documents in order, each with its vector from ``table``
        (None where it has none): what copying a store needs."""
        vector = f"(SELECT embedding FROM {table} v WHERE v.rowid = c.id)" if table else "NULL"
        rows = self.conn.execute(
            "SELECT c.doc_id, c.idx, c.start_char, c.end_char, c.heading, c.head, c.text, "
            f"c.text_hash, {vector} FROM chunk c "
            "WHERE c.doc_id IN (SELECT value FROM json_each(?)) ORDER BY c.doc_id, c.idx",
            (json.dumps(list(doc_ids)),),
        )
        found: dict[str, list[tuple[ChunkRow, np.ndarray | None]]] = {}
        for doc_id, idx, start, end, heading, head, text, digest, blob in rows:
            chunk = Chunk(index=idx, start=start, end=end, heading=heading)
            embedding = None if blob is None else np.frombuffer(blob, dtype=np.float32)
            found.setdefault(str(doc_id), []).append(
                (ChunkRow(chunk, head, text, digest), embedding)
            )
        return found

    def iter_documents(self, *, after: str | None, limit: int) -> list[Document]:
        """Every document (all namespaces, deleted and expired too), by id, a page at a time."""
        return self._documents(
            "(?1 IS NULL OR id > ?1)", (after,), f"ORDER BY id LIMIT {int(limit)}"
        )

    def set_deleted(self, doc_id: str, when: float | None) -> bool:
        with self.transaction():
            self.conn.execute(
                "UPDATE document SET deleted_at = ?, updated_at = coalesce(?, updated_at) "
                "WHERE id = ?",
                (when, when, doc_id),
            )
            return self.conn.changes() > 0

    def purge(self, now: float) -> list[str]:
        """Remove tombstoned and expired documents for good; returns their ids."""
        with self.transaction():
            ids = [
                str(r[0])
                for r in self.conn.execute(
                    "SELECT id FROM document WHERE deleted_at IS NOT NULL "
                    "OR (expires_at IS NOT NULL AND expires_at <= ?)",
                    (now,),
                )
            ]
            for doc_id in ids:
                chunks = self.conn.execute("SELECT id FROM chunk WHERE doc_id = ?", (doc_id,))
                self._chunk_changes[0].extend(int(r[0]) for r in chunks)
                self.conn.execute("DELETE FROM chunk WHERE doc_id = ?", (doc_id,))
                self.conn.execute("DELETE FROM document WHERE id = ?", (doc_id,))
        if ids:
            self.vectors_reset()
        return ids

    def source_hashes(self, namespace: str, source: str) -> dict[str, tuple[str, str, bool]]:
        """source_id -> (doc id, content hash, deleted) for every document of a source."""
        rows = self.conn.execute(
            "SELECT source_id, id, content_hash, deleted_at IS NOT NULL FROM document "
            "WHERE namespace = ? AND source = ? AND source_id IS NOT NULL",
            (namespace, source),
        )
        return {str(r[0]): (str(r[1]), str(r[2]), bool(r[3])) for r in rows}

    def file_stats(self, namespace: str, source: str) -> dict[str, FileStat]:
        """path -> what an ingest recorded of that file, for every file of a source."""
        rows = self.conn.execute(
            "SELECT path, size, mtime_ns, ctime_ns, content_hash FROM file_stat "
            "WHERE namespace = ? AND source = ?",
            (namespace, source),
        )
        return {str(r[0]): FileStat(int(r[1]), int(r[2]), int(r[3]), str(r[4])) for r in rows}

    def set_file_stats(
        self, namespace: str, source: str, stats: Mapping[str, FileStat | None]
    ) -> None:
        """Record (or, for None, forget) files' stats, in one transaction."""
        with self.transaction():
            self.conn.executemany(
                "DELETE FROM file_stat WHERE namespace = ? AND source = ? AND path = ?",
                [(namespace, source, path) for path, st in stats.items() if st is None],
            )
            self.conn.executemany(
                "INSERT INTO file_stat "
                "(namespace, source, path, size, mtime_ns, ctime_ns, content_hash) "
                "VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO UPDATE SET size = excluded.size, "
                "mtime_ns = excluded.mtime_ns, ctime_ns = excluded.ctime_ns, "
                "content_hash = excluded.content_hash",
                [
                    (namespace, source, path, st.size, st.mtime_ns, st.ctime_ns, st.content_hash)
                    for path, st in stats.items()
                    if st is not None
                ],
            )

    # --- keyword search ---------------------------------------------------------------

    def keyword_search(
        self, query: ParsedQuery, filters: Filters, limit: int, now: float
    ) -> list[ChunkHit]:
        """Documents by best-chunk BM25, over the word index, the CJK bigram index or both."""
        where, params = _filter_sql(filters, now)
        scores: dict[str, ChunkHit] = {}
        searches = [("chunk_fts", word_match(query)), ("chunk_cjk", cjk_match(query))]
        for table, match in searches:
            if match:
                ranker = self._word_ranker(query) if table == "chunk_fts" else None
                for hit in self._fts(table, match, where, params, limit, ranker):
                    merge_evidence(scores, hit)
        if not scores and query.raw is None and query.words:
            # Nothing by whole words: look for them as parts of words ("marath", "kube").
            for match in self._partial_words(query.words):
                for hit in self._fts("chunk_fts", match, where, params, limit):
                    merge_evidence(scores, hit)
                if scores:
                    break
        if query.substrings:
            for hit in self._substring_search(query.substrings, where, params, limit):
                merge_evidence(scores, hit)
        ranked = sorted(scores.values(), key=lambda h: (-h.score, h.doc_id))
        return ranked[:limit]

    def _word_ranker(self, query: ParsedQuery) -> Ranker | None:
        """The in-memory word index's ranking of a plain query, when it is built."""
        if query.raw is not None or not query.words:
            return None
        return self._words.ranker(query.words)

    def _fts(
        self,
        table: str,
        match: str,
        where: str,
        params: tuple[Any, ...],
        limit: int,
        ranker: Ranker | None = None,
    ) -> list[ChunkHit]:
        # Rank chunks alone (FTS5's fast path, or the in-memory index's ranking of the same
        # query), then filter and collapse them to documents; if the filter leaves too few
        # documents, widen the window and retry.
        window = first_window(limit)
        while True:
            ranked = ranker(window) if ranker else self._fts_ranked(table, match, window)
            hits = collapse(ranked, self._allowed([c for c, _ in ranked], where, params), limit)
            if len(hits) >= limit or len(ranked) < window:
                return hits
            window *= WIDEN

    def _fts_ranked(self, table: str, match: str, window: int) -> list[tuple[int, float]]:
        # The time budget: SQLite calls the handler every few thousand steps, and a true
        # answer interrupts the statement.
        deadline = time.monotonic() + SEARCH_BUDGET_S
        with self.conn.lock:
            self.conn.raw.set_progress_handler(lambda: time.monotonic() > deadline, 1000)
            try:
                return [
                    (int(cid), float(score))
                    for cid, score in self.conn.execute(
                        f"SELECT rowid, -rank FROM {table} WHERE {table} MATCH ? "
                        "ORDER BY rank LIMIT ?",
                        (match, window),
                    )
                ]
            except apsw.InterruptError:
                raise QueryTimeout(
                    f"the search ran past its {SEARCH_BUDGET_S:g} s budget; "
                    "use fewer words or narrower filters"
                ) from None
            except apsw.SQLError as exc:
                raise InvalidQuery(f"cannot parse the query: {exc}") from None
            finally:
                self.conn.raw.set_progress_handler(None)

    def term_counts(self, words: Sequence[str]) -> dict[str, int]:
        """How many chunks hold each query word (its stem, as the word index has it)."""
        counts: dict[str, int] = {}
        for word in dict.fromkeys(words):
            tokens = self._tokenize(word.encode("utf-8"), query=True)
            if not tokens:
                continue
            row = self._one("SELECT doc FROM chunk_fts_vocab WHERE term = ?", (tokens[0][2],))
            counts[word] = int(row[0]) if row else 0
        return counts

    def filter_chunks(
        self, chunk_ids: Sequence[int], filters: Filters, now: float
    ) -> dict[int, tuple[str, Chunk]]:
        """The chunks among ``chunk_ids`` whose document passes ``filters``."""
        where, params = _filter_sql(filters, now)
        return self._allowed(chunk_ids, where, params)

    def _allowed(
        self, chunk_ids: Sequence[int], where: str, params: tuple[Any, ...]
    ) -> dict[int, tuple[str, Chunk]]:
        rows = self.conn.execute(
            "SELECT c.id, c.doc_id, c.idx, c.start_char, c.end_char, c.heading "
            # CROSS JOIN fixes the join order: the few ranked ids drive the lookups.
            "FROM json_each(?) AS r CROSS JOIN chunk c ON c.id = r.value "
            f"CROSS JOIN document d INDEXED BY document_visible ON d.id = c.doc_id WHERE {where}",
            (json.dumps(list(chunk_ids)), *params),
        )
        return {
            int(cid): (str(doc_id), Chunk(index=idx, start=s, end=e, heading=h))
            for cid, doc_id, idx, s, e, h in rows
        }

    def visible(self, doc_ids: Sequence[str], filters: Filters, now: float) -> set[str]:
        """The documents among ``doc_ids`` that pass ``filters``."""
        where, params = _filter_sql(filters, now)
        rows = self.conn.execute(
            "SELECT d.id FROM json_each(?) AS r "
            "CROSS JOIN document d INDEXED BY document_visible ON d.id = r.value "
            f"WHERE {where}",
            (json.dumps(list(doc_ids)), *params),
        )
        return {str(r[0]) for r in rows}

    def candidate_chunks(self, filters: Filters, now: float) -> list[int]:
        """Every chunk id whose document passes ``filters`` (for a filtered k-NN)."""
        where, params = _filter_sql(filters, now)
        sql = f"SELECT c.id FROM chunk c JOIN document d ON d.id = c.doc_id WHERE {where}"
        return [int(r[0]) for r in self.conn.execute(sql, params)]

    def snippets(self, query: ParsedQuery, chunk_ids: Sequence[int]) -> dict[int, str]:
        """A snippet per chunk with the query's words (stemmed) and CJK runs marked."""
        raw_terms = query.raw_terms()
        words = list(query.words) + [t for t in raw_terms if not has_cjk(t)]
        stems = {t for w in words for _, _, t in self._tokenize(w.encode(), query=True)}
        needles = list(query.substrings) + [t for t in raw_terms if has_cjk(t)]
        needles += query.cjk_runs()
        found = {}
        for cid, (_, text) in self._chunk_texts(chunk_ids).items():
            spans = snippet.word_intervals(self._tokenize, text, stems) if stems else []
            if needles:
                spans += snippet.substring_intervals(text, needles)
            found[cid] = snippet.make(text, spans)
        return found

    def newest_chunk_id(self) -> int:
        return int(self._scalar("SELECT max(id) FROM chunk") or 0)

    def chunk_texts(self, chunk_ids: Sequence[int]) -> list[tuple[int, str]]:
        """(id, head and text) of these chunks, by id: what the word index tokenizes."""
        rows = self.conn.execute(
            "SELECT id, head || char(10) || text FROM chunk "
            "WHERE id IN (SELECT value FROM json_each(?)) ORDER BY id",
            (json.dumps(list(chunk_ids)),),
        )
        return [(int(cid), str(text)) for cid, text in rows]

    def chunk_texts_after(self, after: int, limit: int) -> list[tuple[int, str]]:
        rows = self.conn.execute(
            "SELECT id, head || char(10) || text FROM chunk WHERE id > ? ORDER BY id LIMIT ?",
            (after, limit),
        )
        return [(int(cid), str(text)) for cid, text in rows]

    def _chunk_texts(self, chunk_ids: Sequence[int]) -> dict[int, tuple[str, str]]:
        rows = self.conn.execute(
            "SELECT id, head, text FROM chunk WHERE id IN (SELECT value FROM json_each(?))",
            (json.dumps(list(chunk_ids)),),
        )
        return {int(cid): (str(head), str(text)) for cid, head, text in rows}

    def _tokenize(self, data: bytes, query: bool = False) -> list[tuple[int, int, str]]:
        reason = apsw.FTS5_TOKENIZE_QUERY if query else apsw.FTS5_TOKENIZE_DOCUMENT
        with self.conn.lock:
            tokens: Any = self._word_tokenizer(data, reason, None)
        return [(int(t[0]), int(t[1]), str(t[2])) for t in tokens]

    def _partial_words(self, words: Sequence[str]) -> Iterator[str]:
        """FTS5 expressions for query words (three letters or more) that are parts of
        indexed words, cheapest first: the words as prefixes ("marath" -> "marathon",
        answered by the index); then, only if that finds nothing, the indexed words that
        contain them ("bernet" -> "kubernet"), found by scanning the word index's
        vocabulary (~0.2 s at 100k chunks), at most ``_PARTIAL_TERMS`` a word, the most
        frequent first.

        Index terms are stems, and FTS5 stems a query term again, which can shorten it;
        asked for as prefixes, the terms still match themselves. A piece of a word's
        ending that stemming removed ("netes" of "kubernetes") is not found.
        """
        wanted = [w for w in words if len(w) >= 3]
        if not wanted:
            return
        yield " OR ".join(quote(w) + "*" for w in wanted)
        inside = [
            str(row[0])
            for word in wanted
            for row in self.conn.execute(
                "SELECT term FROM chunk_fts_vocab WHERE instr(term, ?) > 0 "
                "ORDER BY doc DESC LIMIT ?",
                (word, _PARTIAL_TERMS),
            )
        ]
        if inside:
            yield " OR ".join(quote(t) + "*" for t in dict.fromkeys(inside))

    def _substring_search(
        self, terms: Sequence[str], where: str, params: tuple[Any, ...], limit: int
    ) -> list[ChunkHit]:
        """Chunks containing one-character CJK words (no bigram holds them), scored by a
        BM25-like tf·idf.

        This scans the chunk text, so it is only used for one-character CJK words.
        """
        contains = " OR ".join("instr(lower(c.head || char(10) || c.text), ?) > 0" for _ in terms)
        sql = (
            "SELECT c.doc_id, c.id, c.idx, c.start_char, c.end_char, c.heading, "
            "lower(c.head || char(10) || c.text) FROM chunk c "
            f"JOIN document d ON d.id = c.doc_id WHERE ({contains}) AND {where}"
        )
        rows = list(self.conn.execute(sql, (*terms, *params)))
        total = max(1, int(self._scalar("SELECT count(*) FROM chunk")))
        scores = substring_scores([r[6] for r in rows], terms, total)
        best: dict[str, ChunkHit] = {}
        for (doc_id, cid, idx, start, end, heading, _), score in zip(rows, scores, strict=True):
            chunk = Chunk(index=idx, start=start, end=end, heading=heading)
            hit = ChunkHit(str(doc_id), int(cid), score, chunk)
            merge_evidence(best, hit, keep_best=True)
        return sorted(best.values(), key=lambda h: -h.score)[:limit]

    # --- statistics -------------------------------------------------------------------

    def stats(
        self, now: float, namespace: str | None = None, session: str | None = None
    ) -> dict[str, Any]:
        """Counts and sizes, of the whole file or of one namespace (and session, if given:
        other sessions' items are not counted)."""
        mine = (
            "(?1 IS NULL OR namespace = ?1) "
            "AND (?3 IS NULL OR scope != 'session' OR session_id = ?3)"
        )
        live = f"{mine} AND deleted_at IS NULL AND (expires_at IS NULL OR expires_at > ?2)"
        args = (namespace, now, session)

        def count(where: str) -> int:
            return int(self._scalar(f"SELECT count(*) FROM document WHERE {where}", args))

        def grouped(column: str) -> dict[str, int]:
            sql = (
                f"SELECT {column}, count(*) FROM document WHERE {live} GROUP BY 1 ORDER BY 2 DESC"
            )
            return {str(k): int(n) for k, n in self.conn.execute(sql, args)}

        size = 0
        if not self.memory and namespace is None:
            size = sum(
                os.path.getsize(p) for p in (self.path, self.path + "-wal") if os.path.exists(p)
            )
        chunks = self._scalar(
            "SELECT count(*) FROM chunk c JOIN document d ON d.id = c.doc_id "
            "WHERE (?1 IS NULL OR d.namespace = ?1) AND ?2 IS NOT NULL "
            "AND (?3 IS NULL OR d.scope != 'session' OR d.session_id = ?3)",
            args,
        )
        text_bytes = self._scalar(
            "SELECT coalesce(sum(length(CAST(text AS BLOB))), 0) FROM document "
            f"WHERE {mine} AND ?2 IS NOT NULL",
            args,
        )
        return {
            "documents": count(live),
            "chunks": int(chunks),
            "deleted": count(f"{mine} AND deleted_at IS NOT NULL AND ?2 IS NOT NULL"),
            "expired": count(
                f"{mine} AND deleted_at IS NULL AND expires_at IS NOT NULL AND expires_at <= ?2"
            ),
            "by_source": grouped("source"),
            "by_doc_type": grouped("doc_type"),
            "by_namespace": grouped("namespace"),
            "text_bytes": int(text_bytes),
            "file_bytes": size,
            "schema_version": int(self._scalar("PRAGMA user_version")),
        }

    # --- helpers ----------------------------------------------------------------------

    def _scalar(self, sql: str, params: tuple[Any, ...] = ()) -> Any:
        row = self._one(sql, params)
        return None if row is None else row[0]

    def _one(self, sql: str, params: tuple[Any, ...] = ()) -> tuple[Any, ...] | None:
        for row in self.conn.execute(sql, params):
            return tuple(row)
        return None


# What SQLite raises when the file cannot take a write: a full disk, a file size limit,
# a read-only file or mount.
_UNWRITABLE = (apsw.FullError, apsw.IOError, apsw.ReadOnlyError)
_DAMAGED = (
    "{path} is damaged (truncated or corrupt); trove does not repair stores: restore it "
    "from a backup, or `sqlite3 {path} .recover` a copy"
)


def _create_private(path: Path) -> None:
    """Create a new store file (and its folder) readable by its owner alone: stores hold
    people's mail and notes. SQLite gives the -wal and -shm files the file's mode."""
    if not path.parent.exists():
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    with contextlib.suppress(FileExistsError):
        os.close(os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600))


def _check_is_sqlite(path: Path) -> None:
    if path.is_dir():
        raise StoreError(f"{path} is a directory; give the path of a store file")
    if path.exists() and path.stat().st_size > 0:
        with path.open("rb") as handle:
            header = handle.read(100)
        if header[: len(_SQLITE_MAGIC)] != _SQLITE_MAGIC:
            raise NotATroveStore(f"{path} is not a SQLite database (nor a trove store)")
        # The header's page count is valid when its change counter matches (offset 92):
        # a file shorter than it says was truncated (a copy cut short, a full disk). With a
        # write-ahead log, pages may still be on their way into the file (a checkpoint cut
        # short), and SQLite finishes the job from the log.
        page_size = int.from_bytes(header[16:18], "big")
        page_size = 65536 if page_size == 1 else page_size
        pages = int.from_bytes(header[28:32], "big")
        wal = Path(f"{path}-wal")
        logged = wal.exists() and wal.stat().st_size > 0
        short = header[24:28] == header[92:96] and path.stat().st_size < pages * page_size
        if short and not logged:
            raise CorruptStore(_DAMAGED.format(path=path))


def _filter_sql(filters: Filters, now: float) -> tuple[str, tuple[Any, ...]]:
    # A namespace sees its own items (session items only from their session, when the
    # reader has one) and every global item.
    clauses = [
        "((d.namespace = ? AND (d.scope != 'session' OR ? IS NULL OR d.session_id = ?)) "
        "OR d.scope = 'global')",
        "d.deleted_at IS NULL",
        "(d.expires_at IS NULL OR d.expires_at > ?)",
    ]
    params: list[Any] = [filters.namespace, filters.session, filters.session, now]
    if filters.scope:
        clauses.append(f"d.scope IN ({', '.join('?' * len(filters.scope))})")
        params.extend(filters.scope)
    for column in ("source", "doc_type", "author"):
        values: tuple[str, ...] = getattr(filters, column)
        if values:
            clauses.append(f"d.{column} IN ({', '.join('?' * len(values))})")
            params.extend(values)
    for tag in filters.tags:
        clauses.append("EXISTS (SELECT 1 FROM json_each(d.tags) WHERE value = ?)")
        params.append(tag)
    if filters.since is not None:
        clauses.append("d.timestamp >= ?")
        params.append(filters.since)
    if filters.until is not None:
        clauses.append("d.timestamp <= ?")
        params.append(filters.until)
    for key, value in filters.metadata:
        path = '$."' + key.replace('"', '\\"') + '"'
        if value is None:
            clauses.append("json_type(d.metadata, ?) = 'null'")
            params.append(path)
        else:
            clauses.append("json_extract(d.metadata, ?) = ?")
            params.extend((path, int(value) if isinstance(value, bool) else value))
    extra, more = memory_clauses(filters)
    return " AND ".join(clauses + extra), tuple(params + more)


def _row(doc: Document) -> dict[str, Any]:
    values = {c: getattr(doc, c) for c in _DOC_COLUMNS}
    for column in _JSON_LIST_COLUMNS:
        values[column] = json.dumps(list(values[column]), ensure_ascii=False)
    values["metadata"] = json.dumps(doc.metadata, ensure_ascii=False, sort_keys=True)
    for column in _TIME_COLUMNS:
        values[column] = to_epoch(values[column], field=column)
    return values


def _document(columns: Sequence[str], row: Sequence[Any]) -> Document:
    values = dict(zip(columns, row, strict=True))
    for column in _JSON_LIST_COLUMNS:
        values[column] = tuple(json.loads(values[column]))
    values["metadata"] = json.loads(values["metadata"])
    for column in _TIME_COLUMNS:
        values[column] = to_iso(values[column])
    values.setdefault("text", "")
    return Document(**values)
