"""The README and the pages in docs/ say what really happens: every code block runs (or says
why it cannot, and which test covers it instead), and every relative link and anchor leads
somewhere.

A block runs in a fresh folder holding a copy of ``samples/``, one folder per page, in the
page's order (so a page's later blocks see what its earlier ones stored); ``trove`` is this
environment's and ``$TROVE_DB`` is ``kb.db`` there. ``python`` and ``sh`` blocks run, ``json``
and ``toml`` blocks must parse, ``text`` blocks are output. A block that cannot run here is
preceded by ``<!-- not run: why; what covers it -->``.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
# Written by the benchmark scripts, not by hand: their blocks are the scripts' own commands.
GENERATED = {"benchmarks.md", "reliability.md"}
PAGES = [ROOT / "README.md", *sorted(p for p in (ROOT / "docs").glob("*.md"))]
NOT_RUN = re.compile(r"^<!-- not run: (.+\S) -->$")
FENCE = re.compile(r"^```(\S*)\s*$")


@dataclass(frozen=True)
class Block:
    page: Path
    line: int
    lang: str
    code: str
    not_run: str | None

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
        reason = NOT_RUN.match(before)
        code = "\n".join(lines[i + 1 : end]) + "\n"
        found.append(Block(page, i + 1, match.group(1), code, reason and reason.group(1)))
        i = end + 1
    return found


def documented_pages() -> list[Path]:
    return [p for p in PAGES if p.name not in GENERATED]


def test_every_block_names_its_language_and_what_it_is() -> None:
    for page in documented_pages():
        for block in blocks(page):
            assert block.lang in {"python", "sh", "json", "toml", "text"}, str(block)


def _environment(folder: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    env["TROVE_DB"] = "kb.db"
    env["XDG_DATA_HOME"] = str(folder / "data")
    env["HOME"] = str(folder)
    for name in ("TROVE_LLM", "TROVE_EMBEDDER", "TROVE_CONFIG", "TROVE_TOKEN"):
        env.pop(name, None)
    return env


def _run(block: Block, folder: Path) -> None:
    if block.lang == "json":
        json.loads(block.code)
        return
    if block.lang == "toml":
        import tomllib

        tomllib.loads(block.code)
        return
    if block.lang == "text":
        return
    command = (
        [sys.executable, "-c", block.code]
        if block.lang == "python"
        else ["bash", "-euo", "pipefail", "-c", block.code]
    )
    done = subprocess.run(
        command,
        cwd=folder,
        env=_environment(folder),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, f"{block} failed:\n{done.stdout[-2000:]}\n{done.stderr[-4000:]}"


@pytest.mark.slow
@pytest.mark.parametrize("page", documented_pages(), ids=lambda p: p.name)
def test_every_code_block_runs(page: Path, tmp_path: Path) -> None:
    shutil.copytree(ROOT / "samples", tmp_path / "samples")
    for block in blocks(page):
        if block.not_run is None:
            _run(block, tmp_path)


def test_most_code_blocks_run() -> None:
    """Not running a block is the exception: it needs a reason, and most blocks run."""
    every = [b for page in documented_pages() for b in blocks(page) if b.lang != "text"]
    skipped = [b for b in every if b.not_run]
    assert all(len(b.not_run or "") > 10 for b in skipped)
    assert len(every) - len(skipped) >= 8, [str(b) for b in skipped]


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
        if page.parent.name == "docs":
            assert f"](docs/{page.name})" in readme, f"README does not link {page.name}"
