"""Measure retrieval on a BEIR-layout data set (a user's own pairs: :mod:`trove.tools.pairs`).

>>> run = trove.evaluate("data/scifact", split="test", modes=["keyword"])  # doctest: +SKIP
>>> run.modes["keyword"].measures["ndcg@10"]                                # doctest: +SKIP

A BEIR folder holds ``corpus.jsonl`` (``_id``, ``title``, ``text``), ``queries.jsonl``
(``_id``, ``text``) and ``qrels/<split>.tsv`` (query id, document id, relevance). The
corpus is loaded into a temporary store (or the one given) and every judged query is run
in each mode. Metrics come from ir-measures (pytrec_eval underneath), the ``eval`` extra;
runs saved with :meth:`EvalRun.save` are compared by :func:`compare`, per query, with a
paired randomization test from scipy.
"""

from __future__ import annotations

import contextlib
import csv
import json
import os
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from trove.errors import InvalidInput, InvalidQuery, MissingDependency, NotFound
from trove.models import MODES

if TYPE_CHECKING:
    from trove.embedders import Embedder
    from trove.store import Store

# (name shown, ir-measures spelling); ranking depth 100 covers every one of them.
MEASURES = (("ndcg@10", "nDCG@10"), ("recall@10", "R@10"), ("recall@100", "R@100"),
            ("mrr@10", "RR@10"))  # fmt: skip
DEPTH = 100
SOURCE = "beir"  # loaded documents' source; their source_id is the corpus _id

ProgressCallback = Callable[[str, int, int], None]  # (stage, done, total): "loading" or a mode


@dataclass
class ModeResult:
    """One mode's figures: mean of each measure over the judged queries, and latency."""

    measures: dict[str, float]
    p50_ms: float
    p95_ms: float
    per_query: dict[str, dict[str, float]] = field(default_factory=dict)
    latency_ms: dict[str, float] = field(default_factory=dict)


@dataclass
class EvalRun:
    """The result of :func:`evaluate`; ``save`` it to compare it with another run later."""

    dataset: str
    split: str
    embedder: str | None
    documents: int
    queries: int  # judged queries that were run
    skipped_unjudged: int  # queries in queries.jsonl with no judgment in this split
    missing_queries: int  # judged query ids that queries.jsonl does not have
    load_s: float
    modes: dict[str, ModeResult]
    query_text: dict[str, str] = field(default_factory=dict)
    date: str = ""
    # Corpus ids of records with no text and no title: nothing to store, so not loaded.
    skipped_documents: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def summary(self) -> dict[str, Any]:
        """Everything but the per-query figures (what ``--json`` prints)."""
        data = self.to_dict()
        data.pop("query_text")
        for mode in data["modes"].values():
            mode.pop("per_query")
            mode.pop("latency_ms")
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> EvalRun:
        modes = {name: ModeResult(**mode) for name, mode in data["modes"].items()}
        return cls(**{**data, "modes": modes})

    def save(self, path: str | os.PathLike[str]) -> None:
        Path(path).write_text(json.dumps(self.to_dict(), ensure_ascii=False) + "\n", "utf-8")

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> EvalRun:
        try:
            return cls.from_dict(json.loads(Path(path).read_text("utf-8")))
        except FileNotFoundError:
            raise NotFound(f"no saved run at {path}") from None
        except (ValueError, TypeError, KeyError) as exc:
            raise InvalidInput(f"{path} is not a run saved by trove eval --save: {exc}") from None


@dataclass
class BeirSet:
    """A BEIR-layout data set, read and checked; the corpus is read when loaded."""

    root: Path
    split: str
    queries: dict[str, str]  # judged queries only
    qrels: dict[str, dict[str, int]]
    skipped_unjudged: int
    missing_queries: int

    def corpus(self) -> Iterator[dict[str, Any]]:
        """Corpus rows; a repeated ``_id`` is an error naming it (before anything is stored)."""
        seen: set[str] = set()
        rows = []
        for line_no, row in jsonl_rows(self.root / "corpus.jsonl"):
            doc_id = str(row.get("_id", ""))
            if not doc_id:
                raise InvalidInput(f"corpus.jsonl line {line_no} has no _id")
            if doc_id in seen:
                raise InvalidInput(
                    f"corpus.jsonl repeats the document id {doc_id!r} (line {line_no})"
                )
            seen.add(doc_id)
            rows.append(row)
        return iter(rows)


