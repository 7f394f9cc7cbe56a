"""The CLI's contract: read-only commands create nothing, global options anywhere,
--json errors with the codes HTTP uses, rm of several ids, restore of a live document."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from trove.interfaces.cli import cli


@pytest.fixture
def runner() -> CliRunner:
    return CliRunner(env={"TROVE_EMBEDDER": "hash:64", "TROVE_DB": None})


@pytest.mark.parametrize(
    "command",
    [["search", "x"], ["get", "abc"], ["stats"], ["rm", "abc"], ["purge", "--yes"]],
)
def test_read_only_commands_never_create_a_store(
    runner: CliRunner, tmp_path: Path, command: list[str]
) -> None:
    typo = tmp_path / "typo.db"
    result = runner.invoke(cli, ["--db", str(typo), *command])
    assert result.exit_code == 1
    assert f"no store at {typo}" in result.stderr
    assert not typo.exists() and list(tmp_path.iterdir()) == []


def test_serve_without_create_refuses_a_missing_store(runner: CliRunner, tmp_path: Path) -> None:
    typo = tmp_path / "typo.db"
    # 0.0.0.0 without a token: were the store opened, serving would be refused, not hang.
    args = ["--db", str(typo), "serve", "--host", "0.0.0.0"]
    result = runner.invoke(cli, args, env={"TROVE_TOKEN": None})
    assert result.exit_code == 1 and "no store at" in result.stderr
    assert not typo.exists()


def test_global_options_before_or_after_the_command(runner: CliRunner, tmp_path: Path) -> None:
    db = str(tmp_path / "kb.db")
    added = runner.invoke(cli, ["add", "otters hold hands", "--db", db, "--json"])
    assert added.exit_code == 0, added.output
    doc_id = json.loads(added.stdout)["id"]
    hits = runner.invoke(
        cli, ["search", "otters", "--db", db, "--json", "--mode", "keyword", "--all"]
    )
    assert hits.exit_code == 0, hits.output
    assert [h["doc_id"] for h in json.loads(hits.stdout)] == [doc_id]
    stats = runner.invoke(cli, [f"--db={db}", "stats", "--json"])
    assert json.loads(stats.stdout)["documents"] == 1
    keyword_only = runner.invoke(cli, ["stats", "--embedder", "none", "--db", db, "--json"])
    assert keyword_only.exit_code == 0, keyword_only.output


def test_json_errors_carry_the_http_codes(runner: CliRunner, tmp_path: Path) -> None:
    db = str(tmp_path / "kb.db")
    runner.invoke(cli, ["--db", db, "add", "x"])
    missing = runner.invoke(cli, ["--db", db, "get", "nope", "--json"])
    assert missing.exit_code == 1
    assert json.loads(missing.stdout)["error"]["code"] == "not_found"
    bad = runner.invoke(cli, ["--db", db, "search", '"open', "--raw", "--json"])
    assert json.loads(bad.stdout)["error"]["code"] == "invalid_query"
    plain = runner.invoke(cli, ["--db", db, "get", "nope"])
    assert plain.stderr.startswith("Error: not_found: no document with id 'nope'")


def test_rm_of_several_ids_handles_the_others(runner: CliRunner, tmp_path: Path) -> None:
    db = str(tmp_path / "kb.db")
    a, b = (
        json.loads(runner.invoke(cli, ["--db", db, "add", text, "--json"]).stdout)["id"]
        for text in ("first", "second")
    )
    result = runner.invoke(cli, ["--db", db, "rm", a, "nope", b, "--json"])
    assert result.exit_code == 1
    body = json.loads(result.stdout)
    assert body["deleted"] == [a, b] and body["failed"]["nope"]["code"] == "not_found"
    assert runner.invoke(cli, ["--db", db, "get", b]).exit_code == 1


def test_restore_of_a_live_document_says_so(runner: CliRunner, tmp_path: Path) -> None:
    db = str(tmp_path / "kb.db")
    doc_id = json.loads(runner.invoke(cli, ["--db", db, "add", "alive", "--json"]).stdout)["id"]
    result = runner.invoke(cli, ["--db", db, "restore", doc_id])
    assert result.exit_code == 0 and f"{doc_id} is not deleted" in result.stderr
    body = json.loads(runner.invoke(cli, ["--db", db, "restore", doc_id, "--json"]).stdout)
    assert body == {"restored": [], "not_deleted": [doc_id]}


def test_piped_search_output_is_not_wrapped_and_keeps_markers(
    runner: CliRunner, tmp_path: Path
) -> None:
    db = str(tmp_path / "kb.db")
    long_text = "otters " + " ".join(f"word{i}" for i in range(60)) + " otters again"
    runner.invoke(cli, ["--db", db, "add", long_text, "--title", "T"])
    out = runner.invoke(cli, ["--db", db, "search", "otters", "--mode", "keyword", "--all"]).stdout
    snippet_line = next(line for line in out.splitlines() if "otters" in line)
    assert "«otters»" in snippet_line and len(snippet_line) > 80


def test_list_pages_and_finds_tombstones(runner: CliRunner, tmp_path: Path) -> None:
    db = str(tmp_path / "kb.db")
    ids = [
        json.loads(runner.invoke(cli, ["--db", db, "add", f"doc {i}", "--json"]).stdout)["id"]
        for i in range(3)
    ]
    runner.invoke(cli, ["--db", db, "rm", ids[0]])
    page = json.loads(runner.invoke(cli, ["list", "--db", db, "--json", "-n", "1"]).stdout)
    assert len(page["items"]) == 1 and page["cursor"]
    rest = runner.invoke(cli, ["--db", db, "list", "--cursor", page["cursor"]])
    assert rest.exit_code == 0 and len(rest.stdout.splitlines()) == 1
    live = runner.invoke(cli, ["--db", db, "list"]).stdout
    assert ids[0] not in live
    tombstones = runner.invoke(cli, ["--db", db, "list", "--deleted"]).stdout
    assert f"{ids[0]}\t" in tombstones and "deleted" in tombstones


def test_update_link_links_unlink(runner: CliRunner, tmp_path: Path) -> None:
    db = str(tmp_path / "kb.db")

    def run(*args: str) -> str:
        result = runner.invoke(cli, ["--db", db, *args])
        assert result.exit_code == 0, result.output
        return result.stdout

    a = json.loads(run("add", "decision: drop redis", "--json"))["id"]
    b = json.loads(run("add", "benchmark", "--json"))["id"]
    assert json.loads(run("update", a, "--title", "Decision", "--json"))["changed"] == ["title"]
    assert json.loads(run("get", a, "--json"))["title"] == "Decision"
    edge = json.loads(run("link", a, b, "--type", "derived_from", "--json"))
    assert edge["created_at"] and edge["type"] == "derived_from"
    assert run("links", b) == f"{a}\tderived_from\t{b}\t1\n"
    assert json.loads(run("unlink", a, b, "--json")) == {"removed": 1}
    assert run("links", a) == ""
    missing = runner.invoke(cli, ["--db", db, "update", "nope", "--title", "x", "--json"])
    assert missing.exit_code == 1 and json.loads(missing.stdout)["error"]["code"] == "not_found"
