"""The form of a vector table's HNSW index (hnsw.py): half precision where pgvector has
it, the full-precision graph of an older store kept, the k-NN scanning every part of the
table by its index, and hits ranked and scored by the exact distance."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
from psycopg import sql

import trove
from trove.backends.postgres import backend, bulk, delta, hnsw
from trove.backends.postgres.backend import PostgresBackend
from trove.search.filters import Filters


def test_the_form_follows_the_installed_pgvector_and_the_dimension() -> None:
    assert hnsw.built("0.6.2", 384) == hnsw.VECTOR
    assert hnsw.built("0.6.2", 2000) == hnsw.VECTOR
    assert hnsw.built("0.6.2", 2001) == hnsw.NONE
    assert hnsw.built("0.7.0", 384) == hnsw.half(384)
    assert hnsw.built("0.8.5", 4000) == hnsw.half(4000)
    assert hnsw.built("0.8.5", 4001) == hnsw.NONE
    assert hnsw.built("0.10.0", 384) == hnsw.half(384)  # numbers, not strings, compared
    assert hnsw.half(384).key() == "(embedding::halfvec(384))"
    assert hnsw.half(384).distance() == "embedding::halfvec(384) <=> %s::halfvec(384)"
    assert hnsw.VECTOR.distance() == "embedding <=> %s" and not hnsw.NONE.indexed


def notes(n: int, start: int = 0) -> list[dict[str, str]]:
    return [
        {"text": f"note {i} on {'tides' if i % 2 else 'glaciers'} {i % 5}", "source_id": str(i)}
        for i in range(start, start + n)
    ]


def index_defs(kb: trove.Store) -> dict[str, str]:
    rows = kb.backend.rows(  # type: ignore[attr-defined]
        "SELECT indexname, indexdef FROM pg_indexes WHERE schemaname = current_schema() "
        "AND indexname LIKE 'chunk_vec%%hnsw'"
    )
    return {str(name): str(definition) for name, definition in rows}


@pytest.fixture
def knn_plans(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """The plans of the k-NN statements searches send (EXPLAIN of each, same settings)."""
    plans: list[str] = []
    read_with = PostgresBackend.read_with

    def explained(self: Any, settings: Any, query: Any, params: Any = ()) -> Any:
        if "WITH near" in str(query):
            with self.transaction(), self.conn() as conn:
                for key, value in settings.items():
                    conn.execute("SELECT set_config(%s, %s, true)", (key, value))
                rows = conn.execute(sql.SQL("EXPLAIN ") + query, params).fetchall()
            plans.append("\n".join(str(r[0]) for r in rows))
        return read_with(self, settings, query, params)

    monkeypatch.setattr(PostgresBackend, "read_with", explained)
    yield plans


@pytest.fixture
def sealed_small(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every batch goes to the delta, which seals past 10 rows; no folding."""
    monkeypatch.setattr(delta, "DELTA_FROM", 0)
    monkeypatch.setattr(delta, "DELTA_MAX", 10)
    monkeypatch.setattr(delta.Folder, "kick", lambda self: None)


def written_by_pgvector_0_6(pg_target: str, monkeypatch: pytest.MonkeyPatch, n: int) -> None:
    """A store of ``n`` notes whose vectors were indexed by pgvector 0.6.2 (the server
    said so): its graph is at full precision."""
    found = backend.ensure_vector_extension
    with monkeypatch.context() as older:
        older.setattr(backend, "ensure_vector_extension", lambda c: (found(c)[0], "0.6.2"))
        with trove.open(pg_target, embedder="hash:64") as kb:
            kb.add_many(notes(n), batch_size=n)


def segment_and_search(kb: trove.Store, expected: str, plans: list[str]) -> None:
    """The table and its first segment are indexed as ``expected`` says, and a search
    finds its note by scanning both indexes."""
    lock = kb.backend.vector_lock()
    assert lock is not None
    defs = index_defs(kb)
    assert set(defs) == {f"{lock.table}_hnsw", f"{lock.table}_seg_1_hnsw"}
    for definition in defs.values():
        assert expected in definition
    hits = kb.search("note 9 on tides 4", mode="semantic", limit=3)
    assert hits[0].doc_id == kb.get_by_key("", "9").id  # type: ignore[union-attr]
    # One ordered scan of each part: both graphs by their index, the delta sorted.
    assert f"Index Scan using {lock.table}_hnsw" in plans[-1]
    assert f"Index Scan using {lock.table}_seg_1_hnsw" in plans[-1]


