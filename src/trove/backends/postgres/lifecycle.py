"""Hard deletion of chosen documents in the PostgreSQL backend (purge by id, clear a
namespace); chunks, vectors and edges go with them by ``ON DELETE CASCADE``."""

from __future__ import annotations

import contextlib
from collections.abc import Mapping, Sequence
from contextlib import AbstractContextManager
from typing import Any

import numpy as np
import psycopg

from trove.backends.postgres.text import esc, unesc
from trove.errors import StoreError
from trove.search.filters import Filters


class PostgresLifecycle:
    """Mixin of the PostgreSQL backend: documents removed for good."""

    def transaction(self) -> AbstractContextManager[None]:
        raise NotImplementedError

    def conn(self) -> contextlib.AbstractContextManager[Any]:
        raise NotImplementedError

    def rows(self, query: Any, params: Any = ()) -> list[tuple[Any, ...]]:
        raise NotImplementedError

    def _written(self) -> None:
        raise NotImplementedError

    def remove_documents(self, doc_ids: Sequence[str]) -> list[str]:
        """Remove these documents (in any state) for good; returns the ids that existed."""
        with self.transaction(), self.conn() as conn:
            rows = conn.execute(
                "DELETE FROM document WHERE id = ANY(%s) RETURNING id",
                ([esc(i) for i in dict.fromkeys(doc_ids)],),
            ).fetchall()
        self._written()
        return [unesc(str(r[0])) for r in rows]

    def record_access(self, counts: Mapping[str, tuple[int, float]]) -> None:
        """Add reads to documents' access counts: id -> (reads, time of the last)."""
        # Sorted ids: two recorders lock rows in the same order, so never deadlock.
        rows = [(n, last, esc(doc_id)) for doc_id, (n, last) in sorted(counts.items())]
        try:
            with self.transaction(), self.conn() as conn, conn.cursor() as cur:
                cur.executemany(
                    "UPDATE document SET access_count = access_count + %s, "
                    "last_accessed = greatest(coalesce(last_accessed, 0), %s) WHERE id = %s",
                    rows,
                )
        except psycopg.Error as exc:
            raise StoreError(f"cannot record access counts: {exc}") from None

    def set_canonical(self, marks: Mapping[str, str | None]) -> None:
        """Set (or, for None, clear) documents' canonical ids."""
        rows = [
            (None if c is None else esc(c), esc(doc_id)) for doc_id, c in sorted(marks.items())
        ]
        with self.transaction(), self.conn() as conn, conn.cursor() as cur:
            cur.executemany("UPDATE document SET canonical_id = %s WHERE id = %s", rows)

    def namespace_vectors(self, namespace: str, table: str) -> tuple[list[str], np.ndarray]:
        """Every chunk vector of a namespace's documents: (document id per row, matrix)."""
        from trove.backends.postgres.vectors import (  # it imports this module
            as_array,
            checked_table,
        )

        rows = self.rows(
            f"SELECT c.doc_id, v.embedding FROM chunk c JOIN {checked_table(table)} v "
            "ON v.chunk_id = c.id JOIN document d ON d.id = c.doc_id WHERE d.namespace = %s",
            (esc(namespace),),
        )
        if not rows:
            return [], np.zeros((0, 0), dtype=np.float32)
        matrix = np.stack([as_array(r[1]) for r in rows]).astype(np.float32, copy=False)
        return [unesc(str(r[0])) for r in rows], matrix

    def namespace_documents(self, namespace: str) -> list[str]:
        """Ids of every document of a namespace (any scope, deleted and expired too)."""
        rows = self.rows("SELECT id FROM document WHERE namespace = %s", (esc(namespace),))
        return [unesc(str(r[0])) for r in rows]


def memory_clauses(filters: Filters, alias: str = "d.") -> tuple[list[str], list[Any]]:
    """SQL for the memory filters (entities, importance, confidence, compression)."""
    clauses: list[str] = []
    params: list[Any] = []
    if filters.entities:
        clauses.append(f"{alias}entities @> %s::text[]")
        params.append([esc(e) for e in filters.entities])
    for column, op, value in (
        ("importance", ">=", filters.min_importance),
        ("confidence", ">=", filters.min_confidence),
        ("compression_level", "<=", filters.max_compression),
    ):
        if value is not None:
            clauses.append(f"{alias}{column} {op} %s")
            params.append(value)
    if filters.cluster is not None:
        clauses.append(
            "EXISTS (SELECT 1 FROM cluster_member m "
            f"WHERE m.cluster_id = %s AND m.doc_id = {alias}id)"
        )
        params.append(esc(filters.cluster))
    if filters.collapse:  # a duplicate shows as its canonical, while that is live
        clauses.append(
            f"({alias}canonical_id IS NULL OR {alias}canonical_id = {alias}id OR NOT EXISTS "
            f"(SELECT 1 FROM document c WHERE c.id = {alias}canonical_id "
            "AND c.deleted_at IS NULL))"
        )
    return clauses, params


def list_clauses(filters: Filters) -> tuple[list[str], list[Any]]:
    """What :meth:`Store.list` filters by besides its namespace, scope and session."""
    clauses, params = memory_clauses(filters, "")
    for column in ("source", "doc_type", "author"):
        values: tuple[str, ...] = getattr(filters, column)
        if values:
            clauses.append(f"{column} = ANY(%s)")
            params.append([esc(v) for v in values])
    if filters.tags:
        clauses.append("tags @> %s::text[]")
        params.append([esc(t) for t in filters.tags])
    for column, op, value in (
        ("timestamp", ">=", filters.since),
        ("timestamp", "<=", filters.until),
    ):
        if value is not None:
            clauses.append(f"{column} {op} %s")
            params.append(value)
    return clauses, params
