"""Hard deletion of chosen documents in the SQLite backend (purge by id, clear a namespace)."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from contextlib import AbstractContextManager
from typing import Any

import apsw
import numpy as np

from trove.backends.sqlite.connection import SerializedConnection
from trove.errors import StoreError
from trove.search.filters import Filters


class LifecycleStorage:
    """Mixin of the SQLite backend: documents removed for good, with their chunks."""

    conn: SerializedConnection
    _chunk_changes: tuple[list[int], list[int]]

    def transaction(self) -> AbstractContextManager[None]:
        raise NotImplementedError

    def vectors_reset(self) -> None:
        raise NotImplementedError

    def remove_documents(self, doc_ids: Sequence[str]) -> list[str]:
        """Remove these documents (in any state) for good; returns the ids that existed."""
        wanted = json.dumps(list(dict.fromkeys(doc_ids)))
        with self.transaction():
            ids = [
                str(r[0])
                for r in self.conn.execute(
                    "SELECT id FROM document WHERE id IN (SELECT value FROM json_each(?))",
                    (wanted,),
                )
            ]
            found = json.dumps(ids)
            chunks = self.conn.execute(
                "SELECT id FROM chunk WHERE doc_id IN (SELECT value FROM json_each(?))", (found,)
            )
            # The word index hears of the dropped chunks when the transaction commits.
            self._chunk_changes[0].extend(int(r[0]) for r in chunks)
            self.conn.execute(
                "DELETE FROM chunk WHERE doc_id IN (SELECT value FROM json_each(?))", (found,)
            )
            self.conn.execute(
                "DELETE FROM document WHERE id IN (SELECT value FROM json_each(?))", (found,)
            )
        if ids:
            self.vectors_reset()
        return ids

    def record_access(self, counts: Mapping[str, tuple[int, float]]) -> None:
        """Add reads to documents' access counts: id -> (reads, time of the last)."""
        rows = [(n, last, doc_id) for doc_id, (n, last) in sorted(counts.items())]
        try:
            with self.transaction():
                self.conn.executemany(
                    "UPDATE document SET access_count = access_count + ?, "
                    "last_accessed = max(coalesce(last_accessed, 0), ?) WHERE id = ?",
                    rows,
                )
        except (apsw.ReadOnlyError, apsw.CantOpenError, apsw.BusyError) as exc:
            raise StoreError(f"cannot record access counts: {exc}") from None

    def set_canonical(self, marks: Mapping[str, str | None]) -> None:
        """Set (or, for None, clear) documents' canonical ids."""
        with self.transaction():
            self.conn.executemany(
                "UPDATE document SET canonical_id = ? WHERE id = ?",
                [(canonical, doc_id) for doc_id, canonical in sorted(marks.items())],
            )

    def namespace_vectors(self, namespace: str, table: str) -> tuple[list[str], np.ndarray]:
        """Every chunk vector of a namespace's documents: (document id per row, matrix).
        The vector table is scanned in bulk (a lookup per chunk is ~20x slower)."""
        owners = {
            int(cid): str(doc_id)
            for cid, doc_id in self.conn.execute(
                "SELECT c.id, c.doc_id FROM chunk c JOIN document d ON d.id = c.doc_id "
                "WHERE d.namespace = ?",
                (namespace,),
            )
        }
        docs: list[str] = []
        parts: list[np.ndarray] = []
        for ids, vectors in self.iter_vectors(table):
            keep = np.fromiter((int(i) in owners for i in ids), dtype=bool, count=len(ids))
            docs.extend(owners[int(i)] for i in ids[keep])
            parts.append(vectors[keep])
        width = parts[0].shape[1] if parts else 0
        return docs, np.vstack(parts) if parts else np.zeros((0, width), dtype=np.float32)

    def iter_vectors(
        self, table: str, *, after: int = 0, batch: int = 50_000
    ) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        raise NotImplementedError

    def namespace_documents(self, namespace: str) -> list[str]:
        """Ids of every document of a namespace (any scope, deleted and expired too)."""
        rows = self.conn.execute("SELECT id FROM document WHERE namespace = ?", (namespace,))
        return [str(r[0]) for r in rows]


def memory_clauses(filters: Filters, alias: str = "d.") -> tuple[list[str], list[Any]]:
    """SQL for the memory filters (entities, importance, confidence, compression)."""
    clauses: list[str] = []
    params: list[Any] = []
    for entity in filters.entities:
        clauses.append(f"EXISTS (SELECT 1 FROM json_each({alias}entities) WHERE value = ?)")
        params.append(entity)
    for column, op, value in (
        ("importance", ">=", filters.min_importance),
        ("confidence", ">=", filters.min_confidence),
        ("compression_level", "<=", filters.max_compression),
    ):
        if value is not None:
            clauses.append(f"{alias}{column} {op} ?")
            params.append(value)
    if filters.cluster is not None:
        clauses.append(
            "EXISTS (SELECT 1 FROM cluster_member m "
            f"WHERE m.cluster_id = ? AND m.doc_id = {alias}id)"
        )
        params.append(filters.cluster)
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
            clauses.append(f"{column} IN ({', '.join('?' * len(values))})")
            params.extend(values)
    for tag in filters.tags:
        clauses.append("EXISTS (SELECT 1 FROM json_each(tags) WHERE value = ?)")
        params.append(tag)
    for column, op, value in (
        ("timestamp", ">=", filters.since),
        ("timestamp", "<=", filters.until),
    ):
        if value is not None:
            clauses.append(f"{column} {op} ?")
            params.append(value)
    return clauses, params
