"""Typed, weighted links between documents: :meth:`Store.link` and :meth:`Store.neighbors`."""

from __future__ import annotations

from typing import TYPE_CHECKING

from trove import validate
from trove.errors import InvalidInput, NotFound
from trove.models import Edge
from trove.timeutil import now

if TYPE_CHECKING:
    from trove.parts import Transacting


def link(store: Transacting, src: str, dst: str, type: str, weight: float) -> Edge:
    """A typed, weighted edge from ``src`` to ``dst`` (linking again sets the weight)."""
    if not type or not isinstance(type, str):
        raise InvalidInput("an edge needs a type, e.g. relates_to or supersedes")
    validate.string(type, "type")
    weight = validate.number(weight, "weight", *validate.WEIGHT_RANGE)
    for doc_id in (src, dst):
        if store.peek(doc_id) is None:
            raise NotFound(f"no document with id {doc_id!r}")
    if src == dst:
        raise InvalidInput("a document cannot link to itself")
    store.backend.put_edge(src, dst, type, float(weight), now())
    # Read back: a link made again keeps its first created_at.
    for edge in store.backend.edges_of([src], type):
        if edge.src == src and edge.dst == dst:
            return edge
    return Edge(src, dst, type, float(weight))  # pragma: no cover - just written


def neighbors(store: Transacting, doc_id: str, type: str | None) -> list[Edge]:
    """Edges from or to ``doc_id`` whose other end is a live document, heaviest first."""
    edges = store.backend.edges_of([doc_id], type)
    live = {e.dst if e.src == doc_id else e.src for e in edges}
    live = {d for d in live if store.peek(d) is not None}
    return [e for e in edges if (e.dst if e.src == doc_id else e.src) in live]