def load_beir(path: str | os.PathLike[str], split: str = "test") -> BeirSet:
    """Read queries and judgments of a BEIR folder; errors say what is missing."""
    root = Path(path)
    if not root.is_dir():
        raise NotFound(
            f"{root} is not a folder (a BEIR data set: corpus.jsonl, queries.jsonl, qrels/)"
        )
    for name in ("corpus.jsonl", "queries.jsonl"):
        if not (root / name).is_file():
            raise NotFound(f"{root} has no {name}: not a BEIR-layout data set")
    qrels_file = root / "qrels" / f"{split}.tsv"
    if not qrels_file.is_file():
        splits = sorted(p.stem for p in (root / "qrels").glob("*.tsv"))
        have = ", ".join(splits) if splits else "none (no qrels/*.tsv)"
        raise NotFound(f"{root} has no judgments for split {split!r}; splits: {have}")
    qrels = _read_qrels(qrels_file)
    queries: dict[str, str] = {}
    unjudged = 0
    for _, row in jsonl_rows(root / "queries.jsonl"):
        qid = str(row.get("_id", ""))
        if qid in qrels:
            queries[qid] = str(row.get("text", ""))
        else:
            unjudged += 1
    missing = sum(1 for qid in qrels if qid not in queries)
    qrels = {qid: judged for qid, judged in qrels.items() if qid in queries}
    return BeirSet(root, split, queries, qrels, unjudged, missing)


def evaluate(
    dataset: str | os.PathLike[str],
    *,
    split: str = "test",
    modes: Sequence[str] = MODES,
    embedder: str | Embedder | None = "auto",
    db: str | os.PathLike[str] | None = None,
    progress: ProgressCallback | None = None,
) -> EvalRun:
    """Load ``dataset`` into a temporary store (or ``db``, kept), run every judged query in
    each mode and measure nDCG@10, recall@10, recall@100, MRR@10 and latency.

    Latency is one ``Store.search(limit=100)`` call, query embedding included. Queries
    without a judgment in ``split`` are skipped and counted; ``embedder=None`` allows the
    keyword mode only. A temporary store is removed however the call ends.
    """
    from trove.operations import upsert  # the write path: loaded when a corpus is

    modes = check_modes(modes, embedder)
    beir = load_beir(dataset, split)
    if db is None and modes == ["keyword"]:
        embedder = None  # a throwaway keyword-only store need not embed the corpus
    report = progress or (lambda stage, done, total: None)
    rows = [_document(row) for row in beir.corpus()]  # a bad corpus fails before any write
    # A title-only record is a document (its title is indexed); one with neither is skipped.
    docs = [doc for doc in rows if not upsert.empty(doc)]
    skipped = [doc["source_id"] for doc in rows if upsert.empty(doc)]
    with contextlib.ExitStack() as stack:
        if db is None:
            # Closed (below, by the stack) before its folder is removed, even on Ctrl-C.
            folder = stack.enter_context(tempfile.TemporaryDirectory(prefix="trove-eval-"))
            db = Path(folder) / "eval.db"
        kb = stack.enter_context(_open(db, embedder))
        began = time.perf_counter()
        for start in range(0, len(docs), 256):
            kb.add_many(docs[start : start + 256])
            report("loading", min(start + 256, len(docs)), len(docs))
        load_s = time.perf_counter() - began
        results = {mode: _run_mode(kb, beir, mode, report) for mode in modes}
        model = kb.embedder if embedder is not None and modes != ["keyword"] else None
        spec = None if model is None else model.model_id
    return EvalRun(
        dataset=beir.root.name,
        split=split,
        embedder=spec,
        documents=len(docs),
        queries=len(beir.queries),
        skipped_unjudged=beir.skipped_unjudged,
        missing_queries=beir.missing_queries,
        load_s=load_s,
        modes=results,
        query_text=beir.queries,
        date=time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        skipped_documents=skipped,
    )


