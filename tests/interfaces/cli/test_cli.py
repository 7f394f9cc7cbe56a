"""The trove command: each command's output, --json, exit codes and error text."""

from __future__ import annotations

import json
import re
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from trove.interfaces.cli import cli

CLI_PAGE = Path(__file__).resolve().parents[3] / "docs" / "cli.md"
SAMPLES = Path(__file__).resolve().parents[3] / "samples" / "notes"


@pytest.fixture
def run(db_path: Path):
    runner = CliRunner(env={"TROVE_EMBEDDER": "hash:64"})  # plumbing: a fast fake model

    def invoke(*args: str, input: str | None = None, code: int = 0):
        result = runner.invoke(cli, ["--db", str(db_path), *args], input=input)
        assert result.exit_code == code, result.output
        return result

    return invoke


def test_add_search_get_round_trip(run) -> None:
    added = json.loads(
        run("add", "Redis was dropped in October.", "--title", "Cache", "--json").stdout
    )
    assert added["action"] == "added"
    # --all: a one-document store gives BM25 almost no weight, so the floor would hide it
    hits = json.loads(run("search", "redis", "--all", "--json").stdout)
    assert [h["doc_id"] for h in hits] == [added["id"]]
    assert hits[0]["title"] == "Cache" and "«Redis»" in hits[0]["snippet"]
    out = run("search", "redis", "--all").stdout
    assert "Cache" in out and added["id"] in out


def test_add_reads_stdin_and_get_is_byte_exact(run) -> None:
    text = "line\r\n\ttab 😀 中文\n"
    doc_id = json.loads(run("add", "--json", input=text).stdout)["id"]
    assert run("get", doc_id).stdout_bytes == text.encode("utf-8")
    doc = json.loads(run("get", doc_id, "--json").stdout)
    assert doc["text"] == text


def test_add_with_provenance_and_filters(run) -> None:
    run(
        "add",
        "alpha launch plan",
        "--source",
        "notes",
        "--tag",
        "x",
        "--tag",
        "y",
        "--author",
        "ana",
        "--timestamp",
        "2026-11-03T09:00:00Z",
        "--meta",
        "priority=2",
        "--meta",
        "team=search",
    )
    run("add", "alpha retro", "--source", "mail")
    assert len(json.loads(run("search", "alpha", "--json", "--all").stdout)) == 2
    for args in (
        ["--source", "notes"],
        ["--tag", "x", "--tag", "y"],
        ["--author", "ana"],
        ["--since", "2026-11-01"],
        ["--meta", "priority=2"],
        ["--meta", "team=search"],
    ):
        hits = json.loads(run("search", "alpha", *args, "--all", "--json").stdout)
        assert [h["source"] for h in hits] == ["notes"], args


def test_ingest_reports_and_is_incremental(run) -> None:
    first = json.loads(run("ingest", str(SAMPLES), "--json").stdout)
    assert first["added"] == len(list(SAMPLES.iterdir()))
    second = json.loads(run("ingest", str(SAMPLES), "--json").stdout)
    assert (second["added"], second["unchanged"]) == (0, first["added"])
    text = run("ingest", str(SAMPLES)).stdout
    assert "0 added" in text and "unchanged" in text
    hits = json.loads(run("search", "why did we drop redis", "--json").stdout)
    assert hits[0]["title"] == "Why we dropped Redis"


def test_ingest_names_skipped_files(run, tmp_path: Path) -> None:
    (tmp_path / "good.md").write_text("fine", encoding="utf-8")
    (tmp_path / "bad.txt").write_bytes(b"\xff\xfe bad")
    result = run("ingest", str(tmp_path))
    assert "skipped bad.txt: not valid UTF-8" in result.stderr
    assert "1 added" in result.stdout


def test_rm_restore_purge(run) -> None:
    doc_id = json.loads(run("add", "temporary", "--json").stdout)["id"]
    run("rm", doc_id)
    run("get", doc_id, code=1)
    run("restore", doc_id)
    run("get", doc_id)
    run("rm", doc_id)
    assert json.loads(run("purge", "--dry-run", "--json").stdout) == {
        "purged": 0,
        "would_purge": 1,
    }
    assert "nothing purged" in run("purge", input="n\n", code=1).stderr
    assert json.loads(run("purge", "--yes", "--json").stdout) == {"purged": 1}


def test_stats(run) -> None:
    run("add", "a", "--source", "notes")
    data = json.loads(run("stats", "--json").stdout)
    assert data["documents"] == 1 and data["by_source"] == {"notes": 1}
    assert "documents" in run("stats").stdout


def test_errors_are_messages_with_nonzero_exit(run, tmp_path: Path) -> None:
    run("add", "a store to be wrong about")
    assert "no document with id 'nope'" in run("get", "nope", code=1).stderr
    assert "no document with id 'nope'" in run("rm", "nope", code=1).stderr
    assert "is not one of" in run("search", "x", "--mode", "psychic", code=2).stderr
    assert "not an ISO-8601" in run("add", "x", "--timestamp", "soon", code=1).stderr
    assert "KEY=VALUE" in run("search", "x", "--meta", "novalue", code=2).stderr
    assert "cannot parse" in run("search", '"open', "--raw", code=1).stderr


def test_non_trove_file_is_refused(tmp_path: Path) -> None:
    bad = tmp_path / "notes.txt"
    bad.write_text("not a database")
    result = CliRunner().invoke(cli, ["--db", str(bad), "stats"])
    assert result.exit_code == 1 and "not a SQLite database" in result.stderr


def test_trove_db_environment_variable(tmp_path: Path) -> None:
    db = tmp_path / "env.db"
    runner = CliRunner(env={"TROVE_DB": str(db)})
    assert runner.invoke(cli, ["add", "from env"]).exit_code == 0
    assert db.exists()


def test_default_location_is_under_user_data_dir(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    monkeypatch.delenv("TROVE_DB", raising=False)
    assert CliRunner().invoke(cli, ["add", "x"]).exit_code == 0
    assert (tmp_path / "xdg" / "trove" / "trove.db").exists()


def test_every_command_is_documented_on_the_cli_page() -> None:
    page = CLI_PAGE.read_text(encoding="utf-8")
    for name in cli.list_commands(click.Context(cli)):
        assert re.search(rf"`trove {name}\b", page), f"trove {name} is not in docs/cli.md"


def test_modes_explain_reembed_and_the_lock_in_stats(run) -> None:
    run("add", "The cat purred on the warm mat.", "--title", "cats")
    run("add", "Rockets burn kerosene at launch.", "--title", "rockets")
    for mode in ("keyword", "semantic", "hybrid"):
        hits = json.loads(
            run("search", "kerosene rocket", "--mode", mode, "--all", "--json").stdout
        )
        assert hits[0]["title"] == "rockets", mode
    explained = json.loads(run("search", "kerosene", "--explain", "--all", "--json").stdout)
    assert explained[0]["explain"]["keyword"]["rank"] == 1
    assert "keyword #1" in run("search", "kerosene", "--explain", "--all").stdout
    assert json.loads(run("stats", "--json").stdout)["embedder"]["model_id"] == "hash:64"
    switched = json.loads(run("reembed", "--embedder", "hash:32", "--json").stdout)
    assert switched["embedded"] == 2 and switched["embedder"]["model_id"] == "hash:32"
    assert "hash:32" in run("stats").stdout
    missing = json.loads(run("reembed", "--missing", "--json").stdout)
    assert missing["embedded"] == 0
