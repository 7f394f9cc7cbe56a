"""``trove ingest`` on the command line: flags, the summary, --dry-run, --json."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from trove.interfaces.cli import cli

Run = Callable[..., Result]


@pytest.fixture
def run(tmp_path: Path) -> Run:
    runner = CliRunner()

    def invoke(*args: str, code: int = 0) -> Result:
        result = runner.invoke(cli, ["--db", str(tmp_path / "kb.db"), "--embedder", "none", *args])
        assert result.exit_code == code, result.output
        return result

    return invoke


def test_summary_names_problems_and_counts_unsupported_types(run: Run, vault: Path) -> None:
    (vault / "a.md").write_text("# A\n\nalpha", encoding="utf-8")
    (vault / "b.txt").write_bytes(b"\xff\xfe not utf-8")
    (vault / "c.jsonl").write_text('{"text": "ok"}\n{broken\n', encoding="utf-8")
    for name in ("x.png", "y.png", "z.docx"):
        (vault / name).write_bytes(b"\x00binary")
    result = run("ingest", str(vault), code=1)  # a failed record: non-zero, summary printed
    assert "skipped b.txt: not valid UTF-8 (byte 0)" in result.stderr
    assert "failed c.jsonl#line 2: not valid JSON" in result.stderr
    assert "skipped 3 files of unsupported types (.png 2, .docx 1)" in result.stderr
    assert f"{vault}: 2 added, 0 updated, 0 unchanged" in result.stdout
    assert "4 skipped, 1 failed" in result.stdout  # 3 of them unsupported


def test_dry_run_and_json(run: Run, vault: Path) -> None:
    (vault / "a.md").write_text("alpha", encoding="utf-8")
    preview = run("ingest", str(vault), "--dry-run")
    assert "1 would be added" in preview.stdout
    data = json.loads(run("ingest", str(vault), "--dry-run", "--json").stdout)
    assert data["dry_run"] is True and data["added"] == 1
    data = json.loads(run("ingest", str(vault), "--json").stdout)
    assert (data["added"], data["files"], data["chunks"]) == (1, 1, 1)
    (vault / "a.md").rename(vault / "b.md")
    data = json.loads(run("ingest", str(vault), "--sync", "--json").stdout)
    assert data["moved"] == [{"from": "a.md", "to": "b.md"}] and data["deleted"] == 0


def test_field_mapping_flags(run: Run, vault: Path) -> None:
    (vault / "chat.jsonl").write_text(
        json.dumps({"uuid": "u1", "body": "deploy on friday", "ts": 1762160400, "who": "ana"})
        + "\n",
        encoding="utf-8",
    )
    run(
        "ingest",
        str(vault),
        "--text-field",
        "body",
        "--id-field",
        "uuid",
        "--time-field",
        "ts",
        "--author-field",
        "who",
        "--field",
        "channel=ts",
    )
    hits = json.loads(run("search", "deploy", "--all", "--json").stdout)
    assert hits[0]["source_id"] == "chat.jsonl#u1" and hits[0]["author"] == "ana"
    assert hits[0]["timestamp"] == "2025-11-03T09:00:00Z" and hits[0]["channel"] == "1762160400"


def test_bad_flags_are_usage_errors(run: Run, vault: Path) -> None:
    assert "not a size" in run("ingest", str(vault), "--max-bytes", "lots", code=2).stderr
    assert "NAME=PATH" in run("ingest", str(vault), "--field", "channel", code=2).stderr
    bad = run("ingest", str(vault), "--field", "colour=c", code=1)
    assert "cannot map a record field to 'colour'" in bad.stderr


def test_max_bytes_takes_units(run: Run, vault: Path) -> None:
    (vault / "big.md").write_text("x" * 3000, encoding="utf-8")
    (vault / "small.md").write_text("x" * 100, encoding="utf-8")
    result = run("ingest", str(vault), "--max-bytes", "2K")
    assert "skipped big.md: larger than 2048 bytes" in result.stderr
