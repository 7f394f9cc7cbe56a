"""A chunk's text, stored once (schema 14).

A chunk is a span of its document's text, and the document row holds that text already:
a chunk row keeps its offsets and, in ``text``, NULL where its text is exactly the
document's text between them. It keeps a text of its own only where the two differ: a
Markdown note's front matter and comments, blanked in the chunk (``snippet_text.mask``),
and an agent memory entry indexed by a text other than its own (``keyword_text``); and
the chunks of a document longer than :data:`DERIVED_MAX_CHARS`, whose text SQLite would
read whole for every chunk it cuts from it. Every read of a chunk's text goes through
:data:`TEXT_OF_C` (or :data:`TEXT_OF_C_D` where the document ``d`` is joined already).

The word index (``chunk_fts``) is contentless: FTS5 keeps its postings and no copy of the
text, and deletes a row by its id (``contentless_delete``), so no write path needs a
removed chunk's text. On SciFact the two save about 1,100 bytes a chunk (docs/benchmarks.md,
issue 33).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import apsw

from trove.errors import StoreError

if TYPE_CHECKING:
    from trove.backends.writes import ChunkRow

# A document up to this many characters lends its chunks their text. SQLite reads a text
# whole to cut a span from it, so a read of every chunk (the word index's build, the
# substring scan) reads such a document once a chunk: at most ~4 chunks' worth a chunk.
# 99.7% of SciFact's documents are this short; a longer one's chunks keep their own.
DERIVED_MAX_CHARS = 4_096

_SPAN = "substr({d}.text, c.start_char + 1, c.end_char - c.start_char)"
# The text of chunk ``c``, from any statement.
TEXT_OF_C = (
    f"coalesce(c.text, (SELECT {_SPAN.format(d='t')} FROM document t WHERE t.id = c.doc_id))"
)
# The text of chunk ``c`` where its document is joined as ``d``.
TEXT_OF_C_D = f"coalesce(c.text, {_SPAN.format(d='d')})"

# The word index's tokenizer (schema 1 on), and the index of schema 14: postings only.
_TOKENIZE = "tokenize='porter unicode61 remove_diacritics 2'"
WORD_INDEX_SQL = f"""
CREATE VIRTUAL TABLE chunk_fts USING fts5 (
    head, text, content='', contentless_delete=1, {_TOKENIZE}
);
"""
DELETE_TRIGGER_SQL = """
CREATE TRIGGER chunk_ad AFTER DELETE ON chunk BEGIN
    DELETE FROM chunk_fts WHERE rowid = old.id;
    DELETE FROM chunk_cjk WHERE rowid = old.id;
END;
"""
# Contentless tables that delete rows: SQLite 3.43.
_MIN_SQLITE = (3, 43, 0)


def stored_text(row: ChunkRow, doc_text: str | None) -> str | None:
    """What a chunk row's ``text`` column holds: None where the document lends it."""
    c = row.chunk
    # SQLite's substr() of a text stops short at a NUL character: such a chunk keeps its own.
    if doc_text is None or len(doc_text) > DERIVED_MAX_CHARS or "\x00" in row.text:
        return row.text
    return None if doc_text[c.start : c.end] == row.text else row.text


def chunk_params(
    chunk_id: int, doc_id: str, row: ChunkRow, doc_text: str | None
) -> tuple[Any, ...]:
    """A new chunk row: values of ``id`` and :data:`trove.backends.rows.CHUNK_COLUMNS`."""
    c = row.chunk
    text = stored_text(row, doc_text)
    return (chunk_id, doc_id, c.index, c.start, c.end, c.heading, row.head, text, row.text_hash)


