"""Keyword search, filters, snippets, edges and listing of the PostgreSQL backend.

Ranking is BM25 computed in SQL, the same formula FTS5 uses (k1 = 1.2, b = 0.75, its idf
floor), over the chunks that match any query term through the GIN index. A chunk's term
frequencies come from its stored ``tsvector``: the query's lexemes are picked out with
``setweight``/``ts_filter`` (C code, no full unnest). Document frequencies are counted
over the same matching chunks, so nothing else is kept in step with writes.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from contextlib import AbstractContextManager
from typing import Any

import psycopg
from psycopg import sql
from psycopg.types.json import Jsonb

from trove.backends.postgres import text as text_index
from trove.backends.postgres.lifecycle import list_clauses, memory_clauses
from trove.backends.postgres.text import esc, esc_opt, filterable, unesc
from trove.errors import InvalidQuery, QueryTimeout
from trove.models import Chunk, ChunkHit, Document, Edge
from trove.search import bm25, snippet
from trove.search.bounds import SEARCH_BUDGET_S
from trove.search.filters import Filters
from trove.search.query import ParsedQuery, RawNode, has_cjk
from trove.search.ranking import collapse, merge_evidence, substring_scores
from trove.timeutil import to_iso

# Corpus size and mean lengths (for BM25) are recounted at most this often when other
# processes write; this process's own writes invalidate them at once.
_STATS_TTL_S = 30.0
_K1, _B = bm25.K1, bm25.B
_STEM_CACHE = 100_000
# The time budget of a ranking statement (the transaction's own setting, gone after it).
_BUDGET = f"SELECT set_config('statement_timeout', '{int(SEARCH_BUDGET_S * 1000)}', true)"

_CHUNK_FIELDS = "c.doc_id, c.idx, c.start_char, c.end_char, c.heading"


def filter_sql(filters: Filters, now: float) -> tuple[str, list[Any]]:
    """The WHERE clause (over ``d``, the document) for ``filters``; same rules as SQLite."""
    # A namespace sees its own items (session items only from their session, when the
    # reader has one) and every global item.
    clauses = [
        "((d.namespace = %s AND (d.scope <> 'session' OR %s::text IS NULL "
        "OR d.session_id = %s)) OR d.scope = 'global')",
        "d.deleted_at IS NULL",
        "(d.expires_at IS NULL OR d.expires_at > %s)",
    ]
    session = None if filters.session is None else esc(filters.session)
    params: list[Any] = [esc(filters.namespace), session, session, now]
    if filters.scope:
        clauses.append("d.scope = ANY(%s)")
        params.append(list(filters.scope))
    for column in ("source", "doc_type", "author"):
        values: tuple[str, ...] = getattr(filters, column)
        if values:
            clauses.append(f"d.{column} = ANY(%s)")
            params.append([esc(v) for v in values])
    if filters.tags:
        clauses.append("d.tags @> %s::text[]")
        params.append([esc(t) for t in filters.tags])
    if filters.since is not None:
        clauses.append("d.timestamp >= %s")
        params.append(filters.since)
    if filters.until is not None:
        clauses.append("d.timestamp <= %s")
        params.append(filters.until)
    for key, value in filters.metadata:
        if value is None:
            clauses.append("jsonb_typeof(d.meta -> %s) = 'null'")
            params.append(esc(key))
            continue
        # SQLite's json_extract reads true as 1 and false as 0: match either spelling.
        alike: list[Any] = [value]
        if isinstance(value, bool) or (isinstance(value, int | float) and value in (0, 1)):
            alike = [bool(value), int(value)]
        clauses.append("d.meta @> ANY(%s::jsonb[])")
        params.append([Jsonb({esc(key): filterable(v)}) for v in alike])
    extra, more = memory_clauses(filters)
    return " AND ".join(clauses + extra), params + more


class PostgresSearch:
    """Mixin of the PostgreSQL backend: reading, filtering and ranking."""

    ranking: str
    _stats_cache: tuple[float, int, float, float] | None
    _stems: dict[str, tuple[str, ...]]

    def conn(self) -> AbstractContextManager[psycopg.Connection]:
        raise NotImplementedError

    def transaction(self) -> AbstractContextManager[None]:
        raise NotImplementedError

    def rows(self, query: Any, params: Any = ()) -> list[tuple[Any, ...]]:
        raise NotImplementedError

    def one(self, query: Any, params: Any = ()) -> tuple[Any, ...] | None:
        raise NotImplementedError

    def documents(self, where: str, params: Sequence[Any], tail: str = "") -> list[Document]:
        raise NotImplementedError

    # --- keyword search ---------------------------------------------------------------

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
        lexemes = [lex for w in folded for lex in self.stems(folded).get(w, ())]
        if lexemes:
            for hit in self._ranked("words", lexemes, where, params, limit):
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

    def _ranked(
        self, column: str, lexemes: Sequence[str], where: str, params: list[Any], limit: int
    ) -> list[ChunkHit]:
        unique = list(dict.fromkeys(lexemes))
        match = text_index.or_query(unique)
        if self.ranking == "ts_rank_cd":
            return self._window(self._rank_cd_sql(column), [match, match], where, params, limit)
        total, words_avg, grams_avg = self._corpus()
        average = (words_avg if column == "words" else grams_avg) or 1.0
        ranking = [unique, match, total, average]
        return self._window(self._bm25_sql(column), ranking, where, params, limit)

    def _window(
        self,
        ranked_sql: sql.Composable,
        ranking: list[Any],
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
            with self.transaction(), self.conn() as conn:
                # The GIN index answers an OR of lexemes exactly, so its bitmap scan needs
                # no recheck; a sequential scan would read (detoast) each vector twice.
                conn.execute("SELECT set_config('enable_seqscan', 'off', true)")
                conn.execute(_BUDGET)
                try:
                    rows = conn.execute(query, [*ranking, window, *params]).fetchall()
                except psycopg.errors.QueryCanceled:
                    raise QueryTimeout(
                        f"the search ran past its {SEARCH_BUDGET_S:g} s budget; "
                        "use fewer words or narrower filters"
                    ) from None
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
            " SELECT lexeme, greatest(ln((%s - count(*) + 0.5) / (count(*) + 0.5)), 1e-6) AS w"
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
        return self._window(self._rank_cd_sql(column), [tsquery, tsquery], where, params, limit)

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
            hit = ChunkHit(_unesc(doc_id), int(cid), score, _chunk(idx, start, end, heading))
            merge_evidence(best, hit, keep_best=True)
        return sorted(best.values(), key=lambda h: -h.score)[:limit]

    def _corpus(self) -> tuple[int, float, float]:
        """(chunks, mean word count, mean gram count), cached briefly."""
        cached = self._stats_cache
        if cached is not None and time.monotonic() - cached[0] < _STATS_TTL_S:
            return cached[1], cached[2], cached[3]
        row = self.one(
            "SELECT count(*), coalesce(avg(words_len), 0), coalesce(avg(grams_len), 0) FROM chunk"
        )
        total, words, grams = (int(row[0]), float(row[1]), float(row[2])) if row else (0, 0, 0)
        self._stats_cache = (time.monotonic(), total, words, grams)
        return total, words, grams

    def term_counts(self, words: Sequence[str]) -> dict[str, int]:
        """How many chunks hold each query word (any of its lexemes), by the GIN index."""
        folded = {w: text_index.fold(w) for w in dict.fromkeys(words)}
        stems = self.stems(list(folded.values()))
        lexemes = sorted({lex for f in folded.values() for lex in stems.get(f, ())})
        found = {
            str(lex): int(n)
            for lex, n in self.rows(
                "SELECT l, (SELECT count(*) FROM chunk WHERE words @@ quote_literal(l)::tsquery)"
                " FROM unnest(%s::text[]) AS l",
                (lexemes,),
            )
        }
        return {
            w: max((found.get(x, 0) for x in stems.get(f, ())), default=0)
            for w, f in folded.items()
        }

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

    # --- filtering --------------------------------------------------------------------

    def filter_chunks(
        self, chunk_ids: Sequence[int], filters: Filters, now: float
    ) -> dict[int, tuple[str, Chunk]]:
        """The chunks among ``chunk_ids`` whose document passes ``filters``."""
        where, params = filter_sql(filters, now)
        rows = self.rows(
            f"SELECT c.id, {_CHUNK_FIELDS} FROM chunk c JOIN document d ON d.id = c.doc_id "
            f"WHERE c.id = ANY(%s) AND {where}",
            [list(chunk_ids), *params],
        )
        return {int(r[0]): (_unesc(r[1]), _chunk(*r[2:6])) for r in rows}

    def visible(self, doc_ids: Sequence[str], filters: Filters, now: float) -> set[str]:
        """The documents among ``doc_ids`` that pass ``filters``."""
        where, params = filter_sql(filters, now)
        rows = self.rows(
            f"SELECT d.id FROM document d WHERE d.id = ANY(%s) AND {where}",
            [[esc(i) for i in doc_ids], *params],
        )
        return {_unesc(r[0]) for r in rows}

    # --- snippets ---------------------------------------------------------------------

    def snippets(self, query: ParsedQuery, chunk_ids: Sequence[int]) -> dict[int, str]:
        """A snippet per chunk with the query's words (stemmed) and CJK runs marked."""
        words = [text_index.fold(w) for w in query.words]
        needles = list(query.substrings) + query.cjk_runs()
        if query.raw is not None:
            try:
                phrases = text_index.RawQuery(query.raw).phrases()
            except InvalidQuery:
                phrases = []
            texts = [p.text for p in phrases]
            words += [w for t in texts for w in text_index.words(t)]
            needles += [t for t in texts if has_cjk(t)]
        rows = self.rows("SELECT id, text FROM chunk WHERE id = ANY(%s)", (list(chunk_ids),))
        texts_by_id = {int(cid): _unesc(text) for cid, text in rows}
        query_stems = self.stems(words) if words else {}
        wanted = {lex for w in words for lex in query_stems.get(w, ())}
        tokens = {cid: text_index.candidate_spans(t, wanted) for cid, t in texts_by_id.items()}
        maybe = {w for spans in tokens.values() for _, _, w in spans}
        stems = self.stems(sorted(maybe)) if maybe else {}
        found = {}
        for cid, text in texts_by_id.items():
            spans: list[tuple[int, int]] = []
            if wanted:
                spans += text_index.mark_spans(tokens[cid], stems, wanted)
            if needles:
                spans += snippet.substring_intervals(text, needles)
            found[cid] = snippet.make(text, spans)
        return found

    # --- edges and listing ------------------------------------------------------------

    def put_edge(self, src: str, dst: str, type: str, weight: float, now: float) -> None:
        with self.transaction(), self.conn() as conn:
            conn.execute(
                "INSERT INTO edge (src, dst, type, weight, created_at) "
                "VALUES (%s, %s, %s, %s, %s) "
                "ON CONFLICT (src, dst, type) DO UPDATE SET weight = excluded.weight",
                (esc(src), esc(dst), esc(type), weight, now),
            )

    def delete_edges(self, src: str, dst: str, type: str | None) -> int:
        with self.transaction(), self.conn() as conn:
            cur = conn.execute(
                "DELETE FROM edge WHERE src = %s AND dst = %s AND (%s::text IS NULL OR type = %s)",
                (esc(src), esc(dst), esc_opt(type), esc_opt(type)),
            )
            return int(cur.rowcount)

    def edges_of(self, doc_ids: Sequence[str], type: str | None) -> list[Edge]:
        """Edges touching any of ``doc_ids``, in either direction, heaviest first."""
        ids = [esc(i) for i in doc_ids]
        rows = self.rows(
            "SELECT src, dst, type, weight, created_at FROM edge "
            "WHERE (src = ANY(%s) OR dst = ANY(%s)) AND (%s::text IS NULL OR type = %s) "
            "ORDER BY weight DESC, created_at, src, dst",
            (ids, ids, esc_opt(type), esc_opt(type)),
        )
        return [
            Edge(_unesc(s), _unesc(d), _unesc(t), float(w), to_iso(c)) for s, d, t, w, c in rows
        ]

    def list_documents(
        self,
        namespace: str,
        *,
        scope: Sequence[str],
        session: str | None,
        after: tuple[float, str] | None,
        limit: int,
        include_deleted: bool,
        filters: Filters | None = None,
    ) -> list[Document]:
        """Newest first by (created_at, id); ``after`` is the last item of the previous page."""
        clauses = ["namespace = %s", "(scope <> 'session' OR %s::text IS NULL OR session_id = %s)"]
        params: list[Any] = [esc(namespace), esc_opt(session), esc_opt(session)]
        if filters is not None:
            extra, more = list_clauses(filters)
            clauses += extra
            params += more
        if scope:
            clauses.append("scope = ANY(%s)")
            params.append(list(scope))
        if not include_deleted:
            clauses.append("deleted_at IS NULL")
        if after is not None:
            clauses.append("(created_at, id) < (%s, %s)")
            params.extend((after[0], esc(after[1])))
        return self.documents(
            " AND ".join(clauses), params, f"ORDER BY created_at DESC, id DESC LIMIT {int(limit)}"
        )


def split_rows(
    rows: Sequence[tuple[Any, ...]],
) -> tuple[list[tuple[int, float]], dict[int, tuple[str, Chunk]]]:
    """(chunk id, score) in rank order, and the chunks that passed the filter."""
    ranked = [(int(r[0]), float(r[1])) for r in rows]
    allowed = {int(r[0]): (_unesc(r[2]), _chunk(*r[3:7])) for r in rows if r[7]}
    return ranked, allowed


def _chunk(idx: int, start: int, end: int, heading: str) -> Chunk:
    return Chunk(index=int(idx), start=int(start), end=int(end), heading=_unesc(heading))


def _unesc(value: Any) -> str:
    return unesc(str(value))
