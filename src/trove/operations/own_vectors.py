"""Vectors a caller brings: ``add(..., vector=[...])`` and ``search(vector=[...])``.

A caller who embeds for itself gives one vector per entry; it stands for the whole entry,
so every chunk of it gets that vector (entries written this way are usually one chunk).
Vectors are checked against the store's locked dimension (a store without a lock and
without an embedder is locked to the first vector's dimension, as ``caller``'s vectors)
and normalized, as the embedders' are. A wrong dimension, NaN or infinity, or an all-zero
vector is ``InvalidInput``, raised before anything is written.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence, Set
from typing import TYPE_CHECKING, Any

from trove.backends.base import Backend, EmbedderLock
from trove.backends.writes import ChunkRow, Vectors
from trove.embedders.vectorizer import Vectorizer
from trove.errors import InvalidInput, InvalidQuery
from trove.hits import Hit
from trove.search.filters import Filters
from trove.search.hybrid import document_hit
from trove.search.query import parse as parse_query
from trove.timeutil import now

if TYPE_CHECKING:
    import numpy as np
else:  # numpy loads where first used: opening a store, stats, keyword search need none
    from trove.lazy import numpy as np

# The lock of a store whose only vectors are its callers' own.
CALLER_SPEC = "caller"


def parse(value: Any, *, error: type[Exception] = InvalidInput) -> np.ndarray:
    """A caller's vector as a unit float32 array, or ``error`` saying what is wrong."""
    return units(flat(value, error=error)[None, :], error=error)[0]


def flat(value: Any, *, error: type[Exception] = InvalidInput) -> np.ndarray:
    """A caller's vector as a flat float64 array, not yet checked by :func:`units`."""
    if isinstance(value, str | bytes) or not hasattr(value, "__len__"):
        raise error("vector must be a list of numbers")
    try:
        # A copy: a bulk write keeps each item's vector until its batch is written, and a
        # caller may fill one buffer again for every item (``asarray`` kept the buffer, so
        # every document of a batch got the last item's vector).
        array = np.array(value, dtype=np.float64)
    except (TypeError, ValueError):
        raise error("vector must be a list of numbers") from None
    if array.ndim != 1 or array.size == 0:
        raise error("vector must be a flat, non-empty list of numbers")
    return array


def units(rows: np.ndarray, *, error: type[Exception] = InvalidInput) -> np.ndarray:
    """Vectors of one dimension (a float64 matrix, a vector a row) as unit float32 rows,
    or ``error`` for one with NaN or infinity, or all zeros. A batch at once: a bulk write
    brings thousands, and each numpy call costs microseconds."""
    squares = np.einsum("ij,ij->i", rows, rows)
    if not np.all(np.isfinite(squares)) and not np.all(np.isfinite(rows)):
        raise error("vector holds NaN or infinity")
    if not np.all(squares):
        raise error("vector is all zeros; it has no direction to compare")
    return (rows / np.sqrt(squares)[:, None]).astype(np.float32)


def expected_dimension(backend: Backend, vectorizer: Vectorizer) -> int | None:
    """The dimension a caller's vector must have (None: not fixed yet)."""
    lock = backend.vector_lock()
    if lock is not None:
        return lock.dimension
    if vectorizer.enabled:
        return int(vectorizer.resolve().dimension)
    return None


def check(backend: Backend, vectorizer: Vectorizer, vectors: Mapping[str, np.ndarray]) -> None:
    """Every given vector has the store's dimension (and the same one, on a new store)."""
    want = expected_dimension(backend, vectorizer)
    for vector in vectors.values():
        if want is None:
            want = len(vector)
        if len(vector) != want:
            raise InvalidInput(
                f"vector has {len(vector)} dimensions; this store's vectors have {want}"
            )


class Given(Mapping[str, "np.ndarray"]):
    """Callers' vectors by document id, as rows of one matrix: a batch's are gathered with
    one numpy call, not one a document (:func:`gather`)."""

    def __init__(self, rows: np.ndarray, places: Mapping[str, int]) -> None:
        self._rows, self._places = rows, dict(places)

    def __getitem__(self, doc_id: str) -> np.ndarray:
        return self._rows[self._places[doc_id]]

    def __contains__(self, doc_id: object) -> bool:
        return doc_id in self._places

    def __iter__(self) -> Iterator[str]:
        return iter(self._places)

    def __len__(self) -> int:
        return len(self._places)

    def gather(self, doc_ids: Sequence[str]) -> np.ndarray:
        return self._rows[[self._places[d] for d in doc_ids]]


def gather(given: Mapping[str, np.ndarray], doc_ids: Sequence[str]) -> np.ndarray:
    """The given vectors of ``doc_ids`` (each in ``given``), a row each."""
    if isinstance(given, Given):
        return given.gather(doc_ids)
    return np.stack([given[d] for d in doc_ids])


