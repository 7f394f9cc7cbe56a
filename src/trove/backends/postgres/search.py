"""Keyword search of the PostgreSQL backend.

Words are ranked by BM25 over the word postings (postings.py): the terms, counts and
lengths of SQLite's word index, FTS5's formula (k1 = 1.2, b = 0.75, its idf floor), so a
query ranks chunks as on SQLite, to within ties. CJK grams are ranked by the same formula
over their ``tsvector`` (term frequencies picked out with ``setweight``/``ts_filter``,
C code, no full unnest), and raw queries by ``ts_rank_cd`` through the GIN indexes.
Document frequencies are counted over the matching rows, so nothing else is kept in step.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

from psycopg import sql

from trove.backends.postgres import postings, term_cache
from trove.backends.postgres import text as text_index
from trove.backends.postgres.connection import Connected
from trove.backends.postgres.filters import chunk_of, filter_sql, split_rows
from trove.backends.ranking import collapse, merge_evidence, substring_scores
from trove.hits import ChunkHit
from trove.search import bm25
from trove.search.bounds import SEARCH_BUDGET_S
from trove.search.filters import Filters
from trove.search.query import ParsedQuery, RawNode

# Corpus size and mean lengths (for BM25: one row of corpus_size, kept by writers) are
# read again at most this often when other processes write (a keyword search reads them
# again as soon as the posting log moves); this process's own writes invalidate them.
_STATS_TTL_S = 5.0
_K1, _B = bm25.K1, bm25.B
_STEM_CACHE = 100_000

# Settings of a ranking statement's transaction (gone after it): its time budget (within a
# search, what is left of the search's: connection.read_with); no sequential scan, as the
# indexes answer an OR of terms exactly (a GIN bitmap scan needs no recheck), where a
# sequential scan would read (detoast) each vector twice; memory to hash a query's
# postings in (the default 4 MB spills a common term's to disk).
_SETTINGS = {
    "statement_timeout": str(int(SEARCH_BUDGET_S * 1000)),
    "enable_seqscan": "off",
    "work_mem": "64MB",
}

_CHUNK_FIELDS = "c.doc_id, c.idx, c.start_char, c.end_char, c.heading"
# A window ranked in this process: its chunks, and whether each passes the filters.
_WINDOW_ROWS = (
    "SELECT r.id, r.score, " + _CHUNK_FIELDS + ", coalesce(",
    ", false), (SELECT coalesce(max(id), 0) FROM posting_log) "
    "FROM unnest(%s::bigint[], %s::float8[]) AS r(id, score) "
    "JOIN chunk c ON c.id = r.id JOIN document d ON d.id = c.doc_id ORDER BY r.score DESC, r.id",
)
_CACHE_LOCK = threading.Lock()
# Searches again after the log moved under one, at most (then the last answer stands).
_RETRIES = 3


class KeywordSearch(Connected):
    """Mixin of the PostgreSQL backend: keyword search, BM25 in SQL."""

    ranking: str
    _stems: dict[str, tuple[str, ...]]
    _term_cache: term_cache.TermCache | None = None

    def keyword_search(
        self, query: ParsedQuery, filters: Filters, limit: int, now: float
    ) -> list[ChunkHit]:
        """Documents by best-chunk BM25 over the word vectors, the CJK grams or both."""
        where, params = filter_sql(filters, now)
        scores: dict[str, ChunkHit] = {}
        if query.raw is not None:
            for hit in self._raw_search(query.raw, query.raw_cjk, where, params, limit):
                merge_evidence(scores, hit)
            return sorted(scores.values(), key=lambda h: (-h.score, h.doc_id))[:limit]
        folded = [text_index.fold(w) for w in query.words]
        for hit in self._word_ranked(query.words, folded, where, params, limit):
            merge_evidence(scores, hit)
        grams = text_index.query_grams(query)
        if grams:
            for hit in self._ranked("grams", grams, where, params, limit):
                merge_evidence(scores, hit)
        if not scores and query.words:
            # Nothing by whole words: look for them as substrings ("rediss", "kube").
            terms = [w for w in folded if len(w) >= 3]
            if terms:
                for hit in self._substring_search(terms, where, params, limit):
                    merge_evidence(scores, hit)
        return sorted(scores.values(), key=lambda h: (-h.score, h.doc_id))[:limit]

    def _word_ranked(
        self,
        words: Sequence[str],
        folded: Sequence[str],
        where: str,
        params: list[Any],
        limit: int,
    ) -> list[ChunkHit]:
        """Chunks by BM25 over the word postings (the SQLite word index's terms and
        scores); by ``ts_rank_cd`` over the word vectors when that ranking is chosen."""
        if self.ranking == "ts_rank_cd":
            lexemes = [lex for w in folded for lex in self.stems(folded).get(w, ())]
            return self._ranked("words", lexemes, where, params, limit) if lexemes else []
        terms = postings.query_terms(words)
        if not terms:
            return []
        if getattr(self._local, "conn", None) is None:
            return self._cached_ranked(terms, where, params, limit)
        # Inside a write: its own uncommitted postings, which no cache may keep.
        total, average, _ = self._corpus()
        ranking = postings.bm25_sql()
        return self._window(
            sql.SQL(ranking),
            lambda w: [average or 1.0, terms, total, w],
            where,
            params,
            limit,
        )

    def _cached_ranked(
        self, terms: list[str], where: str, params: list[Any], limit: int
    ) -> list[ChunkHit]:
        """BM25 over the query terms' postings kept in this process (term_cache.py); the
        window's chunks, filtered, from PostgreSQL.

        The log is read with the window (its newest id, one round trip): when it moved
        since the cache caught up, the cache catches up and the search runs again."""
        cache = self.term_cache()
        if cache.seen is None:
            self._caught_up(cache)
        for _ in range(_RETRIES):
            seen = cache.seen
            hits, newest = self._cached_window(cache, terms, where, params, limit)
            if newest == seen or not self._caught_up(cache):
                return hits
        return hits

    def _caught_up(self, cache: term_cache.TermCache) -> bool:
        """The cache caught up with other writers; True if there were any."""
        moved = cache.catch_up()
        if moved:
            self._stats_cache = None  # the corpus counts are stale too
        return moved

    def _cached_window(
        self,
        cache: term_cache.TermCache,
        terms: list[str],
        where: str,
        params: list[Any],
        limit: int,
    ) -> tuple[list[ChunkHit], int | None]:
        """The hits and the log's newest id (None: nothing was read to tell it)."""
        total, average, _ = self._corpus()
        rank = term_cache.bm25_ranker(cache.postings(terms), terms, total, average, cache.gains)
        # One-chunk documents fill a window of twice the limit; widened when they do not.
        window = max(limit * 2, 20)
        while True:
            ranked = rank(window)
            if not ranked:
                return [], None
            ids, scores = [cid for cid, _ in ranked], [score for _, score in ranked]
            rows = self.read_with(_SETTINGS, where.join(_WINDOW_ROWS), [*params, ids, scores])
            hits = collapse(*split_rows(rows), limit)
            if len(hits) >= limit or len(ranked) < window:
                return hits, (int(rows[0][8]) if rows else None)
            window *= 8

    def term_cache(self) -> term_cache.TermCache:
        """The query terms' postings this backend keeps (created at first use)."""
        with _CACHE_LOCK:
            if self._term_cache is None:
                self._term_cache = term_cache.TermCache(
                    lambda query, params: self.read_with({}, query, params)
                )
            return self._term_cache

    def warm_words(self) -> None:
        """Read the most frequent terms' postings now (Store.warm): a first query's common
        words are then at hand."""
        self.term_cache().warm()

    def _ranked(
        self, column: str, lexemes: Sequence[str], where: str, params: list[Any], limit: int
    ) -> list[ChunkHit]:
        unique = list(dict.fromkeys(lexemes))
        match = text_index.or_query(unique)
        if self.ranking == "ts_rank_cd":
            return self._window(
                self._rank_cd_sql(column), lambda w: [match, match, w], where, params, limit
            )
        total, words_avg, grams_avg = self._corpus()
        average = (words_avg if column == "words" else grams_avg) or 1.0
        ranking = [unique, match, total, average]
        return self._window(self._bm25_sql(column), lambda w: [*ranking, w], where, params, limit)

    def _window(
        self,
        ranked_sql: sql.Composable,
        ranking: Callable[[int], list[Any]],
        where: str,
        params: list[Any],
        limit: int,
    ) -> list[ChunkHit]:
        # Rank chunks over the whole index (idf counts every chunk, as in FTS5), then filter
        # and collapse them to documents; if the filter leaves too few, widen the window.
        window = max(limit * 8, 100)
        query = sql.SQL(
            "WITH ranked AS ({ranked}) SELECT r.id, r.score, " + _CHUNK_FIELDS + ", "
            "coalesce({where}, false) FROM ranked r JOIN chunk c ON c.id = r.id "
            "JOIN document d ON d.id = c.doc_id ORDER BY r.score DESC, r.id"
        ).format(ranked=ranked_sql, where=sql.SQL(where))
        while True:
            rows = self.read_with(_SETTINGS, query, [*ranking(window), *params])
            ranked, allowed = split_rows(rows)
            hits = collapse(ranked, allowed, limit)
            if len(hits) >= limit or len(rows) < window:
                return hits
            window *= 8

    @staticmethod
    def _bm25_sql(column: str) -> sql.Composable:
        return sql.SQL(
            "WITH m AS ("
            " SELECT c.id, c.{length} AS len, u.lexeme, cardinality(u.positions) AS tf"
            " FROM chunk c CROSS JOIN LATERAL"
            " unnest(ts_filter(setweight(c.{column}, 'A', %s::text[]), '{{a}}')) AS u"
            " WHERE c.{column} @@ %s::tsquery"
            "), idf AS ("
            " SELECT lexeme, greatest(ln((greatest(%s, count(*)) - count(*) + 0.5)"
            " / (count(*) + 0.5)), 1e-6) AS w"
            " FROM m GROUP BY lexeme"
            ") SELECT m.id, sum(idf.w * m.tf * {k1p1} / (m.tf + {k1} * (1 - {b} + {b} * m.len"
            " / greatest(%s::float8, 1e-9)))) AS score"
            " FROM m JOIN idf USING (lexeme) GROUP BY m.id ORDER BY score DESC, m.id LIMIT %s"
        ).format(
            column=sql.Identifier(column),
            length=sql.Identifier(f"{column}_len"),
            k1p1=sql.Literal(_K1 + 1),
            k1=sql.Literal(_K1),
            b=sql.Literal(_B),
        )

    @staticmethod
    def _rank_cd_sql(column: str) -> sql.Composable:
        return sql.SQL(
            "SELECT c.id, ts_rank_cd(c.{column}, %s::tsquery) AS score FROM chunk c"
            " WHERE c.{column} @@ %s::tsquery ORDER BY score DESC, c.id LIMIT %s"
        ).format(column=sql.Identifier(column))

    def _raw_search(
        self, raw: RawNode, cjk: bool, where: str, params: list[Any], limit: int
    ) -> list[ChunkHit]:
        """A raw query translated to a tsquery, ranked by ts_rank_cd (prefixes and NOT
        leave no term frequencies for BM25 to use)."""
        parsed = text_index.RawQuery(raw)
        stems = {} if cjk else self.stems(text_index.raw_words(parsed))
        tsquery = parsed.tsquery(stems, cjk)
        if tsquery is None:
            return []
        column = "grams" if cjk else "words"
        return self._window(
            self._rank_cd_sql(column), lambda w: [tsquery, tsquery, w], where, params, limit
        )

    def _substring_search(
        self, terms: Sequence[str], where: str, params: list[Any], limit: int
    ) -> list[ChunkHit]:
        """Chunks containing the words as substrings, scored by a BM25-like tf·idf.

        This scans the chunk text, so it is only the fallback when no word matched.
        """
        contains = " OR ".join(["strpos(lower(c.head || chr(10) || c.text), %s) > 0"] * len(terms))
        rows = self.rows(
            f"SELECT c.id, {_CHUNK_FIELDS}, lower(c.head || chr(10) || c.text) FROM chunk c "
            f"JOIN document d ON d.id = c.doc_id WHERE ({contains}) AND {where}",
            [*terms, *params],
        )
        total = self._corpus()[0] or 1
        scores = substring_scores([r[6] for r in rows], terms, total)
        best: dict[str, ChunkHit] = {}
        for (cid, doc_id, idx, start, end, heading, _), score in zip(rows, scores, strict=True):
            hit = ChunkHit(str(doc_id), int(cid), score, chunk_of(idx, start, end, heading))
            merge_evidence(best, hit, keep_best=True)
        return sorted(best.values(), key=lambda h: -h.score)[:limit]

    def _corpus(self) -> tuple[int, float, float]:
        """(chunks, mean word count, mean gram count), cached briefly."""
        cached = self._stats_cache
        if cached is not None and time.monotonic() - cached[0] < _STATS_TTL_S:
            return cached[1], cached[2], cached[3]
        row = self.one("SELECT chunks, words, grams FROM corpus_size")  # kept by writers
        total = int(row[0]) if row else 0
        words, grams = (int(row[1]) / total, int(row[2]) / total) if row and total else (0, 0)
        self._stats_cache = (time.monotonic(), total, words, grams)
        return total, words, grams

    def term_counts(self, words: Sequence[str]) -> dict[str, int]:
        """How many chunks hold each query word (its term, as the word index has it)."""
        first = {w: t[0] for w in dict.fromkeys(words) for t in (postings.query_terms([w]),) if t}
        found = {
            str(term): int(n)
            for term, n in self.rows(postings.term_counts_sql(), (sorted(set(first.values())),))
        }
        return {w: found.get(term, 0) for w, term in first.items()}

    def index_problems(self) -> list[str]:
        """Where the word postings disagree with the chunks (``trove check``)."""
        with self.conn() as conn:
            return postings.problems(conn)

    def stems(self, words: Sequence[str]) -> dict[str, tuple[str, ...]]:
        """The lexemes PostgreSQL's stemmer makes of each (folded) word, cached."""
        missing = [w for w in dict.fromkeys(words) if w not in self._stems]
        if missing:
            if len(self._stems) > _STEM_CACHE:
                self._stems.clear()
            for word, lexemes in self.rows(
                "SELECT w, tsvector_to_array(to_tsvector('trove_words', w)) "
                "FROM unnest(%s::text[]) AS w",
                (missing,),
            ):
                self._stems[str(word)] = tuple(lexemes)
        return {w: self._stems.get(w, ()) for w in words}
