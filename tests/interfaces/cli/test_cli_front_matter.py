"""The shipped sample notes, whose Markdown opens with YAML front matter: `trove check`
finds the store sound right after the Quick start, and `trove export --format markdown`
writes each note with one front-matter block that ingest reads back."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

import trove
from trove.interfaces.cli import cli

SAMPLES = Path(__file__).resolve().parents[3] / "samples" / "notes"
FRONTED = "2026-10-14-cache-decision.md"  # a sample that opens with front matter


@pytest.fixture(scope="module")
def sample_db(tmp_path_factory: pytest.TempPathFactory) -> str:
    assert (SAMPLES / FRONTED).read_text(encoding="utf-8").startswith("---\n")
    db = str(tmp_path_factory.mktemp("samples") / "sample.db")
    result = CliRunner().invoke(cli, ["--db", db, "--embedder", "hash:64", "ingest", str(SAMPLES)])
    assert result.exit_code == 0, result.output
    return db


def test_check_finds_the_sample_store_sound(sample_db: str) -> None:
    result = CliRunner().invoke(cli, ["--db", sample_db, "check"])
    assert result.exit_code == 0, result.output
    assert result.output.rstrip().endswith(": ok")


def test_check_still_finds_a_real_gap_in_a_note_with_front_matter(tmp_path: Path) -> None:
    db = tmp_path / "kb.db"
    with trove.open(db, embedder=None) as kb:
        kb.ingest(SAMPLES / FRONTED)
        kb.backend.conn.execute(  # type: ignore[attr-defined]
            "DELETE FROM chunk WHERE idx = 1"
        )
    result = CliRunner().invoke(cli, ["--db", str(db), "--embedder", "none", "check"])
    assert result.exit_code == 1 and "do not cover its text" in result.output


def test_markdown_export_writes_one_front_matter_block(sample_db: str, tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    result = CliRunner().invoke(
        cli, ["--db", sample_db, "export", "--format", "markdown", str(vault)]
    )
    assert result.exit_code == 0, result.output
    note = (vault / "Why we dropped Redis.md").read_text(encoding="utf-8")
    head, body = note.split("\n---\n", 1)
    assert head.startswith("---\ntitle: Why we dropped Redis\n")
    assert "\n---\n" not in body and not body.lstrip().startswith("---")
    assert body.lstrip().startswith("# Why we dropped Redis")
    with trove.open(tmp_path / "back.db", embedder=None) as kb:
        kb.ingest(vault)
        [doc] = [d for d in kb.list(limit=20).items if d.title == "Why we dropped Redis"]
        assert doc.author == "ana" and set(doc.tags) == {"architecture", "decision"}
        assert "title:" not in doc.text.split("---", 2)[2]  # the body holds no second block
