"""Memory upkeep over HTTP: ``POST /v1/canonicalize`` folds near-duplicates among the
items the caller sees, ``POST /v1/clear`` removes every item of its namespace it may
delete (another session's items stay). Each calls one
:class:`~trove.workspace.Workspace` method."""

# No `from __future__ import annotations`: FastAPI reads these signatures at runtime.

from typing import Any, Literal

from fastapi import FastAPI
from pydantic import BaseModel, ConfigDict, Field

from trove.interfaces.http import models as out
from trove.interfaces.http.auth import Auth
from trove.interfaces.workspaces import Workspaces


class CanonicalizeBody(BaseModel):
    model_config = ConfigDict(extra="forbid")
    threshold: float = Field(
        0.95, gt=0, le=1, description="Least cosine of two items' vectors to be duplicates."
    )
    text_threshold: float | None = Field(
        0.5, gt=0, le=1, description="Least word overlap (Jaccard) too; null skips it."
    )
    rule: Literal["newest", "accessed", "important"] = Field(
        "newest", description="Which member of a group is canonical."
    )
    dry_run: bool = Field(False, description="Only report the groups; mark nothing.")


class GroupOut(BaseModel):
    canonical: str
    duplicates: list[str]


class GroupsOut(BaseModel):
    groups: list[GroupOut]
    dry_run: bool


class ClearedOut(BaseModel):
    removed: int = Field(description="How many items were removed for good.")


def add_upkeep_routes(app: FastAPI, workspaces: Workspaces) -> None:
    @app.post(
        "/v1/canonicalize", tags=["write"], response_model=GroupsOut, responses=out.WRITE_ERRORS
    )
    def canonicalize(body: CanonicalizeBody, who: Auth) -> dict[str, Any]:
        """Fold near-duplicates into one canonical item each (reversible, nothing
        deleted): search then shows each group as its canonical item."""
        options = body.model_dump()
        enter = workspaces.read if body.dry_run else workspaces.write
        with enter(who.rights, who.session) as ws:
            groups = ws.canonicalize(**options)
        return {"groups": [g.to_dict() for g in groups], "dry_run": body.dry_run}

    @app.post("/v1/clear", tags=["write"], response_model=ClearedOut, responses=out.WRITE_ERRORS)
    def clear(who: Auth) -> dict[str, Any]:
        """Remove for good every item of your namespace you may delete (your session's
        too, global ones only with the right); no restore."""
        with workspaces.write(who.rights, who.session) as ws:
            return {"removed": ws.clear()}
