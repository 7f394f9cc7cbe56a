"""Memory commands: ``trove clear`` (a namespace, after confirmation)."""

from __future__ import annotations

import click

from .cli import cli, console, emit, json_option, open_store


@cli.command()
@click.argument("namespace")
@click.option("--yes", "-y", is_flag=True, help="Do not ask for confirmation.")
@json_option
@click.pass_context
def clear(ctx: click.Context, namespace: str, yes: bool, as_json: bool) -> None:
    """Remove every document of NAMESPACE for good (asks first; no undo)."""
    if not yes:
        click.confirm(
            f"Remove every document of namespace {namespace!r} for good?", abort=True, err=True
        )
    with open_store(ctx) as kb:
        count = kb.clear(namespace)
    if as_json:
        emit({"cleared": count, "namespace": namespace})
    else:
        console.print(f"removed {count} document(s) from {namespace}")
