"""The README and the pages in docs/ say what really happens: every code block runs, and
every relative link and anchor leads somewhere.

A block runs in a fresh folder holding a copy of ``samples/``, one folder per page, in the
page's order (so a page's later blocks see what its earlier ones stored); ``trove`` is this
environment's, ``$TROVE_DB`` is ``kb.db`` there and ``~`` is the folder. ``python`` and
``sh`` blocks run, ``json`` and ``toml`` blocks must parse, ``text`` blocks are output.

Hidden setup a reader does not see: ``<!-- run with: NAME, ... -->`` on the line before a
block names fixtures of tests/helpers/docs_fixtures.py (a real server on a free loopback
port, the session's PostgreSQL, a fake OpenAI-compatible model, the reader's files under
``~``...), which also put this test's addresses in place of the text's placeholders; every
sh block first sources tests/helpers/docs_shell.sh, which bounds what runs until stopped
(``--follow``, ``watch``, ``curl -N``: 3 s), checks foreground servers and makes curl fail
on an HTTP error. The processes a block starts are killed when it ends.

What does not run, exactly: (1) a line of an sh block that starts with ``pip install``
(this environment has every extra; the ``dev`` extra includes the chat-model packages the
adapter examples import); (2) a block preceded by ``<!-- not run: why -->``, which only the
README's own install and check commands may use (``NOT_RUN_ALLOWED``: they install this
package, and the second is .ci/run itself); (3) the pages the benchmark scripts write
(``GENERATED``): their one block is the measurement itself, minutes to hours.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from helpers.docs_fixtures import FIXTURES, Resources, Setup, page_resources

ROOT = Path(__file__).resolve().parents[1]
# Written by the benchmark scripts, not by hand: their blocks are the scripts' own commands.
GENERATED = {"benchmarks.md", "reliability.md"}
PAGES = [ROOT / "README.md", *sorted(p for p in (ROOT / "docs").glob("*.md"))]
NOT_RUN = re.compile(r"^<!-- not run: (.+\S) -->$")
RUN_WITH = re.compile(r"^<!-- run with: ([\w, -]+) -->$")
FENCE = re.compile(r"^```(\S*)\s*$")
SHELL = ROOT / "tests" / "helpers" / "docs_shell.sh"
# The README's own install and check commands: they install this package (.ci/run does).
NOT_RUN_ALLOWED = {("README.md", "/pipinstall.&&"), ("README.md", "mypy&&")}


@dataclass(frozen=True)
class Block:
    page: Path
    line: int
    lang: str
    code: str
    not_run: str | None
    fixtures: tuple[str, ...] = ()

    def __str__(self) -> str:
        return f"{self.page.relative_to(ROOT)}:{self.line} ({self.lang or 'no language'})"


def blocks(page: Path) -> list[Block]:
    lines = page.read_text(encoding="utf-8").split("\n")
    found, i = [], 0
    while i < len(lines):
        match = FENCE.match(lines[i])
        if not match:
            i += 1
            continue
        end = next(j for j in range(i + 1, len(lines)) if lines[j].startswith("```"))
        before = next((lines[j] for j in range(i - 1, -1, -1) if lines[j].strip()), "")
        reason, uses = NOT_RUN.match(before), RUN_WITH.match(before)
        fixtures = tuple(n.strip() for n in uses.group(1).split(",")) if uses else ()
        code = "\n".join(lines[i + 1 : end]) + "\n"
        found.append(
            Block(page, i + 1, match.group(1), code, reason and reason.group(1), fixtures)
        )
        i = end + 1
    return found


def documented_pages() -> list[Path]:
    return [p for p in PAGES if p.name not in GENERATED]


def test_every_block_names_its_language_and_what_it_is() -> None:
    for page in documented_pages():
        for block in blocks(page):
            assert block.lang in {"python", "sh", "json", "toml", "text"}, str(block)
            assert all(name in FIXTURES for name in block.fixtures), str(block)


def _environment(folder: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    paths = [str(Path(p).resolve()) for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]
    if paths:  # blocks run in another folder: a relative src/ must still be this tree's
        env["PYTHONPATH"] = os.pathsep.join(paths)
    env["TROVE_DB"] = "kb.db"
    env["XDG_DATA_HOME"] = str(folder / "data")
    env["HOME"] = str(folder)
    for name in ("TROVE_LLM", "TROVE_EMBEDDER", "TROVE_CONFIG", "TROVE_TOKEN", "TROVE_REPLICAS"):
        env.pop(name, None)
    return env


def _command(block: Block, setup: Setup) -> list[str]:
    if block.lang == "python":
        return [sys.executable, "-c", setup.code]
    lines = [line for line in setup.code.split("\n") if not line.startswith("pip install ")]
    script = "\n".join([f"source {SHELL}", *setup.preamble, *lines])
    return ["bash", "-euo", "pipefail", "-c", script]


def _end_group(group: int) -> None:
    """SIGTERM to every process the block left running, SIGKILL to those still there."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        for _ in range(50):
            try:
                os.killpg(group, sig if _ == 0 else 0)
            except ProcessLookupError:
                return
            time.sleep(0.1)


