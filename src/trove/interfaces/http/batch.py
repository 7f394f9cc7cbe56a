"""HTTP routes beyond one item at a time: batches, restore and the server's version.

``POST /v1/items/batch`` writes many items, and links among them, in one transaction
(all or none);
``POST /v1/items/get`` reads many by id (``null`` for each one the caller cannot see,
the same answer as ``GET /v1/items/{id}``'s 404); ``POST /v1/items/{id}/restore`` undoes
a delete; ``GET /v1/version`` says what is serving.
"""

# No `from __future__ import annotations`: FastAPI reads these signatures at runtime.

from typing import Any

from fastapi import FastAPI
from pydantic import BaseModel, ConfigDict, Field

from trove import __version__
from trove.interfaces.http import models as out
from trove.interfaces.http.bodies import WriteBody
from trove.interfaces.workspaces import Workspaces

# One request's worth: a client with more sends more requests (the body limit applies too).
MAX_BATCH = 1000


class BatchLink(BaseModel):
    model_config = ConfigDict(extra="forbid")
    src: str = Field(description="An id, or #N: the Nth item of this batch (from 0).")
    dst: str = Field(description="An id, or #N: the Nth item of this batch (from 0).")
    type: str = "relates_to"
    weight: float = 1.0


class BatchWriteBody(BaseModel):
    model_config = ConfigDict(extra="forbid")
    items: list[WriteBody] = Field(
        min_length=1,
        max_length=MAX_BATCH,
        description="Items as for POST /v1/items; written in one transaction (all or none).",
    )
    links: list[BatchLink] = Field(
        default_factory=list,
        max_length=MAX_BATCH,
        description="Links among the items (or to items you can read), in the same transaction.",
    )


class BatchGetBody(BaseModel):
    model_config = ConfigDict(extra="forbid")
    ids: list[str] = Field(min_length=1, max_length=MAX_BATCH, description="Item ids.")


class IdsOut(BaseModel):
    ids: list[str]


class ItemsOut(BaseModel):
    items: list[out.ItemOut | None] = Field(
        description="In the order asked; null where an id is absent, deleted, expired or "
        "not yours."
    )


class RestoredOut(BaseModel):
    id: str
    restored: bool = Field(description="False when the item was not deleted.")


class VersionOut(BaseModel):
    version: str
    api: str


def add_batch_routes(
    app: FastAPI, workspaces: Workspaces, auth: Any, errors: dict[str, Any]
) -> None:
    read_errors, write_errors = errors["read"], errors["write"]

    @app.post("/v1/items/batch", tags=["write"], response_model=IdsOut, responses=write_errors)
    def add_many(body: BatchWriteBody, who: auth) -> dict[str, Any]:
        """Add or upsert many items at once; their ids in the order sent."""
        items = [item.model_dump(exclude_unset=True) for item in body.items]
        links = [link.model_dump() for link in body.links]
        with workspaces.write(who.rights, who.session) as ws:
            return {"ids": ws.write_many(items, links)}

    @app.post("/v1/items/get", tags=["read"], response_model=ItemsOut, responses=read_errors)
    def get_many(body: BatchGetBody, who: auth) -> dict[str, Any]:
        """Read many items by id in one request."""
        with workspaces.read(who.rights, who.session) as ws:
            docs = ws.get_many(body.ids)
        return {"items": [doc.to_dict() if doc else None for doc in docs]}

    @app.post(
        "/v1/items/{doc_id}/restore",
        tags=["write"],
        response_model=RestoredOut,
        responses=write_errors,
    )
    def restore(doc_id: str, who: auth) -> dict[str, Any]:
        """Bring back a deleted item (not one removed with `hard=true`)."""
        with workspaces.write(who.rights, who.session) as ws:
            return {"id": doc_id, "restored": ws.restore(doc_id)}

    @app.get("/v1/version", tags=["meta"], response_model=VersionOut, responses=read_errors)
    def version(who: auth) -> dict[str, Any]:
        """trove's version and the API's."""
        return {"version": __version__, "api": "v1"}
