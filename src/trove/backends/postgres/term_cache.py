"""The word postings a PostgreSQL store's searches need, kept in this process: BM25 in
numpy, as SQLite's in-memory word index ranks.

Ranking in SQL aggregated every posting of every query term in one statement (300-430 ms
a SciFact claim at 100k chunks, bench/pg_keyword.py). Here each query term's postings
(chunk ids ascending, term counts, chunk lengths) are read once, as three packed arrays
a term, and kept, least recently used first out past ``MAX_POSTINGS``; a search scores
them with FTS5's formula (trove.search.topk) and asks PostgreSQL only for the window's
chunks.

Why it is never stale: every writer of postings (postings.write, and the trigger that
drops a deleted chunk's) records the terms it changed as one row of ``posting_log``, in
its transaction, under the advisory lock writers of ``term_df`` take until they commit,
so log ids grow in commit order. Before each search the cache reads the rows newer than
the newest it has seen (one index range scan, usually empty) and forgets the terms they
name; a term is read again when a query asks for it. Log rows are pruned from the oldest
(postings.write); a cache that finds the rows it has not seen pruned forgets everything.
A term's document frequency is the number of its postings, so idf and postings always
agree; the corpus size and mean length come from the backend's cached counts (recounted
when the log moves), the size clamped to at least the document frequency so that an idf
is never computed from a stale, smaller count.
"""

from __future__ import annotations

import math
import threading
from collections import Counter, OrderedDict
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

from trove.search.bm25 import IDF_FLOOR, K1, B
from trove.search.topk import gain, top_window

if TYPE_CHECKING:
    import numpy as np
else:  # numpy loads where first used: opening a store needs none
    from trove.lazy import numpy as np

# Postings kept in all (8 bytes each while chunk ids fit 31 bits: 128 MB; a 100k-chunk
# store holds about 8M); a term alone above it is read for each query, not kept.
MAX_POSTINGS = 16_000_000
# Log rows read before each search; more than this since the last search: forget all.
LOG_ROWS = 1_000
# What warm_words() reads: the most frequent terms, up to this share of MAX_POSTINGS,
# about this many postings a statement.
WARM_SHARE = 0.5
WARM_TERMS = 100_000
_WARM_BATCH = 500_000
# Terms with at least this many postings keep their weights between queries (the
# weights of a stop word's 90,000 postings cost about a millisecond), up to this many.
MEMO_MIN = 4_096
MEMO_TERMS = 1_000

# A term's postings in chunk id order, packed by the server (big-endian, as int8send and
# int4send write them): one row a term, three byte strings, no row per posting to parse.
_READ = (
    "SELECT term, string_agg(int8send(chunk_id), ''::bytea ORDER BY chunk_id),"
    " string_agg(int4send(tf), ''::bytea ORDER BY chunk_id),"
    " string_agg(int4send(len), ''::bytea ORDER BY chunk_id)"
    " FROM posting WHERE term = ANY(%s::text[]) GROUP BY term"
)
_LOG = "SELECT id, terms FROM posting_log WHERE id > %s ORDER BY id LIMIT %s"
_NEWEST = "SELECT coalesce(max(id), 0) FROM posting_log"
_OLDEST = "SELECT coalesce(min(id), 0) FROM posting_log"
_FREQUENT = "SELECT term, df FROM term_df WHERE df > 0 ORDER BY df DESC LIMIT %s"

Rows = Callable[[str, Sequence[Any]], list[tuple[Any, ...]]]


class Postings(NamedTuple):
    """One term's postings: chunk ids ascending, the term's count in each, their lengths."""

    ids: np.ndarray
    tf: np.ndarray
    length: np.ndarray

    def __len__(self) -> int:
        return len(self.ids)


