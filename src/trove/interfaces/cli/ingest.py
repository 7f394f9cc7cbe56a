"""``trove ingest`` and ``trove watch``: read folders into the store and keep them in step.

rich and the watcher are imported inside the functions that use them, so that
``trove --help`` and every other command start without them (output.py)."""

from __future__ import annotations

import json
import re
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click

from trove.interfaces.cli.output import console, emit, errors, json_option, plural
from trove.interfaces.cli.root import cli, open_store

if TYPE_CHECKING:
    from trove.ingest.report import IngestProgress, IngestReport

F = TypeVar("F", bound=Callable[..., Any])
# Problems listed one by one before the rest are only counted (--json lists them all).
_SHOWN = 20
# The library's defaults (trove.ingest.files.DEFAULT_MAX_BYTES, trove.ingest.watch.
# DEFAULT_DEBOUNCE_MS) spelled out: --help does not load the ingest code for them
# (tests/coldstart/test_imports.py checks that they agree).
DEFAULT_MAX_BYTES = 100 * 1024 * 1024
DEFAULT_DEBOUNCE_MS = 300
_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([kmgt]?)i?b?\s*$", re.I)


class ByteSize(click.ParamType):
    """A size in bytes: 1048576, 512K, 100M, 2G (powers of 1024)."""

    name = "size"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> int:
        if isinstance(value, int):
            return value
        found = _SIZE.match(str(value))
        if not found:
            self.fail(f"{value!r} is not a size like 500000, 512K, 100M or 2G", param, ctx)
        unit = found.group(2).lower()
        scale = 1024 ** ("kmgt".index(unit) + 1) if unit else 1
        return int(float(found.group(1)) * scale)


def ingest_options(func: F) -> F:
    """Options shared by ``ingest`` and ``watch``: which files, and how to read them."""
    options = [
        click.option("--source", help="Source name (default: the folder's name)."),
        click.option("--namespace", default="default", show_default=True),
        click.option("--glob", "include", multiple=True, help="Only paths matching (repeatable)."),
        click.option("--exclude", multiple=True, help="Skip paths matching (repeatable)."),
        click.option(
            "--max-bytes",
            type=ByteSize(),
            default=DEFAULT_MAX_BYTES,
            help="Skip larger files (mbox/JSONL: larger messages or lines). Default 100M.",
        ),
        click.option(
            "--follow-symlinks", is_flag=True, help="Follow symlinks that leave the folder."
        ),
        click.option("--text-field", help="JSON/JSONL: the field holding the text."),
        click.option("--id-field", help="JSON/JSONL: the field holding a record's id."),
        click.option("--time-field", help="JSON/JSONL: the field holding its time."),
        click.option("--title-field", help="JSON/JSONL: the field holding its title."),
        click.option("--author-field", help="JSON/JSONL: the field holding its author."),
        click.option("--thread-field", help="JSON/JSONL: the field holding its thread id."),
        click.option(
            "--field",
            "mapped",
            multiple=True,
            help="JSON/JSONL: NAME=PATH for channel, url, tags, participants, type.",
        ),
        click.option("--records", help="JSON: the path of the list of records in the file."),
        click.option(
            "--workers",
            type=click.IntRange(min=1),
            help="Processes parsing HTML, PDF and mail (default: cores - 1; 1 = inline).",
        ),
    ]
    for option in reversed(options):
        func = option(func)
    return func


def _library_options(options: dict[str, Any]) -> dict[str, Any]:
    """Turn the CLI's flags into :func:`trove.ingest.run.ingest`'s arguments."""
    fields = {}
    for pair in options.pop("mapped"):
        name, sep, path = pair.partition("=")
        if not sep or not name or not path:
            raise click.BadParameter(f"expected NAME=PATH, got {pair!r}", param_hint="--field")
        fields[name] = path
    for name in ("text", "id", "time", "title", "author", "thread"):
        value = options.pop(f"{name}_field")
        if value:
            fields[name] = value
    options["fields"] = fields
    return {k: v for k, v in options.items() if v is not None}


@cli.command()
@click.argument("paths", nargs=-1, required=True, type=click.Path(exists=True, path_type=Path))
@ingest_options
@click.option("--sync", is_flag=True, help="Tombstone documents whose file is gone.")
@click.option("--dry-run", is_flag=True, help="Say what would change; write nothing.")
@click.option("--force", is_flag=True, help="Read every file again, even unchanged ones.")
@click.option(
    "--keep-originals",
    is_flag=True,
    help=(
        "Store each file's bytes with its document (trove get ID --original), "
        "unchanged files' too when they have none."
    ),
)
@json_option
@click.pass_context
def ingest(ctx: click.Context, paths: tuple[Path, ...], as_json: bool, **options: Any) -> None:
    """Add the files under PATHS: Markdown, text, HTML, PDF, e-mail (.eml, .mbox) and
    JSON/JSONL records. Unchanged files are skipped by content hash. Exits 1 when any
    file or record failed (after printing the summary)."""
    arguments = _library_options(options)
    reports = []
    with _interruptible(), open_store(ctx) as kb:
        for path in paths:
            with _bar(path.name or str(path), quiet=as_json) as progress:
                report = kb.ingest(path, progress=progress, **arguments)
            reports.append((path, report))
            if not as_json:
                _print_report(path, report)
    if as_json:
        data = [{"path": str(path), **report.to_dict()} for path, report in reports]
        emit(data if len(data) > 1 else data[0])
    if any(report.failed for _, report in reports):
        ctx.exit(1)


