"""``trove export``, ``trove import`` and ``trove backup``: data in and out of a store."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from trove.errors import TroveError
from trove.interfaces.cli.output import emit, errors, json_option, progress_bar
from trove.interfaces.cli.root import cli, open_store

IMPORT_FORMATS = ("auto", "trove", "chatgpt", "claude", "mcp-memory", "slack")


@cli.command(name="export")
@click.argument("target", type=click.Path(dir_okay=True, path_type=Path))
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["jsonl", "markdown"]),
    default="jsonl",
    show_default=True,
    help="jsonl: one lossless file (TARGET, or - for standard output); "
    "markdown: a vault of notes in the folder TARGET.",
)
@click.option(
    "--deleted/--no-deleted", default=True, show_default=True, help="Tombstones (jsonl)."
)
@click.option("--vectors", is_flag=True, help="Include the vectors (jsonl).")
@json_option
@click.pass_context
def export(
    ctx: click.Context, target: Path, fmt: str, deleted: bool, vectors: bool, as_json: bool
) -> None:
    """Write the whole store to TARGET: every document and field, and the edges."""
    from trove.transfer.jsonl import export_jsonl
    from trove.transfer.vault import export_markdown

    with open_store(ctx) as kb:
        try:
            if fmt == "markdown":
                report = export_markdown(kb, target).to_dict()
            elif str(target) == "-":
                report = export_jsonl(kb, sys.stdout, deleted=deleted, vectors=vectors).to_dict()
            else:
                partial = target.with_name(target.name + ".partial")
                with partial.open("w", encoding="utf-8", newline="\n") as out:
                    report = export_jsonl(kb, out, deleted=deleted, vectors=vectors).to_dict()
                partial.replace(target)
        except TroveError as exc:
            raise click.ClickException(str(exc)) from None
    if as_json:
        emit(report)
    elif str(target) != "-":
        counts = ", ".join(f"{v} {k}" for k, v in report.items() if v)
        click.echo(f"exported to {target}: {counts or 'nothing'}")


@cli.command(name="import")
@click.argument("source", type=click.Path(exists=True, path_type=Path))
@click.option(
    "--from",
    "fmt",
    type=click.Choice(IMPORT_FORMATS),
    default="auto",
    show_default=True,
    help="What SOURCE is: a trove export, ChatGPT's conversations.json, Claude's "
    "conversations.json, the MCP memory server's JSONL, or a Slack export folder.",
)
@click.option("--namespace", default="default", help="Namespace for imported conversations.")
@json_option
@click.pass_context
def import_(ctx: click.Context, source: Path, fmt: str, namespace: str, as_json: bool) -> None:
    """Read SOURCE into the store; importing it again updates in place."""
    from trove.transfer.importers import detect, run_importer
    from trove.transfer.jsonl import import_jsonl

    with open_store(ctx) as kb:
        try:
            kind = detect(source) if fmt == "auto" else fmt
            hidden = as_json or not errors().is_terminal
            with progress_bar(f"importing {kind}", None, hidden=hidden, count=False) as advance:
                if kind == "trove":
                    with source.open(encoding="utf-8") as lines:
                        report = import_jsonl(kb, lines, progress=advance).to_dict()
                else:
                    report = run_importer(kb, kind, source, namespace=namespace).to_dict()
        except TroveError as exc:
            raise click.ClickException(str(exc)) from None
    if as_json:
        emit(report)
        return
    counts = ", ".join(f"{v} {k}" for k, v in report.items() if v)
    click.echo(f"imported {source} ({kind}): {counts or 'nothing'}")


@cli.command()
@click.argument("dest", type=click.Path(path_type=Path))
@json_option
@click.pass_context
def backup(ctx: click.Context, dest: Path, as_json: bool) -> None:
    """Copy the store to DEST (a new file) while others keep writing; restore by copying
    DEST back in place of the store, or point --db at it."""
    from trove.transfer.backup import backup as copy

    try:
        pages = copy(ctx.obj["db"], dest)
    except TroveError as exc:
        raise click.ClickException(str(exc)) from None
    if as_json:
        emit({"dest": str(dest), "pages": pages})
    else:
        click.echo(f"backed up to {dest} ({pages} pages)")
