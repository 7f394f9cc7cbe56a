"""Word postings of the PostgreSQL backend: what its BM25 is computed from.

Each chunk's head and text (joined by a newline, as the SQLite word index reads them) are
cut by the very tokenizer of SQLite's word index (FTS5 ``porter unicode61
remove_diacritics 2``, through apsw, a dependency of trove anyway: backends/stemmer.py),
so both backends index the same terms and score them with the same BM25: a query gets the
same ranking on either, to within ties. One row per (term, chunk) holds the term's count
in the chunk and the chunk's length in tokens, written with the chunk in its transaction;
the primary key, which INCLUDEs both, answers a query term by an index-only range scan,
and document frequencies are counted from the same rows, so nothing else is kept in step.

A statement trigger with a transition table drops the postings of deleted chunks (a
document's deletion cascades to its chunks, and fires it too); a foreign key would cost
a look-up of the chunk for every posting written.

Since schema 8 every writer of postings also records the terms it changed, one row a
transaction, in ``posting_log``: what a process that keeps postings in memory
(term_cache.py) reads to forget the terms other writers changed.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

import psycopg

from trove.backends import stemmer
from trove.backends.postgres import locks
from trove.search import bm25

# The table, its index, each term's document frequency and the trigger; chunk.words_len
# becomes the token count under the same tokenizer (BM25's document length), recomputed
# by the migration with the postings.
M007 = """
CREATE TABLE posting (
    term text COLLATE "C" NOT NULL,
    chunk_id bigint NOT NULL,
    tf integer NOT NULL,
    len integer NOT NULL
);
CREATE TABLE term_df (term text COLLATE "C" PRIMARY KEY, df bigint NOT NULL);
"""
# Indexed after the migration has filled the table (one sort, not a row at a time).
M007_INDEXES = """
ALTER TABLE posting ADD PRIMARY KEY (term, chunk_id) INCLUDE (tf, len);
CREATE INDEX posting_chunk ON posting (chunk_id);

CREATE FUNCTION trove_drop_postings() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_advisory_xact_lock(1414680409, hashtext(TG_TABLE_SCHEMA));  -- see write()
    WITH dropped AS (
        DELETE FROM posting WHERE chunk_id IN (SELECT id FROM gone) RETURNING term
    )
    INSERT INTO term_df (term, df)
    SELECT term, -count(*) FROM dropped GROUP BY term ORDER BY term
    ON CONFLICT (term) DO UPDATE SET df = term_df.df + excluded.df;
    RETURN NULL;
END $$;
CREATE TRIGGER chunk_postings AFTER DELETE ON chunk
    REFERENCING OLD TABLE AS gone FOR EACH STATEMENT EXECUTE FUNCTION trove_drop_postings();
"""

# The log of changed terms: its ids are taken under the writers' advisory lock, held to
# commit, so they grow in commit order (term_cache.py relies on it). The trigger logs the
# terms of the postings it drops. corpus_size: the number of chunks and their total word
# and gram counts (BM25's corpus size and mean lengths), kept by the same writers, where
# counting them scanned the chunk table (0.2-0.8 s at 100k chunks).
M008 = """
CREATE TABLE posting_log (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    terms text[] NOT NULL
);
CREATE TABLE corpus_size (
    one boolean PRIMARY KEY DEFAULT true CHECK (one),
    chunks bigint NOT NULL,
    words bigint NOT NULL,
    grams bigint NOT NULL
);
INSERT INTO corpus_size
SELECT true, count(*), coalesce(sum(words_len), 0), coalesce(sum(grams_len), 0) FROM chunk;
CREATE OR REPLACE FUNCTION trove_drop_postings() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_advisory_xact_lock(1414680409, hashtext(TG_TABLE_SCHEMA));  -- see write()
    WITH dropped AS (
        DELETE FROM posting WHERE chunk_id IN (SELECT id FROM gone) RETURNING term
    ), counted AS (
        SELECT term, -count(*) AS n FROM dropped GROUP BY term
    ), logged AS (
        INSERT INTO posting_log (terms) SELECT array_agg(term) FROM counted HAVING count(*) > 0
    )
    INSERT INTO term_df (term, df) SELECT term, n FROM counted ORDER BY term
    ON CONFLICT (term) DO UPDATE SET df = term_df.df + excluded.df;
    UPDATE corpus_size SET chunks = chunks - g.n, words = words - g.w, grams = grams - g.g
    FROM (SELECT count(*) AS n, coalesce(sum(words_len), 0) AS w,
                 coalesce(sum(grams_len), 0) AS g FROM gone) g;
    RETURN NULL;
