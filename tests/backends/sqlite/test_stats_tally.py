"""Stats from the tally the triggers keep (schema 11) equal counting the rows, on every
path that writes them, and after the migration that fills the tally in an existing file."""

from __future__ import annotations

import contextlib
import random
import time
from pathlib import Path
from typing import Any

import pytest

import trove
from trove.backends.sqlite.schema import LATEST_VERSION
from trove.errors import NotFound
from trove.timeutil import now


def scanned(kb: trove.Store, namespace: str | None, session: str | None) -> dict[str, Any]:
    """What stats said before the tally: every count a scan of the rows (schema 10)."""
    conn = kb.backend.conn  # type: ignore[attr-defined]
    args = (namespace, time.time(), session)
    mine = (
        "(?1 IS NULL OR namespace = ?1) AND (?3 IS NULL OR scope != 'session' "
        "OR session_id = ?3) AND ?2 IS NOT NULL"
    )
    live = f"{mine} AND deleted_at IS NULL AND (expires_at IS NULL OR expires_at > ?2)"

    def one(sql: str) -> int:
        return int(conn.execute(sql, args)[0][0])

    def grouped(column: str) -> dict[str, int]:
        sql = f"SELECT {column}, count(*) FROM document WHERE {live} GROUP BY 1"
        return {str(k): int(n) for k, n in conn.execute(sql, args)}

    return {
        "documents": one(f"SELECT count(*) FROM document WHERE {live}"),
        "chunks": one(
            "SELECT count(*) FROM chunk c JOIN document d ON d.id = c.doc_id "
            "WHERE (?1 IS NULL OR d.namespace = ?1) AND ?2 IS NOT NULL "
            "AND (?3 IS NULL OR d.scope != 'session' OR d.session_id = ?3)"
        ),
        "deleted": one(f"SELECT count(*) FROM document WHERE {mine} AND deleted_at IS NOT NULL"),
        "expired": one(
            f"SELECT count(*) FROM document WHERE {mine} AND deleted_at IS NULL "
            "AND expires_at IS NOT NULL AND expires_at <= ?2"
        ),
        "by_source": grouped("source"),
        "by_doc_type": grouped("doc_type"),
        "by_namespace": grouped("namespace"),
        "text_bytes": one(
            f"SELECT coalesce(sum(length(CAST(text AS BLOB))), 0) FROM document WHERE {mine}"
        ),
    }


def assert_counts_match(kb: trove.Store) -> None:
    for namespace in (None, "default", "other", "none"):
        for session in (None, "s1", "s2", ""):
            got = kb.stats(namespace, session=session)
            want = scanned(kb, namespace, session)
            assert {k: getattr(got, k) for k in want} == want, (namespace, session)
            for group in ("by_source", "by_doc_type", "by_namespace"):  # largest first
                counts = list(getattr(got, group).values())
                assert counts == sorted(counts, reverse=True)


