"""What the framework adapters share: search by a raw vector, and provenance as a flat
metadata dict for frameworks that carry only ``text`` + ``metadata``."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from trove.errors import InvalidQuery
from trove.hits import Hit
from trove.models import Document
from trove.search.filters import Filters
from trove.timeutil import now

if TYPE_CHECKING:
    from trove.store import Store

PROVENANCE = (
    "source",
    "source_id",
    "doc_type",
    "title",
    "author",
    "timestamp",
    "url",
    "thread_id",
    "channel",
)


def search_vector(
    store: Store, vector: Sequence[float], limit: int, filters: dict[str, Any]
) -> list[tuple[Document, float]]:
    """Documents nearest to ``vector`` (cosine similarity, best first), with the store's
    filters applied inside the k-NN."""
    if not store.has_embedder:
        raise InvalidQuery("search by vector needs an embedder; this store has none")
    lock = store.backend.vector_lock()
    if lock is None or limit <= 0:
        return []
    query = np.asarray(vector, dtype=np.float32)
    if query.shape != (lock.dimension,):
        raise InvalidQuery(
            f"the vector has {query.size} dimensions; the store's have {lock.dimension}"
        )
    norm = float(np.linalg.norm(query))
    if norm == 0:
        return []
    found = store.backend.vector_search(lock, query / norm, Filters.build(**filters), limit, now())
    return [(doc, hit.score) for hit in found if (doc := store.get(hit.doc_id)) is not None]


def chunk_vectors(store: Store, hits: Sequence[tuple[str, int]]) -> list[np.ndarray | None]:
    """The stored vector of each (doc id, chunk index), or None where there is none."""
    lock = store.backend.vector_lock()
    if lock is None:
        return [None] * len(hits)
    rows = store.backend.export_chunks(list(dict.fromkeys(d for d, _ in hits)), lock.table)
    by_key = {(d, row.chunk.index): v for d, found in rows.items() for row, v in found}
    return [by_key.get(key) for key in hits]


def provenance(doc: Document | Hit) -> dict[str, Any]:
    """The non-empty provenance fields of a document or hit, plus its id and tags."""
    data: dict[str, Any] = {"trove_id": doc.id if isinstance(doc, Document) else doc.doc_id}
    for name in PROVENANCE:
        value = getattr(doc, name)
        if value:
            data[name] = value
    if doc.participants:
        data["participants"] = list(doc.participants)
    if doc.tags:
        data["tags"] = list(doc.tags)
    return data
