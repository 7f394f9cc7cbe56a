"""What every ``trove`` command prints with: the consoles, JSON, TSV, progress bars and the
output options."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

import click
from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    ProgressColumn,
    TextColumn,
    TimeElapsedColumn,
)

F = TypeVar("F", bound=Callable[..., Any])
# soft_wrap: lines are never broken at the console width (piped output stays one line
# per field; a terminal wraps long lines itself).
console = Console(soft_wrap=True)
errors = Console(stderr=True)


def json_option(func: F) -> F:
    return click.option("--json", "as_json", is_flag=True, help="Print JSON.")(func)


def emit(data: Any) -> None:
    click.echo(json.dumps(data, ensure_ascii=False, indent=2))


def format_option(func: F) -> F:
    return click.option(
        "--format",
        "output",
        type=click.Choice(["text", "tsv", "json"]),
        default="text",
        show_default=True,
        help="tsv: one tab-separated line per result, no header, for scripts.",
    )(func)


def tsv_line(*cells: str | None) -> None:
    """One line of tab-separated cells; tabs and line breaks inside a cell become spaces."""
    clean = (
        " ".join((cell or "").split("\t")).replace("\r", " ").replace("\n", " ") for cell in cells
    )
    click.echo("\t".join(clean))


@contextmanager
def progress_bar(
    label: str, total: int | None, *, hidden: bool, count: bool = True
) -> Iterator[Callable[[int], None]]:
    """A transient bar on stderr while a long library call runs; yields ``advance(n)``.

    ``count``: show done/total (leave it out where the total is not known)."""
    columns: list[ProgressColumn] = [TextColumn(f"[bold]{label}"), BarColumn()]
    if count:
        columns.append(MofNCompleteColumn())
    columns.append(TimeElapsedColumn())
    with Progress(*columns, console=errors, transient=True, disable=hidden) as bar:
        task = bar.add_task(label, total=total)
        yield lambda n: bar.update(task, advance=n)