def m014_chunk_text_once(conn: apsw.Connection) -> None:
    """Schema 14: the chunk table is rebuilt with a text only where its document does not
    lend it (ids, and the id counter, kept: the index caches key on them), and the word
    index, re-made contentless from every chunk's text. The chunk table's indexes and
    triggers are made again as they were, but the delete trigger, which deletes by id."""
    if tuple(map(int, apsw.sqlite_lib_version().split("."))) < _MIN_SQLITE:
        raise StoreError(
            f"this store needs SQLite {'.'.join(map(str, _MIN_SQLITE))} or newer "
            f"(apsw has {apsw.sqlite_lib_version()}): upgrade apsw"
        )
    kept = [
        str(sql)
        for name, sql in conn.execute(
            "SELECT name, sql FROM sqlite_schema WHERE tbl_name = 'chunk' "
            "AND type IN ('index', 'trigger') AND sql IS NOT NULL"
        )
        if name != "chunk_ad"
    ]
    seq = conn.execute("SELECT seq FROM sqlite_sequence WHERE name = 'chunk'").fetchall()
    conn.execute(
        f"""
        CREATE TABLE chunk_new (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            doc_id TEXT NOT NULL REFERENCES document (id) ON DELETE CASCADE,
            idx INTEGER NOT NULL,
            start_char INTEGER NOT NULL,
            end_char INTEGER NOT NULL,
            heading TEXT NOT NULL DEFAULT '',
            head TEXT NOT NULL DEFAULT '',
            text TEXT,
            text_hash TEXT NOT NULL,
            UNIQUE (doc_id, idx)
        ) STRICT;
        INSERT INTO chunk_new
            SELECT c.id, c.doc_id, c.idx, c.start_char, c.end_char, c.heading, c.head,
                CASE WHEN length(d.text) <= {DERIVED_MAX_CHARS} AND c.text = {_SPAN.format(d="d")}
                THEN NULL ELSE c.text END, c.text_hash
            FROM chunk c LEFT JOIN document d ON d.id = c.doc_id ORDER BY c.id;
        DROP TABLE chunk_fts_vocab;
        DROP TABLE chunk_fts;
        {WORD_INDEX_SQL}
        INSERT INTO chunk_fts (rowid, head, text)
            SELECT c.id, c.head, {TEXT_OF_C} FROM chunk c ORDER BY c.id;
        DROP TABLE chunk;
        """
    )
    # Triggers of other tables name ``chunk``, gone for the moment: the rename must not
    # parse them (SQLite's own twelve-step way to change a table's columns).
    conn.execute("PRAGMA legacy_alter_table = ON")
    try:
        conn.execute("ALTER TABLE chunk_new RENAME TO chunk")
    finally:
        conn.execute("PRAGMA legacy_alter_table = OFF")
    for sql in kept:
        conn.execute(sql)
    conn.execute(DELETE_TRIGGER_SQL)
    conn.execute("CREATE VIRTUAL TABLE chunk_fts_vocab USING fts5vocab (chunk_fts, 'row')")
    if seq:  # the rename took chunk_new's counter (if it had one): at least the old one
        conn.execute("DELETE FROM sqlite_sequence WHERE name = 'chunk'")
        conn.execute(
            "INSERT INTO sqlite_sequence (name, seq) "
            "VALUES ('chunk', max(?, (SELECT coalesce(max(id), 0) FROM chunk)))",
            (seq[0][0],),
        )


def word_index_problems(conn: Any) -> list[str]:
    """Whether the word index holds exactly every chunk's words: FTS5 cannot check a
    contentless table against the text, so this indexes every chunk's text again, in a
    temporary table, and compares the two vocabularies (each term's chunks and count)
    and the two sets of ids. ``conn``: the store's connection (``execute`` returns rows)."""
    conn.execute(
        "DROP TABLE IF EXISTS temp.words_again_vocab; DROP TABLE IF EXISTS temp.words_again; "
        f"CREATE VIRTUAL TABLE temp.words_again USING fts5 (head, text, {_TOKENIZE}); "
        "CREATE VIRTUAL TABLE temp.words_again_vocab USING fts5vocab (temp, words_again, 'row')"
    )
    try:
        conn.execute(
            "INSERT INTO temp.words_again (rowid, head, text) "
            f"SELECT c.id, c.head, {TEXT_OF_C} FROM chunk c"
        )
        terms = _differ(conn, "term, doc, cnt", "chunk_fts_vocab", "temp.words_again_vocab")
        ids = _differ(conn, "id", "chunk_fts_docsize", "chunk")
    finally:
        conn.execute("DROP TABLE temp.words_again_vocab; DROP TABLE temp.words_again")
    problems = []
    if terms:
        problems.append(f"chunk_fts: {terms} terms counted otherwise than the chunks hold them")
    if ids:
        problems.append(f"chunk_fts: {ids} chunk ids in the chunks or the index, not both")
    return problems


def _differ(conn: Any, columns: str, one: str, other: str) -> int:
    """Rows of ``columns`` in one table and not the other, both ways."""
    [(count,)] = conn.execute(
        f"SELECT (SELECT count(*) FROM (SELECT {columns} FROM {one} "
        f"EXCEPT SELECT {columns} FROM {other})) + (SELECT count(*) FROM "
        f"(SELECT {columns} FROM {other} EXCEPT SELECT {columns} FROM {one}))"
    )
    return int(count)