END $$;
"""
# Log rows kept: the newest LOG_KEEP, pruned when an id is a multiple of _PRUNE_EVERY (a
# reader further behind than that forgets every term it keeps).
LOG_KEEP = 10_000
_PRUNE_EVERY = 100
_LOG = (
    "WITH logged AS (INSERT INTO posting_log (terms) VALUES (%s) RETURNING id) "
    "DELETE FROM posting_log WHERE id <= (SELECT id - %s FROM logged WHERE id %% %s = 0)"
)

# Chunks tokenized per round trip when the migration indexes an existing store.
_BACKFILL_BATCH = 2_000
_COPY = "COPY posting (term, chunk_id, tf, len) FROM STDIN"
# Writers of term_df take it until they commit; the delete triggers above name it too.
_LOCK = f"SELECT pg_advisory_xact_lock({locks.POSTINGS}, hashtext(current_schema()))"


def chunk_terms(head: str, text: str) -> tuple[Counter[str], int]:
    """(count of each term, number of tokens) of a chunk, as SQLite's word index has it."""
    tokens = stemmer.terms(f"{head}\n{text}")
    return Counter(tokens), len(tokens)


def query_terms(words: Iterable[str]) -> list[str]:
    """The terms of query words, a word given twice counted twice (as FTS5 counts it).

    A word the tokenizer cuts in two (rare: the query parser and unicode61 disagree about
    a character) gives both terms, where FTS5 would ask for them as a phrase."""
    return [t for word in words for t in stemmer.terms(word, query=True)]


def write(
    cur: psycopg.Cursor, chunks: Iterable[tuple[int, Counter[str], int]], *, df: bool = True
) -> None:
    """Postings of new chunks, (chunk id, term counts, length) each, by COPY, and the
    terms' document frequencies. Every writer of those (this, and the delete trigger)
    first takes one lock until its commit: writers that share common terms take turns
    there, where row locks taken in two passes (a delete's, then an insert's) could
    deadlock. The terms are logged under that lock (``posting_log``)."""
    held: Counter[str] = Counter()
    with cur.copy(_COPY) as copy:
        for chunk_id, counts, length in chunks:
            held.update(counts.keys())
            for term, tf in counts.items():
                copy.write_row((term, chunk_id, tf, length))
    if df:
        terms = sorted(held)
        cur.execute(_LOCK)
        cur.execute(_ADD_DF, (terms, [held[t] for t in terms]))
        if terms:
            cur.execute(_LOG, (terms, LOG_KEEP, _PRUNE_EVERY))


def count_chunks(cur: psycopg.Cursor, chunks: int, words: int, grams: int) -> None:
    """New chunks (how many, their word and gram counts) into ``corpus_size``; after
    :func:`write`, under its lock."""
    cur.execute(
        "UPDATE corpus_size SET chunks = chunks + %s, words = words + %s, grams = grams + %s",
        (chunks, words, grams),
    )


_ADD_DF = (
    "INSERT INTO term_df (term, df) SELECT * FROM unnest(%s::text[], %s::bigint[]) "
    "ORDER BY 1 ON CONFLICT (term) DO UPDATE SET df = term_df.df + excluded.df"
)


def m007_postings(conn: psycopg.Connection) -> None:
    """The posting table, filled for the chunks already stored, then indexed."""
    conn.execute(M007)
    after = 0
    while True:
        rows = conn.execute(
            "SELECT id, head, text FROM chunk WHERE id > %s ORDER BY id LIMIT %s",
            (after, _BACKFILL_BATCH),
        ).fetchall()
        if not rows:
            break
        indexed = [(int(cid), *chunk_terms(str(head), str(text))) for cid, head, text in rows]
        with conn.cursor() as cur:
            write(cur, indexed, df=False)
            cur.execute(
                "UPDATE chunk c SET words_len = v.len "
                "FROM unnest(%s::bigint[], %s::int[]) AS v(id, len) WHERE c.id = v.id",
                ([cid for cid, _, _ in indexed], [length for _, _, length in indexed]),
            )
        after = int(rows[-1][0])
    conn.execute("INSERT INTO term_df SELECT term, count(*) FROM posting GROUP BY term")
    conn.execute(M007_INDEXES)


