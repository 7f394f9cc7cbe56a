"""The word index's BM25 top k without scoring every posting: exact, by MaxScore.

At 1M chunks a common query word ("show", "cell") has hundreds of thousands of postings,
and scoring them all (:meth:`WordIndex.ranker`) cost tens of milliseconds a query. But a
common word adds little to any row's score (its idf is small), so a row that holds only
common words cannot reach the top k. MaxScore (Turtle and Flood, 1995): bound each term's
contribution from above (its idf, its largest term frequency, the shortest row); score
the postings of the terms with the largest bounds (the rarest, "essential" terms) until
the k-th best partial score exceeds the sum of the bounds of the rest; then no row outside
those candidates can reach the top k, and the other terms are only looked up for the
candidates (a binary search in their sorted postings).

The candidates' scores are then summed term by term in the query's order with FTS5's
formula, as :meth:`WordIndex.ranker` sums them, so they are the same to the bit, and the
ranking (ties by chunk id at the window's edge included) is the same.
"""

from __future__ import annotations

import math
import threading
import weakref
from collections.abc import Sequence

import numpy as np

from trove.backends.sqlite.word_index.fts import Ranker, WordIndex, _Segment
from trove.search.bm25 import IDF_FLOOR, K1
from trove.search.topk import gain as _gain
from trove.search.topk import top_window

# Below this many rows, scoring every posting is as fast (100k rows: 2.7 against 3.0 ms
# CPU a SciFact claim; 1M: 32.4 against 17.1).
MIN_ROWS = 250_000
# Bounds are raised by this share, so float rounding never prunes a row that belongs.
_SLACK = 1e-9
# Rows looked up by binary search in a term's postings when they are fewer than its
# postings over this; else the postings are read whole.
_DENSE = 16
# More dead rows than this share (deleted since the index was built): score every posting.
_MAX_DEAD_SHARE = 1 / 16

_Part = tuple[_Segment, int, int]  # a term's postings in one segment: [begin, end)
# Terms whose place in the segments, live postings and largest frequency are kept between
# queries, per index, while the index holds still.
_TERMS_KEPT = 65_536


