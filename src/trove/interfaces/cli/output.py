"""What every ``trove`` command prints with: the consoles, JSON, TSV, progress bars and the
output options.

rich is imported where something is drawn, not here: it costs about as much as the rest of
``trove --help`` together, and ``--help``, ``--json`` and TSV output never need it
(tests/coldstart/test_imports.py). Lines of styled pieces (:func:`show`) sent to a pipe or
a file, where rich would print them without styles, are written plainly without it."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from functools import cache
from typing import TYPE_CHECKING, Any, TypeVar

import click

if TYPE_CHECKING:
    import json

    from rich.console import Console
    from rich.progress import ProgressColumn
else:  # loaded by the first --json output: `trove --help` prints none
    from trove.lazy import LazyModule

    json = LazyModule("json")

F = TypeVar("F", bound=Callable[..., Any])
# A line as pieces of (text, rich style): ("title", "bold"), ("  id 0.93", "dim").
Line = Sequence[tuple[str, str]]
# What rich drops from printed text (its strip_control_codes): BEL, BS, VT, FF, CR.
_CONTROL = dict.fromkeys(map(ord, "\x07\x08\x0b\x0c\r"))


@cache
def console() -> Console:
    """The console for results (stdout), made on first use."""
    from rich.console import Console  # here: see the module's docstring

    # soft_wrap: lines are never broken at the console width (piped output stays one line
    # per field; a terminal wraps long lines itself).
    return Console(soft_wrap=True)


@cache
def errors() -> Console:
    """The console for warnings and progress (stderr), made on first use."""
    from rich.console import Console  # here: see the module's docstring

    return Console(stderr=True)


def piped(stream: Any) -> bool:
    """True where ``stream`` is not a terminal and no variable makes rich treat it as one:
    there rich prints no styles, so plain text is the same output, without loading rich."""
    isatty = getattr(stream, "isatty", None)
    forced = os.environ.get("FORCE_COLOR") or os.environ.get("TTY_COMPATIBLE")
    return not forced and not (isatty and isatty())


def show(lines: Iterable[Line]) -> None:
    """Print lines of styled pieces on stdout: through rich on a terminal, else as the
    plain text rich would print (control codes dropped, tabs expanded to 8 columns)."""
    if piped(sys.stdout):
        for line in lines:
            text = "".join(piece for piece, _ in line).translate(_CONTROL)
            sys.stdout.write(text.expandtabs(8) + "\n")
        return
    from rich.text import Text  # here: see the module's docstring

    for line in lines:
        console().print(Text.assemble(*line))


def note(message: str) -> None:
    """A message on stderr (rich markup is not interpreted in it)."""
    if piped(sys.stderr):
        sys.stderr.write(message.translate(_CONTROL) + "\n")
    else:
        errors().print(message, markup=False)


def plural(n: int, noun: str, many: str | None = None) -> str:
    """``n`` and the noun, singular for one: "1 document", "2 documents", "0 queries"."""
    return f"{n:,} {noun if n == 1 else many or noun + 's'}"


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
    # here: see the module's docstring
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
    )

    columns: list[ProgressColumn] = [TextColumn(f"[bold]{label}"), BarColumn()]
    if count:
        columns.append(MofNCompleteColumn())
    columns.append(TimeElapsedColumn())
    with Progress(*columns, console=errors(), transient=True, disable=hidden) as bar:
        task = bar.add_task(label, total=total)
        yield lambda n: bar.update(task, advance=n)
