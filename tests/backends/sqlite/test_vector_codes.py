"""Schema 15: each vector stored once, as int16 codes in a plain table; the migration from
schema 14's sqlite-vec ``vec0`` tables, and every reader of the stored vectors after it
(the index and its cache, the exact scan, reuse of unchanged text, export and copy)."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import apsw
import numpy as np
import pytest

import trove
from trove.backends.sqlite import vectors
from trove.backends.sqlite.schema import LATEST_VERSION
from trove.backends.sqlite.vector_index.codes import decode, encode
from trove.backends.sqlite.vector_index.exact import ExactScan
from trove.check import check

pytestmark = pytest.mark.sqlite_only

FIXTURE = Path(__file__).parent / "fixtures" / "schema14.db"
EMBEDDER = "hash:16"  # the fixture's (make_schema14.py)


def _conn(kb: trove.Store) -> Any:
    return kb.backend.conn  # type: ignore[attr-defined]


def _fixture_vectors(path: Path) -> dict[int, np.ndarray]:
    """The float32 vectors of the schema-14 file, read by sqlite-vec before migrating."""
    conn = apsw.Connection(str(path))
    vectors.load_extension(conn)
    rows = conn.execute("SELECT rowid, embedding FROM chunk_vec_1")
    found = {int(cid): np.frombuffer(blob, np.float32) for cid, blob in rows}
    conn.close()
    return found


def _tables(kb: trove.Store) -> dict[str, str]:
    rows = _conn(kb).execute(
        "SELECT name, sql FROM sqlite_schema WHERE type = 'table' AND name LIKE 'chunk_vec%'"
    )
    return {str(name): str(sql) for name, sql in rows}


def test_codes_read_back_within_half_a_step_of_the_row_largest() -> None:
    rng = np.random.default_rng(1)
    rows = (rng.normal(size=(200, 384)) * rng.uniform(0.01, 50, (200, 1))).astype(np.float32)
    rows[0] = 0.0  # a zero vector reads back as zeros
    back = decode(encode(rows))
    assert back.shape == rows.shape and back.dtype == np.float32
    top = np.abs(rows).max(axis=1, keepdims=True)
    assert np.all(np.abs(back - rows) <= top * (0.51 / 32767))
    assert not back[0].any()
    assert len(encode(rows)[1]) == 4 + 2 * 384


def test_a_damaged_row_of_codes_is_a_corrupt_store(tmp_path: Path) -> None:
    with trove.open(tmp_path / "kb.db", embedder=EMBEDDER) as kb:
        kb.add("Kittiwakes nest on ledges.")
        kb.add("Fulmars glide over the waves.")
        lock = kb.backend.vector_lock()
        assert lock is not None
        _conn(kb).execute(f"UPDATE {lock.table} SET codes = x'0102' WHERE id = 1")
        with pytest.raises(trove.CorruptStore):
            list(kb.backend.iter_vectors(lock.table))


@pytest.mark.usefixtures("small_caches")
def test_a_schema_14_store_migrates_its_vec0_tables(tmp_path: Path) -> None:
    path = tmp_path / "kb.db"
    shutil.copy(FIXTURE, path)
    before = _fixture_vectors(path)
    with trove.open(path, embedder=EMBEDDER) as kb:
        assert kb.stats().schema_version == LATEST_VERSION == 16
        tables = _tables(kb)
        assert sorted(tables) == ["chunk_vec_1", "chunk_vec_2"]  # the unfinished rebuild too
        assert not any("VIRTUAL" in sql.upper() for sql in tables.values())
        assert kb.backend.vector_count() == len(before) == 6
        lock = kb.backend.vector_lock()
        assert lock is not None and lock.table == "chunk_vec_1"
        for ids, got in kb.backend.iter_vectors(lock.table):
            want = np.stack([before[int(i)] for i in ids])
            assert np.abs(got - want).max() < 1e-4
        assert check(kb).ok, check(kb).problems
        assert kb.search("walrus ice floes", mode="semantic", limit=1)[0].source_id == "0"
        # Writes after the migration: a new vector, and a purge takes its vectors along.
        kb.add("Seals bask on the rocks.", source="fixture", source_id="new")
        assert kb.backend.vector_count() == 7
        long = kb.get_by_key("fixture", "long")
        assert long is not None
        kb.purge([long.id])
        assert kb.backend.vector_count() == 5
        assert check(kb).ok, check(kb).problems
        kb.warm()
        _conn(kb).execute("PRAGMA user_version = 14")  # the migration runs again safely
    assert (tmp_path / "kb.db.trove-index" / "chunk_vec_1.vectors").exists()
    with trove.open(path, embedder=EMBEDDER) as kb:
        assert kb.stats().schema_version == LATEST_VERSION
        assert kb.backend.vector_count() == 5
        # The index cache saved on close is checked against the ids' index, and used.
        assert kb.search("seals bask rocks", mode="semantic", limit=1)[0].source_id == "new"
        assert kb.vectors.loaded
        assert check(kb).ok, check(kb).problems


def test_the_exact_scan_finds_float32_neighbours(tmp_path: Path) -> None:
    """Before an index exists, search scores the stored codes: recall@10 against float32
    cosine stays at 0.99 or more (random unit vectors, the hardest case: near-ties)."""
    rng = np.random.default_rng(7)
    rows = rng.normal(size=(3000, 64)).astype(np.float32)
    rows /= np.linalg.norm(rows, axis=1, keepdims=True)
    with trove.open(tmp_path / "kb.db", embedder="hash:64") as kb:
        kb.add("a first document creates the vector table")
        lock = kb.backend.vector_lock()
        assert lock is not None
        ids = np.arange(1000, 1000 + len(rows))
        kb.backend.put_vectors(lock.table, ids.tolist(), rows)
        scan = ExactScan(kb.backend, lock.table)  # type: ignore[arg-type]
        found = 0
        for query in rng.normal(size=(40, 64)).astype(np.float32):
            scores = rows @ (query / np.linalg.norm(query))
            want = set((ids[np.argsort(-scores)[:10]]).tolist())
            got, got_scores = scan.search(query, 10)
            found += len(want & set(got.tolist()))
            assert np.all(np.diff(got_scores) <= 0)
        assert found / 400 >= 0.99
        some = ids[::7]
        got, _ = scan.search(rows[7], 5, candidates=some)  # a filtered search
        assert got[0] == 1007 and set(got.tolist()) <= set(some.tolist())


def test_a_store_without_vectors_before_migrating_gets_a_plain_table(tmp_path: Path) -> None:
    path = tmp_path / "kb.db"
    shutil.copy(Path(__file__).parent / "fixtures" / "schema13.db", path)
    with trove.open(path, embedder=EMBEDDER) as kb:
        assert kb.backend.vector_count() == 0 and _tables(kb) == {}
        kb.reembed(EMBEDDER)  # a keyword-only store gets vectors
        chunks = kb.stats().chunks
        kb.add("Terns dive for sand eels.", source="fixture", source_id="tern")
        assert list(_tables(kb)) == ["chunk_vec_1"]
        assert "VIRTUAL" not in _tables(kb)["chunk_vec_1"].upper()
        assert kb.backend.vector_count() == chunks + 1
        assert kb.search("terns sand eels", mode="semantic", limit=1)[0].source_id == "tern"
        assert check(kb).ok, check(kb).problems
