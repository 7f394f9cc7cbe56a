"""HTTP routes for clusters (``/v1/clusters``): each calls one cluster operation."""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI
from pydantic import BaseModel, Field

from trove.interfaces import clusters as cluster_ops
from trove.interfaces.http.auth import Auth
from trove.interfaces.workspaces import Workspaces


class ClusterBody(BaseModel):
    name: str = ""
    summary: str = Field("", description="The rolling summary; it is searchable.")
    key_entities: list[str] = []
    ids: list[str] = Field([], description="Member item ids.")


class ClusterUpdate(BaseModel):
    summary: str | None = None
    key_entities: list[str] | None = None


class DecisionBody(BaseModel):
    text: str
    author: str = ""


class MembersBody(BaseModel):
    ids: list[str]


def add_cluster_routes(app: FastAPI, workspaces: Workspaces) -> None:
    @app.get("/v1/clusters", tags=["clusters"])
    def list_clusters(who: Auth) -> dict[str, Any]:
        with workspaces.read(who.rights, who.session) as ws:
            return cluster_ops.run(ws, "list")

    @app.post("/v1/clusters", tags=["clusters"])
    def create_cluster(body: ClusterBody, who: Auth) -> dict[str, Any]:
        with workspaces.write(who.rights, who.session) as ws:
            return cluster_ops.run(
                ws,
                "create",
                name=body.name,
                summary=body.summary,
                key_entities=body.key_entities,
                ids=body.ids,
            )

    @app.get("/v1/clusters/{cluster_id}", tags=["clusters"])
    def get_cluster(cluster_id: str, who: Auth) -> dict[str, Any]:
        with workspaces.read(who.rights, who.session) as ws:
            return cluster_ops.run(ws, "get", cluster_id=cluster_id)

    @app.patch("/v1/clusters/{cluster_id}", tags=["clusters"])
    def update_cluster(cluster_id: str, body: ClusterUpdate, who: Auth) -> dict[str, Any]:
        with workspaces.write(who.rights, who.session) as ws:
            return cluster_ops.run(
                ws,
                "update",
                cluster_id=cluster_id,
                summary=body.summary,
                key_entities=body.key_entities,
            )

    @app.post("/v1/clusters/{cluster_id}/decisions", tags=["clusters"])
    def decide(cluster_id: str, body: DecisionBody, who: Auth) -> dict[str, Any]:
        with workspaces.write(who.rights, who.session) as ws:
            return cluster_ops.run(
                ws, "decide", cluster_id=cluster_id, decision=body.text, author=body.author
            )

    @app.post("/v1/clusters/{cluster_id}/members", tags=["clusters"])
    def add_members(cluster_id: str, body: MembersBody, who: Auth) -> dict[str, Any]:
        with workspaces.write(who.rights, who.session) as ws:
            return cluster_ops.run(ws, "add", cluster_id=cluster_id, ids=body.ids)

    @app.delete("/v1/clusters/{cluster_id}/members", tags=["clusters"])
    def remove_members(cluster_id: str, ids: str, who: Auth) -> dict[str, Any]:
        """`ids`: comma-separated item ids."""
        with workspaces.write(who.rights, who.session) as ws:
            return cluster_ops.run(ws, "remove", cluster_id=cluster_id, ids=ids.split(","))

    @app.delete("/v1/clusters/{cluster_id}", tags=["clusters"])
    def delete_cluster(cluster_id: str, who: Auth) -> dict[str, Any]:
        with workspaces.write(who.rights, who.session) as ws:
            return cluster_ops.run(ws, "delete", cluster_id=cluster_id)
