"""A probe an agent runs on its own memory: does each question find its document, and do
the store's contracts hold?

Pairs are the ``trove eval --pairs`` format (``{"query": ..., "expected_doc": ...}``;
``expected_doc`` is a document id or ``source_id``), given inline or kept in the store
by a workspace (:func:`save_pairs`): a caller without a session keeps the namespace's
pairs, a caller with one keeps its session's own, which no other session and no
session-less caller gets back (a session without pairs of its own probes the
namespace's). Recall@1/5/10 is measured through the caller's own
workspace, so it sees what the caller sees. The contract checks (isolation, dedupe-key
upsert, tombstone, TTL) run on a scratch in-memory store, never on the caller's data.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

from trove.errors import Forbidden, InvalidInput

if TYPE_CHECKING:
    from trove.store import Store
    from trove.workspace import Workspace

KS = (1, 5, 10)
MAX_PAIRS = 200
_KEY = "probe.pairs:"
# A session's pairs: a key no namespace's can equal (namespace and session as JSON).
_SESSION_KEY = "probe.session-pairs:"


@dataclass
class ProbeReport:
    pairs: int
    recall: dict[str, float]
    misses: list[dict[str, str]]
    checks: dict[str, bool] = field(default_factory=dict)
    lines: list[str] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        return all(self.checks.values())

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "passed": self.passed}


def check_pairs(pairs: Any) -> list[tuple[str, str]]:
    """Pairs as dicts or (query, expected) tuples, checked."""
    if not isinstance(pairs, list | tuple):
        raise InvalidInput('pairs must be a list of {"query": ..., "expected_doc": ...}')
    checked = []
    for i, pair in enumerate(pairs):
        query, expected = (
            (pair.get("query"), pair.get("expected_doc")) if isinstance(pair, dict) else pair
        )
        if not isinstance(query, str) or not isinstance(expected, str) or not query.strip():
            raise InvalidInput(f'pair {i}: expected {{"query": ..., "expected_doc": ...}}')
        checked.append((query, expected))
    if len(checked) > MAX_PAIRS:
        raise InvalidInput(f"at most {MAX_PAIRS} pairs per probe, got {len(checked)}")
    return checked


def save_pairs(ws: Workspace, pairs: Any) -> int:
    """Keep ``pairs`` for this workspace's probes (its session's, or without a session
    its namespace's); returns how many."""
    if not ws.allow_write:
        raise Forbidden("saving probe pairs is a write; this caller may not write")
    checked = check_pairs(pairs)
    rows = [{"query": q, "expected_doc": e} for q, e in checked]
    ws.store.backend.set_meta(_key(ws.namespace, ws.session), json.dumps(rows, ensure_ascii=False))
    return len(rows)


def stored_pairs(ws: Workspace) -> list[tuple[str, str]]:
    """The pairs kept for this workspace: its session's own, else its namespace's."""
    raw = None
    if ws.session:
        raw = ws.store.backend.get_meta(_key(ws.namespace, ws.session))
    if raw is None:
        raw = ws.store.backend.get_meta(_key(ws.namespace, None))
    return check_pairs(json.loads(raw)) if raw else []


def _key(namespace: str, session: str | None) -> str:
    if not session:
        return _KEY + namespace
    return _SESSION_KEY + json.dumps([namespace, session], ensure_ascii=False)


def probe(ws: Workspace, pairs: Any = None) -> ProbeReport:
    """Recall of ``pairs`` (default: the workspace's stored ones) and the contract checks."""
    chosen = check_pairs(pairs) if pairs is not None else stored_pairs(ws)
    ranks = []
    misses = []
    for query, expected in chosen:
        hits = ws.search(query, limit=max(KS))
        rank = next((i for i, h in enumerate(hits, 1) if expected in (h.doc_id, h.source_id)), 0)
        ranks.append(rank)
        if not rank:
            misses.append({"query": query, "expected_doc": expected})
    recall = {
        f"recall@{k}": round(sum(1 for r in ranks if 0 < r <= k) / len(ranks), 4) if ranks else 0.0
        for k in KS
    }
    report = ProbeReport(len(chosen), recall, misses)
    if chosen:
        found = sum(1 for r in ranks if r)
        report.lines.append(
            f"INFO recall: {found}/{len(chosen)} found in the "
            "top 10; " + ", ".join(f"{k} {v:.2f}" for k, v in recall.items())
        )
    else:
        report.lines.append("SKIP recall: no pairs given or stored for this namespace")
    for name, check in CHECKS.items():
        ok, detail = _run(check)
        report.checks[name] = ok
        report.lines.append(f"{'PASS' if ok else 'FAIL'} {name}: {detail}")
    return report


def _run(check: Callable[[Store], str]) -> tuple[bool, str]:
    from trove.opening import open_store

    try:
        with open_store(":memory:", embedder=None, llm=None, record_retrievals=False) as scratch:
            return True, check(scratch)
    except AssertionError as exc:
        return False, str(exc)
    except Exception as exc:  # a broken contract may raise anything; report, not fail
        return False, f"{type(exc).__name__}: {exc}"


def _isolation(kb: Store) -> str:
    ana, bo = kb.workspace("ana"), kb.workspace("bo")
    doc = ana.write({"text": "ana's secret plan", "title": "plan"})
    assert bo.get(doc) is None, "another namespace could read an item"
    assert not bo.search("secret plan"), "another namespace's search found an item"
    return "another namespace neither reads nor finds an item"


def _dedupe(kb: Store) -> str:
    ws = kb.workspace("probe")
    first = ws.write({"text": "timezone: UTC", "dedupe_key": "user:tz"})
    second = ws.write({"text": "timezone: CET", "dedupe_key": "user:tz"})
    assert first == second, "the same dedupe_key made a second item"
    doc = ws.get(first)
    assert doc is not None and doc.text == "timezone: CET", "the upsert did not replace the text"
    assert len(ws.search("timezone")) == 1, "search found the old version too"
    return "writing a dedupe_key again replaces the item in place"


def _tombstone(kb: Store) -> str:
    ws = kb.workspace("probe")
    doc = ws.write({"text": "a deleted memory"})
    ws.delete(doc)
    assert ws.get(doc) is None and not ws.search("deleted memory"), "a deleted item is visible"
    kb.restore(doc)
    assert ws.get(doc) is not None, "restore did not bring the item back"
    return "a deleted item is gone from get and search until restored"


def _ttl(kb: Store) -> str:
    ws = kb.workspace("probe")
    doc = ws.write({"text": "a fleeting memory", "ttl": 0.05})
    time.sleep(0.1)
    assert ws.get(doc) is None and not ws.search("fleeting memory"), "an expired item is visible"
    return "an item past its ttl is gone from get and search"


CHECKS: dict[str, Callable[[Store], str]] = {
    "isolation": _isolation,
    "dedupe-key upsert": _dedupe,
    "tombstone": _tombstone,
    "ttl": _ttl,
}


def pairs_from_lines(lines: Sequence[str]) -> list[dict[str, Any]]:
    """Pairs from JSON lines (the ``trove eval --pairs`` file format)."""
    rows = []
    for number, line in enumerate(lines, 1):
        if line.strip():
            try:
                rows.append(json.loads(line))
            except ValueError:
                raise InvalidInput(f"line {number} is not JSON") from None
    return rows