def _run(block: Block, folder: Path, resources: Resources) -> None:
    if block.lang == "json":
        json.loads(block.code)
        return
    if block.lang == "toml":
        import tomllib

        tomllib.loads(block.code)
        return
    if block.lang == "text":
        return
    setup = Setup(folder, block.code, _environment(folder))
    for name in block.fixtures:
        FIXTURES[name](setup, resources)
    # Output to files, not pipes: a server the block leaves running would hold a pipe open.
    with open(folder / ".out", "w+") as out, open(folder / ".err", "w+") as err:
        process = subprocess.Popen(
            _command(block, setup),
            cwd=folder,
            env=setup.env,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=err,
            start_new_session=True,  # a process group of its own, ended with the block
        )
        try:
            process.wait(timeout=300)
        finally:
            _end_group(process.pid)
        out.seek(0), err.seek(0)
        said = f"{out.read()[-2000:]}\n{err.read()[-4000:]}"
    assert process.returncode == 0, f"{block} failed:\n{said}"
    for check in setup.checks:
        check()


@pytest.mark.slow
@pytest.mark.parametrize("page", documented_pages(), ids=lambda p: p.name)
def test_every_code_block_runs(page: Path, tmp_path: Path, request: pytest.FixtureRequest) -> None:
    shutil.copytree(ROOT / "samples", tmp_path / "samples")
    with page_resources(request.getfixturevalue) as resources:
        for block in blocks(page):
            if block.not_run is None:
                _run(block, tmp_path, resources)


def test_only_the_readmes_install_and_check_commands_do_not_run() -> None:
    """Every other block runs: a placeholder gets hidden setup (``run with:``), not a pass."""
    skipped = [b for p in documented_pages() for b in blocks(p) if b.not_run]
    for block in skipped:
        assert any(
            block.page.name == page and text in block.code.replace(" ", "")
            for page, text in NOT_RUN_ALLOWED
        ), f"{block} does not run: {block.not_run}"
    assert len(skipped) <= len(NOT_RUN_ALLOWED)


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"[`*_]", "", heading.strip().lower())
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(page: Path) -> set[str]:
    found, fence = set(), False
    for line in page.read_text(encoding="utf-8").split("\n"):
        if line.startswith("```"):
            fence = not fence
        elif not fence and (match := re.match(r"^#{1,6} (.+)$", line)):
            found.add(slug(match.group(1)))
    return found


def test_every_relative_link_and_anchor_leads_somewhere() -> None:
    broken = []
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        for target in re.findall(r"\]\(([^)\s]+)\)", text):
            if re.match(r"^[a-z]+:", target):
                continue
            path, _, anchor = target.partition("#")
            linked = (page.parent / path).resolve() if path else page
            if not linked.exists():
                broken.append(f"{page.name}: {target}")
            elif anchor and linked.suffix == ".md" and anchor not in anchors(linked):
                broken.append(f"{page.name}: {target} (no such heading)")
    assert not broken, broken


def test_the_readme_is_a_front_door() -> None:
    """The pitch, the two commands, a tour and links: the rest lives in docs/."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) <= 250
    for page in documented_pages():
        if page.parent == ROOT / "docs":
            assert f"](docs/{page.name})" in readme, f"README does not link {page.name}"