def random_writes(kb: trove.Store, rng: random.Random, rounds: int) -> None:
    ids: list[str] = []
    for _ in range(rounds):
        action = rng.random()
        if action < 0.45 or not ids:
            scope = rng.choice(["workspace", "workspace", "session", "global"])
            ids.append(
                kb.add(
                    "\n\n".join(
                        f"paragraph {i} ünïcode " + "words " * rng.randint(1, 400)
                        for i in range(rng.randint(1, 6))
                    ),
                    source=rng.choice(["a", "b", ""]),
                    source_id=str(rng.randint(0, 30)),
                    doc_type=rng.choice(["note", "", "mail"]),
                    namespace=rng.choice(["default", "other"]),
                    scope=scope,
                    session=rng.choice(["s1", "s2"]) if scope == "session" else None,
                    ttl=rng.choice([None, None, 0.001, 3600.0]),
                )
            )
        elif action < 0.6:
            doc_id = rng.choice(ids)
            # A ttl of 1 ms can run out between peek and update (NotFound: expired meanwhile).
            with contextlib.suppress(NotFound):
                if kb.peek(doc_id) is not None:
                    kb.update(doc_id, text="new text " * rng.randint(1, 900), title="t")
        elif action < 0.7:
            with contextlib.suppress(NotFound):  # purged meanwhile
                kb.delete(rng.choice(ids))
        elif action < 0.75:
            doc_id = rng.choice(ids)
            with contextlib.suppress(NotFound):  # expired between peek and restore
                if kb.peek(doc_id) is not None:
                    kb.restore(doc_id)
        elif action < 0.8:
            kb.purge([rng.choice(ids)])
        elif action < 0.85:
            kb.purge()
        elif action < 0.9:
            kb.add_many(
                {"text": f"bulk {i} " * rng.randint(1, 500), "source": "bulk", "source_id": str(i)}
                for i in range(rng.randint(1, 20))
            )
        elif action < 0.93:
            kb.clear(rng.choice(["default", "other"]))
        else:  # another tool deletes a row: the foreign key's cascade removes its chunks
            rows = kb.backend.conn.execute("SELECT id FROM document LIMIT 1")  # type: ignore[attr-defined]
            if rows:
                kb.backend.conn.execute("DELETE FROM document WHERE id = ?", rows[0])  # type: ignore[attr-defined]


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_tally_equals_counting_rows(db_path: Path, seed: int) -> None:
    rng = random.Random(seed)
    with trove.open(db_path, embedder=None) as kb:
        for _ in range(4):
            random_writes(kb, rng, 25)
            time.sleep(0.01)  # the shortest ttl has passed: expired, not purged
            assert_counts_match(kb)


def test_a_rolled_back_write_counts_nothing(db_path: Path) -> None:
    with trove.open(db_path, embedder=None) as kb:
        kb.add("kept", source="a")
        before = kb.stats()
        with pytest.raises(RuntimeError), kb.transaction():
            kb.add("gone " * 500, source="b")
            kb.delete(kb.search("kept", mode="keyword")[0].doc_id)
            raise RuntimeError("abort")
        assert kb.stats() == before


def test_another_connections_writes_count(db_path: Path) -> None:
    with trove.open(db_path, embedder=None) as reader, trove.open(db_path, embedder=None) as w:
        w.add("from the other process", source="w")
        assert reader.stats().by_source == {"w": 1}
        assert_counts_match(reader)


def test_expired_items_leave_the_live_counts_without_a_write(db_path: Path) -> None:
    with trove.open(db_path, embedder=None) as kb:
        kb.add("lasting", source="a")
        kb.add("fleeting", source="b", expires_at=now() + 0.2)
        assert (kb.stats().documents, kb.stats().expired) == (2, 0)
        time.sleep(0.3)
        stats = kb.stats()
        assert (stats.documents, stats.expired, stats.by_source) == (1, 1, {"a": 1})
        assert_counts_match(kb)


def test_migration_fills_the_tally_of_an_existing_file(db_path: Path) -> None:
    rng = random.Random(7)
    with trove.open(db_path, embedder=None) as kb:
        random_writes(kb, rng, 40)
        # Back to schema 10, as a file written before the tally: its writes go uncounted
        # (the tables stay, emptied: since schema 13 every insert adds its rows itself,
        # and there is no insert trigger to drop).
        kb.backend.conn.execute(  # type: ignore[attr-defined]
            "DROP TRIGGER IF EXISTS doc_tally_ai; DROP TRIGGER doc_tally_bd; "
            "DROP TRIGGER doc_tally_au; DROP TRIGGER chunk_tally_au; "
            "DROP TRIGGER IF EXISTS chunk_tally_ai; "
            "DROP TRIGGER chunk_tally_ad; DELETE FROM doc_tally; DELETE FROM chunk_tally; "
            "DROP INDEX document_expiry; PRAGMA user_version = 10"
        )
        random_writes(kb, rng, 20)
    with trove.open(db_path, embedder=None) as kb:
        assert kb.stats().schema_version == LATEST_VERSION
        assert_counts_match(kb)
        random_writes(kb, rng, 20)
        assert_counts_match(kb)
