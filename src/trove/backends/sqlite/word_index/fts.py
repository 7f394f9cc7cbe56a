"""Keyword retrieval: every FTS5 expression trove runs, and FTS5's BM25 without its scan.

Expressions are written from a query's neutral parts (search/query.py), every term a
quoted string. FTS5 ranks an OR query by scoring every row that holds any query word:
SciFact's claims touch tens of thousands of postings at 100k chunks, so tens of
milliseconds a query, and ten times that at 1M. :class:`WordIndex` keeps the same
postings (chunk, term frequency) in numpy arrays and scores them with FTS5's exact
``bm25()`` formula — the same tokenizer (the store's ``porter unicode61``), the same
document length (tokens of head and text), idf, k1 and b, in FTS5's order of operations,
ties by chunk id as FTS5 breaks them — so a query gets the ranking FTS5 would give, the
same scores to the bit, in a fraction of the time.
"""

from __future__ import annotations

import array
import itertools
import math
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from trove.search.bm25 import IDF_FLOOR, K1, B
from trove.search.query import (
    And,
    Field,
    Near,
    Not,
    ParsedQuery,
    Phrase,
    RawNode,
    cjk_grams,
    has_cjk,
)
from trove.search.topk import top_window

if TYPE_CHECKING:
    import numpy as np
else:  # numpy loads where first used: opening a store, stats, keyword search need none
    from trove.lazy import numpy as np

# Rows per sealed segment: bounds the memory a build needs at once (its sort) and the
# work of merging small segments written one batch at a time.
SEGMENT_ROWS = 65_536
_MAX_TF = 65_535  # np.iinfo(np.uint16).max: a chunk would need 65,535 copies of a token to clip

Tokenizer = Callable[[bytes], list[str]]
Ranker = Callable[[int], list[tuple[int, float]]]


def quote(term: str) -> str:
    """An FTS5 string literal: the term is matched as text, never parsed as syntax."""
    return '"' + term.replace('"', '""') + '"'


def any_of(terms: Iterable[str]) -> str | None:
    """An OR of the terms as strings; None for no terms."""
    return " OR ".join(quote(t) for t in terms) or None


def word_match(query: ParsedQuery) -> str | None:
    """The expression for the word index (``chunk_fts``), or None."""
    if query.raw is not None:
        return None if query.raw_cjk else raw_match(query.raw, cjk=False)
    return any_of(query.words)


def cjk_match(query: ParsedQuery) -> str | None:
    """The expression for the CJK bigram index (``chunk_cjk``), or None: an OR of the
    grams of segments that have a bigram, or a raw query that holds CJK."""
    if query.raw is not None:
        return raw_match(query.raw, cjk=True) if query.raw_cjk else None
    grams = [g for s in query.cjk if len(s) > 1 for g in cjk_grams(s)]
    return any_of(dict.fromkeys(grams))


def raw_match(node: RawNode, *, cjk: bool) -> str:
    """A raw query's tree in FTS5 syntax. For the CJK index (``cjk``), a phrase holding
    CJK becomes the phrase of its grams (it matches where the text holds it unbroken),
    and fields are dropped (its one column holds the grams of head and text)."""
    if isinstance(node, Phrase):
        text = node.text
        if cjk and has_cjk(text):
            text = " ".join(cjk_grams(text)) or text
        return quote(text) + ("*" if node.prefix else "")
    if isinstance(node, Near):
        inner = " ".join(raw_match(p, cjk=cjk) for p in node.phrases)
        return f"NEAR({inner}, {node.distance})"
    if isinstance(node, Field):
        inner = raw_match(node.node, cjk=cjk)
        return inner if cjk else f"{node.name} : ({inner})"
    if isinstance(node, Not):
        return f"({raw_match(node.keep, cjk=cjk)}) NOT ({raw_match(node.drop, cjk=cjk)})"
    joiner = " AND " if isinstance(node, And) else " OR "
    return joiner.join(f"({raw_match(p, cjk=cjk)})" for p in node.parts)


