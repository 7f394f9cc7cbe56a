"""Hard deletion in the SQLite backend: tombstoned and expired documents purged, chosen
documents removed (by id, a whole namespace), access counts and canonical marks."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING

import apsw

from trove.backends.sqlite.connection import Connected
from trove.backends.sqlite.in_order import SEQ_OF_ID as _SEQ
from trove.backends.sqlite.in_order import SEQS_OF_IDS as _SEQS
from trove.errors import StoreError

if TYPE_CHECKING:
    import numpy as np
else:  # numpy loads where first used: opening a store, stats, keyword search need none
    from trove.lazy import numpy as np


class LifecycleStorage(Connected):
    """Mixin of the SQLite backend: documents removed for good, with their chunks."""

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
                chunks = self.conn.execute(f"SELECT id FROM chunk WHERE doc = {_SEQ}", (doc_id,))
                self._index_changes.chunks(int(r[0]) for r in chunks)
                self.conn.execute(f"DELETE FROM chunk WHERE doc = {_SEQ}", (doc_id,))
                self.conn.execute("DELETE FROM document WHERE id = ?", (doc_id,))
        return ids

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
            chunks = self.conn.execute(f"SELECT id FROM chunk WHERE doc IN ({_SEQS})", (found,))
            # The indexes hear of the dropped chunks when the transaction commits.
            self._index_changes.chunks(int(r[0]) for r in chunks)
            self.conn.execute(f"DELETE FROM chunk WHERE doc IN ({_SEQS})", (found,))
            self.conn.execute(
                "DELETE FROM document WHERE id IN (SELECT value FROM json_each(?))", (found,)
            )
        return ids

    def record_access(self, counts: Mapping[str, tuple[int, float]]) -> None:
        """Add reads to documents' access counts: id -> (reads, time of the last)."""
        if self.conn.read_only:
            return  # a store opened read-only keeps no counts (reads go on)
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
        The vector table is scanned in bulk (a lookup per chunk is far slower)."""
        owners = {
            int(cid): str(doc_id)
            for cid, doc_id in self.conn.execute(
                "SELECT c.id, c.doc_id FROM document d JOIN chunk c ON c.doc = d.seq "
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
