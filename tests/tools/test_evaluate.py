"""trove.evaluate and `trove eval`: BEIR sets the tests write, pairs, comparing runs."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import pytest
from click.testing import CliRunner

import trove
from trove.interfaces.cli import cli
from trove.tools.evaluate import EvalRun, compare, load_beir
from trove.tools.pairs import evaluate_pairs

CORPUS = [
    ("d1", "Redis", "We dropped Redis and keep the cache in process."),
    ("d2", "Postgres", "The billing service moves to PostgreSQL with pgvector."),
    ("d3", "Kafka", "Events flow through Kafka topics partitioned by customer."),
    ("d4", "Lunch", "The team lunch is on Friday at the noodle bar."),
]
QUERIES = [
    ("q1", "why did we drop redis"),
    ("q2", "which database does billing use"),
    ("q3", "kafka topic partitions"),
    ("q4", "a question nobody judged"),
]
QRELS = {"test": [("q1", "d1", 1), ("q2", "d2", 1), ("q3", "d3", 1)], "dev": [("q1", "d1", 1)]}


def write_beir(
    root: Path,
    corpus: list[tuple[str, str, str]] = CORPUS,
    queries: list[tuple[str, str]] = QUERIES,
    qrels: dict[str, list[tuple[str, str, int]]] = QRELS,
) -> Path:
    (root / "qrels").mkdir(parents=True)
    lines = [json.dumps({"_id": i, "title": t, "text": x}) for i, t, x in corpus]
    (root / "corpus.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    lines = [json.dumps({"_id": i, "text": x}) for i, x in queries]
    (root / "queries.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    for split, rows in qrels.items():
        body = "".join(f"{q}\t{d}\t{s}\n" for q, d, s in rows)
        (root / "qrels" / f"{split}.tsv").write_text("query-id\tcorpus-id\tscore\n" + body)
    return root


@pytest.fixture
def beir(tmp_path: Path) -> Path:
    return write_beir(tmp_path / "tiny")


def test_keyword_eval_measures_every_judged_query(beir: Path) -> None:
    run = trove.evaluate(beir, modes=["keyword"])
    assert (run.dataset, run.split, run.documents, run.queries) == ("tiny", "test", 4, 3)
    result = run.modes["keyword"]
    assert result.measures == {"ndcg@10": 1.0, "recall@10": 1.0, "recall@100": 1.0, "mrr@10": 1.0}
    assert set(result.per_query) == {"q1", "q2", "q3"}
    assert 0 < result.p50_ms <= result.p95_ms
    assert run.embedder is None  # a keyword-only run never loads a model


def test_every_mode_with_a_test_embedder(beir: Path) -> None:
    run = trove.evaluate(beir, embedder="hash:64")
    assert list(run.modes) == ["keyword", "semantic", "hybrid"]
    assert run.embedder == "hash:64"
    for result in run.modes.values():
        assert 0.0 <= result.measures["ndcg@10"] <= 1.0
        assert result.measures["recall@100"] == 1.0  # 4 documents, depth 100


def test_missing_split_names_the_splits_that_exist(beir: Path) -> None:
    with pytest.raises(trove.NotFound, match=r"no judgments for split 'train'; splits: dev, test"):
        trove.evaluate(beir, split="train", modes=["keyword"])


def test_queries_without_judgments_are_skipped_and_counted(beir: Path) -> None:
    data = load_beir(beir, "dev")
    assert list(data.queries) == ["q1"] and data.skipped_unjudged == 3
    run = trove.evaluate(beir, split="dev", modes=["keyword"])
    assert (run.queries, run.skipped_unjudged) == (1, 3)


def test_judged_queries_missing_from_queries_file_are_counted(tmp_path: Path) -> None:
    qrels = {"test": [("q1", "d1", 1), ("q9", "d2", 1)]}
    run = trove.evaluate(write_beir(tmp_path / "x", qrels=qrels), modes=["keyword"])
    assert (run.queries, run.missing_queries) == (1, 1)


def test_repeated_corpus_id_is_an_error_naming_it(tmp_path: Path) -> None:
    corpus = [*CORPUS, ("d2", "Again", "A second document with the id d2.")]
    root = write_beir(tmp_path / "dup", corpus=corpus)
    with pytest.raises(trove.InvalidInput, match=r"repeats the document id 'd2' \(line 5\)"):
        trove.evaluate(root, modes=["keyword"], db=tmp_path / "kept.db")
    assert not (tmp_path / "kept.db").exists()  # refused before anything was written


def test_not_a_beir_folder(tmp_path: Path) -> None:
    with pytest.raises(trove.NotFound, match=r"no corpus\.jsonl"):
        trove.evaluate(tmp_path, modes=["keyword"])
    with pytest.raises(trove.InvalidQuery, match="unknown mode 'fuzzy'"):
        trove.evaluate(tmp_path, modes=["fuzzy"])


@pytest.mark.parametrize("stage", ["loading", "keyword"])
def test_an_interrupted_eval_leaves_no_temporary_files(
    beir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, stage: str
) -> None:
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))

    def interrupt(at: str, done: int, total: int) -> None:
        if at == stage:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        trove.evaluate(beir, modes=["keyword"], progress=interrupt)
    assert list(scratch.iterdir()) == []


def test_a_given_store_is_kept_and_reused(beir: Path, tmp_path: Path) -> None:
    db = tmp_path / "eval.db"
    first = trove.evaluate(beir, modes=["keyword"], db=db, embedder=None)
    again = trove.evaluate(beir, modes=["keyword"], db=db, embedder=None)
    assert first.modes["keyword"].measures == again.modes["keyword"].measures
    with trove.open(db, embedder=None) as kb:
        assert kb.stats().documents == 4  # reloading updated nothing


def test_saved_runs_compare_per_query(beir: Path, tmp_path: Path) -> None:
    a = trove.evaluate(beir, modes=["keyword"])
    b = trove.evaluate(beir, modes=["keyword"])
    b.modes["keyword"].per_query["q2"]["ndcg@10"] = 0.25  # B loses one query
    a.save(tmp_path / "a.json")
    loaded = EvalRun.load(tmp_path / "a.json")
    assert loaded == a
    [c] = compare(loaded, b)
    assert (c.mode, c.queries, c.wins, c.losses, c.ties) == ("keyword", 3, 0, 1, 2)
    assert c.changes[0][:2] == ("q2", "which database does billing use")
    assert 0.0 < c.p_randomization <= 1.0
    [same] = compare(a, a)
    assert same.p_randomization == 1.0 and same.changes == []


def test_pairs_match_a_document_id_or_a_source_id(tmp_path: Path) -> None:
    with trove.open(tmp_path / "kb.db", embedder="hash:64") as kb:
        ids = kb.add_many(
            [
                {"text": x, "title": t, "source": "notes", "source_id": f"{i}.md"}
                for i, t, x in CORPUS
            ]
        )
        pairs = [
            ("why did we drop redis", "d1.md"),  # a source_id
            ("billing database", ids[1]),  # a document id
            ("noodles on friday", "nowhere.md"),
        ]
        result = evaluate_pairs(kb, pairs)
    assert list(result.recall) == ["keyword", "semantic", "hybrid"]
    assert result.recall["keyword"] == {"recall@1": 2 / 3, "recall@5": 2 / 3, "recall@10": 2 / 3}
    assert result.misses["keyword"] == [
        {"query": "noodles on friday", "expected_doc": "nowhere.md"}
    ]


# --- the command ------------------------------------------------------------------------


@pytest.fixture
def run(tmp_path: Path):
    runner = CliRunner(env={"TROVE_EMBEDDER": "hash:64", "TROVE_DB": str(tmp_path / "kb.db")})

    def invoke(*args: str, code: int = 0):
        result = runner.invoke(cli, list(args))
        assert result.exit_code == code, result.output
        return result

    return invoke


def test_cli_prints_the_table_and_saves_the_run(run, beir: Path, tmp_path: Path) -> None:
    out = run("eval", str(beir), "--mode", "keyword,semantic", "--save", str(tmp_path / "r.json"))
    for word in ("tiny (test): 3 queries, 4 documents", "ndcg@10", "recall@100", "p95 ms"):
        assert word in out.stdout
    assert "keyword" in out.stdout and "semantic" in out.stdout and "hybrid" not in out.stdout
    assert "1 query without judgments in test skipped" in out.stdout
    saved = EvalRun.load(tmp_path / "r.json")
    assert list(saved.modes) == ["keyword", "semantic"]


def test_cli_json(run, beir: Path) -> None:
    data = json.loads(run("eval", str(beir), "--mode", "keyword", "--json").stdout)
    assert data["modes"]["keyword"]["measures"]["mrr@10"] == 1.0
    assert data["skipped_unjudged"] == 1 and "per_query" not in data["modes"]["keyword"]


def test_cli_loads_into_a_postgresql_store_given_by_url(
    run, beir: Path, pg_target: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """--db postgresql://... is that store: it was read as a file path ("postgresql:/...")
    and the run went into a SQLite file of that name."""
    monkeypatch.chdir(tmp_path)
    data = json.loads(
        run("eval", str(beir), "--mode", "keyword", "--db", pg_target, "--json").stdout
    )
    assert data["modes"]["keyword"]["measures"]["mrr@10"] == 1.0
    assert not any(tmp_path.rglob("*.db")) and not (tmp_path / "postgresql:").exists()
    with trove.open(pg_target, embedder=None) as kb:
        assert kb.stats().documents == 4


def test_cli_pairs_check_a_postgresql_store_given_by_url(
    run, pg_target: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    with trove.open(pg_target, embedder=None) as kb:
        kb.add("We dropped Redis for an in-process cache.", source_id="redis.md")
    pairs = tmp_path / "pairs.jsonl"
    pairs.write_text(json.dumps({"query": "drop redis", "expected_doc": "redis.md"}) + "\n")
    args = ("eval", "--pairs", str(pairs), "--mode", "keyword", "--db", pg_target, "--json")
    data = json.loads(run(*args).stdout)
    assert data["recall"] == {"keyword": {"recall@1": 1.0, "recall@5": 1.0, "recall@10": 1.0}}
    assert not any(tmp_path.rglob("*.db")) and not (tmp_path / "postgresql:").exists()


def test_cli_an_unreachable_postgresql_url_is_refused_and_writes_no_file(
    run, beir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    url = "postgresql://127.0.0.1:1/nowhere"
    out = run("eval", str(beir), "--mode", "keyword", "--db", url, code=1)
    assert "cannot connect to PostgreSQL at 127.0.0.1:1, database nowhere" in out.stderr
    assert "Traceback" not in out.output
    assert sorted(p.name for p in tmp_path.iterdir()) == ["tiny"]  # no SQLite file


def test_cli_compare(run, beir: Path, tmp_path: Path) -> None:
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    run("eval", str(beir), "--mode", "keyword", "--save", str(a))
    run("eval", str(beir), "--mode", "keyword,semantic", "--save", str(b))
    out = run("eval", "--compare", str(a), str(b)).stdout
    assert "b.json against a.json: ndcg@10" in out and "randomization" in out
    data = json.loads(run("eval", "--compare", str(a), str(b), "--json").stdout)
    assert [c["mode"] for c in data] == ["keyword"] and data[0]["ties"] == 3


def test_cli_pairs(run, tmp_path: Path) -> None:
    run("add", "We dropped Redis for an in-process cache.", "--source-id", "redis.md")
    pairs = tmp_path / "pairs.jsonl"
    pairs.write_text(json.dumps({"query": "drop redis", "expected_doc": "redis.md"}) + "\n")
    out = run("eval", "--pairs", str(pairs)).stdout
    assert "recall@1" in out and "1.000" in out
    data = json.loads(run("eval", "--pairs", str(pairs), "--mode", "keyword", "--json").stdout)
    assert data["recall"] == {"keyword": {"recall@1": 1.0, "recall@5": 1.0, "recall@10": 1.0}}


def test_cli_errors(run, beir: Path, tmp_path: Path) -> None:
    out = run("eval", str(beir), "--split", "train", code=1)
    assert "no judgments for split 'train'; splits: dev, test" in out.stderr
    assert "give one of DATASET" in run("eval", code=2).stderr
    assert "give one of DATASET" in run("eval", str(beir), "--pairs", "p.jsonl", code=2).stderr
    pairs = tmp_path / "p.jsonl"
    pairs.write_text('{"query": "x"}\n')
    assert "line 1" in run("eval", "--pairs", str(pairs), code=1).stderr
    assert "not a run saved" in run("eval", "--compare", str(pairs), str(pairs), code=1).stderr


@pytest.mark.slow
def test_default_embedder_finds_a_paraphrase(beir: Path) -> None:
    run = trove.evaluate(beir, modes=["semantic"], embedder="default")
    assert run.embedder == "all-MiniLM-L6-v2-int8"
    assert run.modes["semantic"].measures["mrr@10"] > 0.8
