"""The PostgreSQL backend: a schema per store, psycopg 3 with a connection pool, pgvector.

Open it with ``trove.open("postgresql://user@host/db?schema=NAME")``. The class is the
parts mixed together, one module each (the SQLite backend's modules have the same names):
documents, files, filters, search, snippets, edges, stats, lifecycle, clusters,
originals, vectors, checks; it connects, migrates the schema and opens the pool.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence

from trove.errors import MissingDependency, StoreError

try:
    import psycopg
    from psycopg_pool import ConnectionPool, PoolTimeout
except ImportError as exc:  # pragma: no cover - exercised without the extra
    raise MissingDependency(exc.name or "psycopg", "postgres", "PostgreSQL support") from None

from trove.backends.listing import Listing
from trove.backends.postgres.checks import IntegrityChecks
from trove.backends.postgres.clusters import ClusterStorage
from trove.backends.postgres.documents import DocumentStorage
from trove.backends.postgres.edges import EdgeStorage
from trove.backends.postgres.files import FileStorage
from trove.backends.postgres.filters import DIALECT, FilterQueries
from trove.backends.postgres.knn import VectorSearch
from trove.backends.postgres.lifecycle import LifecycleStorage
from trove.backends.postgres.originals import OriginalStorage
from trove.backends.postgres.replicas import Replicas, open_pools
from trove.backends.postgres.schema import ensure_vector_extension, migrate
from trove.backends.postgres.search import KeywordSearch
from trove.backends.postgres.snippets import Snippets
from trove.backends.postgres.stats import Statistics
from trove.backends.postgres.url import parse, replica_target


class PostgresBackend(
    VectorSearch,
    DocumentStorage,
    FileStorage,
    FilterQueries,
    KeywordSearch,
    Snippets,
    EdgeStorage,
    Listing,
    Statistics,
    LifecycleStorage,
    ClusterStorage,
    OriginalStorage,
    IntegrityChecks,
):
    """Everything trove stores, in one PostgreSQL schema. Thread-safe: each thread's
    transaction has its own pooled connection."""

    dialect = DIALECT

    def __init__(self, target: str, *, replicas: Sequence[str] = ()) -> None:
        self.target = parse(target)
        standbys = [replica_target(url, self.target) for url in replicas]
        self.schema = self.target.schema
        self.where = f"{self.target.where}, schema {self.schema}"
        self._local = threading.local()
        self._stats_cache: tuple[float, int, float, float] | None = None
        self._meta_kept = {}
        self._stems: dict[str, tuple[str, ...]] = {}
        # "ts_rank_cd" is kept for comparison only (bench/backends.py): BM25 is far better.
        self.ranking = "bm25"
        with self._errors("cannot connect to"), self._direct() as conn:
            ext_schema, self.vector_version = ensure_vector_extension(conn)
            self._search_path = [self.schema] + ([ext_schema] if ext_schema != self.schema else [])
            self._set_path(conn)
            migrate(conn, self.schema)
            self.vector_info = psycopg.types.TypeInfo.fetch(conn, "vector")
            opened_at = self._wal_position(conn) if standbys else 0
        self.pool = self._pool(self.target.conninfo, self.target.pool_size)
        try:
            self.pool.open(wait=True, timeout=self._timeout())
        except PoolTimeout:
            self.pool.close()
            raise StoreError(f"cannot connect to PostgreSQL at {self.where}") from None
        if standbys:
            pools = open_pools([t.conninfo for t in standbys], lambda c: self._pool(c, 0))
            self.replicas = Replicas(list(pools))
            # The schema as this open migrated it: standbys serve once they have it.
            self.replicas.wrote(opened_at)

    def _pool(self, conninfo: str, size: int) -> ConnectionPool:
        """A pool of ``size`` connections (0: the primary's size) to one server."""
        return ConnectionPool(
            conninfo,
            min_size=1,
            max_size=size or self.target.pool_size,
            kwargs={"autocommit": True},
            configure=self._configure,
            # A server restart leaves dead connections in the pool: test on checkout.
            check=self.check,
            reset=self.returned,
            name=f"trove:{self.schema}",
            num_workers=1,
            open=False,
        )

    def close(self) -> None:
        try:
            self.stop_folding()  # a delta's rest stays, searched exactly (delta.py)
            self.finish_bulk()  # indexes set aside for a bulk load, built again
        finally:
            if self.replicas is not None:
                self.replicas.close()
            self.pool.close()
