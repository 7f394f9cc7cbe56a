"""The CLI's search output: a default floor with a count of what it hid, --all, --text."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from trove.interfaces.cli import cli
from trove.search.calibration import FLOOR


@pytest.fixture
def run(db_path: Path):
    runner = CliRunner(env={"TROVE_EMBEDDER": "hash:64"})

    def invoke(*args: str, code: int = 0):
        result = runner.invoke(cli, ["--db", str(db_path), *args])
        assert result.exit_code == code, result.output
        return result

    for i in range(4):
        invoke(
            "add", f"Heron note {i}. Herons fish at dawn and wait very still.", "--title", f"h{i}"
        )
    return invoke


def test_weak_hits_are_hidden_and_counted(run) -> None:
    everything = json.loads(run("search", "herons", "--mode", "keyword", "--all", "--json").stdout)
    assert len(everything) == 4
    strict = run("search", "herons", "--mode", "keyword", "--min-score", "1")
    shown = [h for h in everything if h["score"] >= 1.0]
    assert f"{4 - len(shown)} weaker hit" in strict.output
    assert "(--all)" in strict.output
    default = json.loads(run("search", "herons", "--mode", "keyword", "--json").stdout)
    assert all(h["score"] >= FLOOR for h in default)


def test_text_and_context_are_printed(run) -> None:
    out = run("search", "heron note 2", "--mode", "keyword", "--all", "--text", "-n", "1")
    assert "Herons fish at dawn and wait very still." in out.output
    data = json.loads(run("search", "herons", "--all", "--max-tokens", "12", "--json").stdout)
    assert data[-1]["truncated"] is True


def test_min_score_is_checked(run) -> None:
    assert "--min-score" in run("search", "herons", "--min-score", "2", code=2).output