class TermCache:
    """Query terms' postings of one store, caught up with other writers before a search."""

    def __init__(self, rows: Rows, max_postings: int = MAX_POSTINGS) -> None:
        self._rows = rows  # one statement's rows (the backend's pooled connection)
        self._max = max_postings
        self._terms: OrderedDict[str, Postings] = OrderedDict()
        self._size = 0
        self._seen: int | None = None  # the newest log id applied; None: read it first
        self.gains: dict[str, Gains] = {}  # bm25_ranker's memo
        self._lock = threading.Lock()

    @property
    def seen(self) -> int | None:
        """The newest log id applied; None before the first catch_up()."""
        return self._seen

    def postings(self, terms: Sequence[str]) -> dict[str, Postings]:
        """The postings of ``terms`` as of the last catch_up() (read where not kept)."""
        with self._lock:
            wanted = list(dict.fromkeys(terms))
            missing = [t for t in wanted if t not in self._terms]
            found = {t: self._terms[t] for t in wanted if t in self._terms}
            for t in found:
                self._terms.move_to_end(t)
            if missing:
                found.update(self._read(missing))
            return found

    def catch_up(self) -> bool:
        """Forget the terms that writes committed since the last call changed; True when
        there were any (the corpus counts are stale too)."""
        with self._lock:
            seen = self._seen
            if seen is None:
                self._restart()
                return True
            rows = self._rows(_LOG, (seen, LOG_ROWS + 1))
            if not rows:
                return False
            # Too many to read, or a gap after the newest seen: pruned (or an id a rolled
            # back write took; the oldest row left tells which).
            gap = int(rows[0][0]) != seen + 1 and int(self._rows(_OLDEST, ())[0][0]) > seen + 1
            if len(rows) > LOG_ROWS or gap:
                self._restart()
                return True
            for _, names in rows:
                for term in names:
                    self._forget(str(term))
            self._seen = int(rows[-1][0])
            return True

    def warm(self) -> int:
        """Read the most frequent terms' postings (a first query's common words); returns
        how many terms are kept."""
        self.catch_up()
        budget = int(self._max * WARM_SHARE)
        chosen: list[str] = []
        batch = 0
        for term, df in self._rows(_FREQUENT, (WARM_TERMS,)):
            if int(df) > budget:
                break
            budget -= int(df)
            batch += int(df)
            chosen.append(str(term))
            if batch >= _WARM_BATCH:
                self.postings(chosen)
                chosen, batch = [], 0
        self.postings(chosen)
        return len(self._terms)

    def clear(self) -> None:
        with self._lock:
            self._terms.clear()
            self._size = 0
            self._seen = None

    def _restart(self) -> None:
        self._terms.clear()
        self._size = 0
        # Read before any postings are: a write committed after this is named again.
        self._seen = int(self._rows(_NEWEST, ())[0][0])

    def _forget(self, term: str) -> None:
        gone = self._terms.pop(term, None)
        if gone is not None:
            self._size -= len(gone)

    def _read(self, terms: list[str]) -> dict[str, Postings]:
        read: dict[str, Postings] = {}
        for term, ids, tf, length in self._rows(_READ, (terms,)):
            read[str(term)] = Postings(
                _compact(np.frombuffer(ids, ">i8"), np.int32),
                _compact(np.frombuffer(tf, ">i4"), np.uint16),
                _compact(np.frombuffer(length, ">i4"), np.uint16),
            )
        empty = Postings(np.zeros(0, np.int32), np.zeros(0, np.uint16), np.zeros(0, np.uint16))
        for term in terms:
            postings = read.setdefault(term, empty)  # no postings: kept too (no re-read)
            if len(postings) <= self._max:
                self._terms[term] = postings
                self._size += len(postings)
        while self._size > self._max and self._terms:
            _, old = self._terms.popitem(last=False)
            self._size -= len(old)
        return read


def bm25_ranker(
    postings: dict[str, Postings],
    terms: Sequence[str],
    total: int,
    average: float,
    memo: dict[str, Gains] | None = None,
) -> Callable[[int], list[tuple[int, float]]]:
    """Chunks ranked by FTS5's ``bm25()`` for an OR of ``terms`` (a term given twice
    counts twice), as a function of the window wanted: (chunk id, score), best first.
    ``memo`` keeps long terms' weights between queries while the corpus counts hold."""
    times = Counter(terms)
    ids, weights = [], []
    for term in dict.fromkeys(terms):
        found = postings.get(term)
        if found is None or not len(found):
            continue
        ids.append(found.ids)
        weights.append(_weights(found, max(total, len(found)), average, term, memo) * times[term])
    if not ids:
        return lambda window: []
    chunk_ids, values = _summed(np.concatenate(ids), np.concatenate(weights))
    return lambda window: top_window(chunk_ids, values, window)


class Gains(NamedTuple):
    """A term's weight in each of its postings, and what it was computed from."""

    postings: Postings
    total: int
    average: float
    weights: np.ndarray


def _weights(
    found: Postings, total: int, average: float, term: str, memo: dict[str, Gains] | None
) -> np.ndarray:
    """What the term adds to each of its chunks' scores; ``total`` is at least its
    document frequency, so that a stale corpus count never makes idf negative."""
    kept = memo.get(term) if memo is not None else None
    if (
        kept is not None
        and kept.postings is found
        and (kept.total, kept.average)
        == (
            total,
            average,
        )
    ):
        return kept.weights
    df = len(found)
    idf = math.log((total - df + 0.5) / (df + 0.5))
    norms = K1 * (1 - B + B * found.length / (average or 1.0))
    weights = gain(idf if idf > 0 else IDF_FLOOR, found.tf, norms)
    if memo is not None and df >= MEMO_MIN:
        if len(memo) >= MEMO_TERMS:
            memo.clear()
        memo[term] = Gains(found, total, average, weights)
    return weights


def _compact(values: np.ndarray, small: type[np.integer[Any]]) -> np.ndarray:
    """Native integers, in ``small`` where every value fits (8 bytes a posting, mostly)."""
    fits = not len(values) or int(values.max()) <= np.iinfo(small).max
    return values.astype(small if fits else values.dtype.newbyteorder("="))


def _summed(ids: np.ndarray, weights: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(distinct chunk ids, the sum of their weights)."""
    if len(ids) and int(ids.max()) < 16 * len(ids) + 1_000_000:
        # Dense enough: add by id (no sort), then keep the ids that got anything.
        sums = np.bincount(ids, weights=weights)
        held = np.zeros(len(sums), bool)
        held[ids] = True
        found = np.flatnonzero(held)
        return found, sums[found]
    distinct, where = np.unique(ids, return_inverse=True)
    return distinct, np.bincount(where, weights=weights, minlength=len(distinct))
