"""What ``trove check`` asks of a PostgreSQL store beyond its word postings: rows that
point at nothing, chunks without their vector or with two (one in the vector table, one
in its delta or a segment), counted per kind of problem.

The schema's foreign keys keep these from happening through trove; they happen when
constraints were bypassed (``session_replication_role = replica``, a restore without
constraints, a hand edit), and a check that trusts the constraints would miss them.
"""

from __future__ import annotations

from psycopg import sql

from trove.backends.postgres.connection import Connected
from trove.backends.postgres.vectors import checked_table
from trove.backends.vector_lock import LOCK_KEY, read_lock

# (what is wrong, the query counting it): each counts rows, never lists them all.
_ORPHANS = (
    (
        "chunk: {} chunks of documents that are gone",
        "SELECT count(*) FROM chunk c WHERE NOT EXISTS "
        "(SELECT 1 FROM document d WHERE d.id = c.doc_id)",
    ),
    (
        "edge: {} links from or to documents that are gone",
        "SELECT count(*) FROM edge e WHERE NOT EXISTS "
        "(SELECT 1 FROM document d WHERE d.id = e.src) OR NOT EXISTS "
        "(SELECT 1 FROM document d WHERE d.id = e.dst)",
    ),
    (
        "cluster_member: {} members that are documents gone",
        "SELECT count(*) FROM cluster_member m WHERE NOT EXISTS "
        "(SELECT 1 FROM document d WHERE d.id = m.doc_id)",
    ),
)


class IntegrityChecks(Connected):
    """Mixin of the PostgreSQL backend: the row checks of ``trove check``."""

    def integrity_problems(self) -> list[str]:
        """Rows whose document or chunk is gone; chunks without a vector once the store
        has vectors (``trove reembed --missing`` embeds those), or with more than one."""
        found = []
        for message, query in _ORPHANS:
            row = self.one(query)
            if row and row[0]:
                found.append(message.format(row[0]))
        lock = read_lock(self.get_meta(LOCK_KEY))
        if lock is None:
            return found
        table = sql.Identifier(checked_table(lock.table))
        row = self.one(
            sql.SQL(
                "SELECT (SELECT count(*) FROM chunk c WHERE NOT EXISTS "
                "(SELECT 1 FROM {0} v WHERE v.chunk_id = c.id) AND EXISTS (SELECT 1 FROM "
                "document d WHERE d.id = c.doc_id AND d.indexed IN ('both', 'semantic'))), "
                "(SELECT count(*) FROM {0} v WHERE NOT EXISTS "
                "(SELECT 1 FROM chunk c WHERE c.id = v.chunk_id)), "
                "(SELECT count(*) - count(DISTINCT chunk_id) FROM {0})"
            ).format(table)
        )
        missing, orphans, twice = (int(row[0]), int(row[1]), int(row[2])) if row else (0, 0, 0)
        if missing:
            found.append(
                f"{missing} chunks have no vector in {lock.table} "
                "(`trove reembed --missing` embeds them)"
            )
        if orphans:
            found.append(f"{lock.table}: {orphans} vectors of chunks that are gone")
        if twice:  # each table has its key: the delta and segments (delta.py) are apart
            found.append(f"{lock.table}: {twice} vectors of chunks that have one already")
        return found
