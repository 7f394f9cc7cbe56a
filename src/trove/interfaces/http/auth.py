"""Who is calling: every HTTP route takes an :data:`Auth` parameter, which checks the
bearer token, reads the session header and refuses unknown query parameters."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

from fastapi import Depends, Header, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from starlette.exceptions import HTTPException

from trove.interfaces.config import Rights, ServerConfig

SESSION_HEADER = "X-Trove-Session"


@dataclass(frozen=True)
class Caller:
    rights: Rights
    session: str | None


_bearer = HTTPBearer(auto_error=False, description="A token from the server configuration.")


def _caller(
    request: Request,
    credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)],
    session: Annotated[
        str | None,
        Header(alias=SESSION_HEADER, description="Your session, for session-scoped items."),
    ] = None,
) -> Caller:
    config: ServerConfig = request.app.state.config
    rights = config.authenticate(credentials.credentials if credentials else None)
    if rights is None:
        message = "the bearer token is not valid" if credentials else "a bearer token is required"
        raise HTTPException(401, f"{message} (Authorization: Bearer TOKEN)")
    _refuse_unknown_parameters(request)
    return Caller(rights, session or None)


# Every route takes one: authentication is never forgotten on a new route.
Auth = Annotated[Caller, Depends(_caller)]


def _refuse_unknown_parameters(request: Request) -> None:
    """A misspelt query parameter is an error, not a filter silently not applied."""
    route = request.scope.get("route")
    dependant = getattr(route, "dependant", None)
    if dependant is None:  # pragma: no cover - every route has one
        return
    known: set[str] = set()
    pending = [dependant]
    while pending:  # the route's own parameters and those of its dependencies
        current = pending.pop()
        known.update(p.alias for p in current.query_params)
        pending.extend(current.dependencies)
    unknown = sorted(set(request.query_params) - known)
    if unknown:
        listed = ", ".join(sorted(known)) or "none"
        raise HTTPException(
            400, f"unknown query parameter {', '.join(unknown)}; this route takes: {listed}"
        )