@dataclass
class _Segment:
    """Postings of a run of at most ``SEGMENT_ROWS`` consecutive rows, grouped by term:
    ``terms`` sorted, ``starts`` into ``rows`` / ``tf`` (one more entry than terms). Rows
    are kept relative to ``first_row`` in 16 bits: 4 bytes a posting with its count."""

    terms: np.ndarray  # int32, sorted, unique
    starts: np.ndarray  # int64
    rows: np.ndarray  # uint16, row - first_row
    tf: np.ndarray  # uint16
    first_row: int
    row_count: int

    @classmethod
    def build(
        cls, terms: np.ndarray, rows: np.ndarray, tf: np.ndarray, first_row: int, row_count: int
    ) -> _Segment:
        assert row_count <= SEGMENT_ROWS
        order = np.argsort(terms, kind="stable")  # keeps rows ascending within a term
        terms, rows, tf = terms[order], rows[order] - first_row, tf[order]
        unique, starts = np.unique(terms, return_index=True)
        bounds = np.append(starts, len(terms)).astype(np.int64)
        local = rows.astype(np.uint16)
        return cls(unique.astype(np.int32), bounds, local, tf, first_row, row_count)

    def postings(self, term: int) -> tuple[np.ndarray, np.ndarray]:
        """(global rows, counts) of a term."""
        # An int32 needle: a Python int makes numpy cast the whole array first (15x slower).
        at = int(self.terms.searchsorted(np.int32(term)))
        if at == len(self.terms) or self.terms[at] != term:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.uint16)
        begin, end = self.starts[at], self.starts[at + 1]
        return self.rows[begin:end] + np.int64(self.first_row), self.tf[begin:end]

    def triples(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        terms = np.repeat(self.terms, np.diff(self.starts))
        return terms, self.rows + np.int64(self.first_row), self.tf


class _Vocab(dict[str, int]):
    """Token -> term number, numbering new tokens as they come."""

    def __missing__(self, token: str) -> int:
        self[token] = number = len(self)
        return number


class WordIndex:
    """BM25 postings of chunks, scored as FTS5's ``bm25()`` scores the word index."""

    def __init__(self, tokenize: Tokenizer) -> None:
        self._tokenize = tokenize
        self._vocab = _Vocab()
        self._segments: list[_Segment] = []
        self._ids = np.zeros(0, dtype=np.int64)  # chunk id per row
        self._length = np.zeros(0, dtype=np.float64)  # tokens per row
        self._alive = np.zeros(0, dtype=bool)
        self._rows = 0
        self._newest = 0
        self._live = 0
        self._live_tokens = 0.0
        self._norm_key: tuple[int, int, float] | None = None
        self._norm_cache = np.zeros(0, dtype=np.float64)

    def __len__(self) -> int:
        return self._live

    def state(self) -> dict[str, Any]:
        """What the index holds, for a file (backends/sqlite_word_cache.py): the
        vocabulary in term order, per-row arrays, segments, counters."""
        n = self._rows
        return {
            "vocab": list(self._vocab),
            "ids": self._ids[:n],
            "length": self._length[:n],
            "alive": self._alive[:n],
            "segments": list(self._segments),
            "rows": n,
            "newest": self._newest,
            "live": self._live,
            "live_tokens": self._live_tokens,
        }

    @classmethod
    def adopt(
        cls,
        tokenize: Tokenizer,
        vocab: Sequence[str],
        segments: list[_Segment],
        ids: np.ndarray,
        length: np.ndarray,
        alive: np.ndarray,
        *,
        rows: int,
        newest: int,
        live: int,
        live_tokens: float,
    ) -> WordIndex:
        """An index over what :meth:`state` gave. Segments may be read-only memory maps
        (shared by the processes that map one file): segments are never changed in place,
        only replaced; the per-row arrays are copied, since rows change in place."""
        index = cls(tokenize)
        index._vocab.update(zip(vocab, range(len(vocab)), strict=True))
        index._segments = list(segments)
        index._ids, index._length, index._alive = (np.array(a) for a in (ids, length, alive))
        index._rows, index._newest, index._live = rows, newest, live
        index._live_tokens = live_tokens
        return index

    @property
    def dead_share(self) -> float:
        return 1.0 - self._live / self._rows if self._rows else 0.0

    @property
    def nbytes(self) -> int:
        arrays = [self._ids, self._length, self._alive]
        arrays += [a for s in self._segments for a in (s.terms, s.starts, s.rows, s.tf)]
        return sum(a.nbytes for a in arrays)

    def newest(self) -> int:
        """The largest chunk id ever added (0 when empty)."""
        return self._newest

    def ids(self) -> np.ndarray:
        """Chunk ids of live rows."""
        return self._ids[: self._rows][self._alive[: self._rows]]

    def add(self, chunks: Sequence[tuple[int, str]]) -> None:
        """Index (chunk id, text) pairs; the text is the chunk's head and text joined."""
        for start in range(0, len(chunks), SEGMENT_ROWS):
            self._add_segment(chunks[start : start + SEGMENT_ROWS])

    def remove(self, chunk_ids: Iterable[int]) -> None:
        wanted = np.fromiter(chunk_ids, dtype=np.int64)
        if not len(wanted) or not self._rows:
            return
        rows = np.flatnonzero(np.isin(self._ids[: self._rows], wanted))
        rows = rows[self._alive[rows]]
        self._alive[rows] = False
        self._live -= len(rows)
        self._live_tokens -= float(self._length[rows].sum())

    def ranker(self, terms: Sequence[str]) -> Ranker | None:
        """Chunks ranked by BM25 for an OR of ``terms`` (query words), as a function of
        the window wanted; None when a word is not one token (a phrase: FTS5's job)."""
        phrases = []
        for term in terms:
            tokens = self._tokenize(term.encode())
            if len(tokens) != 1:
                return None
            phrases.append(self._vocab.get(tokens[0], -1))
        scores = self._scores(phrases)
        # Of a boolean array: numpy finds a float array's nonzeros several times slower.
        matched = np.flatnonzero(scores != 0)
        ids, values = self._ids[matched], scores[matched]

        def rank(window: int) -> list[tuple[int, float]]:
            return top_window(ids, values, window)

        return rank

    def _scores(self, phrases: Sequence[int]) -> np.ndarray:
        """bm25() of every row; 0 for rows that match nothing (or are gone)."""
        if not self._live:
            return np.zeros(self._rows, dtype=np.float64)
        every_row_alive = self._live == self._rows
        found_rows, found_tf, idfs, sizes = [], [], [], []
        for term in phrases:  # per phrase, as FTS5: a word given twice counts twice
            if term < 0:
                continue
            parts = [s.postings(term) for s in self._segments]
            if len(parts) == 1:
                rows, tf = parts[0]
            else:
                rows = np.concatenate([p[0] for p in parts])
                tf = np.concatenate([p[1] for p in parts])
            if not every_row_alive:
                alive = self._alive[rows]
                rows, tf = rows[alive], tf[alive]
            if not len(rows):
                continue
            idf = math.log((self._live - len(rows) + 0.5) / (len(rows) + 0.5))
            idfs.append(idf if idf > 0 else IDF_FLOOR)
            found_rows.append(rows)
            found_tf.append(tf)
            sizes.append(len(rows))
        if not found_rows:
            return np.zeros(self._rows, dtype=np.float64)
        rows = np.concatenate(found_rows)
        tf = np.concatenate(found_tf).astype(np.float64)
        weights = np.repeat(np.array(idfs, dtype=np.float64), sizes)
        # fts5_aux.c's order of operations: idf * (tf (k1 + 1) / (tf + norm)), for every
        # posting of every phrase at once; bincount adds each row's terms in phrase order
        # from 0.0, as adding phrase after phrase would (the same floats, to the bit).
        terms = weights * ((tf * (K1 + 1)) / (tf + self._norms()[rows]))
        return np.bincount(rows, weights=terms, minlength=self._rows)

    def _norms(self) -> np.ndarray:
        """BM25's length normalization of every row, ``k1 (1 - b + b len / avg)``: the
        same per row for every term of every query until the index changes, so computed
        once per state of the index (elementwise, so the same floats as per posting)."""
        key = (self._rows, self._live, self._live_tokens)
        if self._norm_key != key:
            average = self._live_tokens / self._live
            self._norm_cache = K1 * (1 - B + B * self._length[: self._rows] / average)
            self._norm_key = key
        return self._norm_cache

    def _add_segment(self, chunks: Sequence[tuple[int, str]]) -> None:
        lookup = self._vocab.__getitem__  # _Vocab numbers a token on first sight
        # C arrays, not lists: numpy takes them without a copy, and without a long
        # conversion that would hold the GIL while queries wait (a background build).
        term_ids = array.array("i")
        tfs = array.array("q")
        rows = array.array("q")  # np.repeat would hold the GIL for long at 8M postings
        lengths = np.zeros(len(chunks), dtype=np.int64)
        first = self._rows
        for i, (_, text) in enumerate(chunks):
            tokens = self._tokenize(text.encode())
            counts = Counter(tokens)
            lengths[i] = len(tokens)
            term_ids.extend(map(lookup, counts))
            tfs.extend(counts.values())
            rows.extend(itertools.repeat(first + i, len(counts)))
        self._grow(first + len(chunks))
        self._ids[first : first + len(chunks)] = [cid for cid, _ in chunks]
        self._newest = max(self._newest, max(cid for cid, _ in chunks))
        self._length[first : first + len(chunks)] = lengths
        self._alive[first : first + len(chunks)] = True
        self._rows += len(chunks)
        self._live += len(chunks)
        self._live_tokens += float(lengths.sum())
        self._segments.append(
            _Segment.build(
                np.frombuffer(term_ids, dtype=np.int32),
                np.frombuffer(rows, dtype=np.int64),
                np.minimum(np.frombuffer(tfs, dtype=np.int64), _MAX_TF).astype(np.uint16),
                first,
                len(chunks),
            )
        )
        self._merge_small()

    def _merge_small(self) -> None:
        """Merge the newest segments while they are small and alike in size (a write at a
        time would otherwise leave thousands of tiny ones)."""
        segments = self._segments
        while len(segments) >= 2:
            last, before = segments[-1], segments[-2]
            if last.row_count + before.row_count > SEGMENT_ROWS:
                return
            if before.row_count > 4 * last.row_count and len(segments) < 32:
                return
            parts = zip(before.triples(), last.triples(), strict=True)
            terms, rows, tf = (np.concatenate(p) for p in parts)
            total = before.row_count + last.row_count
            segments[-2:] = [_Segment.build(terms, rows, tf, before.first_row, total)]

    def _grow(self, size: int) -> None:
        if size <= len(self._ids):
            return
        capacity = max(size, 2 * len(self._ids), 1024)
        for name in ("_ids", "_length", "_alive"):
            old = getattr(self, name)
            new = np.zeros(capacity, dtype=old.dtype)
            new[: self._rows] = old[: self._rows]
            setattr(self, name, new)
