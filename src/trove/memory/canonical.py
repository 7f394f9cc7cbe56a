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

from trove.errors import InvalidInput
from trove.models import Document
from trove.search.filters import Filters
from trove.timeutil import now, to_epoch

if TYPE_CHECKING:
    import numpy as np

    from trove.backends.base import Backend
    from trove.parts import Transacting
else:  # numpy loads where first used: opening a store, stats, keyword search need none
    from trove.lazy import numpy as np

RULES = ("newest", "accessed", "important")
TEXT_ONLY_LIMIT = 5000
EDGE = "duplicate_of"
# Set once a store has canonical marks, so search only pays for collapsing then.
META_KEY = "canonical.marked"
# Each search asks whether the store has marked duplicates. On PostgreSQL that read was a
# round trip of a semantic search's six (0.25 ms at 100k chunks): a search takes the
# answer this handle read up to this many seconds ago. This handle's own canonicalize
# shows at once; another process's first one within this long.
MARK_AGE_S = 5.0
_BLOCK = 256
# Past this many documents, candidate pairs come from hashing (see _bucket_pairs):
# the exact scan is quadratic (python bench/memory.py times canonicalize).
EXACT_LIMIT = 5000
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
    store: Transacting,
    *,
    namespace: str = "default",
    threshold: float = 0.95,
    text_threshold: float | None = 0.5,
    rule: str = "newest",
    dry_run: bool = False,
    session: str | None = None,
) -> list[DuplicateGroup]:
    """Find near-duplicate groups and (unless ``dry_run``) mark them; returns the groups.

    ``session`` compares only what a reader of that session sees (its own session items,
    none of another's; ``""``: no session items); None compares the whole namespace."""
    _check(threshold, text_threshold, rule)
    backend = store.backend
    ids = _live(backend, namespace, session)
    matrix = _vectors(backend, namespace, ids)
    if matrix is None:
        if len(ids) > TEXT_ONLY_LIMIT:
            raise InvalidInput(
                f"this store has no vectors; comparing {len(ids)} texts pairwise is too slow "
                f"(limit {TEXT_ONLY_LIMIT}); open it with an embedder and reembed first"
            )
        texts = _texts(backend, ids)
        pairs = _text_pairs(
            [texts[i] for i in ids], 0.9 if text_threshold is None else text_threshold
        )
    else:
        pairs = _vector_pairs(matrix, threshold)
        if text_threshold is not None and pairs:
            # Only the documents in candidate pairs are read and compared by words.
            texts = _texts(backend, [ids[k] for pair in pairs for k in pair])
            words = {doc_id: _words(text) for doc_id, text in texts.items()}
            pairs = [
                (i, j)
                for i, j in pairs
                if _jaccard(words[ids[i]], words[ids[j]]) >= text_threshold
            ]
    components = _components(len(ids), pairs)
    headers = backend.get_documents([ids[i] for members in components for i in members])
    groups = [_group([headers[ids[i]] for i in members], rule) for members in components]
    groups.sort(key=lambda g: g.canonical)
    if not dry_run and groups:
        _mark(store, groups)
    return groups


def uncanonicalize(store: Transacting, *, namespace: str = "default") -> int:
    """Undo :func:`canonicalize` in a namespace; returns how many documents it unmarked."""
    backend = store.backend
    ids = backend.namespace_documents(namespace)
    docs = backend.get_documents(ids)
    marked = [d for d in docs.values() if d.canonical_id is not None]
    with store.transaction():
        backend.set_canonical({d.id: None for d in marked})
        for doc in marked:
            if doc.canonical_id != doc.id and doc.canonical_id is not None:
                backend.delete_edges(doc.id, doc.canonical_id, EDGE)
    return len(marked)


def _check(threshold: float, text_threshold: float | None, rule: str) -> None:
    for name, value in (("threshold", threshold), ("text_threshold", text_threshold)):
        if value is None and name == "text_threshold":
            continue
        if isinstance(value, bool) or not isinstance(value, int | float) or not 0 < value <= 1:
            raise InvalidInput(f"{name} must be a number in (0, 1], not {value!r}")
    if rule not in RULES:
        raise InvalidInput(f"rule must be one of {', '.join(RULES)}, not {rule!r}")


