"""SQLite's part of ``trove check`` (:mod:`trove.check`): the file's own integrity check,
FTS5's for both word indexes, each chunk's document id against its document's
(:func:`~trove.backends.sqlite.in_order.chunk_doc_problems`), and the contentless word
index compared with the chunks' text
(:func:`~trove.backends.sqlite.chunk_text.word_index_problems`)."""

from __future__ import annotations

from typing import Any

import apsw

from trove.backends.sqlite.chunk_text import word_index_problems
from trove.backends.sqlite.in_order import chunk_doc_problems
from trove.errors import CorruptStore, StoreError


def file_problems(conn: Any) -> list[str]:
    """What SQLite and FTS5 find wrong in the file, and where the word index disagrees
    with the chunks' text; empty when all is sound."""
    problems: list[str] = []
    try:
        lines = [str(r[0]) for r in conn.execute("PRAGMA integrity_check")]
    except CorruptStore:  # damage the check itself cannot walk past
        lines = ["integrity_check stopped: the file is damaged"]
    if lines != ["ok"]:
        problems += [f"sqlite: {line}" for line in lines[:20]]
    for table in ("chunk_fts", "chunk_cjk"):
        try:
            conn.execute(f"INSERT INTO {table} ({table}) VALUES ('integrity-check')")
        except apsw.ReadOnlyError:
            pass  # a read-only file: FTS5 checks by writing a command row
        except apsw.Error as exc:
            problems.append(f"{table}: {exc}")
    try:
        problems += chunk_doc_problems(conn)
        problems += word_index_problems(conn)
    except StoreError as exc:  # damage: SQLite's lines above say where
        problems.append(f"chunk_fts: not compared with the chunks ({exc})")
    return problems