def _open(db: str | os.PathLike[str], embedder: str | Embedder | None) -> Store:
    from trove.opening import open_store

    return open_store(db, embedder=embedder)


def _run_mode(kb: Store, beir: BeirSet, mode: str, report: ProgressCallback) -> ModeResult:
    import numpy as np  # imported here: the CLI loads this module for its options

    run: dict[str, dict[str, float]] = {}
    latency: dict[str, float] = {}
    for done, (qid, text) in enumerate(beir.queries.items(), 1):
        began = time.perf_counter()
        hits = kb.search(text, mode=mode, limit=DEPTH)
        latency[qid] = (time.perf_counter() - began) * 1000
        # Scores by rank: the metrics then see trove's order exactly, ties included.
        run[qid] = {
            (h.source_id or h.doc_id) if h.source == SOURCE else h.doc_id: float(DEPTH - rank)
            for rank, h in enumerate(hits)
        }
        report(mode, done, len(beir.queries))
    per_query = measure(run, beir.qrels)
    means = {name: float(np.mean([q[name] for q in per_query.values()])) for name, _ in MEASURES}
    times = list(latency.values())
    return ModeResult(
        measures=means,
        p50_ms=float(np.percentile(times, 50)) if times else 0.0,
        p95_ms=float(np.percentile(times, 95)) if times else 0.0,
        per_query=per_query,
        latency_ms=latency,
    )


def measure(
    run: dict[str, dict[str, float]], qrels: dict[str, dict[str, int]]
) -> dict[str, dict[str, float]]:
    """Per-query measures through ir-measures; a judged query with no hits scores 0."""
    try:
        import ir_measures
    except ImportError:
        raise MissingDependency("ir-measures", "eval", "trove eval") from None
    wanted = [ir_measures.parse_measure(spelling) for _, spelling in MEASURES]
    names = {str(m): name for m, (name, _) in zip(wanted, MEASURES, strict=True)}
    # pytrec_eval leaves out queries absent from the run; every judged query counts here.
    per_query = {qid: {name: 0.0 for name, _ in MEASURES} for qid in qrels}
    full_run = {qid: run.get(qid, {}) for qid in qrels}
    for metric in ir_measures.iter_calc(wanted, qrels, full_run):
        per_query[metric.query_id][names[str(metric.measure)]] = float(metric.value)
    return per_query


# --- comparing two saved runs -----------------------------------------------------------


@dataclass
class Comparison:
    """Run B against run A on one mode and measure, over the queries both ran."""

    mode: str
    measure: str
    queries: int
    mean_a: float
    mean_b: float
    wins: int  # queries where B scores higher
    losses: int
    ties: int
    p_randomization: float  # paired, two-sided (scipy.stats.permutation_test)
    p_ttest: float  # paired t-test, for reference
    changes: list[tuple[str, str, float, float]]  # (query id, text, a, b), biggest first

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def compare(
    a: EvalRun, b: EvalRun, *, measure: str = "ndcg@10", modes: Sequence[str] | None = None
) -> list[Comparison]:
    """Per-query wins and losses of ``b`` over ``a``, with a paired significance test."""
    try:
        from scipy import stats  # noqa: F401  (imported here: an optional extra)
    except ImportError:
        raise MissingDependency("scipy", "eval", "trove eval --compare") from None
    if measure not in dict(MEASURES):
        raise InvalidQuery(f"unknown measure {measure!r}; use one of: {', '.join(dict(MEASURES))}")
    common = [m for m in a.modes if m in b.modes and (modes is None or m in modes)]
    if not common:
        raise InvalidInput(
            f"the runs share no mode (first: {', '.join(a.modes)}; second: {', '.join(b.modes)})"
        )
    return [_compare_mode(a, b, mode, measure) for mode in common]


