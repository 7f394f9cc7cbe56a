"""``trove stats``: what the store holds, as aligned plain lines or JSON.

A module of its own: the one-shot command people and scripts run most to check a store
does not build the options of the other core commands or load what they import
(tests/coldstart/test_imports.py)."""

from __future__ import annotations

import click

from trove.interfaces.cli.output import emit, json_option
from trove.interfaces.cli.root import cli, open_store
from trove.opening import redact


@cli.command()
@json_option
@click.pass_context
def stats(ctx: click.Context, as_json: bool) -> None:
    """What the store holds."""
    with open_store(ctx, create=False) as kb:
        data = kb.stats().to_dict()
    data["path"] = redact(str(ctx.obj["db"]))
    if as_json:
        emit(data)
        return
    rows = [(key, str(data[key])) for key in _STATS_KEYS]
    lock = data["embedder"]
    embedder = f"{lock['model_id']} ({lock['dimension']}-d, {lock['spec']})" if lock else "none"
    rows.append(("embedder", embedder + (" (keyword-only store)" if data["keyword_only"] else "")))
    rows.append(("vectors", str(data["vectors"])))
    rows.append(("chunks without vectors", str(data["chunks_without_vectors"])))
    for key in ("by_source", "by_doc_type", "by_namespace"):
        rows.append((key, ", ".join(f"{k or '-'}: {v}" for k, v in data[key].items()) or "-"))
    # Plain aligned lines, not a rich table: a one-shot command should not pay for rich.
    width = max(len(key) for key, _ in rows)
    for key, value in rows:
        click.echo(f"{key:<{width}}  {value}")


_STATS_KEYS = (
    "path",
    "documents",
    "chunks",
    "deleted",
    "expired",
    "text_bytes",
    "file_bytes",
    "cache_bytes",
)
