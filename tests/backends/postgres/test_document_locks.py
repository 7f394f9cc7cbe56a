"""A PostgreSQL write locks the documents it decides about: one lock each for a few, one
lock over all of them for many (documents.py), so a write of any size fits PostgreSQL's
lock table, and writers of one document still take turns."""

from __future__ import annotations

import inspect
import threading
import time

import pytest

import trove
from trove.backends.postgres import documents, locks, postings

MANY = documents.LOCK_EACH_MAX + 44


def notes(n: int) -> list[dict[str, str]]:
    return [{"text": f"note {i}", "source": "t", "source_id": str(i)} for i in range(n)]


def advisory_locks(kb: trove.Store) -> int:
    """Advisory locks this handle's write transaction holds (call inside it)."""
    row = kb.backend.one(  # type: ignore[attr-defined]
        "SELECT count(*) FROM pg_locks WHERE pid = pg_backend_pid() AND locktype = 'advisory'"
    )
    return int(row[0])


def test_a_few_documents_hold_a_lock_each_and_many_hold_one(pg_target: str) -> None:
    with trove.open(pg_target, embedder=None) as kb:
        ids = kb.add_many(notes(MANY))
        with kb.transaction():
            kb.backend.get_documents(ids[:10])
            assert advisory_locks(kb) == 10 + 1  # and the lock over all, shared
        with kb.transaction():
            kb.backend.get_documents(ids)
            assert advisory_locks(kb) == 1
            kb.backend.get_document(ids[0])  # its own, and the lock over all shared too
            assert advisory_locks(kb) == 3
            kb.backend.get_documents(ids)  # held already: no more
            assert advisory_locks(kb) == 3


def test_a_write_that_locked_a_few_first_locks_many_one_by_one(pg_target: str) -> None:
    """Waiting for the lock over all while holding it shared could deadlock with another
    writer that holds it shared too: that write locks each document instead."""
    with trove.open(pg_target, embedder=None) as kb:
        ids = kb.add_many(notes(MANY))
        with kb.transaction():
            kb.backend.get_document(ids[0])
            kb.backend.get_documents(ids)
            assert advisory_locks(kb) == MANY + 1


def test_purging_more_documents_than_the_lock_table_holds(pg_target: str) -> None:
    """The lock table holds max_locks_per_transaction (64) × max_connections (100 here)
    locks, and more for workers and spare memory: a purge that took one lock a document
    failed with "out of shared memory" at 3 × that (passed at 2 ×)."""
    with trove.open(pg_target, embedder=None) as kb:
        slots = kb.backend.one(  # type: ignore[attr-defined]
            "SELECT current_setting('max_locks_per_transaction')::int "
            "* current_setting('max_connections')::int"
        )
        n = 3 * int(slots[0])
        ids = kb.add_many(notes(n), batch_size=2_000)
        assert kb.purge(ids) == n
        assert kb.stats().documents == 0


@pytest.mark.parametrize("first", ["few", "many"])
def test_writers_of_one_document_take_turns_either_way(pg_target: str, first: str) -> None:
    """A write holding locks (one each, or the one over all) makes another write that
    reads the same document wait for its commit."""
    with trove.open(pg_target, embedder=None) as kb, trove.open(pg_target, embedder=None) as other:
        ids = kb.add_many(notes(MANY))
        holding, waiting = (ids[:3], ids) if first == "few" else (ids, ids[:3])
        locked, done = threading.Event(), threading.Event()
        seen: list[float] = []

        def second() -> None:
            locked.wait(10)
            with other.transaction():
                other.backend.get_documents(waiting)
                seen.append(time.monotonic())
            done.set()

        thread = threading.Thread(target=second)
        thread.start()
        with kb.transaction():
            kb.backend.get_documents(holding)
            locked.set()
            assert not done.wait(0.5)  # the second write waits ...
            released = time.monotonic()
        thread.join(10)
        assert seen and seen[0] >= released  # ... until this one commits


def test_each_lock_space_is_taken_once_and_the_triggers_name_the_postings_one() -> None:
    spaces = [v for k, v in vars(locks).items() if k.isupper() and isinstance(v, int)]
    assert len(spaces) == len(set(spaces)) >= 5
    triggers = inspect.getsource(postings)
    assert triggers.count(f"pg_advisory_xact_lock({locks.POSTINGS}, hashtext(TG_TABLE") == 2
