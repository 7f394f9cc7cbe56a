"""``trove serve``'s web page at ``/``: search, read, browse and stats for a person.

Server-rendered HTML (works without JavaScript; the page ships no script at all), its
stylesheet inside the package, nothing from a CDN. The same rules as the API: a request
is authenticated by the server's tokens and works in that token's namespace. The token
is entered once in a form and kept in an ``HttpOnly``, ``SameSite=Strict`` cookie, never
in a URL; forms that change something are POSTs, and the API's Host/Origin check
(:class:`~trove.interfaces.http.edge.HostCheck`) stands in front of every page.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterator
from typing import Any
from urllib.parse import parse_qs, quote, urlencode

from fastapi import FastAPI, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response, StreamingResponse

from trove.errors import NotFound, TroveError
from trove.interfaces.codes import error_code
from trove.interfaces.config import Rights, ServerConfig
from trove.interfaces.downloads import headers, media_type
from trove.interfaces.web.views import CSP, fields, markdown, render, stylesheet
from trove.interfaces.workspaces import Workspaces
from trove.originals import OriginalInfo

COOKIE = "trove_token"
RESULTS = 20
PAGE = 50
# Browse by tag counts the tags of this many of the newest items (tags are not indexed
# for counting; a scan of the newest is what a person browsing wants first).
TAG_SCAN = 500
_HEADERS = {
    "Content-Security-Policy": CSP,
    "X-Content-Type-Options": "nosniff",
    # Not no-referrer: with it Chromium sends "Origin: null" on form posts, which the
    # Host/Origin check (rightly) refuses.
    "Referrer-Policy": "same-origin",
    "Cache-Control": "no-store",
}


def page(template: str, status: int = 200, **context: Any) -> HTMLResponse:
    context.setdefault("error", None)
    context.setdefault("signed_in", False)
    context.setdefault("namespace", "")
    return HTMLResponse(render(template, **context), status, headers=_HEADERS)


class Pages:
    """The pages; each looks up the caller from the cookie and renders one template."""

    def __init__(self, workspaces: Workspaces, config: ServerConfig) -> None:
        self.workspaces = workspaces
        self.config = config

    def guarded(self, view: Callable[..., Response]) -> Callable[..., Response]:
        """``view(request, who, common, *args)`` for a signed-in caller; else the form."""

        def run(request: Request, *args: Any) -> Response:
            who = self.config.authenticate(request.cookies.get(COOKIE))
            if who is None:
                return RedirectResponse("/login", 303)
            common = {"signed_in": bool(self.config.tokens), "namespace": who.namespace}
            try:
                return view(request, who, common, *args)
            except TroveError as exc:
                status, code = error_code(exc)
                return error_page(status, code, str(exc), common)

        return run

    def search(self, request: Request, who: Rights, common: dict[str, Any]) -> Response:
        form = _form(request)
        with self.workspaces.read(who) as ws:
            stats = ws.stats()
            hits = ws.search(form["q"], **_search_options(form)) if form["q"] else None
            recent = None if hits is not None else ws.list(limit=RESULTS)
        filters = ("source", "doc_type", "tags", "author", "since", "until")
        return page(
            "search.html",
            form=form,
            filtered=any(form[k] for k in filters),
            hits=hits,
            items=recent.items if recent else [],
            cursor=None,
            next_url="",
            sources=sorted(stats.by_source),
            doc_types=sorted(stats.by_doc_type),
            **common,
        )

    def doc(self, request: Request, who: Rights, common: dict[str, Any], doc_id: str) -> Response:
        with self.workspaces.read(who) as ws:
            doc = ws.get(doc_id) or ws.deleted(doc_id)
            if doc is None:
                return error_page(404, "not_found", f"no document with id {doc_id!r}", common)
            links = [] if doc.deleted_at else _links(ws, doc_id)
            original = None if doc.deleted_at else _original(ws, doc_id)
        return page(
            "doc.html",
            doc=doc,
            original=original,
            fields=fields(doc),
            rendered=markdown(doc.text),
            links=links,
            can_restore=who.allow_delete,
            **common,
        )

    def restore(
        self, request: Request, who: Rights, common: dict[str, Any], doc_id: str
    ) -> Response:
        with self.workspaces.write(who) as ws:
            ws.restore(doc_id)
        return RedirectResponse(f"/doc/{quote(doc_id, safe='')}", 303)

    def original(
        self, request: Request, who: Rights, common: dict[str, Any], doc_id: str
    ) -> Response:
        """The kept original of a document, streamed as a download."""
        with self.workspaces.read(who) as ws:
            info = ws.original_info(doc_id)  # NotFound (an error page) before any byte

        def body() -> Iterator[bytes]:
            with self.workspaces.read(who) as ws:
                yield from ws.original_pieces(doc_id)

        return StreamingResponse(body(), media_type=media_type(info), headers=headers(info))

    def browse(self, request: Request, who: Rights, common: dict[str, Any]) -> Response:
        query = request.query_params
        filters, heading = _browse_filters(query)
        with self.workspaces.read(who) as ws:
            if filters is None:
                stats = ws.stats()
                tags = Counter(t for d in ws.list(limit=TAG_SCAN).items for t in d.tags)
                return page(
                    "browse.html",
                    items=None,
                    heading="",
                    by_source=sorted(stats.by_source.items()),
                    by_tag=sorted(tags.items()),
                    tag_scan=TAG_SCAN,
                    **common,
                )
            listed = ws.list(cursor=query.get("cursor") or None, limit=PAGE, **filters)
        next_query = {k: v for k, v in query.items() if k != "cursor"}
        next_url = "/browse?" + urlencode({**next_query, "cursor": listed.cursor or ""})
        return page(
            "browse.html",
            items=listed.items,
            cursor=listed.cursor,
            next_url=next_url,
            heading=heading,
            **common,
        )

    def stats(self, request: Request, who: Rights, common: dict[str, Any]) -> Response:
        with self.workspaces.read(who) as ws:
            stats = ws.stats()
        rows = [
            ("documents", stats.documents),
            ("chunks", stats.chunks),
            ("deleted", stats.deleted),
            ("expired", stats.expired),
            ("text bytes", stats.text_bytes),
            ("vectors", stats.vectors),
            ("embedder", (stats.embedder or {}).get("model_id", "none")),
        ]
        return page("stats.html", stats=stats, rows=rows, **common)


def error_page(status: int, code: str, message: str, common: dict[str, Any]) -> HTMLResponse:
    error = {"code": code, "message": message}
    return page("browse.html", status, error=error, items=[], cursor=None, heading=code, **common)


def add_web_routes(app: FastAPI, workspaces: Workspaces, config: ServerConfig) -> None:
    pages = Pages(workspaces, config)
    views = (pages.search, pages.doc, pages.restore, pages.browse, pages.stats, pages.original)
    _routes(app, config, pages.guarded, *views)


def _routes(app: FastAPI, config: ServerConfig, guarded: Any, *views: Any) -> None:
    search_view, doc_view, restore_view, browse_view, stats_view, original_view = (
        guarded(v) for v in views
    )

    @app.get("/", include_in_schema=False)
    def search(request: Request) -> Response:
        return search_view(request)

    @app.get("/browse", include_in_schema=False)
    def browse(request: Request) -> Response:
        return browse_view(request)

    @app.get("/stats", include_in_schema=False)
    def stats(request: Request) -> Response:
        return stats_view(request)

    @app.get("/doc/{doc_id}", include_in_schema=False)
    def doc(request: Request, doc_id: str) -> Response:
        return doc_view(request, doc_id)

    @app.get("/doc/{doc_id}/original", include_in_schema=False)
    def original(request: Request, doc_id: str) -> Response:
        return original_view(request, doc_id)

    @app.post("/doc/{doc_id}/restore", include_in_schema=False)
    def restore(request: Request, doc_id: str) -> Response:
        return restore_view(request, doc_id)

    @app.get("/login", include_in_schema=False)
    def login_form() -> HTMLResponse:
        return page("login.html")

    @app.post("/login", include_in_schema=False)
    async def login(request: Request) -> Response:
        token = parse_qs((await request.body()).decode("utf-8", "replace")).get("token", [""])[0]
        if config.authenticate(token) is None:
            error = {"code": "unauthorized", "message": "that token is not valid"}
            return page("login.html", 401, error=error)
        response = RedirectResponse("/", 303)
        response.set_cookie(COOKIE, token, httponly=True, samesite="strict", path="/")
        return response

    @app.post("/logout", include_in_schema=False)
    def logout() -> Response:
        response = RedirectResponse("/login", 303)
        response.delete_cookie(COOKIE, path="/", httponly=True, samesite="strict")
        return response

    @app.get("/static/style.css", include_in_schema=False)
    def style() -> Response:
        return Response(
            stylesheet(), media_type="text/css", headers={"Cache-Control": "max-age=3600"}
        )


def _form(request: Request) -> dict[str, str]:
    query = request.query_params
    names = ("q", "mode", "source", "doc_type", "tags", "author", "since", "until")
    form = {name: query.get(name, "").strip() for name in names}
    form["mode"] = form["mode"] or "hybrid"
    form["limit"] = query.get("limit", "") or str(RESULTS)
    return form


def _search_options(form: dict[str, str]) -> dict[str, Any]:
    options: dict[str, Any] = {"mode": form["mode"], "limit": _limit(form["limit"])}
    for name in ("source", "doc_type", "author"):
        if form[name]:
            options[name] = [form[name]]
    if form["tags"]:
        options["tags"] = [t.strip() for t in form["tags"].split(",") if t.strip()]
    if form["since"]:
        options["since"] = form["since"]
    if form["until"]:
        # A date means the whole day.
        until = form["until"]
        options["until"] = f"{until}T23:59:59Z" if len(until) == 10 else until
    return options


def _limit(value: str) -> int:
    try:
        return max(1, min(100, int(value)))
    except ValueError:
        return RESULTS


def _browse_filters(query: Any) -> tuple[dict[str, Any] | None, str]:
    if query.get("source") is not None:
        return {"source": [query["source"]]}, f"source {query['source'] or '(none)'}"
    if query.get("tag"):
        return {"tags": [query["tag"]]}, f"tag {query['tag']}"
    if query.get("deleted"):
        return {"include_deleted": True}, "everything, deleted too"
    if query.get("recent"):
        return {}, "most recent"
    return None, ""


def _original(ws: Any, doc_id: str) -> OriginalInfo | None:
    try:
        info: OriginalInfo = ws.original_info(doc_id)
        return info
    except NotFound:  # no original kept for it
        return None


def _links(ws: Any, doc_id: str) -> list[dict[str, Any]]:
    links = []
    for edge in ws.neighbors(doc_id):
        outgoing = edge.src == doc_id
        other = edge.dst if outgoing else edge.src
        doc = ws.get(other)
        links.append(
            {
                "direction": "to" if outgoing else "from",
                "other": other,
                "title": doc.title if doc else "",
                "type": edge.type,
                "weight": edge.weight,
            }
        )
    return links
