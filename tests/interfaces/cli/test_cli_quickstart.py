"""The README's quick start with the real default model: clean snippets, weak hits hidden,
nonsense shows nothing (the shipped calibration at work)."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from trove.interfaces.cli import cli

SAMPLES = Path(__file__).resolve().parents[3] / "samples" / "notes"


@pytest.fixture(scope="module")
def search(tmp_path_factory: pytest.TempPathFactory):
    db = str(tmp_path_factory.mktemp("quickstart") / "sample.db")
    runner = CliRunner()
    assert runner.invoke(cli, ["--db", db, "ingest", str(SAMPLES)]).exit_code == 0

    def run(*args: str) -> str:
        result = runner.invoke(cli, ["--db", db, "search", *args])
        assert result.exit_code == 0, result.output
        return result.output

    return run


@pytest.mark.slow
def test_the_quick_start_shows_the_answer_and_not_the_recipe(search) -> None:
    out = search("why did we drop redis")
    assert "Why we dropped Redis" in out
    assert "sourdough" not in out.lower()
    assert "weaker hit" in out  # the rest were hidden, and counted
    assert "---" not in out and "title:" not in out  # no front matter in snippets
    assert "sourdough" in search("why did we drop redis", "--all").lower()


@pytest.mark.slow
@pytest.mark.parametrize(
    "nonsense", ["xq7rtz9wvb", "purple elephant quantum sandwich", "饕餮鑫犇"]
)
def test_nonsense_shows_no_hits(search, nonsense: str) -> None:
    assert "no good matches" in search(nonsense) or "no results" in search(nonsense)
