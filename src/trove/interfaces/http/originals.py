"""``GET /v1/items/{id}/original``: a document's kept source bytes, streamed.

Sent as an attachment, never inline, with ``nosniff``: an HTML or SVG original served
inline from the API's origin could run script against the web page that holds the token.
"""

from __future__ import annotations

from collections.abc import Iterator

from fastapi import FastAPI
from fastapi.responses import StreamingResponse

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