class _Term:
    """One distinct query term: where its postings are, its idf and its bound."""

    def __init__(self, parts: list[_Part]) -> None:
        self.parts = parts
        self.times = 0  # how often the query holds it
        self.count = 0  # live postings
        self.tf_max = 0.0  # the largest term frequency
        self.idf = 0.0
        self.bound = 0.0
        self.rows: np.ndarray | None = None  # every live posting's row, ascending ...
        self.gain: np.ndarray | None = None  # ... and what the term adds to its score

    def bounds(self, norms: np.ndarray) -> np.ndarray:
        """The most the term can add to the score of rows of these norms."""
        best = self.idf * ((self.tf_max * (K1 + 1)) / (self.tf_max + norms))
        return best * (self.times * (1 + _SLACK))

    def scored(self, alive: np.ndarray | None, norms: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(rows, what the term adds to each row's score) of its live postings."""
        if self.rows is None or self.gain is None:
            self.rows, tf = self.postings(alive)
            self.gain = _gain(self.idf, tf, norms[self.rows])
        return self.rows, self.gain

    def postings(self, alive: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
        """(rows, term frequencies) of the live postings, rows ascending."""
        rows = [s.rows[b:e] + np.int64(s.first_row) for s, b, e in self.parts]
        tf = [s.tf[b:e] for s, b, e in self.parts]
        all_rows, all_tf = (np.concatenate(a) if len(a) != 1 else a[0] for a in (rows, tf))
        if alive is not None:
            keep = alive[all_rows]
            all_rows, all_tf = all_rows[keep], all_tf[keep]
        return all_rows, all_tf


def ranker(index: WordIndex, terms: Sequence[str]) -> Ranker | None:
    """What ``index.ranker(terms)`` gives, computed for each window by MaxScore; the
    caller holds the index still while the ranker runs."""
    phrases = []
    for term in terms:
        tokens = index._tokenize(term.encode())
        if len(tokens) != 1:
            return None  # a phrase: FTS5's job
        phrases.append(index._vocab.get(tokens[0], -1))
    n, live = index._rows, index._live
    alive = None if live == n else index._alive[:n]
    if live == 0 or (alive is not None and n - live > n * _MAX_DEAD_SHARE):
        return index.ranker(terms)
    norms = index._norms()
    known = _Known.of(index)
    found = _terms(known, index._segments, phrases, alive, live)
    ids = index._ids

    def rank(window: int) -> list[tuple[int, float]]:
        rows, values = _top(found, phrases, norms, alive, window)
        return top_window(ids[rows], values, window)

    return rank


class _Known:
    """What a query's terms cost to find and that no query changes: each term's place in
    the segments, its live postings and its largest frequency (the largest alone read
    every posting of a common word: 1.5 of ~15 ms a SciFact claim at 1M chunks), and the
    shortest row's norm; kept per index until the index changes."""

    def __init__(self, index: WordIndex, state: tuple[int, int, int]) -> None:
        self.state = state
        self.norm_min = float(index._norms()[: index._rows].min())
        self.terms: dict[int, tuple[list[_Part], int, float]] = {}

    @classmethod
    def of(cls, index: WordIndex) -> _Known:
        # Rows are only ever added and live ones only removed, and a merge of segments
        # comes with an add: the counts say whether the index changed.
        state = (index._rows, index._live, len(index._segments))
        with _KNOWN_LOCK:
            known = _KNOWN.get(index)
            if known is None or known.state != state or len(known.terms) > _TERMS_KEPT:
                known = _KNOWN[index] = cls(index, state)
            return known


_KNOWN: weakref.WeakKeyDictionary[WordIndex, _Known] = weakref.WeakKeyDictionary()
_KNOWN_LOCK = threading.Lock()


def _terms(
    known: _Known,
    segments: Sequence[_Segment],
    phrases: Sequence[int],
    alive: np.ndarray | None,
    live: int,
) -> dict[int, _Term]:
    """The distinct known terms with live postings, each with its idf and bound."""
    dead: np.ndarray | None = None
    found: dict[int, _Term] = {}
    for number in dict.fromkeys(p for p in phrases if p >= 0):
        if number not in known.terms:
            needle = np.int32(number)  # a Python int makes numpy cast the whole array first
            parts: list[_Part] = []
            for segment in segments:
                at = int(segment.terms.searchsorted(needle))
                if at < len(segment.terms) and segment.terms[at] == number:
                    parts.append((segment, int(segment.starts[at]), int(segment.starts[at + 1])))
            count = sum(e - b for _, b, e in parts)
            if alive is not None:
                dead = np.flatnonzero(~alive) if dead is None else dead
                count -= len(_lookup(parts, dead)[0]) if len(dead) else 0
            tf_max = float(max((int(s.tf[b:e].max()) for s, b, e in parts), default=0))
            known.terms[number] = (parts, count, tf_max)
        parts, count, tf_max = known.terms[number]
        if count <= 0:
            continue
        term = _Term(parts)
        # FTS5's idf (fts5_aux.c), as WordIndex._scores computes it.
        idf = math.log((live - count + 0.5) / (count + 0.5))
        term.idf = idf if idf > 0 else IDF_FLOOR
        best = term.idf * ((tf_max * (K1 + 1)) / (tf_max + known.norm_min))
        term.times, term.count, term.tf_max = phrases.count(number), count, tf_max
        term.bound = term.times * best * (1 + _SLACK)
        found[number] = term
    return found


def _top(
    terms: dict[int, _Term],
    phrases: Sequence[int],
    norms: np.ndarray,
    alive: np.ndarray | None,
    window: int,
) -> tuple[np.ndarray, np.ndarray]:
    """Rows that may be in the top ``window`` (every row that is, and maybe more, all
    ascending) and their exact scores."""
    order = sorted(terms.values(), key=lambda t: -t.bound)
    scratch = _Scratch.of(len(norms))
    rows, essential = _candidates(order, norms, alive, window, scratch)
    return rows, _exact(terms, phrases, set(map(id, essential)), rows, norms, alive, scratch)


class _Scratch:
    """Arrays of a row each, kept between queries (zeroed again after use): fresh ones
    would cost a page fault every 4 kB each query (12 MB at 1M rows)."""

    _local = threading.local()

    def __init__(self, size: int) -> None:
        self.partial = np.zeros(size, np.float64)
        self.where = np.full(size, -1, np.int32)

    @classmethod
    def of(cls, size: int) -> _Scratch:
        """This thread's arrays, with room for ``size`` rows."""
        scratch: _Scratch | None = getattr(cls._local, "scratch", None)
        if scratch is None or len(scratch.partial) < size:
            scratch = cls._local.scratch = cls(size + size // 8)
        return scratch


def _candidates(
    order: list[_Term],
    norms: np.ndarray,
    alive: np.ndarray | None,
    window: int,
    scratch: _Scratch,
) -> tuple[np.ndarray, list[_Term]]:
    """MaxScore's candidates (unsorted) and the terms whose postings gave them."""
    rest = [*np.cumsum([t.bound for t in order][::-1])[::-1].tolist(), 0.0]
    # By row: the essential terms' share. Every gain is above zero (an idf is at least
    # IDF_FLOOR, a frequency at least one), so a row is a candidate already where its
    # share is: no array of flags to read, set and clear (~1 ms a query at 1M rows).
    partial = scratch.partial
    new_rows: list[np.ndarray] = [np.zeros(0, np.int64)]
    try:
        for i, term in enumerate(order):
            rows, gain = term.scored(alive, norms)
            before = partial[rows]  # read once: a fancy ``+=`` would read it again
            new_rows.append(rows[before == 0.0])
            before += gain if term.times == 1 else gain * term.times
            partial[rows] = before
            # Rows outside these score at most rest[i + 1]; the k-th best partial score is
            # at most the sum of the bounds so far (rest[0] - rest[i + 1]).
            if i + 1 == len(order) or rest[i + 1] >= rest[0] - rest[i + 1]:
                continue
            new_rows = [np.concatenate(new_rows)]
            if len(new_rows[0]) < window:
                continue
            scores = partial[new_rows[0]]
            # "rest[i + 1] < (the window-th best score) * (1 - _SLACK)", by a count
            # rather than a partition: the same answer, without sorting the candidates
            # (about 100k at 1M chunks) at each term.
            if np.count_nonzero(scores * (1 - _SLACK) > rest[i + 1]) >= window:
                rows = _survivors(new_rows[0], scores, order[i + 1 :], norms, window)
                return rows, order[: i + 1]
        return np.concatenate(new_rows), order
    finally:
        touched = np.concatenate(new_rows)
        partial[touched] = 0.0


def _survivors(
    rows: np.ndarray,
    partial: np.ndarray,
    others: list[_Term],
    norms: np.ndarray,
    window: int,
) -> np.ndarray:
    """The candidates that can still reach the top ``window``: a row whose partial score
    plus the most the other terms can add to it (their bounds at its own length) stays
    below the k-th best partial score cannot. The other terms are then looked up one at
    a time, tightening both, so that few rows are left for the exact sums."""
    kth = float(np.partition(partial, len(partial) - window)[len(partial) - window])
    # First with the others' bounds at the shortest row (one number), then at each row's.
    keep = np.flatnonzero(partial + sum(t.bound for t in others) >= kth * (1 - _SLACK))
    rows, partial = rows[keep], partial[keep]
    own = norms[rows]
    bounds = [t.bounds(own) for t in others]
    keep = np.flatnonzero(partial + sum(bounds) >= kth * (1 - _SLACK))
    order = keep[np.argsort(rows[keep])]  # ascending for the look-ups; filters keep it
    rows, partial, bounds = rows[order], partial[order], [b[order] for b in bounds]
    for i, term in enumerate(others):
        kth = float(np.partition(partial, len(partial) - window)[len(partial) - window])
        keep = np.flatnonzero(partial + sum(bounds[i:]) >= kth * (1 - _SLACK))
        rows, partial = rows[keep], partial[keep]
        if len(rows) <= window:
            return rows
        bounds = [b[keep] for b in bounds]
        hit, tf = _lookup(term.parts, rows)  # live rows: dead postings never match
        partial[hit] += _gain(term.idf, tf, norms[rows[hit]]) * term.times
    kth = float(np.partition(partial, len(partial) - window)[len(partial) - window])
    return rows[partial >= kth * (1 - _SLACK)]


def _exact(
    terms: dict[int, _Term],
    phrases: Sequence[int],
    essential: set[int],
    rows: np.ndarray,
    norms: np.ndarray,
    alive: np.ndarray | None,
    scratch: _Scratch,
) -> np.ndarray:
    """The scores of ``rows`` (sorted here, in place), summed in the query's order."""
    rows.sort()
    scores = np.zeros(len(rows), np.float64)
    where = scratch.where  # row -> position in rows, -1 elsewhere: set when needed
    placed = False
    try:
        for number in phrases:  # in the query's order, as FTS5 sums: the same floats
            if number not in terms:
                continue
            term = terms[number]
            if id(term) not in essential and len(rows) * _DENSE < term.count:
                # Few rows against a long list: look them up in it.
                hit, tf = _lookup(term.parts, rows)
                scores[hit] += _gain(term.idf, tf, norms[rows[hit]])
                continue
            postings, gain = term.scored(alive, norms)
            if len(rows) * _DENSE < len(postings):
                at = np.minimum(np.searchsorted(postings, rows), len(postings) - 1)
                hit = np.flatnonzero(postings[at] == rows)
                scores[hit] += gain[at[hit]]
                continue
            if not placed:
                where[rows] = np.arange(len(rows))
                placed = True
            at = where[postings]
            found = np.flatnonzero(at >= 0)
            scores[at[found]] += gain[found]
    finally:
        if placed:
            where[rows] = -1
    return scores


def _lookup(parts: Sequence[_Part], rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Which of ``rows`` (ascending) the term's postings hold: their positions in
    ``rows`` and the term's frequency in each, by binary search in each segment."""
    # Where each segment's rows begin and end in ``rows``, in one search for all segments.
    spans = [(s.first_row, s.first_row + s.row_count) for s, _, _ in parts]
    edges = np.searchsorted(rows, np.array(spans, np.int64).ravel()).tolist()
    positions, counts = [], []
    for (segment, begin, end), (first, _), lo, hi in zip(
        parts, spans, edges[::2], edges[1::2], strict=True
    ):
        if lo == hi:
            continue
        # uint16 needles: searching the uint16 postings with int64 would copy them.
        local = (rows[lo:hi] - first).astype(np.uint16)
        postings = segment.rows[begin:end]
        at = np.searchsorted(postings, local)
        # Past the last posting: clipped to it, which holds a smaller row (no match).
        hit = np.flatnonzero(postings.take(at, mode="clip") == local)
        positions.append(hit + lo)
        counts.append(segment.tf[begin:end][at[hit]])
    if not positions:
        return np.zeros(0, np.int64), np.zeros(0, np.uint16)
    return np.concatenate(positions), np.concatenate(counts)
