"""Store.rechunk and ``trove rechunk``: documents cut again with other chunk settings, on
every backend; ids, fields and text stay, the new chunks are found and embedded."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

import trove
from trove.check import check
from trove.errors import InvalidInput
from trove.interfaces.cli import cli

LONG = " ".join(f"Sentence {i} is about the topic numbered {i % 7}." for i in range(120))


def test_documents_are_cut_again_and_stay_whole(store_target: str) -> None:
    with trove.open(store_target, embedder="hash:64") as kb:
        long = kb.add(LONG, title="Long", source="notes", source_id="1")
        short = kb.add("a short note about tea")
        entry = kb.add("an entry of its own", keyword_text="entry words")
        gone = kb.add("deleted before the cut")
        kb.delete(gone)
        before = kb.get(long, record_access=False)
        events: list[dict[str, Any]] = []
        kb.subscribe(events.append)
        report = kb.rechunk(chunk_chars=200, chunk_overlap=20)
        assert (report.documents, report.skipped) == (2, 2)  # the entry and the deleted one
        after = kb.get(long, record_access=False)
        assert after == before  # the text byte-exact, every field, the id
        vectors = kb.chunk_vectors(long)
        assert len(vectors) == report.chunks - 1 > 10 and all(v is not None for v in vectors)
        assert len(kb.chunk_vectors(entry)) == 1
        hits = kb.search("topic numbered 3", mode="semantic", min_score=0)
        assert long in {h.doc_id for h in hits}
        assert events == []  # the content did not change
        assert kb.rechunk([short], chunk_chars=1200, chunk_overlap=0).documents == 1
        if not store_target.startswith(":memory:"):
            assert check(kb).problems == []


@pytest.mark.parametrize(
    "bad",
    [
        {"chunk_chars": 10},
        {"chunk_chars": 100, "chunk_overlap": 100},
        {"chunk_overlap": -1},
        {"chunk_chars": True},
    ],
)
def test_bad_settings_are_refused_before_anything_changes(
    kb: trove.Store, bad: dict[str, Any]
) -> None:
    doc = kb.add(LONG)
    chunks = kb.stats().chunks
    with pytest.raises(InvalidInput):
        kb.rechunk(**bad)
    with pytest.raises(InvalidInput, match="list of ids"):
        kb.rechunk(doc)  # type: ignore[arg-type]
    assert kb.stats().chunks == chunks


def test_a_store_of_callers_vectors_is_not_cut_again(tmp_path: Path) -> None:
    with trove.open(tmp_path / "kb.db", embedder=None) as kb:
        kb.add(LONG, vector=[1.0, 0.0, 0.0])
        with pytest.raises(InvalidInput, match="callers' own"):
            kb.rechunk(chunk_chars=200, chunk_overlap=0)


def test_trove_rechunk(tmp_path: Path) -> None:
    db = tmp_path / "kb.db"
    with trove.open(db, embedder="hash:64") as kb:
        doc = kb.add(LONG, namespace="ana")
        kb.add(LONG + " elsewhere", namespace="bo")
    runner = CliRunner()
    args = ["--db", str(db), "rechunk", "--namespace", "ana", "--chunk-chars", "300"]
    result = runner.invoke(cli, [*args, "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout) | {"chunks": 0} == {"documents": 1, "chunks": 0, "skipped": 0}
    result = runner.invoke(cli, ["--db", str(db), "rechunk", doc, "--chunk-chars", "5"])
    assert result.exit_code == 1 and "chunk_chars must be" in result.output
