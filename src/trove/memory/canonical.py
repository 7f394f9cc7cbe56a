"""Near-duplicate memories folded into one canonical memory (reversible).

:func:`canonicalize` finds groups of near-duplicates in a namespace: two documents are
duplicates when the cosine of their vectors (the mean of their chunks' vectors) is at
least ``threshold`` *and* their word sets overlap (Jaccard) at least ``text_threshold``
(``None`` skips the text check). A store without vectors compares texts only (Jaccard at
least ``text_threshold``, default 0.9), pairwise, so it refuses more than
``TEXT_ONLY_LIMIT`` documents. Groups are the connected pairs. Up to ``EXACT_LIMIT``
documents every pair is compared; beyond, candidates come from locality-sensitive hashing
(random hyperplanes), which finds about 98% of the pairs at cosine 0.95 and more of the
closer ones (a missed pair is left apart: nothing is ever merged wrongly).

In each group one member is canonical, by ``rule``: ``newest`` (the default: the latest
timestamp, else creation), ``accessed`` (the highest ``access_count``) or ``important``
(the highest importance); ties go to the newest, then the smallest id. The canonical
member's ``canonical_id`` is its own id, the others' the canonical's, and each other
member gets a ``duplicate_of`` edge to it. Nothing is deleted; :func:`uncanonicalize`
undoes it. Search then shows each group as its canonical document
(``collapse_duplicates=False`` shows all).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from ..errors import InvalidInput
from ..models import Document
from ..timeutil import now, to_epoch

if TYPE_CHECKING:
    from ..store import Store

RULES = ("newest", "accessed", "important")
TEXT_ONLY_LIMIT = 5000
EDGE = "duplicate_of"
# Set once a store has canonical marks, so search only pays for collapsing then.
META_KEY = "canonical.marked"
_BLOCK = 256
# Past this many documents, candidate pairs come from hashing (see _bucket_pairs).
EXACT_LIMIT = 20000
_BITS = 12
_TABLES = 12
_PAGE = 500
_WORD = re.compile(r"\w+")


@dataclass(frozen=True)
class DuplicateGroup:
    """One group of near-duplicates: its canonical document and the others."""

    canonical: str
    duplicates: list[str]

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def canonicalize(
    store: Store,
    *,
    namespace: str = "default",
    threshold: float = 0.95,
    text_threshold: float | None = 0.5,
    rule: str = "newest",
    dry_run: bool = False,
) -> list[DuplicateGroup]:
    """Find near-duplicate groups and (unless ``dry_run``) mark them; returns the groups."""
    _check(threshold, text_threshold, rule)
    docs, texts, matrix = _load(store, namespace)
    if matrix is None:
        if len(docs) > TEXT_ONLY_LIMIT:
            raise InvalidInput(
                f"this store has no vectors; comparing {len(docs)} texts pairwise is too slow "
                f"(limit {TEXT_ONLY_LIMIT}); open it with an embedder and reembed first"
            )
        pairs = _text_pairs(texts, 0.9 if text_threshold is None else text_threshold)
    else:
        pairs = _vector_pairs(matrix, threshold)
        if text_threshold is not None:
            words = [_words(t) for t in texts]
            pairs = [(i, j) for i, j in pairs if _jaccard(words[i], words[j]) >= text_threshold]
    groups = [_group(docs, members, rule) for members in _components(len(docs), pairs)]
    groups.sort(key=lambda g: g.canonical)
    if not dry_run and groups:
        _mark(store, groups)
    return groups


def uncanonicalize(store: Store, *, namespace: str = "default") -> int:
    """Undo :func:`canonicalize` in a namespace; returns how many documents it unmarked."""
    ids = store.backend.namespace_documents(namespace)
    docs = store.backend.get_documents(ids)
    marked = [d for d in docs.values() if d.canonical_id is not None]
    with store.transaction():
        store.backend.set_canonical({d.id: None for d in marked})
        for doc in marked:
            if doc.canonical_id != doc.id and doc.canonical_id is not None:
                store.backend.delete_edges(doc.id, doc.canonical_id, EDGE)
    return len(marked)


def _check(threshold: float, text_threshold: float | None, rule: str) -> None:
    for name, value in (("threshold", threshold), ("text_threshold", text_threshold)):
        if value is None and name == "text_threshold":
            continue
        if isinstance(value, bool) or not isinstance(value, int | float) or not 0 < value <= 1:
            raise InvalidInput(f"{name} must be a number in (0, 1], not {value!r}")
    if rule not in RULES:
        raise InvalidInput(f"rule must be one of {', '.join(RULES)}, not {rule!r}")


def _load(store: Store, namespace: str) -> tuple[list[Document], list[str], np.ndarray | None]:
    """Live documents of a namespace, their indexed texts and mean vectors (if any)."""
    stamp = now()
    ids = sorted(store.backend.namespace_documents(namespace))
    docs: list[Document] = []
    texts: list[str] = []
    for start in range(0, len(ids), _PAGE):
        part = ids[start : start + _PAGE]
        headers = store.backend.get_documents(part)
        chunks = store.backend.export_chunks(part, None)
        for doc_id in part:
            doc = headers.get(doc_id)
            if doc is None or doc.deleted_at is not None or _expired(doc, stamp):
                continue
            docs.append(doc)
            texts.append(" ".join(row.text for row, _ in chunks.get(doc_id, [])))
    lock = store.backend.vector_lock()
    if lock is None or not docs:
        return docs, texts, None
    owners, vectors = store.backend.namespace_vectors(namespace, lock.table)
    position = {doc.id: i for i, doc in enumerate(docs)}
    matrix = np.zeros((len(docs), lock.dimension), dtype=np.float32)
    rows = np.fromiter((position.get(o, -1) for o in owners), dtype=np.int64, count=len(owners))
    keep = rows >= 0
    np.add.at(matrix, rows[keep], vectors[keep])  # a document's vector: its chunks' mean
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    np.divide(matrix, norms, out=matrix, where=norms > 0)
    return docs, texts, matrix


def _vector_pairs(matrix: np.ndarray, threshold: float) -> list[tuple[int, int]]:
    """Index pairs (i < j) whose cosine is at least ``threshold``: every pair compared up
    to ``EXACT_LIMIT`` documents, candidates from random-hyperplane buckets beyond."""
    if len(matrix) > EXACT_LIMIT:
        return _bucket_pairs(matrix, threshold)
    pairs: list[tuple[int, int]] = []
    for start in range(0, len(matrix), _BLOCK):
        block = matrix[start : start + _BLOCK] @ matrix[start:].T
        rows, cols = np.nonzero(block >= threshold)
        for r, c in zip(rows.tolist(), cols.tolist(), strict=True):
            i, j = start + r, start + c
            if i < j:
                pairs.append((i, j))
    return pairs


def _bucket_pairs(matrix: np.ndarray, threshold: float) -> list[tuple[int, int]]:
    """Pairs found by locality-sensitive hashing: documents that share the signs of
    ``_BITS`` random projections, in any of ``_TABLES`` tables, are compared exactly. Two
    vectors at cosine 0.95 agree on a sign with probability 0.9, so they share a bucket
    in at least one table with probability 1 - (1 - 0.9**12)**12 = 0.98 (closer ones
    more often); a pair it misses stays apart, which is the safe side."""
    rng = np.random.default_rng(0)
    found: set[tuple[int, int]] = set()
    weights = 1 << np.arange(_BITS, dtype=np.int64)
    for _ in range(_TABLES):
        planes = rng.standard_normal((matrix.shape[1], _BITS)).astype(np.float32)
        keys = ((matrix @ planes) > 0).astype(np.int64) @ weights
        order = np.argsort(keys, kind="stable")
        bounds = np.flatnonzero(np.diff(keys[order])) + 1
        for bucket in np.split(order, bounds):
            if len(bucket) < 2:
                continue
            sims = matrix[bucket] @ matrix[bucket].T
            rows, cols = np.nonzero(np.triu(sims >= threshold, k=1))
            for r, c in zip(rows.tolist(), cols.tolist(), strict=True):
                i, j = int(bucket[r]), int(bucket[c])
                found.add((min(i, j), max(i, j)))
    return sorted(found)


def _text_pairs(texts: Sequence[str], threshold: float) -> list[tuple[int, int]]:
    words = [_words(t) for t in texts]
    return [
        (i, j)
        for i in range(len(words))
        for j in range(i + 1, len(words))
        if _jaccard(words[i], words[j]) >= threshold
    ]


def _words(text: str) -> frozenset[str]:
    return frozenset(_WORD.findall(text.lower()))


def _jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    if not a and not b:
        return 1.0
    return len(a & b) / len(a | b)


def _components(size: int, pairs: Sequence[tuple[int, int]]) -> list[list[int]]:
    parent = list(range(size))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for i, j in pairs:
        a, b = root(i), root(j)
        if a != b:
            parent[max(a, b)] = min(a, b)
    groups: dict[int, list[int]] = {}
    for i in {k for pair in pairs for k in pair}:
        groups.setdefault(root(i), []).append(i)
    return [sorted(g) for g in groups.values() if len(g) > 1]


def _group(docs: Sequence[Document], members: Sequence[int], rule: str) -> DuplicateGroup:
    def newest(doc: Document) -> float:
        return to_epoch(doc.timestamp) or to_epoch(doc.created_at) or 0.0

    def key(doc: Document) -> tuple[float, float, str]:
        first = {"newest": 0.0, "accessed": doc.access_count, "important": doc.importance or 0.0}
        # Highest first on the rule, then newest; the smallest id breaks ties.
        return (-float(first[rule]), -newest(doc), doc.id)

    ranked = sorted((docs[i] for i in members), key=key)
    return DuplicateGroup(ranked[0].id, sorted(d.id for d in ranked[1:]))


def _mark(store: Store, groups: Sequence[DuplicateGroup]) -> None:
    stamp = now()
    marks: dict[str, str | None] = {}
    for group in groups:
        marks[group.canonical] = group.canonical
        marks.update({d: group.canonical for d in group.duplicates})
    with store.transaction():
        store.backend.set_canonical(marks)
        for group in groups:
            for dup in group.duplicates:
                store.backend.put_edge(dup, group.canonical, EDGE, 1.0, stamp)
        store.backend.set_meta(META_KEY, "1")


def _expired(doc: Document, stamp: float) -> bool:
    expires = to_epoch(doc.expires_at)
    return expires is not None and expires <= stamp