def _compare_mode(a: EvalRun, b: EvalRun, mode: str, measure: str) -> Comparison:
    import numpy as np  # imported here: the CLI loads this module for its options

    pa, pb = a.modes[mode].per_query, b.modes[mode].per_query
    qids = sorted(set(pa) & set(pb))
    if not qids:
        raise InvalidInput("the runs share no query: were they made on the same data set?")
    x = np.array([pa[q][measure] for q in qids])
    y = np.array([pb[q][measure] for q in qids])
    diff = y - x
    p_rand, p_t = _paired_p_values(x, y) if np.any(diff) else (1.0, 1.0)
    text = {**a.query_text, **b.query_text}
    order = np.argsort(-np.abs(diff), kind="stable")
    changes = [
        (qids[i], text.get(qids[i], ""), float(x[i]), float(y[i])) for i in order if diff[i] != 0
    ]
    return Comparison(
        mode=mode,
        measure=measure,
        queries=len(qids),
        mean_a=float(x.mean()),
        mean_b=float(y.mean()),
        wins=int(np.sum(diff > 0)),
        losses=int(np.sum(diff < 0)),
        ties=int(np.sum(diff == 0)),
        p_randomization=p_rand,
        p_ttest=p_t,
        changes=changes,
    )


def _paired_p_values(x: Any, y: Any) -> tuple[float, float]:
    """p-values of a paired randomization test and a paired t-test of ``y`` against ``x``."""
    import numpy as np
    from scipy import stats

    p_rand = float(
        stats.permutation_test(
            (x, y),
            lambda u, v, axis: np.mean(v - u, axis=axis),
            permutation_type="samples",
            vectorized=True,
            n_resamples=10_000,
            rng=np.random.default_rng(0),
        ).pvalue
    )
    return p_rand, float(stats.ttest_rel(y, x).pvalue)


# --- helpers ------------------------------------------------------------------------------


def check_modes(modes: Sequence[str], embedder: object) -> list[str]:
    chosen = list(dict.fromkeys(modes))
    unknown = [m for m in chosen if m not in MODES]
    if unknown or not chosen:
        raise InvalidQuery(f"unknown mode {', '.join(unknown)!r}; use any of: {', '.join(MODES)}")
    if embedder is None and set(chosen) - {"keyword"}:
        raise InvalidQuery("semantic and hybrid modes need an embedder; use --mode keyword")
    return chosen


def _document(row: dict[str, Any]) -> dict[str, Any]:
    return {
        "text": str(row.get("text") or ""),
        "title": str(row.get("title") or ""),
        "source": SOURCE,
        "source_id": str(row["_id"]),
    }


def jsonl_rows(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    with path.open(encoding="utf-8") as handle:
        for line_no, line in enumerate(handle, 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except ValueError as exc:
                raise InvalidInput(f"{path} line {line_no} is not JSON: {exc}") from None
            if not isinstance(row, dict):
                raise InvalidInput(f"{path} line {line_no} is not a JSON object")
            yield line_no, row


def _read_qrels(path: Path) -> dict[str, dict[str, int]]:
    judged: dict[str, dict[str, int]] = {}
    with path.open(encoding="utf-8", newline="") as handle:
        for line_no, row in enumerate(csv.reader(handle, delimiter="\t"), 1):
            if not row or (line_no == 1 and row[0] == "query-id"):
                continue
            if len(row) not in (3, 4):  # BEIR: qid, docid, score; TREC: qid, 0, docid, score
                raise InvalidInput(f"{path} line {line_no}: expected query-id, corpus-id, score")
            try:
                score = int(row[-1])
            except ValueError:
                raise InvalidInput(
                    f"{path} line {line_no}: score {row[-1]!r} is not an integer"
                ) from None
            judged.setdefault(row[0], {})[row[-2]] = score
    return judged
