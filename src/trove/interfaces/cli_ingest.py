"""``trove ingest``: read folders into the store, with a progress bar and a summary."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

import trove

from ..ingest.walk import iter_files
from .cli import cli, console, emit, errors, json_option, open_store


@cli.command()
@click.argument("paths", nargs=-1, required=True, type=click.Path(exists=True, path_type=Path))
@click.option("--source", help="Source name (default: the folder's name).")
@click.option("--namespace", default="default")
@click.option("--glob", "include", multiple=True, help="Only paths matching (repeatable).")
@click.option("--exclude", multiple=True, help="Skip paths matching (repeatable).")
@click.option("--sync", is_flag=True, help="Tombstone documents whose file is gone.")
@json_option
@click.pass_context
def ingest(ctx: click.Context, paths: tuple[Path, ...], as_json: bool, **options: Any) -> None:
    """Add the .md and .txt files under PATHS; unchanged files are skipped."""
    with open_store(ctx) as kb:
        reports = [_ingest_one(kb, path, options, quiet=as_json) for path in paths]
    if as_json:
        emit(reports if len(reports) > 1 else reports[0])
        return
    for report in reports:
        for problem in report["skipped"] + report["failed"]:
            errors.print(f"skipped {problem['path']}: {problem['reason']}", highlight=False)
        console.print(
            f"{report['path']}: {report['added']} added, {report['updated']} updated, "
            f"{report['unchanged']} unchanged, {report['deleted']} deleted, "
            f"{len(report['skipped'])} skipped, {len(report['failed'])} failed"
        )


def _ingest_one(
    kb: trove.Store, path: Path, options: dict[str, Any], *, quiet: bool
) -> dict[str, Any]:
    files = iter_files(path.resolve(), options["include"], options["exclude"])
    with Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TextColumn("{task.fields[current]}"),
        console=errors,
        transient=True,
        disable=quiet or not errors.is_terminal,
    ) as bar:
        task = bar.add_task(path.name or str(path), total=sum(1 for _ in files), current="")
        report = kb.ingest(
            path, progress=lambda rel: bar.update(task, advance=1, current=rel), **options
        )
    return {"path": str(path), **report.to_dict()}
