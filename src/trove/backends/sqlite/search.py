"""Keyword search of the SQLite backend: FTS5 (or the in-memory word index, when it is
built) ranks chunks by BM25, the filter keeps those of visible documents, and the best
chunk stands for its document; parts of words and one-character CJK words have their own
fallbacks."""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

import apsw

from trove.backends.ranking import (
    WIDEN,
    ChunkFields,
    first_window,
    merge_evidence,
    substring_scores,
)
from trove.backends.sqlite.chunk_text import TEXT_OF_C, TEXT_OF_C_D
from trove.backends.sqlite.connection import Connected
from trove.backends.sqlite.filters import ChunkCheck, filter_sql, visible_best
from trove.backends.sqlite.stats import chunk_repeats
from trove.errors import InvalidQuery
from trove.models import Chunk

if TYPE_CHECKING:
    from trove import hits
    from trove.backends.sqlite.readers import Readers
    from trove.backends.sqlite.word_index.fts import Ranker, cjk_match, quote, word_match
    from trove.backends.sqlite.word_index.searcher import WordSearcher
    from trove.hits import ChunkHit
    from trove.search.filters import Filters
    from trove.search.query import ParsedQuery
else:  # the query syntax's module and its dataclasses, and the hits', load at the first
    # keyword search
    from trove import lazy

    lazy.functions(
        globals(), "trove.backends.sqlite.word_index.fts", "cjk_match", "quote", "word_match"
    )
    hits = lazy.LazyModule("trove.hits")

# Indexed words tried for one partial query word ("kube" -> "kubernet", "kubectl", ...).
_PARTIAL_TERMS = 16


