"""The HNSW index of a vector table: which form it takes, and what a k-NN orders by.

A vector table keeps each chunk's float32 vector (``vector(D)``). pgvector indexes it in
one of two forms:

- **half precision** (pgvector 0.7 and later, up to 4,000 dimensions): the graph is built
  over ``embedding::halfvec(D)`` with ``halfvec_cosine_ops``. Its index is about half
  the size (384-d vectors: 112 MB against 195 at 100k, 1,048 against 1,989 at 1M), builds
  10-15% faster, and at 1M, where the full graph outgrows 1 GB of shared buffers, its
  bare top 10 at ef_search 200 took 4.0 ms p50 against 7.8 (at 100k, where both fit, the
  search costs the same; docs/benchmarks.md). The k-NN walks it by half-precision
  distance and ranks what it found by the exact distance of the stored vectors
  (knn.py), so scores are what they were.
- **full precision** (``vector_cosine_ops``, up to 2,000 dimensions): pgvector before 0.7,
  and every table indexed so before (kept until its vectors are rebuilt).

Wider vectors have no index: searches rank them exactly.

A table's form is read from its index. A bulk load (bulk.py) that sets the index aside
builds it again in the form it had; meanwhile a search, with no index to scan, sorts the
table by the distance of the form a new index would take and ranks what passes its
filter by the exact distance. The delta's segments (delta.py)
take their table's form, so one k-NN scans all of their indexes in one Merge Append.
"""

from __future__ import annotations

from typing import NamedTuple

import psycopg
from psycopg import sql

# pgvector's limits on what HNSW indexes: vector up to 2,000 dimensions, halfvec (0.7.0
# and later) up to 4,000.
MAX_VECTOR_DIMENSION = 2000
MAX_HALFVEC_DIMENSION = 4000
HALFVEC_SINCE = (0, 7, 0)


class Form(NamedTuple):
    """How a vector table is indexed: the operator class (None: not indexed) and the cast
    the graph is built over ("" for the vectors themselves)."""

    opclass: str | None
    cast: str = ""

    @property
    def indexed(self) -> bool:
        return self.opclass is not None

    def key(self) -> str:
        """The indexed expression."""
        return f"(embedding{self.cast})" if self.cast else "embedding"

    def distance(self) -> str:
        """The distance the graph is built over, with a placeholder for the query vector:
        what a k-NN orders by to scan the index."""
        return f"embedding{self.cast} <=> %s{self.cast}"


NONE = Form(None)
VECTOR = Form("vector_cosine_ops")


def half(dimension: int) -> Form:
    return Form("halfvec_cosine_ops", f"::halfvec({int(dimension)})")


def built(version: str, dimension: int) -> Form:
    """The form a new index over ``dimension``-d vectors takes with pgvector ``version``
    (the extension's installed version: an upgraded library keeps the old SQL types)."""
    if _parsed(version) >= HALFVEC_SINCE and dimension <= MAX_HALFVEC_DIMENSION:
        return half(dimension)
    return VECTOR if dimension <= MAX_VECTOR_DIMENSION else NONE


def _parsed(version: str) -> tuple[int, ...]:
    """ "0.8.5" as (0, 8, 5); a suffix such as "0.8.0-dev" keeps its digits."""
    pieces = ("".join(c for c in piece if c.isdigit()) for piece in version.split("."))
    return tuple(int(digits or 0) for digits in pieces)


def name(table: str) -> str:
    """The name of ``table``'s index."""
    return f"{table}_hnsw"


_FOUND = (
    "SELECT a.atttypmod, (SELECT pg_get_indexdef(i) FROM to_regclass(%s) i), "
    "(SELECT extversion FROM pg_extension WHERE extname = 'vector') "
    "FROM pg_attribute a WHERE a.attrelid = %s::regclass AND a.attname = 'embedding'"
)


def form_of(conn: psycopg.Connection, table: str) -> tuple[Form, bool]:
    """``table``'s form, and whether its index exists (else: the form it would be built
    with now)."""
    row = conn.execute(_FOUND, (name(table), table)).fetchone()
    if row is None:
        raise psycopg.errors.UndefinedTable(f"{table} has no embedding column")
    dimension, definition, version = int(row[0]), row[1], str(row[2] or "0")
    if definition is None:
        return built(version, dimension), False
    if "halfvec_cosine_ops" in definition:
        return half(dimension), True
    return VECTOR, True


def create(conn: psycopg.Connection, table: str, form: Form) -> None:
    """``table``'s HNSW index in ``form`` (pgvector's default graph: m 16,
    ef_construction 64), unless it has one or the form indexes nothing."""
    if form.opclass is None:
        return
    conn.execute(
        sql.SQL("CREATE INDEX IF NOT EXISTS {} ON {} USING hnsw ({} {})").format(
            sql.Identifier(name(table)),
            sql.Identifier(table),
            sql.SQL(form.key()),
            sql.SQL(form.opclass),
        )
    )
