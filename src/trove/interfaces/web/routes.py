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
from urllib.parse import quote, urlencode

from fastapi import FastAPI, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response, StreamingResponse
from starlette.concurrency import run_in_threadpool

from trove.errors import NotFound, TroveError
from trove.interfaces.codes import error_code
from trove.interfaces.config import Rights, ServerConfig
from trove.interfaces.downloads import headers, media_type
from trove.interfaces.web import search_page
from trove.interfaces.web.forms import FIELD, FormTokens, form_fields
from trove.interfaces.web.views import CSP, asset, fields, markdown, render
from trove.interfaces.workspaces import Workspaces
from trove.originals import OriginalInfo

COOKIE = "trove_token"
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
    context.setdefault("form_token", lambda action: "")
    return HTMLResponse(render(template, **context), status, headers=_HEADERS)


class Pages:
    """The pages; each looks up the caller from the cookie and renders one template."""

    def __init__(self, workspaces: Workspaces, config: ServerConfig) -> None:
        self.workspaces = workspaces
        self.config = config
        self.tokens = FormTokens()

    def form_token(self, request: Request) -> Callable[[str], str]:
        """``form_token(action)`` for the templates: the token of that form, for the
        session cookie this request carries."""
        session = request.cookies.get(COOKIE) or ""
        return lambda action: self.tokens.token(session, action)

    async def posted(self, request: Request) -> Response | None:
        """None when a posted form carries its token; else the page that says why not."""
        given = form_fields(await request.body()).get(FIELD, "")
        session = request.cookies.get(COOKIE) or ""
        if self.tokens.valid(given, session, request.url.path):
            return None
        message = (
            "this form is out of date or came from another page; reload the page and send it again"
        )
        if request.url.path == "/login":
            error = {"code": "invalid_form", "message": message}
            return page("login.html", 403, error=error, form_token=self.form_token(request))
        common = {"signed_in": bool(session), "form_token": self.form_token(request)}
        return error_page(403, "invalid_form", message, common, search_page.read_form({}))

    def guarded(self, view: Callable[..., Response]) -> Callable[..., Response]:
        """``view(request, who, common, *args)`` for a signed-in caller; else the form."""

        def run(request: Request, *args: Any) -> Response:
            who = self.config.authenticate(request.cookies.get(COOKIE))
            if who is None:
                return RedirectResponse("/login", 303)
            common = {
                "signed_in": bool(self.config.tokens),
                "namespace": who.namespace,
                "form_token": self.form_token(request),
            }
            try:
                return view(request, who, common, *args)
            except TroveError as exc:
                status, code = error_code(exc)
                form = search_page.read_form(request.query_params)
                return error_page(status, code, str(exc), common, form)

        return run

    def search(self, request: Request, who: Rights, common: dict[str, Any]) -> Response:
        form = search_page.read_form(request.query_params)
        with self.workspaces.read(who) as ws:
            stats = ws.stats()
            results = search_page.search(ws, form) if form["q"] else None
            recent = None if results is not None else ws.list(limit=search_page.RESULTS)
        return page(
            "search.html",
            form=form,
            filtered=any(form[k] for k in search_page.FILTERS),
            results=results,
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
                raise NotFound(f"no document with id {doc_id!r}")
            links = [] if doc.deleted_at else _links(ws, doc_id)
            original = None if doc.deleted_at else _original(ws, doc_id)
        return page(
            "doc.html",
            doc=doc,
            original=original,
            fields=fields(doc),
            rendered=markdown(doc.text, doc.doc_type),
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


def error_page(
    status: int, code: str, message: str, common: dict[str, Any], form: dict[str, str]
) -> HTMLResponse:
    """An error, shown on the search page with the search form (and what was in it)."""
    return page(
        "search.html",
        status,
        error={"code": code, "message": message},
        form=form,
        filtered=any(form[k] for k in search_page.FILTERS),
        results=None,
        items=[],
        cursor=None,
        next_url="",
        sources=[],
        doc_types=[],
        **common,
    )


def add_web_routes(app: FastAPI, workspaces: Workspaces, config: ServerConfig) -> None:
    pages = Pages(workspaces, config)
    views = (pages.search, pages.doc, pages.restore, pages.browse, pages.stats, pages.original)
    _routes(app, config, pages, *views)
    _session_routes(app, config, pages)


def _routes(app: FastAPI, config: ServerConfig, pages: Pages, *views: Any) -> None:
    search_view, doc_view, restore_view, browse_view, stats_view, original_view = (
        pages.guarded(v) for v in views
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
    async def restore(request: Request, doc_id: str) -> Response:
        refused = await pages.posted(request)
        if refused:
            return refused
        done: Response = await run_in_threadpool(restore_view, request, doc_id)
        return done

    @app.get("/static/{name}", include_in_schema=False)
    def static(name: str) -> Response:
        return asset(name)

    @app.get("/favicon.ico", include_in_schema=False)
    def favicon() -> Response:
        return asset("favicon.svg")


def _session_routes(app: FastAPI, config: ServerConfig, pages: Pages) -> None:
    """Signing in and out: forms with tokens, like every form that changes something."""

    @app.get("/login", include_in_schema=False)
    def login_form(request: Request) -> HTMLResponse:
        return page("login.html", form_token=pages.form_token(request))

    @app.post("/login", include_in_schema=False)
    async def login(request: Request) -> Response:
        refused = await pages.posted(request)
        if refused:
            return refused
        token = form_fields(await request.body()).get("token", "")
        if config.authenticate(token) is None:
            error = {"code": "unauthorized", "message": "that token is not valid"}
            return page("login.html", 401, error=error, form_token=pages.form_token(request))
        response = RedirectResponse("/", 303)
        response.set_cookie(COOKIE, token, httponly=True, samesite="strict", path="/")
        return response

    @app.post("/logout", include_in_schema=False)
    async def logout(request: Request) -> Response:
        refused = await pages.posted(request)
        if refused:
            return refused
        response = RedirectResponse("/login", 303)
        response.delete_cookie(COOKIE, path="/", httponly=True, samesite="strict")
        return response


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
