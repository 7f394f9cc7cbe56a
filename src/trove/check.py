"""Integrity checks of a store, on demand (``trove check``) and after every crash test.

A store is consistent when SQLite finds its file sound, the full-text indexes (on
PostgreSQL, the word postings) agree with the chunk rows, every live document's chunks
cover its text and ``get`` returns the text whose hash it records, no natural key is
held twice, and every chunk has a vector once the store has vectors. On PostgreSQL,
whose foreign keys can be bypassed, rows whose document or chunk is gone (chunks,
vectors, links, cluster members) are reported too, and vectors are matched to chunks
row by row. Nothing here repairs anything: it reports.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from trove.errors import CorruptStore, StoreError
from trove.search.snippet_text import mask

if TYPE_CHECKING:
    from trove.store import Store


@dataclass
class CheckReport:
    """What :func:`check` found: ``problems`` is empty when the store is consistent."""

    documents: int = 0
    chunks: int = 0
    vectors: int = 0
    problems: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems


def check(store: Store) -> CheckReport:
    """Run every check: on SQLite, its own and FTS5's integrity checks; on PostgreSQL
    (which checks its own pages), whether the word postings agree with the chunks; on
    both, the documents, their chunks, keys and vectors."""
    backend = store.backend
    report = CheckReport()
    conn: Any = getattr(backend, "conn", None)
    if not hasattr(backend, "index_problems"):
        raise StoreError("trove check runs on SQLite and PostgreSQL stores")
    report.problems += backend.index_problems()
    # SQLite's rows through its connection; PostgreSQL's through its pool.
    execute: Callable[[str], Iterable[Sequence[Any]]] = (
        conn.execute if hasattr(conn, "raw") else backend.rows  # type: ignore[attr-defined]
    )
    try:
        _documents(execute, report)
    except CorruptStore:  # the rows cannot be read: SQLite's lines above say where
        report.problems.append("documents and chunks cannot be read: the file is damaged")
        return report
    lock = backend.vector_lock()
    if lock is not None:
        report.vectors = backend.vector_count()
    if hasattr(backend, "integrity_problems"):  # PostgreSQL: counted row by row
        report.problems += backend.integrity_problems()
    elif lock is not None:
        # Chunks the semantic index should hold (not those of entries kept out of it).
        missing = sum(len(rows) for rows in backend.chunks_without_vectors(lock.table))
        if missing:
            report.problems.append(
                f"{missing} chunks have no vector in {lock.table} "
                "(`trove reembed --missing` embeds them)"
            )
    return report


def _documents(execute: Callable[[str], Iterable[Sequence[Any]]], report: CheckReport) -> None:
    spans: dict[str, list[tuple[int, int]]] = {}
    for doc_id, start, end in execute(
        "SELECT doc_id, start_char, end_char FROM chunk ORDER BY doc_id, idx"
    ):
        spans.setdefault(str(doc_id), []).append((int(start), int(end)))
        report.chunks += 1
    for doc_id, text, doc_type, digest in execute(
        "SELECT id, text, doc_type, content_hash FROM document"
    ):
        report.documents += 1
        if hashlib.sha256(str(text).encode("utf-8")).hexdigest() != digest:
            report.problems.append(f"{doc_id}: text does not match its content hash")
        if not covers(spans.get(str(doc_id), []), mask(str(text), str(doc_type or ""))):
            report.problems.append(f"{doc_id}: its chunks do not cover its text")
    for key in ("source, source_id", "scope, dedupe_key"):
        duplicates = execute(
            f"SELECT namespace, {key}, count(*) FROM document WHERE deleted_at IS NULL "
            f"AND {key.split(', ')[1]} IS NOT NULL GROUP BY namespace, {key} HAVING count(*) > 1"
        )
        report.problems += [
            f"key {tuple(row[:-1])} held by {row[-1]} documents" for row in duplicates
        ]


def covers(spans: list[tuple[int, int]], text: str) -> bool:
    """Chunks cover a text when every character outside them is blank: chunking drops
    whitespace-only spans, and ``text`` is given masked (``snippet_text.mask``), so a
    Markdown note's front matter and comments, which are never indexed, count as blank."""
    reached = 0
    for start, end in spans:
        if start < 0 or end > len(text) or (start > reached and text[reached:start].strip()):
            return False
        reached = max(reached, end)
    return not text[reached:].strip()
