"""Corpora with title-only and empty records (common in public sets): a document with a
title and no text is stored and found by its title; one with neither is skipped, named,
and the load goes on (`trove eval`, add_many, ingest)."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest
from click.testing import CliRunner

import trove
from trove.check import check
from trove.errors import InvalidInput
from trove.interfaces.cli import cli

CORPUS = [
    {"_id": "d1", "title": "Redis", "text": "We dropped Redis and keep the cache in process."},
    {"_id": "d2", "title": "Billing moves to PostgreSQL", "text": ""},  # title only
    {"_id": "d3", "title": "Kafka partitions", "text": "  \n "},  # title, blank text
    {"_id": "d4", "title": "", "text": ""},  # nothing at all
    {"_id": "d5", "title": " ", "text": "\t"},  # nothing but white space
]
QUERIES = [("q1", "why did we drop redis"), ("q2", "billing postgresql"), ("q3", "kafka")]
QRELS = [("q1", "d1"), ("q2", "d2"), ("q3", "d3")]


def write_corpus(root: Path) -> Path:
    (root / "qrels").mkdir(parents=True)
    lines = [json.dumps(row) for row in CORPUS]
    (root / "corpus.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    lines = [json.dumps({"_id": i, "text": x}) for i, x in QUERIES]
    (root / "queries.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    body = "".join(f"{q}\t{d}\t1\n" for q, d in QRELS)
    (root / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\n" + body)
    return root


def test_eval_runs_to_the_end_and_names_what_it_skipped(tmp_path: Path) -> None:
    run = trove.evaluate(write_corpus(tmp_path / "titles"), modes=["keyword"])
    assert (run.documents, run.queries) == (3, 3)
    assert run.skipped_documents == ["d4", "d5"]
    assert run.modes["keyword"].measures["ndcg@10"] == 1.0  # the titles find d2 and d3


def test_cli_eval_reports_skipped_records(tmp_path: Path) -> None:
    root = write_corpus(tmp_path / "titles")
    result = CliRunner().invoke(cli, ["eval", str(root), "--mode", "keyword"])
    assert result.exit_code == 0, result.output
    assert "2 documents with no text and no title skipped: d4, d5" in result.output
    out = CliRunner().invoke(cli, ["eval", str(root), "--mode", "keyword", "--json"])
    assert json.loads(out.output)["skipped_documents"] == ["d4", "d5"]


def test_title_only_documents_are_byte_exact_and_pass_check(
    store_target: str, caplog: pytest.LogCaptureFixture
) -> None:
    items = [{**{k: v for k, v in r.items() if k != "_id"}, "source_id": r["_id"]} for r in CORPUS]
    with trove.open(store_target, embedder=None) as kb:
        with caplog.at_level(logging.WARNING, logger="trove"):
            ids = kb.add_many(items)
        assert len(ids) == 3
        assert "skipped 2 items with no text and no title: d4, d5" in caplog.text
        assert [kb.get(i).text for i in ids] == [CORPUS[0]["text"], "", "  \n "]
        hits = kb.search("kafka partitions", mode="keyword")
        assert [h.source_id for h in hits] == ["d3"]
        if not store_target.startswith("postgresql"):  # PostgreSQL checks its own pages
            assert check(kb).ok, check(kb).problems


def test_title_only_documents_are_found_by_meaning(tmp_path: Path) -> None:
    with trove.open(tmp_path / "kb.db", embedder="hash:64") as kb:
        doc_id = kb.add("", title="Billing moves to PostgreSQL", source_id="d2")
        hits = kb.search("billing postgresql", mode="semantic")
        assert [h.doc_id for h in hits] == [doc_id]
        assert check(kb).ok, check(kb).problems


def test_a_single_write_of_nothing_is_refused(kb: trove.Store) -> None:
    with pytest.raises(InvalidInput, match="text must not be empty or only white space"):
        kb.add("  ")
    with pytest.raises(InvalidInput, match="text must not be empty"):
        kb.add("", title=" ")


def test_ingest_stores_title_only_records_and_skips_empty_ones(
    kb: trove.Store, tmp_path: Path
) -> None:
    folder = tmp_path / "records"
    folder.mkdir()
    lines = [json.dumps({"id": r["_id"], "title": r["title"], "text": r["text"]}) for r in CORPUS]
    (folder / "corpus.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    report = kb.ingest(folder)
    assert report.added == 3
    assert dict(report.skipped) == {"corpus.jsonl#d4": "no text", "corpus.jsonl#d5": "no text"}
    assert [h.title for h in kb.search("kafka", mode="keyword")] == ["Kafka partitions"]