@cli.command()
@click.argument("path", type=click.Path(exists=True, file_okay=False, path_type=Path))
@ingest_options
@click.option(
    "--debounce",
    type=click.IntRange(min=10),
    default=DEFAULT_DEBOUNCE_MS,
    show_default=True,
    help="Milliseconds of quiet before a burst of changes is ingested.",
)
@json_option
@click.pass_context
def watch(ctx: click.Context, path: Path, debounce: int, as_json: bool, **options: Any) -> None:
    """Keep the store in step with PATH: ingest it, then every change (Ctrl-C stops).

    Deleted files are tombstoned and renamed files keep their documents."""
    arguments = _library_options(options)

    def report(result: IngestReport) -> None:
        if as_json:
            data = {"path": str(path), **result.to_dict()}
            click.echo(json.dumps(data, ensure_ascii=False))
        elif result.files or result.deleted or result.moved or result.skipped:
            _print_report(path, result, stamp=time.strftime("%H:%M:%S"))

    if not as_json:
        errors().print(f"watching {path} (Ctrl-C stops)", highlight=False)
    from trove.ingest.watch import watch as watch_folder  # here: see the docstring

    with _interruptible(stopping="stopped"), open_store(ctx) as kb:
        watch_folder(kb, path, debounce_ms=debounce, on_report=report, **arguments)


@contextmanager
def _interruptible(stopping: str | None = None) -> Iterator[None]:
    """Ctrl-C ends the command cleanly: the batch being written is rolled back, what was
    written stays, and running the same command again finishes the job."""
    try:
        yield
    except KeyboardInterrupt:
        if stopping:
            errors().print(stopping)
            sys.exit(0)
        errors().print("interrupted: what was stored is whole; run the same command to finish")
        sys.exit(130)


@contextmanager
def _bar(name: str, *, quiet: bool) -> Iterator[Callable[[IngestProgress], None]]:
    # here: see the docstring
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
    )

    started = time.perf_counter()
    with Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("files · {task.fields[documents]} docs · {task.fields[chunks]} chunks"),
        TextColumn("· {task.fields[rate]} files/s"),
        TimeElapsedColumn(),
        TextColumn("[dim]{task.fields[current]}"),
        console=errors(),
        transient=True,
        disable=quiet or not errors().is_terminal,
    ) as bar:
        task = bar.add_task(name, total=None, documents=0, chunks=0, rate="-", current="")

        def progress(state: IngestProgress) -> None:
            elapsed = time.perf_counter() - started
            bar.update(
                task,
                total=state.files_total,
                completed=state.files_done,
                documents=state.documents,
                chunks=state.chunks,
                rate=f"{state.files_done / elapsed:,.0f}" if elapsed > 0.5 else "-",
                current=state.current[-40:],
            )

        yield progress


def _print_report(path: Path, report: IngestReport, stamp: str = "") -> None:
    from trove.ingest.report import UNSUPPORTED  # here: see the docstring

    unsupported = report.unsupported
    problems = [("skipped", p, r) for p, r in report.skipped if r != UNSUPPORTED]
    problems += [("failed", p, r) for p, r in report.failed]
    for kind, where, reason in problems[:_SHOWN]:
        errors().print(f"{kind} {where}: {reason}", highlight=False, soft_wrap=True)
    if len(problems) > _SHOWN:
        errors().print(f"... and {len(problems) - _SHOWN:,} more (--json lists them all)")
    if unsupported:
        kinds = ", ".join(f"{suffix} {n}" for suffix, n in unsupported.most_common(6))
        errors().print(
            f"skipped {plural(sum(unsupported.values()), 'file')} of unsupported types ({kinds})",
            highlight=False,
            soft_wrap=True,
        )
    for old, new in report.moved[:_SHOWN]:
        errors().print(f"moved {old} -> {new}", highlight=False, soft_wrap=True)
    prefix = f"{stamp} " if stamp else ""
    console().print(f"{prefix}{path}: {report.summary()}", highlight=False, soft_wrap=True)
    if report.files and not stamp:
        rate = report.files / report.seconds if report.seconds else 0.0
        console().print(
            f"  {plural(report.files, 'file')}, {plural(report.chunks, 'chunk')} indexed, "
            f"{plural(report.links, 'link')}, "
            f"{report.seconds:.1f} s ({rate:,.0f} files/s)",
            style="dim",
            highlight=False,
            soft_wrap=True,
        )
