"""``trove check``: the store's integrity checks, on demand."""

from __future__ import annotations

import click

from trove.interfaces.cli.output import emit, json_option, plural
from trove.interfaces.cli.root import cli, open_store


@cli.command()
@json_option
@click.pass_context
def check(ctx: click.Context, as_json: bool) -> None:
    """Check the store: SQLite's and FTS5's integrity checks (PostgreSQL: the word
    postings against the chunks), chunks that cover each document, content hashes,
    duplicate keys, missing vectors. Exits 1 on a problem."""
    from trove.check import check as run_checks  # here: `trove --help` stays light

    with open_store(ctx) as kb:
        report = run_checks(kb)
    if as_json:
        emit({**vars(report), "ok": report.ok})
    else:
        click.echo(
            f"{plural(report.documents, 'document')}, {plural(report.chunks, 'chunk')}, "
            f"{plural(report.vectors, 'vector')}: "
            + ("ok" if report.ok else plural(len(report.problems), "problem"))
        )
        for problem in report.problems:
            click.echo(f"  {problem}")
    if not report.ok:
        ctx.exit(1)
