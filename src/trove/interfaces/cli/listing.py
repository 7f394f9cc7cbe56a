"""``trove list``: documents newest first, filtered as search filters, a page at a time."""

from __future__ import annotations

from typing import Any

import click

from trove.interfaces.cli.output import emit, errors, format_option, json_option, tsv_line
from trove.interfaces.cli.root import cli, open_store


@cli.command("list")
@click.option("--namespace", default="default", show_default=True)
@click.option("--scope", multiple=True, type=click.Choice(["workspace", "session", "global"]))
@click.option("--source", multiple=True, help="Only these sources (repeatable).")
@click.option("--doc-type", multiple=True, help="Only these document types (repeatable).")
@click.option("--author", multiple=True, help="Only these authors (repeatable).")
@click.option("--tag", "tags", multiple=True, help="Documents with all these tags.")
@click.option("--since", help="On or after this time (ISO-8601).")
@click.option("--until", help="On or before this time (ISO-8601).")
@click.option("--deleted", is_flag=True, help="Also list deleted documents (to restore).")
@click.option(
    "--max-compression",
    type=click.IntRange(min=0),
    help="Only documents at most this summarised (0: not summarised yet).",
)
@click.option("--limit", "-n", default=20, show_default=True, type=click.IntRange(1, 1000))
@click.option("--cursor", help="The cursor printed by the previous page.")
@format_option
@json_option
@click.pass_context
def list_command(
    ctx: click.Context,
    namespace: str,
    scope: tuple[str, ...],
    deleted: bool,
    limit: int,
    cursor: str | None,
    as_json: bool,
    output: str,
    **filters: Any,
) -> None:
    """Documents newest first, a page at a time (ID, title, source, state).

    --format tsv prints: id, title, source, source_id, doc_type, timestamp, state."""
    chosen = {k: v for k, v in filters.items() if v not in ((), None)}
    with open_store(ctx, create=False) as kb:
        page = kb.list(
            namespace,
            scope=scope or None,
            cursor=cursor,
            limit=limit,
            include_deleted=deleted,
            **chosen,
        )
    if as_json or output == "json":
        emit(page.to_dict())
        return
    for doc in page.items:
        state = "deleted" if doc.deleted else "expired" if doc.expired else ""
        if output == "tsv":
            cells = (doc.title, doc.source, doc.source_id, doc.doc_type, doc.timestamp, state)
            tsv_line(doc.id, *cells)
            continue
        where = ":".join(p for p in (doc.source, doc.source_id or "") if p)
        tsv_line(doc.id, doc.title or "(untitled)", where, state)
    if page.cursor:
        errors().print(f"more: --cursor {page.cursor}", highlight=False)
