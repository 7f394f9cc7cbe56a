"""Hard deletion in the PostgreSQL backend: tombstoned and expired documents purged, chosen
documents removed (by id, a whole namespace), access counts and canonical marks. Chunks,
vectors and edges go with their documents by ``ON DELETE CASCADE``."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import psycopg

from trove.backends.postgres.connection import Connected
from trove.backends.postgres.vectors import as_array, checked_table
from trove.errors import StoreError


class LifecycleStorage(Connected):
    """Mixin of the PostgreSQL backend: documents removed for good."""

    def purge(self, now: float) -> list[str]:
        """Remove tombstoned and expired documents for good; returns their ids."""
        with self.transaction(), self.conn() as conn:
            rows = conn.execute(
                "DELETE FROM document WHERE deleted_at IS NOT NULL "
                "OR (expires_at IS NOT NULL AND expires_at <= %s) RETURNING id",
                (now,),
            ).fetchall()
        self._written()
        return [str(r[0]) for r in rows]

    def remove_documents(self, doc_ids: Sequence[str]) -> list[str]:
        """Remove these documents (in any state) for good; returns the ids that existed."""
        with self.transaction(), self.conn() as conn:
            rows = conn.execute(
                "DELETE FROM document WHERE id = ANY(%s) RETURNING id",
                ([i for i in dict.fromkeys(doc_ids)],),
            ).fetchall()
        self._written()
        return [str(r[0]) for r in rows]

    def record_access(self, counts: Mapping[str, tuple[int, float]]) -> None:
        """Add reads to documents' access counts: id -> (reads, time of the last)."""
        # Sorted ids: two recorders lock rows in the same order, so never deadlock.
        rows = [(n, last, doc_id) for doc_id, (n, last) in sorted(counts.items())]
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
        rows = [(c, doc_id) for doc_id, c in sorted(marks.items())]
        with self.transaction(), self.conn() as conn, conn.cursor() as cur:
            cur.executemany("UPDATE document SET canonical_id = %s WHERE id = %s", rows)

    def namespace_vectors(self, namespace: str, table: str) -> tuple[list[str], np.ndarray]:
        """Every chunk vector of a namespace's documents: (document id per row, matrix)."""
        rows = self.rows(
            f"SELECT c.doc_id, v.embedding FROM chunk c JOIN {checked_table(table)} v "
            "ON v.chunk_id = c.id JOIN document d ON d.id = c.doc_id WHERE d.namespace = %s",
            (namespace,),
        )
        if not rows:
            return [], np.zeros((0, 0), dtype=np.float32)
        matrix = np.stack([as_array(r[1]) for r in rows]).astype(np.float32, copy=False)
        return [str(r[0]) for r in rows], matrix

    def namespace_documents(self, namespace: str) -> list[str]:
        """Ids of every document of a namespace (any scope, deleted and expired too)."""
        rows = self.rows("SELECT id FROM document WHERE namespace = %s", (namespace,))
        return [str(r[0]) for r in rows]
