"""``trove update``, ``trove link``, ``trove unlink``, ``trove links``: thin over the library."""

from __future__ import annotations

import sys
from typing import Any

import click

from trove.interfaces.cli.output import console, emit, json_option, plural
from trove.interfaces.cli.root import cli, open_store, pairs


@cli.command()
@click.argument("doc_id")
@click.option("--text", help="The new text ('-': standard input).")
@click.option("--title")
@click.option("--tag", "tags", multiple=True, help="Replaces the tags (repeatable).")
@click.option("--meta", multiple=True, help="KEY=VALUE; replaces the metadata (repeatable).")
@click.option("--importance", type=float, help="0.0 to 1.0.")
@click.option("--expires-at", help="ISO-8601 time after which the document disappears.")
@click.option(
    "--compression-level",
    type=click.IntRange(min=0),
    help="How summarised it is: 0 as said, 1 and up once folded into a summary.",
)
@click.option(
    "--original",
    type=click.Path(exists=True, dir_okay=False),
    help="Keep this file as its original (replacing the one it had).",
)
@json_option
@click.pass_context
def update(
    ctx: click.Context,
    doc_id: str,
    meta: tuple[str, ...],
    as_json: bool,
    original: str | None,
    **fields: Any,
) -> None:
    """Change a document's text, title, tags, metadata, importance or expiry; its id stays.

    --compression-level says how summarised it is; --original keeps a file as its
    original."""
    changes = {k: v for k, v in fields.items() if v not in (None, ())}
    if changes.get("text") == "-":
        changes["text"] = sys.stdin.read()
    if meta:
        changes["metadata"] = pairs(meta, "--meta")
    if not changes and original is None:
        raise click.UsageError("give at least one field to change (--text, --title, ...)")
    with open_store(ctx, create=False) as kb:
        if changes:
            kb.update(doc_id, **changes)
        if original is not None:
            from trove import originals  # only this option needs it (cold start)

            originals.keep(kb, doc_id, original)
    changed = sorted(changes) + ([] if original is None else ["original"])
    if as_json:
        emit({"id": doc_id, "changed": changed})
    else:
        console().print(f"updated [bold]{doc_id}[/bold]")


@cli.command()
@click.argument("src")
@click.argument("dst")
@click.option("--type", "kind", default="relates_to", show_default=True)
@click.option("--weight", default=1.0, show_default=True, type=float)
@json_option
@click.pass_context
def link(ctx: click.Context, src: str, dst: str, kind: str, weight: float, as_json: bool) -> None:
    """Link SRC to DST (a typed, weighted edge; linking again sets the weight)."""
    with open_store(ctx, create=False) as kb:
        edge = kb.link(src, dst, kind, weight)
    if as_json:
        emit(edge.to_dict())
    else:
        console().print(f"linked {src} -{kind}-> {dst}", highlight=False)


@cli.command()
@click.argument("src")
@click.argument("dst")
@click.option("--type", "kind", help="Only edges of this type (default: all).")
@json_option
@click.pass_context
def unlink(ctx: click.Context, src: str, dst: str, kind: str | None, as_json: bool) -> None:
    """Remove the edges from SRC to DST."""
    with open_store(ctx, create=False) as kb:
        removed = kb.unlink(src, dst, kind)
    if as_json:
        emit({"removed": removed})
    else:
        console().print(f"removed {plural(removed, 'link')}")


@cli.command()
@click.argument("doc_id")
@click.option("--type", "kind", help="Only edges of this type.")
@json_option
@click.pass_context
def links(ctx: click.Context, doc_id: str, kind: str | None, as_json: bool) -> None:
    """The edges from or to a document (tab-separated: src, type, dst, weight)."""
    with open_store(ctx, create=False) as kb:
        edges = kb.neighbors(doc_id, kind)
    if as_json:
        emit([edge.to_dict() for edge in edges])
        return
    for edge in edges:
        click.echo(f"{edge.src}\t{edge.type}\t{edge.dst}\t{edge.weight:g}")