class KeywordSearch(Connected):
    """Mixin of the SQLite backend: keyword search over FTS5 and the word index."""

    _words: WordSearcher
    _word_tokenizer: apsw.FTS5Tokenizer
    _readers: Readers | None

    def keyword_search(
        self, query: ParsedQuery, filters: Filters, limit: int, now: float
    ) -> list[ChunkHit]:
        """Documents by best-chunk BM25, over the word index, the CJK bigram index or both."""
        check = ChunkCheck(filters, now)
        scores: dict[str, ChunkHit] = {}
        searches = [("chunk_fts", word_match(query)), ("chunk_cjk", cjk_match(query))]
        for table, match in searches:
            if match:
                ranker = self._word_ranker(query) if table == "chunk_fts" else None
                for hit in self._fts(table, match, check, limit, ranker):
                    merge_evidence(scores, hit)
        if not scores and query.raw is None and query.words:
            # Nothing by whole words: look for them as parts of words ("marath", "kube").
            for match in self._partial_words(query.words):
                for hit in self._fts("chunk_fts", match, check, limit):
                    merge_evidence(scores, hit)
                if scores:
                    break
        if query.substrings:
            where, params = filter_sql(filters, now, by_id=True)
            for hit in self._substring_search(query.substrings, where, params, limit):
                merge_evidence(scores, hit)
        ranked = sorted(scores.values(), key=lambda h: (-h.score, h.doc_id))
        return ranked[:limit]

    def _word_ranker(self, query: ParsedQuery) -> Ranker | None:
        """The in-memory word index's ranking of a plain query, when it is built."""
        if query.raw is not None or not query.words:
            return None
        return self._words.ranker(query.words)

    def _fts(
        self,
        table: str,
        match: str,
        check: ChunkCheck,
        limit: int,
        ranker: Ranker | None = None,
    ) -> list[ChunkHit]:
        # Rank chunks alone (FTS5's fast path, or the in-memory index's ranking of the same
        # query), then filter and collapse them to documents; if the filter leaves too few
        # documents, widen the window and retry.
        window = first_window(limit, chunk_repeats(self.conn))
        allowed: dict[int, tuple[str, ChunkFields]] = {}
        checked: set[int] = set()
        while True:
            ranked = ranker(window) if ranker else self._fts_ranked(table, match, window)
            hits = visible_best(self.conn, ranked, check, limit, allowed, checked)
            if len(hits) >= limit or len(ranked) < window:
                return hits
            window *= WIDEN

    def _fts_ranked(self, table: str, match: str, window: int) -> list[tuple[int, float]]:
        # On a connection of its own where it can (readers.py): other readers do not wait
        # for this statement, which may run up to the search's whole budget.
        sql = f"SELECT rowid, -rank FROM {table} WHERE {table} MATCH ? ORDER BY rank LIMIT ?"
        readers = self._readers
        try:
            with self.conn.damage():  # a reader's damage names the file as the store's does
                usable = readers is not None and readers.usable()
                rows = readers.rows(sql, (match, window)) if readers and usable else None
            if rows is None:
                rows = self.conn.execute(sql, (match, window))
        except apsw.SQLError as exc:
            raise InvalidQuery(f"cannot parse the query: {exc}") from None
        return [(int(cid), float(score)) for cid, score in rows]

    def term_counts(self, words: Sequence[str]) -> dict[str, int]:
        """How many chunks hold each query word (its stem, as the word index has it)."""
        counts: dict[str, int] = {}
        for word in dict.fromkeys(words):
            tokens = self._tokenize(word.encode("utf-8"), query=True)
            if not tokens:
                continue
            row = self._one("SELECT doc FROM chunk_fts_vocab WHERE term = ?", (tokens[0][2],))
            counts[word] = int(row[0]) if row else 0
        return counts

    def newest_chunk_id(self) -> int:
        return int(self._scalar("SELECT max(id) FROM chunk") or 0)

    def chunk_texts(self, chunk_ids: Sequence[int]) -> list[tuple[int, str]]:
        """(id, head and text) of these chunks, by id: what the word index tokenizes."""
        rows = self.conn.execute(
            f"SELECT c.id, c.head || char(10) || {TEXT_OF_C} FROM chunk c "
            "WHERE c.id IN (SELECT value FROM json_each(?)) ORDER BY c.id",
            (json.dumps(list(chunk_ids)),),
        )
        return [(int(cid), str(text)) for cid, text in rows]

    def chunk_texts_after(self, after: int, limit: int) -> list[tuple[int, str]]:
        rows = self.conn.execute(
            f"SELECT c.id, c.head || char(10) || {TEXT_OF_C} FROM chunk c "
            "WHERE c.id > ? ORDER BY c.id LIMIT ?",
            (after, limit),
        )
        return [(int(cid), str(text)) for cid, text in rows]

    def _tokenize(self, data: bytes, query: bool = False) -> list[tuple[int, int, str]]:
        reason = apsw.FTS5_TOKENIZE_QUERY if query else apsw.FTS5_TOKENIZE_DOCUMENT
        with self.conn.lock:
            # (start, end, token) tuples as they come: a snippet tokenizes every hit's text.
            tokens: Any = self._word_tokenizer(data, reason, None, include_colocated=False)
        return tokens

    def _partial_words(self, words: Sequence[str]) -> Iterator[str]:
        """FTS5 expressions for query words (three letters or more) that are parts of
        indexed words, cheapest first: the words as prefixes ("marath" -> "marathon",
        answered by the index); then, only if that finds nothing, the indexed words that
        contain them ("bernet" -> "kubernet"), found by scanning the word index's
        vocabulary (slow in a large store), at most ``_PARTIAL_TERMS`` a word, the most
        frequent first.

        Index terms are stems, and FTS5 stems a query term again, which can shorten it;
        asked for as prefixes, the terms still match themselves. A piece of a word's
        ending that stemming removed ("netes" of "kubernetes") is not found.
        """
        wanted = [w for w in words if len(w) >= 3]
        if not wanted:
            return
        yield " OR ".join(quote(w) + "*" for w in wanted)
        inside = [
            str(row[0])
            for word in wanted
            for row in self.conn.execute(
                "SELECT term FROM chunk_fts_vocab WHERE instr(term, ?) > 0 "
                "ORDER BY doc DESC LIMIT ?",
                (word, _PARTIAL_TERMS),
            )
        ]
        if inside:
            yield " OR ".join(quote(t) + "*" for t in dict.fromkeys(inside))

    def _substring_search(
        self, terms: Sequence[str], where: str, params: tuple[Any, ...], limit: int
    ) -> list[ChunkHit]:
        """Chunks containing one-character CJK words (no bigram holds them), scored by a
        BM25-like tf·idf.

        This scans the chunk text, so it is only used for one-character CJK words.
        """
        contains = " OR ".join(_contains(t) for t in terms)
        sql = (
            "SELECT c.doc_id, c.id, c.idx, c.start_char, c.end_char, c.heading, "
            f"lower(c.head || char(10) || {TEXT_OF_C_D}) FROM chunk c "
            f"JOIN document d ON d.id = c.doc_id WHERE ({contains}) AND {where}"
        )
        found = [t for term in terms for t in ((term,) if _needs_lower(term) else (term, term))]
        rows = list(self.conn.execute(sql, (*found, *params)))
        total = max(1, int(self._scalar("SELECT count(*) FROM chunk")))
        scores = substring_scores([r[6] for r in rows], terms, total)
        best: dict[str, ChunkHit] = {}
        for (doc_id, cid, idx, start, end, heading, _), score in zip(rows, scores, strict=True):
            chunk = Chunk(index=idx, start=start, end=end, heading=heading)
            hit = hits.ChunkHit(str(doc_id), int(cid), score, chunk)
            merge_evidence(best, hit, keep_best=True)
        return sorted(best.values(), key=lambda h: -h.score)[:limit]


def _needs_lower(term: str) -> bool:
    """Whether finding ``term`` needs the chunk's text lower-cased and joined to its head:
    SQLite's lower() changes only ASCII letters, so a term with none (a CJK character)
    matches the text as stored, and one without a newline cannot span head and text."""
    return "\n" in term or any("A" <= ch <= "Z" or "a" <= ch <= "z" for ch in term)


def _contains(term: str) -> str:
    # Without the copies lower() and || make of every chunk, the scan of a store of long
    # CJK pages costs a fifth less (bench/long_cjk.py --scripts ko).
    if _needs_lower(term):
        return f"instr(lower(c.head || char(10) || {TEXT_OF_C_D}), ?) > 0"
    return f"instr({TEXT_OF_C_D}, ?) > 0 OR instr(c.head, ?) > 0"