@pytest.mark.usefixtures("sealed_small")
def test_the_table_and_its_segments_are_indexed_at_half_precision_and_scanned(
    pg_target: str, knn_plans: list[str]
) -> None:
    with trove.open(pg_target, embedder="hash:64") as kb:
        kb.add_many(notes(12), batch_size=12)  # into the delta, sealed: segment 1
        kb.add_many(notes(3, start=12), batch_size=3)  # stays in the delta
        segment_and_search(kb, "((embedding)::halfvec(64)) halfvec_cosine_ops", knn_plans)


@pytest.mark.usefixtures("sealed_small")
def test_a_table_indexed_at_full_precision_keeps_its_form_and_its_segments_follow(
    pg_target: str, knn_plans: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A store indexed by pgvector before 0.7 keeps its graph after the upgrade."""
    written_by_pgvector_0_6(pg_target, monkeypatch, 4)
    with trove.open(pg_target, embedder="hash:64") as kb:
        version = kb.backend.vector_version  # type: ignore[attr-defined]
        assert hnsw.built(version, 64) == hnsw.half(64)  # what this server builds now
        kb.add_many(notes(12, start=4), batch_size=12)  # sealed into segment 1
        segment_and_search(kb, "USING hnsw (embedding vector_cosine_ops)", knn_plans)


def test_hits_are_ranked_and_scored_by_the_exact_distance(pg_target: str) -> None:
    """The graph is walked in half precision; scores are the float32 vectors' cosine
    (half precision alone is off by about 1e-3)."""
    rng = np.random.default_rng(7)
    with trove.open(pg_target, embedder="hash:64") as kb:
        kb.add_many(notes(40), batch_size=40)
        lock = kb.backend.vector_lock()
        assert lock is not None
        rows = kb.backend.rows(f"SELECT chunk_id, embedding FROM {lock.table}")  # type: ignore[attr-defined]
        stored = {int(cid): np.asarray(v.to_numpy(), np.float64) for cid, v in rows}
        for _ in range(5):
            query = rng.standard_normal(64).astype(np.float32)
            hits = kb.backend.vector_search(lock, query, Filters.build(), 10, 0.0)  # type: ignore[attr-defined]
            q = query.astype(np.float64)
            exact = {
                cid: float(v @ q / (np.linalg.norm(v) * np.linalg.norm(q)))
                for cid, v in stored.items()
            }
            best = sorted(exact.values(), reverse=True)[:10]
            assert [h.score for h in hits] == pytest.approx(best, abs=1e-6)
            for hit in hits:
                assert hit.score == pytest.approx(exact[hit.chunk_id], abs=1e-6)


def test_vectors_wider_than_the_full_precision_limit_are_indexed(pg_target: str) -> None:
    """3,000 dimensions: no full-precision HNSW (2,000 at most), a half-precision one."""
    with trove.open(pg_target, embedder="hash:3000") as kb:
        kb.add_many(notes(6), batch_size=6)
        lock = kb.backend.vector_lock()
        assert lock is not None and lock.dimension == 3000
        assert "halfvec(3000)) halfvec_cosine_ops" in index_defs(kb)[f"{lock.table}_hnsw"]
        hits = kb.search("note 3 on tides 3", mode="semantic", limit=2)
        assert hits[0].doc_id == kb.get_by_key("", "3").id  # type: ignore[union-attr]


def test_a_bulk_load_builds_a_set_aside_index_again_in_the_form_it_had(
    pg_target: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The index a bulk load sets aside (bulk.py) comes back as it was: a store indexed
    at full precision is not switched to half precision by a large batch."""
    monkeypatch.setattr(bulk, "BULK_ROWS", 20)
    written_by_pgvector_0_6(pg_target, monkeypatch, 4)
    with trove.open(pg_target, embedder="hash:64") as kb:
        kb.search("note 1 on tides 1", mode="semantic", limit=3)  # the form read and kept
        kb.add_many(notes(40, start=4), batch_size=40)  # 40 >= 20 into 4 rows: set aside
        lock = kb.backend.vector_lock()
        assert lock is not None
        assert index_defs(kb) == {}
        hits = kb.search("note 33 on tides 3", mode="semantic", limit=3)  # built again
        assert hits[0].doc_id == kb.get_by_key("", "33").id  # type: ignore[union-attr]
        assert "USING hnsw (embedding vector_cosine_ops)" in index_defs(kb)[f"{lock.table}_hnsw"]
