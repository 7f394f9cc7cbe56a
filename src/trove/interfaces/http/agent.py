"""``POST /v1/probe``: the caller's recall on question/document pairs, and the store's
contract checks (see :mod:`trove.probe`)."""

# No `from __future__ import annotations`: FastAPI reads these signatures at runtime.

from typing import Any

from fastapi import FastAPI
from pydantic import BaseModel, Field

from trove.interfaces.workspaces import Workspaces
from trove.probe import MAX_PAIRS, probe, save_pairs


class Pair(BaseModel):
    query: str
    expected_doc: str = Field(description="A document id or source_id.")


class ProbeBody(BaseModel):
    pairs: list[Pair] | None = Field(
        None,
        max_length=MAX_PAIRS,
        description="Inline pairs (the `trove eval --pairs` format); default: the stored ones.",
    )
    save: bool = Field(
        False,
        description="Keep these pairs for later probes: your session's own (with a "
        "session), else the namespace's.",
    )


def add_probe_route(app: FastAPI, workspaces: Workspaces, auth: Any) -> None:
    @app.post("/v1/probe", tags=["read"])
    def knowledge_probe(body: ProbeBody, who: auth) -> dict[str, Any]:
        """recall@1/5/10 of the pairs through your workspace, and pass/fail contract
        checks (isolation, dedupe-key upsert, tombstone, TTL) on a scratch store."""
        pairs = None if body.pairs is None else [p.model_dump() for p in body.pairs]
        if body.save and pairs is not None:
            with workspaces.write(who.rights, who.session) as ws:
                save_pairs(ws, pairs)
        with workspaces.read(who.rights, who.session) as ws:
            return probe(ws, pairs).to_dict()
