"""The item routes: ``/v1/search`` and ``/v1/items`` (read, list, write, change, delete)."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import FastAPI, Query
from starlette.exceptions import HTTPException

from trove.interfaces.http import models as out
from trove.interfaces.http.auth import Auth
from trove.interfaces.http.bodies import ItemScope, SearchBody, UpdateBody, WriteBody
from trove.interfaces.workspaces import Workspaces


def add_read_routes(app: FastAPI, workspaces: Workspaces) -> None:
    # Before /v1/items/{doc_id}, which would take "by-key" for an id (ids are hex).
    add_key_route(app, workspaces)

    @app.post(
        "/v1/search",
        tags=["read"],
        response_model=out.SearchOut,
        response_model_exclude_unset=True,  # explain and linked_from only when present
        responses=out.READ_ERRORS,
    )
    def search(body: SearchBody, who: Auth) -> dict[str, Any]:
        """Best documents first; filters narrow, `expand` follows links."""
        query, options = body.arguments()
        with workspaces.read(who.rights, who.session) as ws:
            hits = ws.search(query, **options)
        return {"hits": [hit.to_dict() for hit in hits], **getattr(hits, "meta", dict)()}

    @app.get(
        "/v1/items/{doc_id}",
        tags=["read"],
        response_model=out.ItemOut,
        response_model_exclude_unset=True,  # vectors only when asked for
        responses=out.READ_ERRORS,
    )
    def get(doc_id: str, who: Auth, with_vectors: bool = False) -> dict[str, Any]:
        """One item with its full text and provenance (`with_vectors`: and its chunks'
        stored vectors)."""
        with workspaces.read(who.rights, who.session) as ws:
            doc = ws.get(doc_id)
            if doc is None:  # absent, expired, deleted or not yours: the same answer
                raise HTTPException(404, f"no document with id {doc_id!r}")
            vectors = {"vectors": ws.chunk_vectors(doc_id)} if with_vectors else {}
        return doc.to_dict() | vectors

    @app.get("/v1/items", tags=["read"], response_model=out.PageOut, responses=out.READ_ERRORS)
    def list_items(
        who: Auth,
        scope: Annotated[list[ItemScope] | None, Query()] = None,
        cursor: str | None = None,
        limit: Annotated[int, Query(ge=1, le=1000)] = 20,
        include_deleted: bool = False,
        max_compression: Annotated[int | None, Query(ge=0)] = None,
    ) -> dict[str, Any]:
        """Newest first; pass the returned `cursor` back for the next page;
        `max_compression=0` lists what is not summarised yet."""
        with workspaces.read(who.rights, who.session) as ws:
            page = ws.list(
                scope=scope,
                cursor=cursor,
                limit=limit,
                include_deleted=include_deleted,
                **({} if max_compression is None else {"max_compression": max_compression}),
            )
        return page.to_dict()


def add_write_routes(app: FastAPI, workspaces: Workspaces) -> None:
    @app.post("/v1/items", tags=["write"], response_model=out.IdOut, responses=out.WRITE_ERRORS)
    def add(body: WriteBody, who: Auth) -> dict[str, Any]:
        """Add an item, or update the one with the same `dedupe_key` (or source/source_id)."""
        with workspaces.write(who.rights, who.session) as ws:
            doc_id = ws.write(body.model_dump(exclude_unset=True))
        return {"id": doc_id}

    @app.patch(
        "/v1/items/{doc_id}", tags=["write"], response_model=out.IdOut, responses=out.WRITE_ERRORS
    )
    def update(doc_id: str, body: UpdateBody, who: Auth) -> dict[str, Any]:
        """Change text, title, tags, metadata, importance or expiry; the id stays."""
        with workspaces.write(who.rights, who.session) as ws:
            ws.update(doc_id, **body.model_dump(exclude_unset=True))
        return {"id": doc_id}

    @app.delete(
        "/v1/items/{doc_id}",
        tags=["write"],
        response_model=out.DeletedOut,
        responses=out.WRITE_ERRORS,
    )
    def delete(doc_id: str, who: Auth, hard: bool = False) -> dict[str, Any]:
        """Tombstone an item (`trove restore` brings it back), or with `hard=true` remove
        it for good. Deleting a tombstoned item again succeeds with
        `already_deleted: true`."""
        with workspaces.write(who.rights, who.session) as ws:
            now_deleted = ws.delete(doc_id, hard=hard)
        return {"id": doc_id, "deleted": True, "already_deleted": not now_deleted}


def add_key_route(app: FastAPI, workspaces: Workspaces) -> None:
    """Reading an item by the natural key it was written with, instead of its id."""

    @app.get(
        "/v1/items/by-key", tags=["read"], response_model=out.ItemOut, responses=out.READ_ERRORS
    )
    def get_by_key(
        who: Auth,
        dedupe_key: str | None = None,
        source: str | None = None,
        source_id: str | None = None,
        scope: ItemScope = "workspace",
    ) -> dict[str, Any]:
        """The item written under a key: `dedupe_key`, or `source` and `source_id`."""
        with workspaces.read(who.rights, who.session) as ws:
            doc = ws.get_by_key(source, source_id, dedupe_key=dedupe_key, scope=scope)
        if doc is None:  # absent, expired, deleted or not yours: the same answer
            raise HTTPException(404, "no document with that key")
        return doc.to_dict()