def m008_posting_log(conn: psycopg.Connection) -> None:
    conn.execute(M008)


# A posting's BM25 weight without its idf, as fts5_aux.c computes it (the parameter: the
# mean chunk length).
_K1, _B = f"{bm25.K1!r}::float8", f"{bm25.B!r}::float8"
_TF = f"p.tf * ({_K1} + 1) / (p.tf + {_K1} * (1 - {_B} + {_B} * p.len / %s::float8))"


def bm25_sql() -> str:
    """Chunks ranked by FTS5's ``bm25()`` for an OR of terms. Parameters: the mean chunk
    length, the terms (a term given twice counts twice), the number of chunks, the window.

    Idf comes from each term's stored document frequency; every posting of every term is
    scored (an index-only scan of each term's range): exhaustive, so exact, as FTS5 is."""
    return (
        f"SELECT p.chunk_id AS id, sum(w.w * {_TF}) AS score FROM ("
        " SELECT d.term, q.n * CASE WHEN i.idf > 0 THEN i.idf"
        f" ELSE {bm25.IDF_FLOOR!r}::float8 END AS w"
        " FROM (SELECT term, count(*) AS n FROM unnest(%s::text[]) AS term GROUP BY term) q"
        " JOIN term_df d ON d.term = q.term"
        " CROSS JOIN LATERAL (SELECT ln((greatest(%s::float8, d.df) - d.df + 0.5) / (d.df + 0.5))"
        " AS idf) i"
        " WHERE d.df > 0"
        ") w JOIN posting p ON p.term = w.term"
        " GROUP BY p.chunk_id ORDER BY score DESC, p.chunk_id LIMIT %s"
    )


def term_counts_sql() -> str:
    return "SELECT term, df FROM term_df WHERE term = ANY(%s::text[])"


# A chunk's postings agree with it when their counts add up to its length, and each
# carries that length; postings of a chunk that is gone are orphans. (Counts of the right
# total under the wrong terms would need every chunk tokenized again: not checked.)
_DISAGREE = """
SELECT c.id, c.words_len, coalesce(p.total, 0), p.shortest, p.longest FROM chunk c
LEFT JOIN (SELECT chunk_id, sum(tf) AS total, min(len) AS shortest, max(len) AS longest
           FROM posting GROUP BY chunk_id) p ON p.chunk_id = c.id
WHERE coalesce(p.total, 0) <> c.words_len OR p.shortest <> c.words_len
   OR p.longest <> c.words_len
ORDER BY c.id LIMIT 20
"""
_ORPHANS = (
    "SELECT count(*) FROM posting p "
    "WHERE NOT EXISTS (SELECT 1 FROM chunk c WHERE c.id = p.chunk_id)"
)


_DF_WRONG = (
    "SELECT count(*) FROM (SELECT term, count(*) AS n FROM posting GROUP BY term) p "
    "FULL JOIN term_df d USING (term) WHERE coalesce(p.n, 0) <> coalesce(d.df, 0)"
)


_CORPUS_WRONG = (
    "SELECT s.chunks, s.words, s.grams, c.n, c.w, c.g FROM corpus_size s, "
    "(SELECT count(*) AS n, coalesce(sum(words_len), 0) AS w, coalesce(sum(grams_len), 0) AS g "
    "FROM chunk) c WHERE (s.chunks, s.words, s.grams) IS DISTINCT FROM (c.n, c.w, c.g)"
)


def problems(conn: psycopg.Connection) -> list[str]:
    """Where the postings disagree with the chunks (``trove check``)."""
    found = [
        f"chunk {cid}: {total} word postings for its {length} tokens"
        + (
            ""
            if shortest in (None, length) and longest in (None, length)
            else f" (lengths {shortest}-{longest})"
        )
        for cid, length, total, shortest, longest in conn.execute(_DISAGREE)
    ]
    row = conn.execute(_ORPHANS).fetchone()
    if row and row[0]:
        found.append(f"posting: {row[0]} postings of chunks that are gone")
    row = conn.execute(_DF_WRONG).fetchone()
    if row and row[0]:
        found.append(f"term_df: {row[0]} terms with a document frequency their postings deny")
    row = conn.execute(_CORPUS_WRONG).fetchone()
    if row:
        found.append(
            f"corpus_size: {row[0]} chunks, {row[1]} words, {row[2]} grams recorded; "
            f"the chunks hold {row[3]}, {row[4]}, {row[5]}"
        )
    return found
