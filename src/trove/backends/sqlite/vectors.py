"""Chunk vectors, locked to one embedder.

The lock (embedder spec, model id, dimension, table) lives in ``meta``. Vectors sit in a
table named by generation (``chunk_vec_1``, ``chunk_vec_2`` ...): a rebuild fills a new
table beside the old one and switches the lock in one transaction, so a crash midway
leaves the old vectors in use. Each table holds a vector once, as int16 codes
(vector_index/codes.py, schema 15; sqlite-vec's ``vec0`` tables before).
"""

from __future__ import annotations

import importlib.util
import json
import os
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING

import apsw

from trove.backends.base import EmbedderLock
from trove.backends.sqlite.chunk_text import TEXT_OF_C_D
from trove.backends.sqlite.connection import Connected
from trove.backends.sqlite.vector_index.codes import (
    TABLE,
    TRIGGER,
    decode,
    encode,
    table_sql,
    trigger_sql,
)
from trove.backends.vector_lock import LOCK_KEY, next_table, read_lock, same_embedder, written_lock

if TYPE_CHECKING:
    import numpy as np

    from trove.backends.sqlite.vector_index.searcher import SemanticSearcher
    from trove.hits import ChunkHit
    from trove.search.filters import Filters
else:  # numpy loads where first used: opening a store, stats, keyword search need none
    from trove.lazy import numpy as np


def load_extension(conn: apsw.Connection) -> None:
    conn.enable_load_extension(True)
    conn.load_extension(loadable_path())
    conn.enable_load_extension(False)


def loadable_path() -> str:
    """sqlite-vec's extension file (``sqlite_vec.loadable_path()``), found without importing
    the ``sqlite_vec`` package: its ``__init__`` imports numpy and sqlite3 for helpers trove
    does not use, which a one-shot command (``trove stats``) would pay for at every start."""
    spec = importlib.util.find_spec("sqlite_vec")
    if spec is None or not spec.submodule_search_locations:
        raise ModuleNotFoundError("No module named 'sqlite_vec'", name="sqlite_vec")
    return os.path.join(spec.submodule_search_locations[0], "vec0")


# An entry under entry control (memory/entry.py ``controlled``) of the semantic index: its
# one chunk's vector is made of its title and semantic_text, not of the chunk's text.
_CONTROLLED = (
    "(d.indexed = 'semantic' OR d.keyword_text IS NOT NULL OR d.semantic_text IS NOT NULL)"
)


