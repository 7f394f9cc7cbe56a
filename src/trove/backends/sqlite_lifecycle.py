"""Hard deletion of chosen documents in the SQLite backend (purge by id, clear a namespace)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from contextlib import AbstractContextManager

from .sqlite_conn import SerializedConnection


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

    def namespace_documents(self, namespace: str) -> list[str]:
        """Ids of every document of a namespace (any scope, deleted and expired too)."""
        rows = self.conn.execute("SELECT id FROM document WHERE namespace = ?", (namespace,))
        return [str(r[0]) for r in rows]
