"""``trove cluster``: named groups of documents with a rolling summary and a decision log
(:class:`trove.memory.clusters.Clusters`), as HTTP's /v1/clusters and MCP's
knowledge_cluster offer them."""

from __future__ import annotations

from typing import Any

import click

from trove.interfaces.cli.output import console, emit, json_option
from trove.interfaces.cli.root import cli, open_store


@cli.group()
def cluster() -> None:
    """Named groups of documents with a rolling summary and a decision log."""


def _show(data: dict[str, Any], as_json: bool) -> None:
    if as_json:
        emit(data)
        return
    out = console()
    out.print(f"[bold]{data['name']}[/bold]  {data['id']}  ({data['namespace']})")
    if data["rolling_summary"]:
        out.print(data["rolling_summary"], markup=False)
    if data["key_entities"]:
        out.print("entities: " + ", ".join(data["key_entities"]), markup=False)
    for member in data["members"]:
        out.print(f"  member {member}")
    for entry in data["decision_log"]:
        by = f" ({entry['author']})" if entry["author"] else ""
        out.print(f"  {entry['at']}{by}: {entry['text']}", markup=False)


@cluster.command("create")
@click.argument("name")
@click.option("--namespace", default="default", show_default=True)
@click.option("--summary", default="", help="The rolling summary (searchable).")
@click.option("--entity", "key_entities", multiple=True, help="A key entity (repeatable).")
@click.option("--member", "members", multiple=True, help="A document id (repeatable).")
@json_option
@click.pass_context
def create(ctx: click.Context, name: str, as_json: bool, **options: Any) -> None:
    """Make the cluster NAME (its id is derived from the namespace and name)."""
    with open_store(ctx) as kb:
        _show(kb.clusters.create(name, **options).to_dict(), as_json)


@cluster.command("list")
@click.option("--namespace", default="default", show_default=True)
@json_option
@click.pass_context
def list_clusters(ctx: click.Context, namespace: str, as_json: bool) -> None:
    """The namespace's clusters (id, name, members)."""
    with open_store(ctx, create=False) as kb:
        found = [c.to_dict() for c in kb.clusters.list(namespace)]
    if as_json:
        emit(found)
        return
    for data in found:
        click.echo(f"{data['id']}\t{data['name']}\t{len(data['members'])} members")


@cluster.command("get")
@click.argument("cluster_id")
@json_option
@click.pass_context
def get(ctx: click.Context, cluster_id: str, as_json: bool) -> None:
    """One cluster: summary, entities, members and decision log."""
    with open_store(ctx, create=False) as kb:
        _show(kb.clusters.get(cluster_id).to_dict(), as_json)


@cluster.command("update")
@click.argument("cluster_id")
@click.option("--summary", default=None, help="Replace the rolling summary.")
@click.option("--entity", "key_entities", multiple=True, help="Replace the key entities.")
@json_option
@click.pass_context
def update(
    ctx: click.Context,
    cluster_id: str,
    summary: str | None,
    key_entities: tuple[str, ...],
    as_json: bool,
) -> None:
    """Replace a cluster's rolling summary and/or key entities."""
    if summary is None and not key_entities:
        raise click.UsageError("give --summary and/or --entity")
    entities = key_entities or None
    with open_store(ctx, create=False) as kb:
        _show(
            kb.clusters.update(cluster_id, summary=summary, key_entities=entities).to_dict(),
            as_json,
        )


@cluster.command("decide")
@click.argument("cluster_id")
@click.argument("text")
@click.option("--author", default="", help="Who decided.")
@json_option
@click.pass_context
def decide(ctx: click.Context, cluster_id: str, text: str, author: str, as_json: bool) -> None:
    """Append TEXT to a cluster's decision log (entries are never changed)."""
    with open_store(ctx, create=False) as kb:
        _show(kb.clusters.append_decision(cluster_id, text, author=author).to_dict(), as_json)


@cluster.command("add")
@click.argument("cluster_id")
@click.argument("doc_ids", nargs=-1, required=True)
@json_option
@click.pass_context
def add(ctx: click.Context, cluster_id: str, doc_ids: tuple[str, ...], as_json: bool) -> None:
    """Add documents to a cluster (an unknown id adds nothing)."""
    with open_store(ctx, create=False) as kb:
        _show(kb.clusters.add(cluster_id, doc_ids).to_dict(), as_json)


@cluster.command("remove")
@click.argument("cluster_id")
@click.argument("doc_ids", nargs=-1, required=True)
@json_option
@click.pass_context
def remove(ctx: click.Context, cluster_id: str, doc_ids: tuple[str, ...], as_json: bool) -> None:
    """Take documents out of a cluster."""
    with open_store(ctx, create=False) as kb:
        _show(kb.clusters.remove(cluster_id, doc_ids).to_dict(), as_json)


@cluster.command("delete")
@click.argument("cluster_id")
@json_option
@click.pass_context
def delete(ctx: click.Context, cluster_id: str, as_json: bool) -> None:
    """Delete a cluster (its members stay)."""
    with open_store(ctx, create=False) as kb:
        deleted = kb.clusters.delete(cluster_id)
    if as_json:
        emit({"id": cluster_id, "deleted": deleted})
    else:
        click.echo(f"deleted cluster {cluster_id}" if deleted else f"no cluster {cluster_id}")
