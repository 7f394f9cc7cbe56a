"""``trove migrate SRC DST``: copy a store to another place or backend."""

from __future__ import annotations

import click

from trove.errors import TroveError
from trove.interfaces.cli.output import console, emit, errors, json_option, plural, progress_bar
from trove.interfaces.cli.root import cli
from trove.opening import redact


@cli.command()
@click.argument("src")
@click.argument("dst")
@click.option("--batch-size", default=200, show_default=True, type=click.IntRange(min=1))
@json_option
def migrate(src: str, dst: str, batch_size: int, as_json: bool) -> None:
    """Copy the store at SRC into DST (a file path or a postgresql:// URL), vectors
    included; running it again after an interruption resumes."""
    from trove.tools.copy import migrate as copy_store  # here: `trove --help` stays numpy-free
    from trove.tools.copy import total_documents

    try:
        total = total_documents(src) if not as_json and errors().is_terminal else None
        with progress_bar("copying", total, hidden=total is None) as advance:
            report = copy_store(src, dst, batch_size=batch_size, progress=advance)
    except TroveError as exc:
        raise click.ClickException(str(exc)) from None
    if as_json:
        emit(report.to_dict())
        return
    console().print(
        f"{redact(src)} -> {redact(dst)}: {plural(report.copied, 'document')} copied, "
        f"{report.unchanged} already there, {plural(report.chunks, 'chunk')}, "
        f"{plural(report.vectors, 'vector')}, {plural(report.edges, 'edge')}, "
        f"{plural(report.files, 'file record')}",
        highlight=False,
    )
