"""Meta values on PostgreSQL: what a search asks of them is kept a few seconds (each read
is a round trip); this handle's own writes are seen at once."""

from __future__ import annotations

import time
from types import SimpleNamespace
from typing import Any

import pytest

import trove
from helpers.pg_statements import statements
from trove.backends.postgres import connection
from trove.memory import canonical


def _dupes(kb: trove.Store) -> tuple[str, str]:
    old = kb.add("the deploy uses blue green switching", vector=[1, 0, 0, 0])
    new = kb.add("the deploy uses blue green switching now", vector=[0.99, 0.05, 0, 0])
    return old, new


def test_a_search_takes_the_duplicates_mark_it_read_lately(
    pg_target: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    with trove.open(pg_target, embedder=None) as kb, trove.open(pg_target, embedder=None) as other:
        old, new = _dupes(kb)
        assert {h.doc_id for h in kb.search("deploy")} == {old, new}
        sent = statements(monkeypatch)
        assert {h.doc_id for h in kb.search("deploy")} == {old, new}
        assert [s for s in sent if "FROM meta" in s] == []  # the mark as read just now
        other.canonicalize(threshold=0.9)
        assert [h.doc_id for h in other.search("deploy")] == [new]  # its own: at once
        later = time.monotonic() + canonical.MARK_AGE_S
        clock = SimpleNamespace(monotonic=lambda: later)
        monkeypatch.setattr(connection, "time", clock)  # past the age: read again
        assert [h.doc_id for h in kb.search("deploy")] == [new]


def test_a_handle_sees_its_own_mark_at_once(pg_target: str) -> None:
    with trove.open(pg_target, embedder=None) as kb:
        old, new = _dupes(kb)
        assert {h.doc_id for h in kb.search("deploy")} == {old, new}
        kb.canonicalize(threshold=0.9)
        assert [h.doc_id for h in kb.search("deploy")] == [new]


def test_a_meta_value_read_inside_a_write_is_not_kept(pg_target: str) -> None:
    with trove.open(pg_target, embedder=None) as kb:
        backend: Any = kb.backend
        try:
            with kb.transaction():
                backend.set_meta("probe", "1")
                assert backend.get_meta("probe", max_age=60.0) == "1"
                raise RuntimeError("roll back")
        except RuntimeError:
            pass
        assert backend.get_meta("probe", max_age=60.0) is None
