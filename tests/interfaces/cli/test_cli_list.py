"""`trove list` filters and the tsv format of list and search (issue 11)."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

import trove
from trove.interfaces.cli import cli


def _store(tmp_path: Path) -> str:
    db = str(tmp_path / "kb.db")
    with trove.open(db, embedder=None) as kb:
        new = "2025-06-01"
        kb.add(
            "apples\tare red",
            title="Apples",
            source="fruit",
            doc_type="note",
            tags=["a"],
            timestamp=new,
        )
        kb.add("pears are green", source="fruit", doc_type="memo", timestamp="2020-01-01")
        kb.add("carrots are orange", source="veg", doc_type="note", tags=["a", "b"], timestamp=new)
    return db


def _lines(db: str, *args: str) -> list[list[str]]:
    result = CliRunner().invoke(cli, ["--db", db, *args])
    assert result.exit_code == 0, result.output
    return [line.split("\t") for line in result.stdout.splitlines()]


def test_list_filters(tmp_path: Path) -> None:
    db = _store(tmp_path)
    titles = {row[1] for row in _lines(db, "list", "--source", "fruit")}
    assert len(titles) == 2 and "Apples" in titles
    assert len(_lines(db, "list", "--doc-type", "note")) == 2
    assert len(_lines(db, "list", "--tag", "a", "--tag", "b")) == 1
    assert len(_lines(db, "list", "--until", "2021-01-01")) == 1
    assert len(_lines(db, "list", "--since", "2021-01-01")) == 2


def test_tsv_rows_have_fixed_columns(tmp_path: Path) -> None:
    db = _store(tmp_path)
    rows = _lines(db, "list", "--format", "tsv", "--source", "fruit")
    assert all(len(row) == 7 for row in rows)
    assert {row[4] for row in rows} == {"note", "memo"}
    hits = _lines(db, "search", "apples", "--all", "--format", "tsv")
    assert len(hits) == 1 and len(hits[0]) == 7
    rank, score, _, source, _, title, snippet = hits[0]
    assert (rank, source, title) == ("1", "fruit", "Apples")
    assert 0 < float(score) <= 1 and "«apples»" in snippet  # the tab became a space
