"""Memory commands: ``trove clear`` (a namespace, after confirmation), ``trove dedupe``
and ``trove rechunk``."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

import click

from trove.interfaces.cli.output import console, emit, json_option, plural
from trove.interfaces.cli.root import cli, open_store


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
        console().print(f"removed {plural(count, 'document')} from {namespace}")


@cli.command()
@click.option("--namespace", default="default", show_default=True)
@click.option("--threshold", default=0.95, show_default=True, type=float, help="Vector cosine.")
@click.option(
    "--text-threshold", default=0.5, show_default=True, type=float, help="Word overlap (Jaccard)."
)
@click.option(
    "--rule",
    type=click.Choice(["newest", "accessed", "important"]),
    default="newest",
    show_default=True,
    help="Which member of a group is canonical.",
)
@click.option("--dry-run", is_flag=True, help="Show the groups; mark nothing.")
@click.option("--undo", is_flag=True, help="Remove the namespace's canonical marks.")
@json_option
@click.pass_context
def dedupe(ctx: click.Context, undo: bool, as_json: bool, **options: Any) -> None:
    """Fold near-duplicate documents into canonical ones (nothing is deleted; --undo)."""
    with open_store(ctx) as kb:
        if undo:
            count = kb.uncanonicalize(options["namespace"])
            emit({"unmarked": count}) if as_json else console().print(f"unmarked {count}")
            return
        groups = kb.canonicalize(**options)
    if as_json:
        emit([group.to_dict() for group in groups])
        return
    verb = "would mark" if options["dry_run"] else "marked"
    for group in groups:
        console().print(f"[bold]{group.canonical}[/bold] <- {', '.join(group.duplicates)}")
    console().print(f"{verb} {plural(len(groups), 'group')}")


@cli.command()
@click.argument("doc_ids", nargs=-1)
@click.option("--namespace", help="Only this namespace's documents (default: all, or DOC_IDS).")
@click.option("--chunk-chars", type=int, help="Characters a chunk holds at most.")
@click.option("--chunk-overlap", type=int, help="Characters shared by neighbouring chunks.")
@json_option
@click.pass_context
def rechunk(
    ctx: click.Context,
    doc_ids: tuple[str, ...],
    namespace: str | None,
    as_json: bool,
    **chunking: int | None,
) -> None:
    """Cut documents into chunks again with other chunk settings (from their stored text,
    what their originals were read as); ids and fields stay, new chunks are embedded."""
    given = {k: v for k, v in chunking.items() if v is not None}
    with open_store(ctx, create=False) as kb:
        report = kb.rechunk(doc_ids or None, namespace=namespace, **given)
    if as_json:
        emit(asdict(report))
    else:
        console().print(
            f"rechunked {plural(report.documents, 'document')} into "
            f"{plural(report.chunks, 'chunk')}; {report.skipped} left as they were"
        )
