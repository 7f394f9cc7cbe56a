"""What a newcomer meets first on the command line (issue 30, item 5): a second `rm`
says it deleted nothing, `add` prints the bare id to a script, `--json` may come before
the command, `eval --pairs` warns of an expected id that names nothing, and counts are
singular for one."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from trove.interfaces.cli import cli
from trove.interfaces.cli.output import plural

SAMPLES = Path(__file__).resolve().parents[3] / "samples" / "notes"


@pytest.fixture
def db(tmp_path: Path) -> str:
    path = str(tmp_path / "kb.db")
    result = CliRunner().invoke(cli, ["--db", path, "--embedder", "none", "ingest", str(SAMPLES)])
    assert result.exit_code == 0, result.output
    return path


def test_add_prints_the_bare_id_to_a_pipe(db: str) -> None:
    result = CliRunner().invoke(cli, ["--db", db, "add", "otters hold hands"])
    assert result.exit_code == 0, result.output
    doc_id = result.stdout.strip()
    assert " " not in doc_id and len(doc_id) == 20
    got = CliRunner().invoke(cli, ["--db", db, "get", doc_id])
    assert got.stdout == "otters hold hands"


def test_rm_of_a_deleted_document_deletes_nothing(db: str) -> None:
    doc_id = CliRunner().invoke(cli, ["--db", db, "add", "otters"]).stdout.strip()
    first = CliRunner().invoke(cli, ["--db", db, "rm", doc_id])
    assert (first.exit_code, first.stdout) == (0, "deleted 1 document\n")
    again = CliRunner().invoke(cli, ["--db", db, "rm", doc_id])
    assert again.exit_code == 0
    assert again.stdout == "deleted 0 documents\n"
    assert f"{doc_id} was deleted already" in again.stderr
    data = json.loads(CliRunner().invoke(cli, ["--db", db, "rm", doc_id, "--json"]).stdout)
    assert data == {"deleted": [], "already_deleted": [doc_id], "failed": {}}


@pytest.mark.parametrize(
    "args", [["--db", "DB", "--json", "stats"], ["--json", "--db", "DB", "stats"]]
)
def test_json_before_the_command_is_the_commands(db: str, args: list[str]) -> None:
    result = CliRunner().invoke(cli, [db if a == "DB" else a for a in args])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["documents"] == len(list(SAMPLES.iterdir()))


def test_eval_pairs_warns_of_an_expected_doc_that_names_nothing(db: str, tmp_path: Path) -> None:
    pairs = tmp_path / "pairs.jsonl"
    rows = [
        {"query": "why did we drop redis", "expected_doc": "2026-10-14-cache-decision.md"},
        {"query": "sourdough starter", "expected_doc": "notes/sourdough.txt"},  # no such
    ]
    pairs.write_text("".join(json.dumps(r) + "\n" for r in rows))
    result = CliRunner().invoke(cli, ["--db", db, "eval", "--pairs", str(pairs)])
    assert result.exit_code == 0, result.output
    warning = "warning: expected_doc 'notes/sourdough.txt' matches no document id or source_id"
    assert warning in result.stderr
    assert "cache-decision" not in result.stderr
    data = CliRunner().invoke(cli, ["--db", db, "eval", "--pairs", str(pairs), "--json"])
    assert json.loads(data.stdout)["unknown"] == ["notes/sourdough.txt"]


def test_counts_are_singular_for_one() -> None:
    assert plural(1, "problem") == "1 problem"
    assert plural(0, "problem") == "0 problems"
    assert plural(2, "query", "queries") == "2 queries"
    assert plural(1_204, "chunk") == "1,204 chunks"
