"""The link routes: ``/v1/links`` (link, unlink) and ``/v1/items/{id}/links``."""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI

from trove.interfaces.http import models as out
from trove.interfaces.http.auth import Auth
from trove.interfaces.http.bodies import LinkBody
from trove.interfaces.workspaces import Workspaces


def add_link_routes(app: FastAPI, workspaces: Workspaces) -> None:
    @app.post("/v1/links", tags=["write"], response_model=out.EdgeOut, responses=out.WRITE_ERRORS)
    def link(body: LinkBody, who: Auth) -> dict[str, Any]:
        """A typed, weighted edge between two items (linking again sets the weight)."""
        with workspaces.write(who.rights, who.session) as ws:
            edge = ws.link(**body.model_dump())
        return edge.to_dict()

    @app.delete(
        "/v1/links", tags=["write"], response_model=out.RemovedOut, responses=out.WRITE_ERRORS
    )
    def unlink(who: Auth, src: str, dst: str, type: str | None = None) -> dict[str, Any]:
        """Remove the edges from `src` to `dst` (of one type, or all)."""
        with workspaces.write(who.rights, who.session) as ws:
            return {"removed": ws.unlink(src, dst, type)}

    @app.get(
        "/v1/items/{doc_id}/links",
        tags=["read"],
        response_model=out.EdgesOut,
        responses=out.READ_ERRORS,
    )
    def neighbors(doc_id: str, who: Auth, type: str | None = None) -> dict[str, Any]:
        """Edges from or to an item whose other end you can see."""
        with workspaces.read(who.rights, who.session) as ws:
            edges = ws.neighbors(doc_id, type)
        return {"edges": [edge.to_dict() for edge in edges]}
