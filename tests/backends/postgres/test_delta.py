"""Vectors written into a large PostgreSQL store go to an unindexed delta table first
(delta.py): found by the next search, deleted with their chunks, never twice, and folded
into the indexed table with the same results."""

from __future__ import annotations

import time
from collections.abc import Iterator

import numpy as np
import psycopg
import pytest

import trove
from trove.backends.postgres import delta
from trove.backends.postgres.url import parse
from trove.check import check


@pytest.fixture
def into_delta(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Every batch into an indexed table goes to its delta (no store here is large)."""
    monkeypatch.setattr(delta, "DELTA_FROM", 0)
    yield


@pytest.fixture(autouse=True)
def quick_folding(monkeypatch: pytest.MonkeyPatch) -> None:
    """The folder starts right after a write (it waits 2 s of quiet where it ships)."""
    monkeypatch.setattr(delta, "QUIET_S", 0.05)


@pytest.fixture
def no_folding(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(delta.Folder, "kick", lambda self: None)


def counts(pg_url: str, pg_target: str, kb: trove.Store) -> tuple[int, int]:
    """Rows in the vector table itself and in its delta."""
    lock = kb.backend.vector_lock()
    assert lock is not None
    schema = parse(pg_target).schema
    with psycopg.connect(pg_url, autocommit=True) as conn:
        main = conn.execute(f'SELECT count(*) FROM ONLY "{schema}"."{lock.table}"').fetchone()
        found = conn.execute("SELECT to_regclass(%s)", (f'"{schema}"."{delta.name(lock.table)}"',))
        if found.fetchone() == (None,):
            return int(main[0]) if main else 0, 0
        rest = conn.execute(
            f'SELECT count(*) FROM ONLY "{schema}"."{delta.name(lock.table)}"'
        ).fetchone()
    return (int(main[0]) if main else 0), (int(rest[0]) if rest else 0)


def notes(n: int, start: int = 0, namespace: str = "default") -> list[dict[str, str]]:
    return [
        {
            "text": f"note {i} about {'cats' if i % 3 else 'dogs'} and {i % 7} things",
            "source": "t",
            "source_id": str(i),
            "namespace": namespace,
        }
        for i in range(start, start + n)
    ]


def semantic(kb: trove.Store, queries: list[str]) -> list[list[str]]:
    return [[h.doc_id for h in kb.search(q, mode="semantic", limit=5)] for q in queries]


def write_and_purge(
    one: trove.Store, two: trove.Store, start: int, each: int, batches: tuple[int, int]
) -> None:
    """A round of two writers: ``each`` notes from ``start`` by ``one``, the next ``each``
    by ``two`` (in batches of ``batches``), then ``two`` purges one of ``one``'s."""
    one.add_many(notes(each, start=start), batch_size=batches[0])
    two.add_many(notes(each, start=start + each), batch_size=batches[1])
    gone = one.get_by_key("t", str(start + 3))
    assert gone is not None
    two.purge([gone.id])  # its vector, wherever it is by now, goes with it


QUERIES = ["dogs and 3 things", "cats", "note 17 about cats", "nothing like it"]


@pytest.mark.usefixtures("into_delta", "no_folding")
def test_a_written_vector_is_in_the_delta_and_found_by_the_next_search(
    pg_target: str, pg_url: str
) -> None:
    with trove.open(pg_target, embedder="hash:64") as kb:
        kb.add("the first note", source_id="first")  # the lock and the indexed table
        first = counts(pg_url, pg_target, kb)
        kb.add_many(notes(40), batch_size=20)
        assert counts(pg_url, pg_target, kb) == (first[0], first[1] + 40)
        hit = kb.search("note 17 about cats and 3 things", mode="semantic", limit=1)
        assert [h.doc_id for h in hit] == [kb.get_by_key("t", "17").id]  # type: ignore[union-attr]
        assert kb.stats().vectors == 41
        assert check(kb).problems == []


@pytest.mark.usefixtures("into_delta", "no_folding")
def test_check_finds_a_chunk_with_a_vector_in_two_tables(pg_target: str, pg_url: str) -> None:
    """Only trove's writes keep a chunk's vector in one table (each table has its own key):
    a copy made by hand, into the table beside the delta's row, is a problem."""
    with trove.open(pg_target, embedder="hash:64") as kb:
        kb.add_many(notes(5))
        lock = kb.backend.vector_lock()
        assert lock is not None and check(kb).problems == []
        schema = parse(pg_target).schema
        with psycopg.connect(pg_url, autocommit=True) as conn:
            conn.execute(
                f'INSERT INTO "{schema}"."{lock.table}" SELECT * FROM ONLY '
                f'"{schema}"."{delta.name(lock.table)}" LIMIT 2'
            )
        assert check(kb).problems == [f"{lock.table}: 2 vectors of chunks that have one already"]


@pytest.mark.usefixtures("into_delta", "no_folding")
def test_folding_moves_every_row_and_keeps_the_results(pg_target: str, pg_url: str) -> None:
    with trove.open(pg_target, embedder="hash:64") as kb:
        kb.add_many(notes(60), batch_size=30)
        assert counts(pg_url, pg_target, kb) == (0, 60)
        before = semantic(kb, QUERIES)
        lock = kb.backend.vector_lock()
        assert lock is not None
        with kb.backend.conn() as conn:  # type: ignore[attr-defined]
            while delta.fold(conn, lock.table, 7):
                pass
        assert counts(pg_url, pg_target, kb) == (60, 0)
        assert semantic(kb, QUERIES) == before


@pytest.mark.usefixtures("into_delta", "no_folding")
def test_deletes_and_rewrites_leave_one_vector_a_chunk(pg_target: str, pg_url: str) -> None:
    with trove.open(pg_target, embedder="hash:64") as kb:
        kb.add_many(notes(20), batch_size=20)
        gone = kb.get_by_key("t", "4")
        assert gone is not None
        kb.purge([gone.id])
        assert sum(counts(pg_url, pg_target, kb)) == 19
        assert gone.id not in {h for ids in semantic(kb, QUERIES) for h in ids}
        lock = kb.backend.vector_lock()
        assert lock is not None
        cid = int(kb.backend.one("SELECT min(chunk_id) FROM " + lock.table)[0])  # type: ignore[attr-defined]
        one = np.ones((1, 64), np.float32) / 8
        with kb.backend.conn() as conn:  # type: ignore[attr-defined]
            delta.fold(conn, lock.table)  # all in the table now
        kb.backend.put_vectors(lock.table, [cid], one)  # into the delta: out of the table
        assert counts(pg_url, pg_target, kb) == (18, 1)
        kb.backend.put_vectors(lock.table, [cid], one * -1)  # again: the delta's row updated
        assert counts(pg_url, pg_target, kb) == (18, 1)
        delta.DELTA_FROM = 10**9  # type: ignore[misc]  # (the fixture restores it)
        kb.backend.put_vectors(lock.table, [cid], one)  # into the table: out of the delta
        assert counts(pg_url, pg_target, kb) == (19, 0)


@pytest.mark.usefixtures("into_delta", "no_folding")
def test_namespaces_stay_apart_in_the_delta(pg_target: str) -> None:
    with trove.open(pg_target, embedder="hash:64") as kb:
        kb.add_many(notes(10, namespace="alpha"), batch_size=10)
        kb.add_many(notes(10, start=100, namespace="beta"), batch_size=10)
        for namespace in ("alpha", "beta"):
            hits = kb.search("cats", mode="semantic", limit=20, namespace=namespace)
            assert len(hits) == 10
            assert {kb.get(h.doc_id).namespace for h in hits} == {namespace}  # type: ignore[union-attr]


@pytest.mark.usefixtures("into_delta")
def test_a_writer_folds_in_the_background_and_close_stops_it(pg_target: str, pg_url: str) -> None:
    with trove.open(pg_target, embedder="hash:64") as kb:
        kb.add_many(notes(50), batch_size=25)
        deadline = time.monotonic() + 60
        while counts(pg_url, pg_target, kb)[1] and time.monotonic() < deadline:
            time.sleep(0.2)
        assert counts(pg_url, pg_target, kb) == (50, 0)
        kb.add_many(notes(20, start=100), batch_size=20)
    with trove.open(pg_target, embedder="hash:64") as kb:  # what close left, still found
        assert sum(counts(pg_url, pg_target, kb)) == 70
        assert len(kb.search("dogs", mode="semantic", limit=70)) == 70


@pytest.mark.usefixtures("into_delta")
def test_the_folder_waits_while_its_writer_goes_on_writing(
    pg_target: str, pg_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A fold's HNSW inserts would take the server from a sustained load: the folder
    starts once its writer has been quiet for QUIET_S."""
    monkeypatch.setattr(delta, "QUIET_S", 1.0)
    with trove.open(pg_target, embedder="hash:64") as kb:
        kb.add("the first note", source_id="first")  # the lock and the indexed table
        lock = kb.backend.vector_lock()
        assert lock is not None
        folder = kb.backend._folder(lock.table)  # type: ignore[attr-defined]
        before = counts(pg_url, pg_target, kb)[1]
        ends = time.monotonic() + 3
        start = 0
        while time.monotonic() < ends:  # a write every 0.3 s, each kicking the folder
            kb.add_many(notes(5, start=start), batch_size=5)
            start += 5
            time.sleep(0.3)
        assert counts(pg_url, pg_target, kb)[1] == before + start  # none folded meanwhile
        deadline = time.monotonic() + 60
        while counts(pg_url, pg_target, kb)[1] and time.monotonic() < deadline:
            time.sleep(0.2)
        assert counts(pg_url, pg_target, kb)[1] == 0 and folder.folded == before + start


@pytest.mark.usefixtures("into_delta", "no_folding")
def test_a_rebuild_with_a_delta_drops_it_with_the_old_table(pg_target: str, pg_url: str) -> None:
    with trove.open(pg_target, embedder="hash:64") as kb:
        kb.add_many(notes(30), batch_size=15)
        assert counts(pg_url, pg_target, kb)[1] > 0
        before = semantic(kb, QUERIES)
        old = kb.backend.vector_lock()
        kb.reembed()
        lock = kb.backend.vector_lock()
        assert old is not None and lock is not None and lock.table != old.table
        assert sum(counts(pg_url, pg_target, kb)) == 30
        assert semantic(kb, QUERIES) == before


@pytest.mark.usefixtures("into_delta")
def test_two_writers_folding_and_deleting_at_once_lose_and_double_nothing(
    pg_target: str, pg_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(delta, "FOLD_ROWS", 5)  # many small folds between the writes
    with (
        trove.open(pg_target, embedder="hash:64") as one,
        trove.open(pg_target, embedder="hash:64") as two,
    ):
        for start in range(0, 120, 20):
            write_and_purge(one, two, start, 10, (10, 10))
        deadline = time.monotonic() + 60
        while counts(pg_url, pg_target, one)[1] and time.monotonic() < deadline:
            time.sleep(0.2)
        assert counts(pg_url, pg_target, one) == (114, 0)
        lock = one.backend.vector_lock()
        assert lock is not None
        row = one.backend.one(  # type: ignore[attr-defined]
            f"SELECT count(DISTINCT chunk_id), count(*) FROM {lock.table}"
        )
        assert row == (114, 114)
        assert check(one).problems == []
        assert len(one.search("dogs", mode="semantic", limit=200)) == 114


@pytest.mark.usefixtures("into_delta")
def test_close_cancels_a_fold_under_way_and_its_rows_stay_in_the_delta(
    pg_target: str, pg_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A fold into a large graph takes seconds; the writer's close does not wait for it."""
    folding = []

    def slow_fold(conn: psycopg.Connection, table: str, limit: int = delta.FOLD_ROWS) -> int:
        folding.append(True)
        conn.execute("SELECT pg_sleep(30)")  # a fold of FOLD_ROWS HNSW inserts into 1M rows
        return 0

    monkeypatch.setattr(delta, "fold", slow_fold)
    kb = trove.open(pg_target, embedder="hash:64")
    try:
        kb.add_many(notes(30), batch_size=30)
        deadline = time.monotonic() + 30
        while not folding and time.monotonic() < deadline:
            time.sleep(0.05)
        assert folding
    finally:
        began = time.monotonic()
        kb.close()
    assert time.monotonic() - began < 5
    with trove.open(pg_target, embedder="hash:64") as kb:
        assert counts(pg_url, pg_target, kb) == (0, 30)
        assert len(kb.search("dogs", mode="semantic", limit=30)) == 30


# --- segments: a full delta sealed into an indexed table of its own --------------------


@pytest.fixture
def small_delta(monkeypatch: pytest.MonkeyPatch) -> None:
    """A delta holds at most 10 rows; two segments of a size class merge."""
    monkeypatch.setattr(delta, "DELTA_MAX", 10)
    monkeypatch.setattr(delta, "SEGMENT_FANIN", 2)


def layout(kb: trove.Store) -> dict[str, int]:
    """Rows in each table the vectors are in: the table, its delta, each segment (counted
    in one statement, while a folder may be dropping a segment)."""
    lock = kb.backend.vector_lock()
    assert lock is not None
    with kb.backend.conn() as conn:  # type: ignore[attr-defined]
        children = [delta.name(lock.table), *delta.segments(conn, lock.table)]
        held = conn.execute(
            f"SELECT tableoid::regclass::text, count(*) FROM {lock.table} GROUP BY 1"
        ).fetchall()
    rows = {lock.table: 0, **dict.fromkeys(children, 0)}
    rows.update((str(t), int(n)) for t, n in held)
    return rows


def indexed(kb: trove.Store, table: str) -> bool:
    row = kb.backend.one("SELECT to_regclass(%s)", (f"{table}_hnsw",))  # type: ignore[attr-defined]
    return row is not None and row[0] is not None


def once_each(kb: trove.Store) -> tuple[int, int]:
    lock = kb.backend.vector_lock()
    assert lock is not None
    row = kb.backend.one(f"SELECT count(DISTINCT chunk_id), count(*) FROM {lock.table}")  # type: ignore[attr-defined]
    return int(row[0]), int(row[1])


def fold_all(kb: trove.Store) -> None:
    lock = kb.backend.vector_lock()
    assert lock is not None
    with kb.backend.conn() as conn:  # type: ignore[attr-defined]
        while delta.fold(conn, lock.table, 7):
            pass
        delta.fold(conn, lock.table)  # drops what the last moves emptied


@pytest.mark.usefixtures("into_delta", "no_folding", "small_delta")
def test_a_full_delta_is_sealed_into_an_indexed_segment_found_by_search(
    pg_target: str,
) -> None:
    with trove.open(pg_target, embedder="hash:64") as kb:
        kb.add_many(notes(8), batch_size=8)
        lock = kb.backend.vector_lock()
        assert lock is not None
        assert layout(kb) == {lock.table: 0, delta.name(lock.table): 8}
        kb.add_many(notes(5, start=8), batch_size=5)  # 13 > 10: sealed by this write
        first = f"{lock.table}_seg_1"
        assert layout(kb) == {lock.table: 0, delta.name(lock.table): 0, first: 13}
        assert indexed(kb, first) and not indexed(kb, delta.name(lock.table))
        hit = kb.search("note 11 about cats and 4 things", mode="semantic", limit=1)
        assert [h.doc_id for h in hit] == [kb.get_by_key("t", "11").id]  # type: ignore[union-attr]
        before = semantic(kb, QUERIES)
        assert kb.stats().vectors == 13 and check(kb).problems == []
        fold_all(kb)  # into the table's own graph, the segment dropped once empty
        assert layout(kb) == {lock.table: 13, delta.name(lock.table): 0}
        assert semantic(kb, QUERIES) == before


@pytest.mark.usefixtures("into_delta", "no_folding", "small_delta")
def test_segments_merge_by_size_class_and_hold_each_vector_once(pg_target: str) -> None:
    with trove.open(pg_target, embedder="hash:64") as kb:
        for start in range(0, 132, 11):  # each write of 11 seals: 12 segments' worth
            kb.add_many(notes(11, start=start), batch_size=11)
            rows = layout(kb)
            lock = kb.backend.vector_lock()
            assert lock is not None
            held = {t: n for t, n in rows.items() if "_seg_" in t}
            classes = [delta.size_class(n) for n in held.values()]
            # No size class keeps SEGMENT_FANIN (2) segments: they were merged.
            assert len(classes) == len(set(classes)), held
            assert all(indexed(kb, t) for t in held)
            assert sum(rows.values()) == start + 11
        assert sorted(held.values()) == [44, 88]  # 132 = 4 × 11 + 8 × 11
        assert once_each(kb) == (132, 132)
        before = semantic(kb, QUERIES)
        assert check(kb).problems == []
        fold_all(kb)
        assert semantic(kb, QUERIES) == before


@pytest.mark.usefixtures("into_delta", "no_folding", "small_delta")
def test_a_rewrite_or_delete_of_a_chunk_in_a_segment_leaves_one_vector(pg_target: str) -> None:
    with trove.open(pg_target, embedder="hash:64") as kb:
        kb.add_many(notes(12), batch_size=12)
        lock = kb.backend.vector_lock()
        assert lock is not None
        segment = f"{lock.table}_seg_1"
        assert layout(kb)[segment] == 12
        cid = int(kb.backend.one(f"SELECT min(chunk_id) FROM {segment}")[0])  # type: ignore[attr-defined]
        kb.backend.put_vectors(lock.table, [cid], np.ones((1, 64), np.float32) / 8)
        assert layout(kb)[segment] == 11 and layout(kb)[delta.name(lock.table)] == 1
        gone = kb.get_by_key("t", "5")
        assert gone is not None
        kb.purge([gone.id])
        assert layout(kb)[segment] == 10 and once_each(kb) == (11, 11)
        assert gone.id not in {h for ids in semantic(kb, QUERIES) for h in ids}


@pytest.mark.usefixtures("into_delta", "small_delta")
def test_the_folder_empties_segments_into_the_table_and_drops_them(pg_target: str) -> None:
    with trove.open(pg_target, embedder="hash:64") as kb:
        kb.add_many(notes(40), batch_size=20)
        lock = kb.backend.vector_lock()
        assert lock is not None
        deadline = time.monotonic() + 60
        while len(layout(kb)) > 2 and time.monotonic() < deadline:
            time.sleep(0.2)
        assert layout(kb) == {lock.table: 40, delta.name(lock.table): 0}
        assert len(kb.search("dogs", mode="semantic", limit=40)) == 40


@pytest.mark.usefixtures("into_delta", "no_folding", "small_delta")
def test_a_rebuild_drops_the_segments_with_the_old_table(pg_target: str) -> None:
    with trove.open(pg_target, embedder="hash:64") as kb:
        kb.add_many(notes(30), batch_size=15)
        old = kb.backend.vector_lock()
        assert old is not None and layout(kb)[f"{old.table}_seg_3"] == 30  # two merged
        before = semantic(kb, QUERIES)
        kb.reembed()
        lock = kb.backend.vector_lock()
        assert lock is not None and lock.table != old.table
        with kb.backend.conn() as conn:  # type: ignore[attr-defined]
            gone = conn.execute("SELECT to_regclass(%s)", (f"{old.table}_seg_3",)).fetchone()
        assert gone == (None,)
        assert once_each(kb) == (30, 30)
        assert semantic(kb, QUERIES) == before


@pytest.mark.usefixtures("into_delta", "small_delta")
def test_two_writers_sealing_merging_and_folding_at_once_lose_and_double_nothing(
    pg_target: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(delta, "FOLD_ROWS", 3)
    sealed = []
    seal = delta.seal
    monkeypatch.setattr(
        delta, "seal", lambda conn, table: (sealed.append(table), seal(conn, table))
    )
    with (
        trove.open(pg_target, embedder="hash:64") as one,
        trove.open(pg_target, embedder="hash:64") as two,
    ):
        for start in range(0, 240, 24):
            write_and_purge(one, two, start, 12, (6, 4))
            assert once_each(one)[0] == once_each(one)[1]
        assert len(sealed) >= 10
        deadline = time.monotonic() + 90
        while len(layout(one)) > 2 and time.monotonic() < deadline:
            time.sleep(0.2)
        lock = one.backend.vector_lock()
        assert lock is not None
        assert layout(one) == {lock.table: 230, delta.name(lock.table): 0}
        assert once_each(one) == (230, 230)
        assert check(one).problems == []
        assert len(one.search("dogs", mode="semantic", limit=300)) == 230
