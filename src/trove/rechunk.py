"""Cutting stored documents into chunks again with other chunk settings
(:meth:`Store.rechunk`, ``trove rechunk``).

A document's text is kept byte-exact, so it is re-cut from the stored text: for an
ingested file that is what its reader made of the kept original (a PDF's text, a mail's
body), and nothing has to be read again. Chunks are written and embedded as a write does,
a batch per transaction; ids, fields and events stay (nothing about the content changed),
and ``trove check`` holds after each batch. Entries under entry control (one span of
their whole text) are left as they are, and so is a store whose vectors are all its
callers' own: their vectors cannot be remade for new chunks.
"""

from __future__ import annotations

from collections.abc import Iterable
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from trove.errors import InvalidInput
from trove.memory import entry
from trove.operations.own_vectors import CALLER_SPEC
from trove.parts import Transacting
from trove.write import Chunker, Writer

if TYPE_CHECKING:
    from trove.embedders.vectorizer import Vectorizer


class Recuttable(Transacting, Protocol):
    """What cutting documents again needs of a store: its backend and events, its
    vectorizer, its write lock, and the namespaces it holds."""

    @property
    def vectors(self) -> Vectorizer: ...
    def writing(self) -> AbstractContextManager[None]: ...
    def stats(self) -> Any: ...


BATCH = 100


@dataclass(frozen=True)
class RechunkReport:
    """How many documents were cut again, into how many chunks, and how many were left
    as they were (entries under entry control, deleted or expired ones)."""

    documents: int
    chunks: int
    skipped: int


def rechunk(
    store: Recuttable,
    doc_ids: Iterable[str] | None = None,
    *,
    namespace: str | None = None,
    chunk_chars: int,
    chunk_overlap: int,
) -> RechunkReport:
    """Cut ``doc_ids`` (or every document of ``namespace``, or of the store) again into
    chunks of ``chunk_chars`` with ``chunk_overlap``."""
    _check(chunk_chars, chunk_overlap)
    lock = store.backend.vector_lock()
    if lock is not None and lock.spec == CALLER_SPEC:
        raise InvalidInput(
            "this store's vectors are its callers' own: new chunks would have none "
            "(add the documents again with their vectors instead)"
        )
    writer = Writer(
        store.backend, store.vectors, Chunker(chunk_chars, chunk_overlap), store.notify
    )
    wanted = list(_ids(store, doc_ids, namespace))
    done = chunks = skipped = 0
    for start in range(0, len(wanted), BATCH):
        with store.writing():
            docs = [store.peek(doc_id) for doc_id in wanted[start : start + BATCH]]
            cut = [d for d in docs if d is not None and not entry.controlled(d)]
            results = writer.rechunk(cut)
        written = [r for r in results if r.action != "unchanged"]
        done += len(written)
        chunks += sum(r.chunks for r in written)
        skipped += len(docs) - len(written)
    return RechunkReport(done, chunks, skipped)


def _check(chunk_chars: object, chunk_overlap: object) -> None:
    for name, value, least in (
        ("chunk_chars", chunk_chars, 20),
        ("chunk_overlap", chunk_overlap, 0),
    ):
        if isinstance(value, bool) or not isinstance(value, int) or value < least:
            raise InvalidInput(f"{name} must be an integer of at least {least}, not {value!r}")
    if chunk_overlap >= chunk_chars:  # type: ignore[operator]
        raise InvalidInput("chunk_overlap must be smaller than chunk_chars")


def _ids(store: Recuttable, doc_ids: Iterable[str] | None, namespace: str | None) -> Iterable[str]:
    if doc_ids is not None:
        if isinstance(doc_ids, str):
            raise InvalidInput("rechunk takes a list of ids, not one string")
        return dict.fromkeys(doc_ids)
    names = [namespace] if namespace is not None else list(store.stats().by_namespace)
    return [doc_id for name in names for doc_id in store.backend.namespace_documents(name)]
