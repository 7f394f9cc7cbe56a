"""The search page's results: the form read from the query string, the CLI's floor, pages.

The page hides hits scoring below :data:`trove.search.calibration.FLOOR`, the floor the
CLI and MCP apply by default (read from there, so a recalibrated floor moves every
interface at once), says how many it hid, and links to the same search with ``all=1``,
which shows them. Results come in pages of ``limit`` (at most 100) up to the library's
limit on one search (:data:`trove.validate.MAX_LIMIT`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

from trove.hits import Hit
from trove.search.calibration import FLOOR
from trove.validate import MAX_LIMIT

RESULTS = 20
MAX_PAGE = 100
FILTERS = ("source", "doc_type", "tags", "author", "since", "until")
_FIELDS = ("q", "mode", *FILTERS, "limit", "all", "page")


@dataclass(frozen=True)
class Results:
    """One page of a search: its hits, and what the page says about the rest."""

    hits: list[Hit]
    first: int  # the rank of the first hit shown (1-based)
    hidden: int  # hits below the floor, not shown
    floor: float
    more: bool  # a next page exists
    previous_url: str
    next_url: str
    all_url: str


def read_form(query: Any) -> dict[str, str]:
    """The search form's fields from the query string, stripped; defaults filled in."""
    form = {name: str(query.get(name, "")).strip() for name in _FIELDS}
    form["mode"] = form["mode"] or "hybrid"
    form["limit"] = str(_number(form["limit"], RESULTS, MAX_PAGE))
    form["page"] = str(_number(form["page"], 1, MAX_LIMIT // int(form["limit"])))
    return form


def search(ws: Any, form: dict[str, str]) -> Results:
    """The page of results ``form`` asks for, from the workspace ``ws``."""
    size, page = int(form["limit"]), int(form["page"])
    start = (page - 1) * size
    # One more than the page needs: whether a next page exists.
    found = ws.search(form["q"], limit=min(MAX_LIMIT, start + size + 1), **options(form))
    floor = 0.0 if form["all"] else FLOOR
    kept = [hit for hit in found if hit.score >= floor]
    # Counted among the hits up to this page's last (the one fetched beyond is not).
    hidden = sum(hit.score < floor for hit in found[: start + size])
    return Results(
        hits=kept[start : start + size],
        first=start + 1,
        hidden=hidden,
        floor=floor,
        more=len(kept) > start + size and start + size < MAX_LIMIT,
        previous_url=url(form, page=page - 1) if page > 1 else "",
        next_url=url(form, page=page + 1),
        all_url=url(form, all="1", page=1),
    )


def options(form: dict[str, str]) -> dict[str, Any]:
    """The library's search options for the form's mode and filters."""
    found: dict[str, Any] = {"mode": form["mode"]}
    for name in ("source", "doc_type", "author"):
        if form[name]:
            found[name] = [form[name]]
    if form["tags"]:
        found["tags"] = [t.strip() for t in form["tags"].split(",") if t.strip()]
    if form["since"]:
        found["since"] = form["since"]
    if form["until"]:
        # A date means the whole day.
        until = form["until"]
        found["until"] = f"{until}T23:59:59Z" if len(until) == 10 else until
    return found


def url(form: dict[str, str], **changes: Any) -> str:
    """The page's URL for ``form`` with ``changes``; defaults left out (short links)."""
    fields = {**form, **{k: str(v) for k, v in changes.items()}}
    defaults = {"mode": "hybrid", "limit": str(RESULTS), "page": "1"}
    kept = {k: v for k, v in fields.items() if v and defaults.get(k) != v}
    return "/?" + urlencode(kept)


def _number(value: str, default: int, most: int) -> int:
    try:
        return max(1, min(most, int(value)))
    except ValueError:
        return default
