"""In-memory k-NN over chunk vectors, kept in step with the store's vec0 table.

Every vector is turned by one fixed random rotation and kept three times: as int16 codes
(two bytes a dimension; scores within ~3e-5 of float32), as int8 codes (one byte), and as
a sketch of its sign bits (one bit a dimension). A search ranks the rows by the Hamming
distance of their sketch to the query's, scores the best few thousand from the int8
codes, rescores the best of those (k plus half again, at least 32 more) from the int16
codes, and returns the top k. When few rows are eligible (a small index, or a tight
filter from SQL) it scores all of them.

Why the rotation: the sign bits of coordinates that carry little variance say little,
and embeddings can put most of theirs in a few coordinates. A random rotation spreads it
over every bit and leaves dot products unchanged. Recall@10, 100k clustered synthetic rows
with a power-law spread per coordinate, 1000 rescored: 0.85 raw, 0.99 rotated (50k MiniLM
sentence embeddings: 0.999 either way).
Why two codes: int8 alone reorders near-tied neighbours (its rounding is ~1e-3 a score):
recall@10 at 1M synthetic rows, 8000 rescored, 0.966 with int8 against 0.990 with float16.
But only the neighbours near the top need the int16 codes: at 1M clustered rows (bench/
vector_index.py's), int8 for the few thousand candidates, then int16 for the best 10 + 32
gave the int16-only top 10 for all 200 queries (recall@10 0.994 both), and the best
300 + 150 the same top 300. So a search reads the int8 codes of many rows and the int16
codes of a few: an index mapped from a file (cache.py) touches half the pages it
did, and reads its few int16 rows rather than mapping them (a serving process's resident
memory at 1M chunks: the int16 codes alone were 768 MB). Why int16 and not float16: numpy
converts float16 to float32 many times slower. Coordinates of a unit vector lie in
[-1, 1], so one fixed scale serves every row's int16 code; a rotated unit vector's
coordinates are all within +-0.5 but for vectors concentrated on a few directions (a
coordinate of 384 has a standard deviation of 0.05), so the int8 code spends its range
there and clips the rest, which the int16 rescoring scores right.
Latency, recall and memory at 10k-1M rows: bench/vector_index.py.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from functools import lru_cache
from typing import TYPE_CHECKING

from trove.backends.sqlite.vector_index import batch, sketches
from trove.errors import InvalidInput
from trove.rwlock import ReadWriteLock

if TYPE_CHECKING:
    import numpy as np
else:  # numpy loads where first used: opening a store, stats, keyword search need none
    from trove.lazy import numpy as np

_SCALE = 32767.0  # int16 code of a coordinate in [-1, 1]
_COARSE_SCALE = 254.0  # int8 code of a coordinate in [-0.5, 0.5] (clipped beyond)
_RESCORE_MIN = 32  # the int8 scores' best k + max(k // 2, this) are rescored from int16
_EXACT_MAX = 4_096  # up to this many eligible rows, score them all: exact, and cheap
_OVERSAMPLE = 100  # candidates rescored per result asked for, up to the first _DEEP ...
_DEEP, _DEEP_OVERSAMPLE = 50, 25  # ... and per result past them (hybrid asks for ~600)
_FRACTION = 128  # ... and at least 1/_FRACTION of the eligible rows: recall falls as rows grow
_BATCH = 16_384  # rows encoded, moved or scored at a time: bounds temporary memory
_MIN_DEAD = 1_024  # compact once this many rows, and a quarter of all rows, are dead
_MIN_RECENT = 4_096  # out-of-order ids wait in a dict until there are this many (or n/8)
_ROTATION_SEED = 0x7A0E

# (offset, ids, int16 codes, int8 codes, sketch) of rows handed over by VectorIndex.export
RowWriter = Callable[[int, "np.ndarray", "np.ndarray", "np.ndarray", "np.ndarray"], None]
Allocate = Callable[[int], RowWriter]
# The int16 codes of the given rows, (len(rows), dimension), of an index that keeps them
# elsewhere (a file: cache.py).
FineRows = Callable[["np.ndarray"], "np.ndarray"]


class VectorIndex:
    """Cosine k-NN over (id, unit vector) rows; thread-safe; ids are int64."""

    def __init__(self, dimension: int, rotation: np.ndarray | None = None) -> None:
        if dimension <= 0:
            raise InvalidInput(f"vector dimension must be positive, got {dimension}")
        self.dimension = dimension
        self._words = -(-dimension // 64)
        # Codes are only meaningful with the rotation that made them: an index read from a
        # file brings its own (and skips the costly QR decomposition).
        self.rotation = _rotation(dimension) if rotation is None else rotation
        self._lock = ReadWriteLock()
        self._frozen = False  # rows in read-only (memory-mapped) arrays: never moved
        self._reset()

    @classmethod
    def adopt(
        cls,
        ids: np.ndarray,
        fine: FineRows,
        codes: np.ndarray,
        sketch: np.ndarray,
        rotation: np.ndarray,
    ) -> VectorIndex:
        """An index over arrays another index wrote (:meth:`export`): ``ids``
        ascending, ``fine`` reading rows' int16 codes, ``codes`` (n, dimension) int8,
        ``sketch`` (words, n) uint64. They may be read-only memory maps, shared by every
        process that maps the same file: the index only reads them, and can only remove
        rows (a private mask), not add them."""
        index = cls(len(rotation), rotation)
        n = len(ids)
        index._frozen = True
        index._ids, index._codes, index._sketch = ids, codes, sketch
        index._fine_rows = fine
        index._alive = np.ones(n, bool)
        index._keys, index._key_rows = ids, np.arange(n, dtype=np.int64)
        index._n = index._live = index._n_keys = n
        return index

    def export(self, allocate: Allocate, batch: int = _BATCH) -> None:
        """Hand the live rows over in ascending id order, what :meth:`adopt` takes:
        ``allocate(rows)`` once, then the writer it returns with (offset, ids, codes,
        sketch (words, n)) a batch at a time. Writers to the index wait meanwhile."""
        with self._lock.read():
            rows = np.flatnonzero(self._alive[: self._n])
            rows = rows[np.argsort(self._ids[rows], kind="stable")]
            write = allocate(len(rows))
            for start in range(0, len(rows), batch):
                part = rows[start : start + batch]
                fine, codes = self._fine_rows(part), self._codes[part]
                write(start, self._ids[part], fine, codes, self._sketch[:, part])

    def _reset(self) -> None:
        d, w = self.dimension, self._words
        # Rows are kept in arrival order; an id keeps its row until compaction.
        self._ids = np.zeros(0, np.int64)
        self._alive = np.zeros(0, bool)
        self._fine = np.zeros((0, d), np.int16)
        self._codes = np.zeros((0, d), np.int8)
        self._fine_rows: FineRows = self._fine_in_memory
        self._sketch = np.zeros((w, 0), np.uint64)  # one contiguous line per word: fast scans
        self._n = 0  # rows used, dead ones included
        self._live = 0
        # id -> row: sorted keys plus a dict of ids that arrived out of order.
        self._keys = np.zeros(0, np.int64)
        self._key_rows = np.zeros(0, np.int64)
        self._n_keys = 0
        self._recent: dict[int, int] = {}

    def __len__(self) -> int:
        return self._live

    @property
    def nbytes(self) -> int:
        """Bytes held by the index's arrays (capacity included)."""
        arrays = [self._ids, self._alive, self._codes, self._sketch, self._keys, self._key_rows]
        fine = 0 if self._frozen else self._fine.nbytes  # a frozen index reads them elsewhere
        return sum(a.nbytes for a in arrays) + fine + self.rotation.nbytes

    def add(self, ids: np.ndarray, vectors: np.ndarray) -> None:
        """Insert or replace rows; ``vectors`` is float32 (n, dimension), unit or zero rows."""
        ids = _as_ids(ids)
        vectors = np.asarray(vectors, dtype=np.float32)
        if vectors.ndim != 2 or vectors.shape[1] != self.dimension:
            raise InvalidInput(
                f"vectors must have shape (n, {self.dimension}), got {vectors.shape}"
            )
        if len(vectors) != len(ids):
            raise InvalidInput(f"{len(ids)} ids but {len(vectors)} vectors")
        if not np.isfinite(vectors).all():
            raise InvalidInput("vectors contain NaN or infinity")
        # The last occurrence of a repeated id wins, as if added one by one.
        _, last = np.unique(ids[::-1], return_index=True)
        keep = len(ids) - 1 - last
        ids, vectors = ids[keep], vectors[keep]
        if self._frozen:
            raise InvalidInput("this index maps a read-only file: add rows to another index")
        for start in range(0, len(ids), _BATCH):
            fine, codes, sketch = self._encode(vectors[start : start + _BATCH])
            with self._lock.write():
                self._upsert(ids[start : start + _BATCH], fine, codes, sketch)

    def remove(self, ids: np.ndarray | Iterable[int]) -> None:
        """Drop rows by id; unknown ids are ignored."""
        wanted = _as_ids(ids)
        with self._lock.write():
            rows = self._live_rows(wanted)
            self._alive[rows] = False
            self._live -= len(rows)
            dead = self._n - self._live
            if dead >= _MIN_DEAD and dead * 4 >= self._n and not self._frozen:
                self._compact()

    def contains(self, id: int) -> bool:
        with self._lock.read():
            return len(self._live_rows(np.array([id], np.int64))) > 0

    def clear(self) -> None:
        with self._lock.write():
            self._reset()

    def ids(self) -> np.ndarray:
        """The live ids, in no particular order."""
        with self._lock.read():
            return self._ids[: self._n][self._alive[: self._n]].copy()

    def search(
        self, query: np.ndarray, k: int, candidates: np.ndarray | None = None
    ) -> tuple[np.ndarray, np.ndarray]:
        """The k ids nearest ``query`` by cosine, best first, with their similarities.

        ``candidates`` limits the search to those ids (unknown ones are ignored); the
        filter applies before ranking, so k results come back whenever k are allowed.
        """
        q, q_sketch = self._query(query)
        allowed = None if candidates is None else _as_ids(candidates)
        if k <= 0:
            return np.zeros(0, np.int64), np.zeros(0, np.float32)
        with self._lock.read():
            rows = None if allowed is None else self._live_rows(allowed)
            return self._best(self._candidates(q_sketch, rows, k), q, k)

    def search_many(
        self, queries: np.ndarray, ks: Sequence[int]
    ) -> list[tuple[np.ndarray, np.ndarray]]:
        """:meth:`search` of each of ``queries`` (``ks[i]`` nearest ``queries[i]``), but the
        rows any query reads are read once for all of them (batch.py):
        phrasings of one query cost little more than one."""
        if np.ndim(queries) != 2 or len(queries) != len(ks):
            raise InvalidInput(f"queries must have shape ({len(ks)}, {self.dimension})")
        qs, q_sketches = self._queries(queries)
        with self._lock.read():
            rows = self._candidates_many(q_sketches, ks)
            coarse = self._coarse_many(rows, qs, ks)
            picked = [self._rescored(*found) for found in zip(rows, qs, ks, coarse, strict=True)]
            fine = batch.read_once(self._fine_rows, picked)
            return [self._top(*found) for found in zip(picked, fine, qs, ks, strict=True)]

    # -- internals: callers hold the lock, but for _encode ----------------------------------

    def _encode(self, vectors: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """int16 and int8 codes (n, dimension) and sketch (words, n) of rows: pure, so
        lock-free."""
        x = vectors @ self.rotation
        # Renormalising is cheap and keeps scores cosines even if a caller forgot to.
        norms = np.linalg.norm(x, axis=1, keepdims=True)
        np.divide(x, norms, out=x, where=norms > 0)
        fine = np.rint(x * _SCALE).astype(np.int16)
        codes = np.rint(np.clip(x * _COARSE_SCALE, -127, 127)).astype(np.int8)
        return fine, codes, sketches.pack_signs(fine > 0, self._words)

    def _fine_in_memory(self, rows: np.ndarray) -> np.ndarray:
        return self._fine[rows]

    def _upsert(
        self, ids: np.ndarray, fine: np.ndarray, codes: np.ndarray, sketch: np.ndarray
    ) -> None:
        rows = self._lookup(ids)  # a removed id is found too, and revived in its old row
        new = rows < 0
        n_new = int(new.sum())
        if n_new:
            if self._n + n_new > len(self._ids):  # grow by 1/8: cheap in place, little slack
                self._set_capacity(max(self._n + n_new, len(self._ids) * 9 // 8, 1024))
            rows[new] = np.arange(self._n, self._n + n_new)
            self._index(ids[new], rows[new])
            self._n += n_new
        self._live += int(np.count_nonzero(~self._alive[rows]))
        self._ids[rows] = ids
        self._fine[rows] = fine
        self._codes[rows] = codes
        self._sketch[:, rows] = sketch
        self._alive[rows] = True

    def _set_capacity(self, capacity: int) -> None:
        # In place: realloc resizes big blocks without a copy (mremap on Linux), so the
        # index never holds two copies of its codes. Safe with refcheck off because no
        # view of these arrays outlives a locked section, and writers run alone.
        arrays = (self._ids, self._alive, self._fine, self._codes, self._keys, self._key_rows)
        for array in arrays:
            array.resize((capacity, *array.shape[1:]), refcheck=False)
        sketch = np.zeros((self._words, capacity), np.uint64)  # 1/16 of the codes: copy
        sketch[:, : self._n] = self._sketch[:, : self._n]
        self._sketch = sketch

    def _index(self, ids: np.ndarray, rows: np.ndarray) -> None:
        """Record new ids (ascending) at their rows."""
        n = self._n_keys
        if not self._recent and (n == 0 or ids[0] > self._keys[n - 1]):
            # The usual case: AUTOINCREMENT rowids arrive in order and just extend the keys.
            self._keys[n : n + len(ids)] = ids
            self._key_rows[n : n + len(ids)] = rows
            self._n_keys += len(ids)
            return
        self._recent.update(zip(ids.tolist(), rows.tolist(), strict=True))
        if len(self._recent) > max(_MIN_RECENT, n // 8):
            self._merge_recent()

    def _merge_recent(self) -> None:
        n, m = self._n_keys, len(self._recent)
        keys = np.concatenate([self._keys[:n], np.fromiter(self._recent, np.int64, m)])
        rows = np.concatenate(
            [self._key_rows[:n], np.fromiter(self._recent.values(), np.int64, m)]
        )
        order = np.argsort(keys, kind="stable")
        self._keys[: n + m] = keys[order]
        self._key_rows[: n + m] = rows[order]
        self._n_keys = n + m
        self._recent.clear()

    def _lookup(self, ids: np.ndarray) -> np.ndarray:
        """Row of each id, dead or alive; -1 for ids never added (or compacted away)."""
        rows = np.full(len(ids), -1, np.int64)
        if self._n_keys:
            keys = self._keys[: self._n_keys]
            at = np.minimum(np.searchsorted(keys, ids), self._n_keys - 1)
            found = keys[at] == ids
            rows[found] = self._key_rows[at[found]]
        if self._recent:
            for i in np.flatnonzero(rows < 0).tolist():
                rows[i] = self._recent.get(int(ids[i]), -1)
        return rows

    def _live_rows(self, ids: np.ndarray) -> np.ndarray:
        rows = self._lookup(_sorted_unique(ids))
        rows = rows[rows >= 0]
        return rows[self._alive[rows]]

    def _compact(self) -> None:
        """Drop dead rows, moving live ones down in place (a row only ever moves down)."""
        self._merge_recent()
        keep = np.flatnonzero(self._alive[: self._n])
        for start in range(0, len(keep), _BATCH):
            source = keep[start : start + _BATCH]
            end = start + len(source)
            self._ids[start:end] = self._ids[source]
            self._fine[start:end] = self._fine[source]
            self._codes[start:end] = self._codes[source]
            self._sketch[:, start:end] = self._sketch[:, source]
        new_row = np.full(self._n, -1, np.int64)
        new_row[keep] = np.arange(len(keep))
        rows = new_row[self._key_rows[: self._n_keys]]
        kept = rows >= 0
        self._keys[: len(keep)] = self._keys[: self._n_keys][kept]
        self._key_rows[: len(keep)] = rows[kept]
        self._n_keys = len(keep)
        self._alive[: len(keep)] = True
        self._alive[len(keep) : self._n] = False
        self._n = self._live = len(keep)
        if len(self._ids) > 2 * self._n + 1024:
            self._set_capacity(self._n + self._n // 8)

    def _nearest_sketches(
        self, q_sketch: np.ndarray, rows: np.ndarray | None, wanted: int
    ) -> np.ndarray:
        """Positions (among all rows, or among ``rows``) of the ``wanted`` rows whose
        sketches are nearest the query's. (A first pass over part of each sketch was
        tried at 1M rows: 2 words of 6 keeping 4x the rows cut recall@10 from 0.98 to
        0.94 for a fifth of the time.)"""
        distances = self._hamming(q_sketch, rows, self._words)
        return sketches.smallest(distances, wanted, self._words * 64)

    def _hamming(self, q_sketch: np.ndarray, rows: np.ndarray | None, words: int) -> np.ndarray:
        """Hamming distance over the first ``words`` words of every live (or every given)
        row's sketch to the query's; dead rows get a distance past every live one's."""
        distances = sketches.distances(self._sketch, q_sketch, rows, self._n, words)
        live = self._alive[: self._n] if rows is None else self._alive[rows]
        if self._live < self._n and not live.all():
            distances[~live] = self._words * 64 + 1  # never among the nearest
        return distances

    def _query(self, query: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """A query checked, rotated and made unit length, and its sketch: lock-free."""
        q = np.asarray(query, dtype=np.float32)
        if q.shape not in ((self.dimension,), (1, self.dimension)):
            raise InvalidInput(f"query must have shape ({self.dimension},), got {q.shape}")
        rotated, sketch = self._queries(q.reshape(1, -1))
        return rotated[0], sketch[0]

    def _queries(self, queries: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Queries checked, rotated (in one product: einsum, as :meth:`_rescored`) and made
        unit length (a zero query scores 0 everywhere), and their sketches (m, words)."""
        q = np.asarray(queries, dtype=np.float32)
        if q.ndim != 2 or q.shape[1] != self.dimension:
            raise InvalidInput(f"queries must have shape (n, {self.dimension}), got {q.shape}")
        if not np.isfinite(q).all():
            raise InvalidInput("query contains NaN or infinity")
        q = np.einsum("ki,ij->kj", q, self.rotation)
        for row in q:  # each row's own norm: a batched norm rounds differently
            norm = float(np.linalg.norm(row))
            if norm > 0:
                row /= norm
        return q, np.ascontiguousarray(sketches.pack_signs(q > 0, self._words).T)

    def _candidates(self, q_sketch: np.ndarray, rows: np.ndarray | None, k: int) -> np.ndarray:
        """Rows a search for k scores: all eligible ones if few, else the nearest sketches."""
        wanted = self._wanted(self._live if rows is None else len(rows), k)
        if wanted is None:
            return np.flatnonzero(self._alive[: self._n]) if rows is None else rows
        picked = self._nearest_sketches(q_sketch, rows, wanted)
        return picked if rows is None else rows[picked]

    def _wanted(self, eligible: int, k: int) -> int | None:
        """How many of ``eligible`` rows a search for k scores by their sketch (None: all)."""
        # Deep windows need fewer candidates a result (100k rows, k=600: 100x rescored 60%
        # of the index; 25x past the first 50 keeps recall@600 close to exact).
        oversampled = _OVERSAMPLE * min(k, _DEEP) + _DEEP_OVERSAMPLE * max(0, k - _DEEP)
        wanted = min(eligible, max(oversampled, eligible // _FRACTION))
        return None if eligible <= _EXACT_MAX or wanted == eligible else wanted

    def _candidates_many(self, q_sketches: np.ndarray, ks: Sequence[int]) -> list[np.ndarray]:
        """:meth:`_candidates` of each query (``q_sketches`` (m, words)) over every live row, the
        sketches compared in one scan for all the queries that need them."""
        wanted = [self._wanted(self._live, k) for k in ks]
        scanned = [i for i, w in enumerate(wanted) if w is not None]
        found: dict[int, np.ndarray] = {}
        if scanned:
            distances = sketches.distances_many(self._sketch, q_sketches[scanned], self._n)
            if self._live < self._n:
                distances[:, ~self._alive[: self._n]] = self._words * 64 + 1  # never nearest
            counts = [int(wanted[i] or 0) for i in scanned]
            nearest = sketches.smallest_many(distances, counts, self._words * 64)
            found = dict(zip(scanned, nearest, strict=True))
        everyone = None
        picked = []
        for i in range(len(ks)):
            if i in found:
                picked.append(found[i])
                continue
            if everyone is None:  # every live row: found once, for each exact query
                everyone = np.flatnonzero(self._alive[: self._n])
            picked.append(everyone)
        return picked

    def _coarse_many(
        self, rows: Sequence[np.ndarray], queries: np.ndarray, ks: Sequence[int]
    ) -> list[np.ndarray | None]:
        """Each query's int8 scores of its ``rows`` (None where :meth:`_rescored` needs
        none), the union of the rows scored once for every query."""
        needed = [len(r) > k + max(k // 2, _RESCORE_MIN) for r, k in zip(rows, ks, strict=True)]
        if not any(needed):
            return [None] * len(rows)
        line = np.full(self._n, -1, np.int64)  # row -> its line in the union (not np.unique)
        line[np.concatenate([r for r, n in zip(rows, needed, strict=True) if n])] = 0
        union = np.flatnonzero(line == 0)
        line[union] = np.arange(len(union))
        every = len(union) == self._n  # all rows: read in place, not gathered
        scores = batch.int8_scores(self._codes[: self._n], None if every else union, queries)
        found = zip(rows, needed, strict=True)
        return [scores[line[r], i] if n else None for i, (r, n) in enumerate(found)]

    def _best(self, rows: np.ndarray, q: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """The k best of ``rows``, best first (:meth:`_rescored`, then :meth:`_top`)."""
        rows = self._rescored(rows, q, k)
        return self._top(rows, self._fine_rows(rows), q, k)

    def _rescored(
        self, rows: np.ndarray, q: np.ndarray, k: int, coarse: np.ndarray | None = None
    ) -> np.ndarray:
        """The rows to rescore from their int16 codes: the best few of ``rows`` by their
        int8 codes (scored here unless ``coarse`` brings them)."""
        rescored = k + max(k // 2, _RESCORE_MIN)
        if len(rows) <= rescored:
            return rows
        if coarse is None:
            coarse = np.empty(len(rows), np.float32)
            for start in range(0, len(rows), _BATCH):
                block = self._codes[rows[start : start + _BATCH]]
                # einsum, not BLAS: a threaded gemv stalls when the cores are busy.
                coarse[start : start + _BATCH] = np.einsum("ij,j->i", block, q)
        return rows[np.argpartition(-coarse, rescored - 1)[:rescored]]

    def _top(
        self, rows: np.ndarray, fine: np.ndarray, q: np.ndarray, k: int
    ) -> tuple[np.ndarray, np.ndarray]:
        """The k best of ``rows`` by their int16 codes ``fine``, best first."""
        scores = np.einsum("ij,j->i", fine, q).astype(np.float32)
        scores *= 1 / _SCALE
        if len(rows) > k:
            top = np.argpartition(-scores, k - 1)[:k]
            rows, scores = rows[top], scores[top]
        order = np.argsort(-scores, kind="stable")
        return self._ids[rows[order]], scores[order]


@lru_cache(maxsize=4)
def _rotation(dimension: int) -> np.ndarray:
    """The fixed random rotation of a dimension: the same in every index and process (an
    index written to a file is read with it)."""
    rng = np.random.default_rng(_ROTATION_SEED)
    q, _ = np.linalg.qr(rng.standard_normal((dimension, dimension)))
    rotation = q.astype(np.float32)
    rotation.flags.writeable = False
    return rotation


def _as_ids(ids: np.ndarray | Iterable[int]) -> np.ndarray:
    array = np.asarray(ids if isinstance(ids, np.ndarray) else list(ids))
    if array.size == 0:
        return np.zeros(0, np.int64)
    if array.ndim != 1 or not np.issubdtype(array.dtype, np.integer):
        raise InvalidInput(f"ids must be a 1-D array of integers, got {array.dtype} {array.shape}")
    return array.astype(np.int64, copy=False)


def _sorted_unique(ids: np.ndarray) -> np.ndarray:
    # np.unique hashes first: several times slower on 100k ids, and filters pass that many.
    ids = np.sort(ids)
    return ids[np.concatenate([[True], ids[1:] != ids[:-1]])] if len(ids) else ids