class Batch:
    """The vectors a bulk write's items bring, until the batch is written: each is copied
    once, as its item is taken, into a row of one float64 matrix (a caller may fill one
    buffer again for every item), and the batch is checked and normalized at once
    (:meth:`given`). The first vector of a batch is checked against the store's dimension
    (read again for each batch: the last may have locked a new store); the rest against
    the first's. A numpy array of floats of that width is copied as it is; anything else
    is read by :func:`flat` first. (Reading each vector into an array of its own, stacking
    them and placing them a row at a time cost ~0.1 s of the ~0.3 s that 20,000 vectors
    added to a bulk write; docs/benchmarks.md, "Vector writes".)"""

    def __init__(self, backend: Backend, vectorizer: Vectorizer) -> None:
        self._backend, self._vectorizer = backend, vectorizer
        self._rows = np.empty((0, 0))
        self._count = 0
        self._places: dict[str, int] = {}

    def __len__(self) -> int:
        return self._count

    def take(self, value: Any) -> int:
        """Copy the vector ``value`` in as the next row and return its place, or raise
        :class:`InvalidInput` (nothing is taken)."""
        width = self._rows.shape[1]
        if not self._count:
            vector = flat(value)
            check(self._backend, self._vectorizer, {"": vector})
            width = len(vector)
            if self._rows.shape[1] != width:
                self._rows = np.empty((16, width))
        elif (
            isinstance(value, np.ndarray)
            and value.ndim == 1
            and value.dtype.kind == "f"
            and len(value) == width
        ):
            vector = value
        else:
            vector = flat(value)
            if len(vector) != width:
                check(self._backend, self._vectorizer, {"": vector})
                raise InvalidInput(
                    f"vector has {len(vector)} dimensions; the write's other vectors have {width}"
                )
        if self._count == len(self._rows):
            grown = np.empty((2 * len(self._rows), width))
            grown[: self._count] = self._rows
            self._rows = grown
        self._rows[self._count] = vector
        self._count += 1
        return self._count - 1

    def place(self, doc_id: str, row: int) -> None:
        """Document ``doc_id`` is written with the vector of row ``row``."""
        self._places[doc_id] = row

    def given(self) -> Given:
        """The batch's vectors (checked and normalized) by the documents they are for."""
        return Given(units(self._rows[: self._count]), self._places)

    def clear(self) -> None:
        self._count = 0
        self._places.clear()


def vectors_for(
    backend: Backend,
    vectorizer: Vectorizer,
    rows: Sequence[tuple[str, ChunkRow]],
    given: Mapping[str, np.ndarray],
    skip: Set[str] = frozenset(),
) -> tuple[Vectors | None, list[int] | None]:
    """Vectors for new chunk rows (each with its document id): a document's given vector
    for its chunks, the embedder's for the rest, none for documents in ``skip`` (kept out
    of the semantic index); and which rows they are for (None: all)."""
    if not given and not skip:
        return vectorizer.vectors_for([row for _, row in rows]), None
    ids = [doc_id for doc_id, _ in rows]
    wanted = [i for i, doc_id in enumerate(ids) if doc_id not in skip]
    mine = [i for i in wanted if ids[i] in given]
    todo = [i for i in wanted if ids[i] not in given] if len(mine) < len(wanted) else []
    embedded = vectorizer.vectors_for([rows[i][1] for i in todo])
    if given:
        lock: EmbedderLock | None = _lock(backend, vectorizer, len(next(iter(given.values()))))
    else:
        lock = backend.vector_lock()
    if lock is None or (todo and embedded is None and not given):
        return None, None
    if todo and embedded is None:  # a keyword-only store: only the given rows get one
        wanted = mine
    matrix = np.empty((len(rows), lock.dimension), dtype=np.float32)
    if mine:
        matrix[mine] = gather(given, [ids[i] for i in mine])
    if todo and embedded is not None:
        matrix[todo] = embedded.matrix
    if len(wanted) == len(rows):
        return Vectors(lock.table, matrix), None
    return Vectors(lock.table, matrix[wanted]), wanted


def _lock(backend: Backend, vectorizer: Vectorizer, dimension: int) -> EmbedderLock:
    lock = backend.vector_lock()
    if lock is not None:
        return lock
    if vectorizer.enabled:
        vectorizer.vectors_for([])  # locks to the embedder, as its first write would
        embedder = vectorizer.resolve()
        return backend.vector_lock() or backend.lock_vectors(
            vectorizer.spec, embedder.model_id, int(embedder.dimension)
        )
    return backend.lock_vectors(CALLER_SPEC, CALLER_SPEC, dimension)


def query(backend: Backend, value: Any) -> tuple[EmbedderLock, np.ndarray] | None:
    """The lock and a caller's query vector (None: the store has no vectors yet)."""
    vector = parse(value, error=InvalidQuery)
    lock = backend.vector_lock()
    if lock is None:
        return None
    if len(vector) != lock.dimension:
        raise InvalidQuery(
            f"vector has {len(vector)} dimensions; this store's vectors have {lock.dimension}"
        )
    return lock, vector


def search(backend: Backend, value: Any, where: Filters, limit: int, explain: bool) -> list[Hit]:
    """Documents nearest to a caller's query vector, best first, one hit per document."""
    if not isinstance(limit, int) or limit < 0:
        raise InvalidQuery("limit must be a non-negative integer")
    found = query(backend, value)
    if found is None or limit == 0:
        return []
    lock, vector = found
    ranked = backend.vector_search(lock, vector, where, limit, now())
    docs = backend.get_documents([h.doc_id for h in ranked])
    texts = backend.snippets(parse_query(""), [h.chunk_id for h in ranked])
    return [
        document_hit(
            docs[h.doc_id],
            h.score,
            texts.get(h.chunk_id, ""),
            h.chunk,
            {"semantic": {"rank": rank, "score": h.score}, "vector": "caller"}
            if explain
            else None,
        )
        for rank, h in enumerate(ranked, 1)
    ]
