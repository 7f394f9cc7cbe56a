"""The backend protocol and the two backend packages' shape: no method a backend would
implement as a no-op, and the same file for the same concern in both packages."""

from __future__ import annotations

from pathlib import Path

import pytest

from trove.backends.base import Backend, Enriching, LocalIndexes, LoggingEvents
from trove.backends.sqlite.backend import SQLiteBackend

BACKENDS = Path(__file__).resolve().parents[2] / "src" / "trove" / "backends"
# One concern, one file name, in each package (what is shared by both is one module in
# backends/ itself: rows, filters, listing, vectors).
CONCERNS = {
    "backend",
    "connection",
    "schema",
    "documents",
    "files",
    "filters",
    "search",
    "snippets",
    "edges",
    "stats",
    "lifecycle",
    "clusters",
    "originals",
    "vectors",
}


def test_the_protocol_has_no_in_process_index_methods() -> None:
    members = set(Backend.__dict__)
    for name in ("warm", "vectors_changed", "vectors_reset", "filter_chunks", "candidate_chunks"):
        assert name not in members


def test_only_sqlite_keeps_indexes_in_this_process() -> None:
    assert issubclass(SQLiteBackend, LocalIndexes)
    pytest.importorskip("psycopg")
    from trove.backends.postgres.backend import PostgresBackend

    assert not issubclass(PostgresBackend, LocalIndexes)
    for name in ("warm", "vectors_changed", "vectors_reset", "filter_chunks"):
        assert not hasattr(PostgresBackend, name)


@pytest.mark.parametrize("package", ["sqlite", "postgres"])
def test_each_package_has_a_file_per_concern(package: str) -> None:
    names = {path.stem for path in (BACKENDS / package).glob("*.py")}
    assert names >= CONCERNS, sorted(CONCERNS - names)


def test_only_sqlite_keeps_enrichments_and_an_event_log() -> None:
    assert issubclass(SQLiteBackend, Enriching)
    assert issubclass(SQLiteBackend, LoggingEvents)
    pytest.importorskip("psycopg")
    from trove.backends.postgres.backend import PostgresBackend

    assert not issubclass(PostgresBackend, Enriching)
    assert not issubclass(PostgresBackend, LoggingEvents)


def test_a_closed_store_reports_no_enrichment_and_no_event_log() -> None:
    import trove
    from trove import live
    from trove.errors import StoreError

    kb = trove.open(":memory:", embedder=None)
    assert kb.enrichment("missing") is None
    assert live.event_log(kb) is not None
    kb.close()
    assert kb.enrichment("missing") is None
    assert live.event_log(kb) is None
    with pytest.raises(StoreError):
        kb.get("missing")
