"""Cluster operations for the HTTP and MCP interfaces, within one caller's workspace.

A caller sees and changes only the clusters of its own namespace (another namespace's
cluster is NotFound, as an absent one is), and members must be documents it can see.
Every cluster returned is the caller's view of it (:meth:`Workspace.shown`): members
private to another session are left out.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from trove.errors import Forbidden, InvalidInput, NotFound
from trove.workspace import Workspace

ACTIONS = ("create", "get", "list", "update", "decide", "add", "remove", "delete")


def run(
    ws: Workspace,
    action: str,
    *,
    cluster_id: str | None = None,
    name: str | None = None,
    summary: str | None = None,
    key_entities: Sequence[str] | None = None,
    decision: str | None = None,
    ids: Sequence[str] | None = None,
    author: str = "",
) -> dict[str, Any]:
    """One cluster operation; returns the cluster (or the list, or what was deleted)."""
    clusters = ws.store.clusters
    if action == "list":
        return {"clusters": [c.to_dict() for c in ws.clusters()]}
    if action == "create":
        _writable(ws)
        for doc_id in ids or ():
            _visible(ws, doc_id)
        made = clusters.create(
            name or "",
            namespace=ws.namespace,
            summary=summary or "",
            key_entities=key_entities or (),
            members=ids or (),
        )
        return ws.shown(made).to_dict()
    if action not in ACTIONS:
        raise InvalidInput(f"unknown cluster action {action!r}; use {', '.join(ACTIONS)}")
    if not cluster_id:
        raise InvalidInput("this cluster action needs a cluster id")
    cluster = ws.cluster(cluster_id)
    if action == "get":
        return cluster.to_dict()
    _writable(ws)
    if action == "update":
        updated = clusters.update(cluster.id, summary=summary, key_entities=key_entities)
        return ws.shown(updated).to_dict()
    if action == "decide":
        tier = ws.author_tier
        decided = clusters.append_decision(
            cluster.id, decision or "", author=author, author_tier=tier
        )
        return ws.shown(decided).to_dict()
    if action in ("add", "remove"):
        for doc_id in ids or ():
            _visible(ws, doc_id)
        change = clusters.add if action == "add" else clusters.remove
        return ws.shown(change(cluster.id, ids or ())).to_dict()
    if not ws.allow_delete:
        raise Forbidden("deletes are not allowed for this caller")
    return {"id": cluster.id, "deleted": clusters.delete(cluster.id)}


def _visible(ws: Workspace, doc_id: str) -> None:
    if ws.get(doc_id) is None:
        raise NotFound(f"no document with id {doc_id!r}")


def _writable(ws: Workspace) -> None:
    if not ws.allow_write:
        raise Forbidden("writes are not allowed for this caller")
