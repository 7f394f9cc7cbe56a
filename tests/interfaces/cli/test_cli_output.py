"""Piped output is the text rich would print there, written without loading rich."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path

import pytest
from rich.console import Console
from rich.text import Text

from trove.interfaces.cli import output

_LINES = [
    [(" 1. ", ""), ("a\ttitle", "bold"), ("  notes:a  id0\r 0.93\x07", "dim")],
    [("    «alpha» [bold]not markup[/bold] \x1b[1m", "")],
    [("    ", ""), ("中文\tafter", "bold yellow")],
]


@pytest.fixture
def plain_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("FORCE_COLOR", raising=False)
    monkeypatch.delenv("TTY_COMPATIBLE", raising=False)


def test_piped_lines_are_what_rich_prints_to_a_pipe(
    plain_env: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    plain = io.StringIO()
    monkeypatch.setattr(sys, "stdout", plain)
    output.show(_LINES)
    drawn = io.StringIO()
    console = Console(file=drawn, soft_wrap=True)
    for line in _LINES[:2]:  # tabs after wide (CJK) characters: rich counts cells, not chars
        console.print(Text.assemble(*line))
    assert plain.getvalue().splitlines()[:2] == drawn.getvalue().splitlines()


def test_a_forced_terminal_goes_through_rich(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FORCE_COLOR", "1")
    assert not output.piped(io.StringIO())


def test_piped_notes_keep_brackets(plain_env: None, monkeypatch: pytest.MonkeyPatch) -> None:
    err = io.StringIO()
    monkeypatch.setattr(sys, "stderr", err)
    output.note("warning: not expanded ([timeout] after 2 s)\r")
    assert err.getvalue() == "warning: not expanded ([timeout] after 2 s)\n"


def test_piped_search_does_not_load_rich(tmp_path: Path) -> None:
    import trove

    db = tmp_path / "kb.db"
    with trove.open(db, embedder="hash:16") as kb:
        kb.add("alpha beta gamma", title="Greek", source="notes", source_id="a")
    code = (
        "import sys\n"
        "from trove.interfaces.cli import main\n"
        f"sys.argv = ['trove', '--db', {str(db)!r}, 'search', 'alpha', '--all', "
        "'--mode', 'keyword']\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        "print('rich' in sys.modules, file=sys.stderr)"
    )
    env = {k: v for k, v in os.environ.items() if k not in ("FORCE_COLOR", "TTY_COMPATIBLE")}
    run = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env
    )
    assert run.stdout.splitlines()[0].startswith(" 1. Greek  notes:a  ")
    assert "«alpha»" in run.stdout
    assert run.stderr.strip().splitlines()[-1] == "False"
