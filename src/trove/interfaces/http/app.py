"""``trove serve``: the HTTP JSON API (FastAPI; the OpenAPI schema is at ``/openapi.json``).

Each route authenticates the caller, calls one :class:`~trove.workspace.Workspace` method
under the :class:`~trove.interfaces.workspaces.Workspaces`, and returns JSON. Errors are
``{"error": {"code": ..., "message": ...}}`` with a matching status.
"""

from __future__ import annotations

from typing import Any

from trove import __version__
from trove.errors import MissingDependency, TroveError
from trove.interfaces.codes import error_code
from trove.interfaces.config import ServerConfig
from trove.interfaces.workspaces import Workspaces
from trove.store import Store

try:
    from fastapi import FastAPI, Request
    from fastapi.exceptions import RequestValidationError
    from fastapi.responses import HTMLResponse, JSONResponse
    from starlette.exceptions import HTTPException
    from starlette.types import ASGIApp, Message, Receive, Scope, Send
except ImportError as exc:  # pragma: no cover - depends on the install
    raise MissingDependency(exc.name or "fastapi", "server", "trove serve") from None

from trove.interfaces.http import models as out
from trove.interfaces.http.agent import add_probe_route
from trove.interfaces.http.auth import Auth
from trove.interfaces.http.batch import add_batch_routes
from trove.interfaces.http.clusters import add_cluster_routes
from trove.interfaces.http.edge import HostCheck, docs_page
from trove.interfaces.http.events import add_event_routes
from trove.interfaces.http.items import add_read_routes, add_write_routes
from trove.interfaces.http.links import add_link_routes
from trove.interfaces.http.originals import add_original_route
from trove.interfaces.http.upkeep import add_upkeep_routes
from trove.interfaces.web.routes import add_web_routes

AUTHOR_TIER = "explicit"
_STATUS_CODES = {
    400: "invalid_request",
    401: "unauthorized",
    404: "not_found",
    405: "method_not_allowed",
    413: "payload_too_large",
}


def create_app(store: Store, config: ServerConfig) -> FastAPI:
    """The API over ``store``, as ``config`` allows. Serve it with :func:`serve`."""
    workspaces = Workspaces(
        store, author_tier=AUTHOR_TIER, max_content_tokens=config.content_limit
    )
    app = FastAPI(
        title="trove",
        version=__version__,
        description="A local-first knowledge store: search, read and write memories.",
        # Served below, behind the token like everything else, and with no CDN.
        docs_url=None,
        redoc_url=None,
        openapi_url=None,
    )
    app.state.config = config
    app.add_middleware(BodyLimit, max_bytes=config.max_body_bytes)
    app.add_middleware(HostCheck, bind_host=config.host)
    _handle_errors(app)
    _meta_routes(app)
    add_cluster_routes(app, workspaces)
    add_web_routes(app, workspaces, config)
    add_read_routes(app, workspaces)
    add_write_routes(app, workspaces)
    add_link_routes(app, workspaces)
    add_batch_routes(app, workspaces, Auth, {"read": out.READ_ERRORS, "write": out.WRITE_ERRORS})
    add_event_routes(app, store, Auth)
    add_probe_route(app, workspaces, Auth)
    add_original_route(app, workspaces)
    add_upkeep_routes(app, workspaces)

    @app.get("/v1/stats", tags=["read"], response_model=out.StatsOut, responses=out.READ_ERRORS)
    def stats(who: Auth) -> dict[str, Any]:
        """Counts and sizes of your namespace."""
        with workspaces.read(who.rights, who.session) as ws:
            return ws.stats().to_dict()

    return app


def _meta_routes(app: FastAPI) -> None:
    @app.get("/health", tags=["meta"], response_model=out.HealthOut)
    def health() -> dict[str, Any]:
        """Whether the server is up; needs no token (for load balancers and probes)."""
        return {"status": "ok", "version": __version__}

    @app.get("/openapi.json", include_in_schema=False)
    def openapi(who: Auth) -> JSONResponse:
        return JSONResponse(app.openapi())

    @app.get("/docs", include_in_schema=False)
    @app.get("/redoc", include_in_schema=False)
    def docs(who: Auth) -> HTMLResponse:
        return HTMLResponse(docs_page(app.openapi()))


def serve(store: Store, config: ServerConfig, *, log_level: str = "info") -> None:
    """Run the API with uvicorn until interrupted."""
    import uvicorn

    config.check_bind(config.host)
    uvicorn.run(create_app(store, config), host=config.host, port=config.port, log_level=log_level)


# --- errors -------------------------------------------------------------------------------


def error_response(status: int, code: str, message: str, **extra: Any) -> JSONResponse:
    headers = {"WWW-Authenticate": "Bearer"} if status == 401 else None
    body = {"error": {"code": code, "message": message, **extra}}
    return JSONResponse(body, status_code=status, headers=headers)


def _handle_errors(app: FastAPI) -> None:
    @app.exception_handler(TroveError)
    async def trove_error(request: Request, exc: TroveError) -> JSONResponse:
        return error_response(*error_code(exc), str(exc))

    @app.exception_handler(RequestValidationError)
    async def invalid_request(request: Request, exc: RequestValidationError) -> JSONResponse:
        problems = exc.errors()
        if any(p.get("type") == "json_invalid" for p in problems):
            return error_response(400, "malformed_json", "the request body is not valid JSON")
        # Locations and reasons only: echoing the rejected input could echo secrets.
        details = [{"loc": list(p.get("loc", ())), "msg": p.get("msg", "")} for p in problems]
        return error_response(
            422, "invalid_request", "the request does not match the schema", details=details
        )

    @app.exception_handler(HTTPException)
    async def http_error(request: Request, exc: HTTPException) -> JSONResponse:
        code = _STATUS_CODES.get(exc.status_code, "http_error")
        return error_response(exc.status_code, code, str(exc.detail))


# --- request size -------------------------------------------------------------------------


class BodyLimit:
    """Refuse request bodies over ``max_bytes`` with 413 before they reach a route."""

    def __init__(self, app: ASGIApp, max_bytes: int) -> None:
        self.app = app
        self.max_bytes = max_bytes

    def message(self, size: int | None) -> str:
        got = f"{size} bytes" if size is not None else f"over {self.max_bytes} bytes"
        return (
            f"request body is {got}; this server accepts at most {self.max_bytes} bytes "
            "(max_body_bytes in the server config, or --max-body-bytes)"
        )

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = _content_length(scope)
        if declared is not None and declared > self.max_bytes:
            # Refused unread: uvicorn discards the rest (curl and httpx both get the 413).
            response = error_response(413, "payload_too_large", self.message(declared))
            await response(scope, receive, send)
            return
        seen = 0

        async def limited() -> Message:
            # A chunked body has no length up front: count it as it arrives.
            nonlocal seen
            message = await receive()
            seen += len(message.get("body", b""))
            if seen > self.max_bytes:
                raise HTTPException(413, self.message(None))
            return message

        await self.app(scope, limited, send)


def _content_length(scope: Scope) -> int | None:
    for name, value in scope.get("headers", ()):
        if name == b"content-length":
            try:
                return int(value)
            except ValueError:
                return None
    return None
