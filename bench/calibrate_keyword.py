"""Refit the keyword model of the score calibration, with queries that have no answer.

    python bench/calibrate_keyword.py   # rewrites the "keyword" model in calibration.json

The train splits (SciFact train, CMRC 2018 trial) hold only queries that have an answer,
so a model fitted on them alone learns that the keyword leg's best hit is nearly always
relevant (on CMRC 2018 it is: keyword nDCG@10 0.98), and a CJK query of a few common
bigrams scored 0.4-0.9 on a Wikipedia paragraph: bench/nonsense.py showed a hit for all
50 "random Chinese words" queries on CMRC 2018, 25% of its 200. Here every train query
also runs as if its answer were not stored (the keyword leg's list without its judged
documents: the same index, the same scores, every hit not relevant), and small stores
drawn from the split (a few documents, as bench/calibrate.py draws them) answer queries
with and without their documents. The keyword leg needs no embedder, so this runs on
keyword-only stores (built here in bench/.cache, a minute each) and leaves the other
modes' models as they are. The nonsense queries of bench/nonsense.py (seed 15) are never
used here: they stay held out.
"""

from __future__ import annotations

import json
import random
import time
from typing import Any

import numpy as np

import _data
import trove
from calibrate import SETS, logistic
from quality import CACHE
from trove.embedders.base import scripts_of
from trove.search import calibration
from trove.search.filters import Filters
from trove.search.fusion import fuse
from trove.search.hybrid import SCRIPT_SHARE
from trove.search.query import parse

DEPTH = 10
# The share of train queries also run without their answer: all (three quarters: nonsense
# on CMRC 2018 showed a hit for 5.0%, half: 6.0%; docs/benchmarks.md has the figures).
UNANSWERED_SHARE = 1.0
Row = tuple[list[float], int]


def store(name: str) -> trove.Store:
    """A keyword-only store of the data set (built on first use)."""
    path = CACHE / f"{name}-keyword.db"
    fresh = not path.exists()
    kb = trove.open(path, embedder=None)
    if fresh:
        kb.add_many(_data.documents(name))
    return kb


def query_rows(kb: trove.Store, text: str, judged: dict[str, int]) -> tuple[list[Row], list[Row]]:
    """The top hits' (features, relevant?) as the query finds them, and as it would find
    them were its judged documents not stored (all not relevant)."""
    parsed, where = parse(text), Filters.build()
    cjk = "cjk" in scripts_of(text, min_share=SCRIPT_SHARE)
    info = calibration.query_info(parsed.words, parsed.cjk, cjk)
    found = [] if parsed.empty else kb.backend.keyword_search(parsed, where, 200, time.time())
    head = kb.backend.get_documents(list(dict.fromkeys(h.doc_id for h in found[: DEPTH * 4])))
    source = {doc_id: str(doc.source_id) for doc_id, doc in head.items()}
    without = [h for h in found if source.get(h.doc_id) not in judged]
    return _rows(kb, found, info, judged), _rows(kb, without, info, {})


def _rows(kb: trove.Store, hits: list[Any], info: Any, judged: dict[str, int]) -> list[Row]:
    lists = {"keyword": hits[:DEPTH]}
    fused = fuse(lists, {"keyword": 1.0}, method="single", limit=DEPTH)
    docs = kb.backend.get_documents([f.doc_id for f in fused])
    texts = calibration.document_texts(kb.backend.get_document, docs)
    _, feats, _ = calibration.calibrate(fused, lists, info, None, texts)
    return [
        (row, int(judged.get(str(docs[f.doc_id].source_id), 0) > 0))
        for f, row in zip(fused, feats, strict=True)
    ]


def full(name: str, split: str) -> list[Row]:
    """Every query as it is, and ``UNANSWERED_SHARE`` of them also without its answer."""
    judged = _data.qrels(name, split)
    rows: list[Row] = []
    with store(name) as kb:
        for i, (qid, text) in enumerate(_data.queries(name, split).items()):
            answered, unanswered = query_rows(kb, text, judged.get(qid, {}))
            twin = int((i + 1) * UNANSWERED_SHARE) > int(i * UNANSWERED_SHARE)
            rows += answered + (unanswered if twin else [])
    return rows


def small(name: str, split: str, stores: int = 60) -> list[Row]:
    """Small stores as bench/calibrate.py draws them (seeded): the judged documents of two
    queries and one to six others, asked those two and two whose documents they lack."""
    rng = random.Random(15)
    judged = _data.qrels(name, split)
    queries = [(q, t) for q, t in _data.queries(name, split).items() if judged.get(q)]
    docs = {d["source_id"]: d for d in _data.documents(name)}
    ids = sorted(docs)
    rows: list[Row] = []
    for _ in range(stores):
        asked = rng.sample(queries, 4)
        held = {sid for q, _ in asked[:2] for sid in judged[q] if sid in docs}
        lacking = {sid for q, _ in asked[2:] for sid in judged[q]}
        held |= {s for s in rng.sample(ids, rng.randint(1, 6)) if s not in lacking}
        with trove.open(":memory:", embedder=None) as kb:
            kb.add_many([docs[sid] for sid in sorted(held)])
            for qid, text in asked:
                rows += query_rows(kb, text, judged[qid])[0]
    return rows


def main() -> None:
    rows: list[Row] = []
    for name, _, train, _ in SETS:
        print(f"collecting {name} {train}", flush=True)
        rows += full(name, train) + small(name, train)
    x = np.array([f for f, _ in rows], dtype=float)
    y = np.array([label for _, label in rows], dtype=float)
    payload = json.loads(calibration.MODEL_FILE.read_text(encoding="utf-8"))
    payload["models"]["keyword"] = logistic(x, y)
    payload["keyword_fitted_on"] = (
        f"{time.strftime('%Y-%m-%d')}: bench/calibrate_keyword.py, the train splits' queries "
        "with and without their judged documents, and small stores drawn from them"
    )
    calibration.MODEL_FILE.write_text(json.dumps(payload, indent=1) + "\n", encoding="utf-8")
    calibration.reload()
    print(f"keyword: {len(y)} hits, {int(y.sum())} relevant; wrote {calibration.MODEL_FILE}")


if __name__ == "__main__":
    main()
