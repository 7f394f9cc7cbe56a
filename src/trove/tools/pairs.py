"""A user's own question/document pairs against an existing store: does each question find
the document it should? (``trove eval --pairs``, :func:`trove.evaluate_pairs`.)"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from trove.errors import InvalidInput, NotFound
from trove.ids import document_id
from trove.models import MODES
from trove.tools.evaluate import ProgressCallback, check_modes, jsonl_rows

if TYPE_CHECKING:
    from trove.store import Store

PAIR_KS = (1, 5, 10)


@dataclass
class PairsResult:
    """recall@1/5/10 per mode: the share of questions whose expected document was found."""

    pairs: int
    recall: dict[str, dict[str, float]]  # mode -> {"recall@1": ...}
    misses: dict[str, list[dict[str, str]]]  # mode -> pairs not found in the top 10
    # expected_doc values that name no document of the store (a typo, a wrong path)
    unknown: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def read_pairs(path: str | os.PathLike[str]) -> list[tuple[str, str]]:
    """``{"query": ..., "expected_doc": ...}`` per line (blank lines are skipped)."""
    pairs = []
    try:
        for line_no, row in jsonl_rows(Path(path)):
            query, expected = row.get("query"), row.get("expected_doc")
            if not isinstance(query, str) or not isinstance(expected, str):
                raise InvalidInput(
                    f'{path} line {line_no}: expected {{"query": ..., "expected_doc": ...}}'
                    " with string values"
                )
            pairs.append((query, expected))
    except FileNotFoundError:
        raise NotFound(f"no pairs file at {path}") from None
    if not pairs:
        raise InvalidInput(f"{path} has no pairs")
    return pairs


def evaluate_pairs(
    kb: Store,
    pairs: Sequence[tuple[str, str]],
    *,
    modes: Sequence[str] | None = None,
    progress: ProgressCallback | None = None,
    **filters: Any,
) -> PairsResult:
    """Does each question find the document it should? ``expected_doc`` matches a hit's
    document id or its ``source_id`` (the file path for ingested folders).

    ``modes`` defaults to every mode the store can run (keyword only without vectors).
    """
    import numpy as np  # imported here: the CLI loads this module for its options

    searchable = kb.has_embedder and kb.stats().vectors > 0
    if modes is None:
        modes = MODES if searchable else ["keyword"]
    modes = check_modes(modes, kb.embedder if searchable else None)
    report = progress or (lambda stage, done, total: None)
    top = max(PAIR_KS)
    recall: dict[str, dict[str, float]] = {}
    misses: dict[str, list[dict[str, str]]] = {}
    for mode in modes:
        ranks = []
        misses[mode] = []
        for done, (query, expected) in enumerate(pairs, 1):
            hits = kb.search(query, mode=mode, limit=top, **filters)
            rank = next(
                (i for i, h in enumerate(hits, 1) if expected in (h.doc_id, h.source_id)), None
            )
            ranks.append(rank or top + 1)
            if rank is None:
                misses[mode].append({"query": query, "expected_doc": expected})
            report(mode, done, len(pairs))
        found = np.array(ranks)
        recall[mode] = {f"recall@{k}": float(np.mean(found <= k)) for k in PAIR_KS}
    missed = {pair["expected_doc"] for found in misses.values() for pair in found}
    unknown = sorted(e for e in missed if not _known(kb, e))
    return PairsResult(len(pairs), recall, misses, unknown)


def _known(kb: Store, expected: str) -> bool:
    """Whether ``expected`` is a document's id or its source_id in some source (the id
    of a source_id follows from its natural key: nothing is scanned)."""
    if kb.peek(expected) is not None:
        return True
    stats = kb.stats()
    return any(
        kb.peek(document_id(namespace, "workspace", source, expected, None, "")) is not None
        for namespace in stats.by_namespace
        for source in stats.by_source
    )