def _live(backend: Backend, namespace: str, session: str | None) -> list[str]:
    """Ids of a namespace's live documents (not deleted, not expired) that a reader of
    ``session`` sees, sorted."""
    ids = backend.namespace_documents(namespace)
    where = Filters.build(namespace=namespace, session=session)
    return sorted(d for d in backend.visible(ids, where, now()) if d)


def _vectors(backend: Backend, namespace: str, ids: Sequence[str]) -> np.ndarray | None:
    """One unit vector per document (the mean of its chunks'), rows in ``ids`` order."""
    lock = backend.vector_lock()
    if lock is None or not ids:
        return None
    owners, vectors = backend.namespace_vectors(namespace, lock.table)
    position = {doc_id: i for i, doc_id in enumerate(ids)}
    matrix = np.zeros((len(ids), lock.dimension), dtype=np.float32)
    rows = np.fromiter((position.get(o, -1) for o in owners), dtype=np.int64, count=len(owners))
    keep = rows >= 0
    np.add.at(matrix, rows[keep], vectors[keep])
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    np.divide(matrix, norms, out=matrix, where=norms > 0)
    return matrix


def _texts(backend: Backend, ids: Sequence[str]) -> dict[str, str]:
    """The indexed text of documents (their chunks' text, joined)."""
    wanted = list(dict.fromkeys(ids))
    texts: dict[str, str] = {}
    for start in range(0, len(wanted), _PAGE):
        part = wanted[start : start + _PAGE]
        chunks = backend.export_chunks(part, None)
        for doc_id in part:
            texts[doc_id] = " ".join(row.text for row, _ in chunks.get(doc_id, []))
    return texts


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
    size = len(matrix)
    found: list[np.ndarray] = []
    weights = 1 << np.arange(_BITS, dtype=np.int64)
    for _ in range(_TABLES):
        planes = rng.standard_normal((matrix.shape[1], _BITS)).astype(np.float32)
        keys = ((matrix @ planes) > 0).astype(np.int64) @ weights
        order = np.argsort(keys, kind="stable")
        bounds = np.flatnonzero(np.diff(keys[order])) + 1
        for bucket in np.split(order, bounds):
            if len(bucket) < 2:
                continue
            rows, cols = np.nonzero(matrix[bucket] @ matrix[bucket].T >= threshold)
            first, second = bucket[rows], bucket[cols]
            upper = first < second
            found.append(first[upper] * size + second[upper])
    if not found:
        return []
    keys = np.unique(np.concatenate(found))
    return [(int(k // size), int(k % size)) for k in keys]


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


def _group(members: Sequence[Document], rule: str) -> DuplicateGroup:
    def newest(doc: Document) -> float:
        return to_epoch(doc.timestamp) or to_epoch(doc.created_at) or 0.0

    def key(doc: Document) -> tuple[float, float, str]:
        first = {"newest": 0.0, "accessed": doc.access_count, "important": doc.importance or 0.0}
        # Highest first on the rule, then newest; the smallest id breaks ties.
        return (-float(first[rule]), -newest(doc), doc.id)

    ranked = sorted(members, key=key)
    return DuplicateGroup(ranked[0].id, sorted(d.id for d in ranked[1:]))


def _mark(store: Transacting, groups: Sequence[DuplicateGroup]) -> None:
    stamp = now()
    marks: dict[str, str | None] = {}
    for group in groups:
        marks[group.canonical] = group.canonical
        marks.update({d: group.canonical for d in group.duplicates})
    backend = store.backend
    with store.transaction():
        backend.set_canonical(marks)
        for group in groups:
            for dup in group.duplicates:
                backend.put_edge(dup, group.canonical, EDGE, 1.0, stamp)
        backend.set_meta(META_KEY, "1")
