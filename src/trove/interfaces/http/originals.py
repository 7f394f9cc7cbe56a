"""``GET /v1/items/{id}/original``: a document's kept source bytes, streamed;
``PUT`` keeps the request body as the item's original (replacing the one it had).

Sent as an attachment, never inline, with ``nosniff``: an HTML or SVG original served
inline from the API's origin could run script against the web page that holds the token.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import StreamingResponse
from starlette.concurrency import run_in_threadpool

from trove.interfaces.downloads import headers, media_type
from trove.interfaces.http import models as out
from trove.interfaces.http.auth import Auth
from trove.interfaces.workspaces import Workspaces


def add_original_route(app: FastAPI, workspaces: Workspaces) -> None:
    @app.get(
        "/v1/items/{doc_id}/original",
        tags=["read"],
        response_class=StreamingResponse,
        responses={
            200: {"content": {"application/octet-stream": {}}, "description": "The bytes."},
            **out.error_responses(400, 401, 404, 422),
        },
    )
    def original(doc_id: str, who: Auth) -> StreamingResponse:
        """The file the item was made from (kept with `--keep-originals`), as stored."""
        with workspaces.read(who.rights, who.session) as ws:
            info = ws.original_info(doc_id)  # NotFound (404) before any byte is sent

        def body() -> Iterator[bytes]:
            with workspaces.read(who.rights, who.session) as ws:  # the store stays open meanwhile
                yield from ws.original_pieces(doc_id)

        return StreamingResponse(body(), media_type=media_type(info), headers=headers(info))

    @app.put(
        "/v1/items/{doc_id}/original",
        tags=["write"],
        response_model=out.OriginalOut,
        responses=out.WRITE_ERRORS,
        openapi_extra={
            "requestBody": {
                "required": True,
                "content": {"application/octet-stream": {"schema": {"type": "string"}}},
            }
        },
    )
    async def put_original(
        doc_id: str, request: Request, who: Auth, name: str = ""
    ) -> dict[str, Any]:
        """Keep the request body as the item's original (its file `name`, the body's
        Content-Type as its media type); the server's body limit bounds it."""
        data = await request.body()
        kind = request.headers.get("content-type", "")

        def attach() -> dict[str, Any]:
            with workspaces.write(who.rights, who.session) as ws:
                return out.original_dict(ws.attach_original(doc_id, data, name, kind))

        return await run_in_threadpool(attach)