class VectorStorage(Connected):
    """Mixin of the SQLite backend: everything about stored vectors.

    k-NN runs in memory (see :mod:`trove.backends.sqlite.vector_index.searcher`); this
    process's writes are applied to that index when they commit
    (:mod:`trove.backends.sqlite.index_changes`).
    """

    _searcher: SemanticSearcher | None = None

    def vector_search(
        self, lock: EmbedderLock, query: np.ndarray, filters: Filters, limit: int, now: float
    ) -> list[ChunkHit]:
        """Documents by best-chunk cosine similarity, filters applied inside the k-NN."""
        return self._searcher_for(lock).search(query, filters, limit, now)

    def vector_search_many(
        self,
        lock: EmbedderLock,
        queries: np.ndarray,
        filters: Filters,
        limits: Sequence[int],
        now: float,
    ) -> list[list[ChunkHit]]:
        """:meth:`vector_search` of each of ``queries`` (``limits[i]`` documents), in one
        pass of the in-memory index for all of them."""
        return self._searcher_for(lock).search_many(queries, filters, limits, now)

    def warm_vectors(self) -> None:
        """Load the in-memory vector index now (it is otherwise loaded by the first query)."""
        lock = self.vector_lock()
        if lock is not None:
            self._searcher_for(lock).warm()

    def _searcher_for(self, lock: EmbedderLock) -> SemanticSearcher:
        from trove.backends.sqlite.vector_index.searcher import SemanticSearcher

        searcher = self._searcher
        if searcher is None or searcher.lock != lock:
            searcher = self._searcher = SemanticSearcher(self, lock)  # type: ignore[arg-type]
        return searcher

    def close_vectors(self) -> None:
        """Stop a background load of the vector index (the store is closing)."""
        if self._searcher is not None:
            self._searcher.close()

    def vectors_reset(self) -> None:
        """Forget the in-memory index (the vector table was switched); reloaded when needed."""
        if self._searcher is not None:
            self._searcher.close(wait=False)
        self._searcher = None

    def vector_lock(self) -> EmbedderLock | None:
        return read_lock(self.get_meta(LOCK_KEY))

    def lock_vectors(self, spec: str, model_id: str, dimension: int) -> EmbedderLock:
        """Create the first vector table and record the embedder that fills it.

        Two processes writing a store's first vectors at once get one table: the lock is
        read again under the write lock, so the second finds the first's and uses it (or
        is refused, if its embedder differs) instead of orphaning a table of its own.
        """
        with self.transaction():
            existing = self.vector_lock()
            if existing is not None:
                return same_embedder(existing, model_id, dimension)
            table = self._new_table(dimension)
            lock = EmbedderLock(spec, model_id, dimension, table)
            self._activate(lock)
            return lock

    def begin_rebuild(self, dimension: int) -> str:
        """A fresh vector table beside the active one (leftovers of a crash are dropped)."""
        with self.transaction():
            lock = self.vector_lock()
            for table in self._vector_tables():
                if lock is None or table != lock.table:
                    self.conn.execute(f"DROP TABLE {table}")
            return self._new_table(dimension)

    def finish_rebuild(self, lock: EmbedderLock) -> None:
        """Make ``lock.table`` the active vectors and drop the old ones, atomically."""
        with self.transaction():
            old = self.vector_lock()
            self._activate(lock)
            if old is not None and old.table != lock.table:
                self.conn.execute(f"DROP TABLE {old.table}")
            self._index_changes.switched()

    def put_vectors(self, table: str, chunk_ids: Sequence[int], vectors: np.ndarray) -> None:
        codes = encode(vectors)
        with self.transaction():
            self.conn.executemany(
                f"INSERT OR REPLACE INTO {table} (id, codes) VALUES (?, ?)",
                zip(map(int, chunk_ids), codes, strict=True),
            )
            self._index_changes.vectors(table, chunk_ids, vectors)

    def vectors_by_hash(self, table: str, text_hashes: Sequence[str]) -> dict[str, np.ndarray]:
        """Stored vectors of chunks with these text hashes: unchanged text is not re-embedded."""
        found: dict[str, np.ndarray] = {}
        for start in range(0, len(text_hashes), 500):
            part = json.dumps(list(text_hashes[start : start + 500]))
            rows = self.conn.execute(
                "SELECT c.text_hash, v.codes FROM json_each(?) AS h "
                "CROSS JOIN chunk c ON c.text_hash = h.value "
                f"CROSS JOIN {table} v ON v.id = c.id",
                (part,),
            )
            for digest, blob in rows:
                found[str(digest)] = decode([blob])[0]
        return found

    def iter_vectors(
        self, table: str, *, after: int = 0, batch: int = 50_000
    ) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        """(chunk ids, vectors) in id order, ``batch`` rows at a time."""
        while True:
            rows = list(
                self.conn.execute(
                    f"SELECT id, codes FROM {table} WHERE id > ? ORDER BY id LIMIT ?",
                    (after, batch),
                )
            )
            if not rows:
                return
            ids = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
            yield ids, decode([r[1] for r in rows])
            after = int(ids[-1])

    def chunks_without_vectors(
        self, table: str, *, batch: int = 256
    ) -> Iterator[list[tuple[int, str, str]]]:
        """Batches of (chunk id, head, text) that have no vector in ``table``, of documents
        the semantic index holds (an entry kept out of it, ``index`` none or keyword, is
        never given one: reembed and import would make it findable). For an entry under
        entry control, head and text are what its vector is made of when written (its
        title and ``semantic_text``, else its text), not its keyword chunk's."""
        after = 0
        while True:
            rows = [
                (int(cid), str(head), str(text))
                for cid, head, text in self.conn.execute(
                    f"SELECT c.id, CASE WHEN {_CONTROLLED} THEN d.title ELSE c.head END, "
                    f"CASE WHEN {_CONTROLLED} THEN coalesce(d.semantic_text, d.text) "
                    f"ELSE {TEXT_OF_C_D} END FROM chunk c JOIN document d ON d.id = c.doc_id "
                    f"WHERE c.id > ? AND d.indexed IN ('both', 'semantic') AND NOT EXISTS "
                    f"(SELECT 1 FROM {table} v WHERE v.id = c.id) ORDER BY c.id LIMIT ?",
                    (after, batch),
                )
            ]
            if not rows:
                return
            yield rows
            after = rows[-1][0]

    def live_chunk_ids(self) -> np.ndarray:
        """Every chunk id in the file, ascending. One string parsed by numpy, not a Python
        int a row; and no ORDER BY, so SQLite reads a covering index rather than every
        page of the chunk table (8x faster at 100k chunks), and numpy sorts."""
        rows = self.conn.execute("SELECT group_concat(id) FROM chunk")
        text = rows[0][0] if rows else None
        ids = np.fromstring(text, np.int64, sep=",") if text else np.zeros(0, np.int64)
        return ids if bool(np.all(ids[1:] > ids[:-1])) else np.sort(ids)

    def vector_count(self, namespace: str | None = None, session: str | None = None) -> int:
        """Stored vectors; of one namespace's (and session's) documents, as stats counts."""
        lock = self.vector_lock()
        if lock is None:
            return 0
        if namespace is None and session is None:  # the whole file: no join needed
            # SQLite counts the ids' own index (vector_index/codes.py), not every vector's page.
            return int(self.conn.execute(f"SELECT count(*) FROM {lock.table}")[0][0])
        sql = (
            "SELECT count(*) FROM chunk c JOIN document d ON d.id = c.doc_id "
            "WHERE (?1 IS NULL OR d.namespace = ?1) "
            "AND (?2 IS NULL OR d.scope != 'session' OR d.session_id = ?2) "
            f"AND EXISTS (SELECT 1 FROM {lock.table} v WHERE v.id = c.id)"
        )
        return int(self.conn.execute(sql, (namespace, session))[0][0])

    def chunks_kept_out(self, namespace: str | None = None, session: str | None = None) -> int:
        """Chunks of entries kept out of the semantic index (``index`` keyword), which are
        never given a vector; scoped as :meth:`vector_count`."""
        sql = (
            "SELECT count(*) FROM chunk c JOIN document d ON d.id = c.doc_id "
            "WHERE d.indexed NOT IN ('both', 'semantic') AND (?1 IS NULL OR d.namespace = ?1) "
            "AND (?2 IS NULL OR d.scope != 'session' OR d.session_id = ?2)"
        )
        return int(self.conn.execute(sql, (namespace, session))[0][0])

    def data_version(self) -> int:
        """Changes when another connection commits, so a cached index knows it is stale."""
        return int(self.conn.execute("PRAGMA data_version")[0][0])

    def _vector_tables(self) -> list[str]:
        rows = self.conn.execute("SELECT name FROM sqlite_schema WHERE type = 'table'")
        return [str(r[0]) for r in rows if TABLE.fullmatch(str(r[0]))]

    def _new_table(self, dimension: int) -> str:
        table = next_table(self._vector_tables(), self.vector_lock())
        for sql in table_sql(table):
            self.conn.execute(sql)
        return table

    def _activate(self, lock: EmbedderLock) -> None:
        self.set_meta(LOCK_KEY, written_lock(lock))
        self.conn.execute(f"DROP TRIGGER IF EXISTS {TRIGGER}")
        self.conn.execute(trigger_sql(lock.table))
