"""Embedding for a store: which embedder, the lock in the file, vectors for new chunks.

The embedder is created on first use, so keyword-only work never loads a model.
``"auto"`` means the embedder the file was made with, else the fallback (``"default"``).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from trove.backends.base import Backend, EmbedderLock
from trove.embedders.base import Embedder
from trove.embedders.registry import get_embedder
from trove.errors import EmbedderMismatch, InvalidQuery

if TYPE_CHECKING:
    import numpy as np

    from trove.backends import writes as write_rows
    from trove.backends.writes import ChunkRow, Vectors
else:  # numpy loads where first used: opening a store, stats, keyword search need none;
    # the write rows' dataclasses, at the first write
    from trove.lazy import LazyModule
    from trove.lazy import numpy as np

    write_rows = LazyModule("trove.backends.writes")

AUTO = "auto"
EmbedderSpec = str | Embedder | None
# Set in the store's meta table when it is made, or first written, without an embedder:
# a later "auto" open stays keyword-only instead of embedding some documents and not
# others. Vectors (a lock) win over it; ``reembed`` removes it.
KEYWORD_ONLY = "keyword_only"
# A store whose vectors are given by the caller (trove.operations.own_vectors.CALLER_SPEC):
# documents without one are expected, so a keyword-only handle may write there, and an
# "auto" handle is one: no model made those vectors, so none is loaded.
_CALLER_SPEC = "caller"


def embedding_text(head: str, text: str) -> str:
    """What the embedder sees for a chunk: its title and headings give the text context."""
    return f"{head}\n\n{text}" if head else text


class Vectorizer:
    """The embedder of one open store and the vectors it writes."""

    def __init__(
        self, backend: Backend, request: EmbedderSpec = AUTO, fallback: str = "default"
    ) -> None:
        self.backend = backend
        self._request = request
        self._fallback = fallback
        self._embedder: Embedder | None = None
        self._spec = ""  # the name the embedder was made from, recorded in the lock
        self._lock = threading.RLock()
        self._keyword_only = backend.get_meta(KEYWORD_ONLY) is not None
        if self._keyword_only and backend.vector_lock() is not None:
            self._keyword_only = False  # vectors were added since (e.g. by a migration)
        if request == AUTO and (self._keyword_only or self.callers_own):
            # Recorded keyword-only, or every vector is the callers' own: there is no model
            # to make, so text is searched by keyword (switching is explicit: reembed).
            self._request = None
        elif request is not None and request != AUTO:
            self._check_lock(self.resolve())  # a mismatch fails at open, file untouched

    @property
    def callers_own(self) -> bool:
        """Whether the store's vectors are its callers' own (``add(..., vector=[...])``)."""
        lock = self.backend.vector_lock()
        return lock is not None and lock.spec == _CALLER_SPEC

    @property
    def keyword_only(self) -> bool:
        """Whether the file records that it is keyword-only (made without an embedder)."""
        return self._keyword_only

    def mark_keyword_only(self) -> None:
        """Record in the file that it is keyword-only (a store made with embedder=None)."""
        if self._request is None and not self._keyword_only and self.backend.vector_lock() is None:
            self.backend.set_meta(KEYWORD_ONLY, "1")
            self._keyword_only = True

    @property
    def enabled(self) -> bool:
        return self._request is not None

    @property
    def loaded(self) -> bool:
        """Whether an embedder object exists yet (tests: keyword work must not load one)."""
        return self._embedder is not None

    @property
    def spec(self) -> str:
        """The name the embedder is re-created from (recorded in the lock)."""
        self.resolve()
        return self._spec

    @property
    def embedder(self) -> Embedder | None:
        return self.resolve() if self.enabled else None

    def resolve(self) -> Embedder:
        with self._lock:
            if self._embedder is None:
                request = self._request
                if request == AUTO:
                    lock = self.backend.vector_lock()
                    request = lock.spec if lock is not None else self._fallback
                assert request is not None
                self._embedder = get_embedder(request)
                self._spec = spec_of(request, self._embedder)
            return self._embedder

    def _check_lock(self, embedder: Embedder) -> EmbedderLock | None:
        lock = self.backend.vector_lock()
        if lock is None:
            return None
        dimension = getattr(embedder, "dimension", None)
        if embedder.model_id != lock.model_id or (dimension and dimension != lock.dimension):
            raise EmbedderMismatch(
                f"this store's vectors were made by {lock.model_id} ({lock.dimension}-d), "
                f"not {embedder.model_id}; open it with embedder={lock.spec!r}, or switch "
                f"with `trove reembed --embedder NAME` (Store.reembed)"
            )
        return lock

    def vectors_for(self, rows: Sequence[ChunkRow]) -> Vectors | None:
        """Vectors for new chunk rows: reused by text hash where stored, else embedded."""
        if self._request is None:
            self._keyword_write(bool(rows))
            return None
        if self._keyword_only and rows:
            raise EmbedderMismatch(
                "this store is keyword-only (made without an embedder); to give it "
                "vectors, run `trove reembed --embedder NAME` (Store.reembed) first"
            )
        embedder = self.resolve()
        lock = self._check_lock(embedder)
        if not rows:
            return None if lock is None else write_rows.Vectors(lock.table, _empty(lock.dimension))
        known = {} if lock is None else self.backend.vectors_by_hash(lock.table, _hashes(rows))
        todo = [i for i, row in enumerate(rows) if row.text_hash not in known]
        embedded = embedder.embed([_embedded(rows[i]) for i in todo])
        if lock is None:
            lock = self.backend.lock_vectors(self._spec, embedder.model_id, embedded.shape[1])
        matrix = np.empty((len(rows), lock.dimension), dtype=np.float32)
        for i, row in enumerate(rows):
            if row.text_hash in known:
                matrix[i] = known[row.text_hash]
        if todo:
            matrix[todo] = embedded
        return write_rows.Vectors(lock.table, matrix)

    def _keyword_write(self, any_rows: bool) -> None:
        """A write through a keyword-only handle: recorded in a store without vectors,
        refused in one with them (those documents would be invisible to semantic search)."""
        if not any_rows:
            return
        lock = self.backend.vector_lock()
        if lock is None:
            self.mark_keyword_only()
        elif lock.spec != _CALLER_SPEC:
            raise EmbedderMismatch(
                f"this store has vectors ({lock.model_id}); a handle opened with "
                f"embedder=None cannot write to it without leaving documents out of "
                f"semantic search; open it with its embedder (embedder='auto', or no "
                f"--embedder option)"
            )

    def query(self, text: str) -> tuple[EmbedderLock, np.ndarray] | None:
        """The lock and query vector, or None when there is nothing to search."""
        embedder = self.resolve()
        lock = self._check_lock(embedder)
        if lock is None:
            return None
        vector = embedder.embed_query(text)
        return (lock, vector) if np.any(vector) else None

    def reembed(
        self,
        embedder: EmbedderSpec = AUTO,
        *,
        missing: bool = False,
        batch_size: int = 256,
        progress: Callable[[int], None] | None = None,
    ) -> int:
        """Rebuild vectors; returns how many chunks were embedded.

        ``missing=True`` embeds only chunks without a vector (after a crash, or for a
        store that was written keyword-only). Otherwise every chunk is embedded with
        ``embedder`` into a new table, and the store switches to it in one transaction:
        a crash midway leaves the old vectors in use.
        """
        if embedder is None:
            raise InvalidQuery("reembed needs an embedder")
        if embedder == AUTO and self._request is not None:
            target, spec = self.resolve(), self._spec
        else:
            request = self._fallback if embedder == AUTO else embedder
            target = get_embedder(request)
            spec = spec_of(request, target)
        lock = self.backend.vector_lock()
        if missing and lock is not None:
            self._check_lock(target)
            table, dimension = lock.table, lock.dimension
        else:
            dimension = target.embed(["dimension probe"]).shape[1]
            table = self.backend.begin_rebuild(dimension)
        done = 0
        for rows in self.backend.chunks_without_vectors(table, batch=batch_size):
            matrix = target.embed([embedding_text(head, text) for _, head, text in rows])
            self.backend.put_vectors(table, [cid for cid, _, _ in rows], matrix)
            done += len(rows)
            if progress:
                progress(len(rows))
        if not (missing and lock is not None):
            self.backend.finish_rebuild(EmbedderLock(spec, target.model_id, dimension, table))
        if self._keyword_only:
            self.backend.set_meta(KEYWORD_ONLY, None)  # switched explicitly: not any more
        with self._lock:
            self._request, self._embedder, self._spec = target, target, spec
            self._keyword_only = False
        return done


def spec_of(request: EmbedderSpec, embedder: Embedder) -> str:
    """The name to re-create an embedder from when the store is reopened: the name it was
    asked for, else its model id (the registry knows built-in model ids as names)."""
    if isinstance(request, str):
        return request
    return str(getattr(embedder, "spec", None) or embedder.model_id)


def _embedded(row: ChunkRow) -> str:
    return row.embed if row.embed is not None else embedding_text(row.head, row.text)


def _hashes(rows: Sequence[ChunkRow]) -> list[str]:
    return list(dict.fromkeys(row.text_hash for row in rows))


def _empty(dimension: int) -> np.ndarray:
    return np.zeros((0, dimension), dtype=np.float32)
