"""How the web page shows things: templates, Markdown, highlighted snippets, provenance.

Templates are Jinja2 with autoescaping on, so every stored string is escaped unless a
helper here builds the markup itself from escaped parts. Markdown is rendered by
markdown-it-py with raw HTML off (``<script>`` in a note shows as text) and its own
link validation (no ``javascript:`` links).
"""

from __future__ import annotations

import html
import re
from functools import cache
from pathlib import Path
from typing import Any

from trove.errors import MissingDependency
from trove.search import snippet_text

try:
    import jinja2
    from markdown_it import MarkdownIt
    from markupsafe import Markup
    from starlette.responses import Response
except ImportError as exc:  # pragma: no cover - depends on the install
    raise MissingDependency(exc.name or "jinja2", "server", "trove serve's web page") from None

ASSETS = Path(__file__).with_name("assets")
# Search snippets mark matches with «…» (see trove.search.snippets).
_MARKED = re.compile(r"«(.*?)»", re.DOTALL)
# What a page may load: its own stylesheet, nothing else, no scripts at all. A note's
# Markdown image pointing elsewhere is therefore never fetched.
CSP = (
    "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; "
    "frame-ancestors 'none'; base-uri 'none'"
)
# What the page loads besides itself (nothing else under assets/ is served).
_ASSETS = {"style.css": "text/css", "favicon.svg": "image/svg+xml"}
# 2026-11-03T09:00:00.123456Z (stored times are UTC): the day, the minute, the rest.
_TIME = re.compile(r"^(\d{4}-\d{2}-\d{2})(?:[T ](\d{2}:\d{2})([\d:.]*)Z?)?$")
PROVENANCE = ("source", "source_id", "doc_type", "author", "timestamp", "channel", "thread_id")


@cache
def environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(ASSETS),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
    )
    env.globals.update(provenance=provenance, highlight=highlight, when=when)
    return env


def render(template: str, **context: Any) -> str:
    return environment().get_template(template).render(**context)


@cache
def _markdown() -> MarkdownIt:
    md = MarkdownIt("commonmark", {"html": False, "linkify": False}).enable("table")
    md.add_render_rule("image", _image)
    return md


def _image(self: Any, tokens: Any, idx: int, options: Any, env: Any) -> str:
    """An image as text, never fetched: a note's image URL may be a tracker, and trove
    serves no images (the page's CSP would block it anyway)."""
    token = tokens[idx]
    alt = self.renderInlineAsText(token.children or [], options, env)
    src = token.attrGet("src") or ""
    return (
        f'<span class="image">[image: {html.escape(alt)}] '
        f"<code>{html.escape(str(src))}</code></span>"
    )


def markdown(text: str, doc_type: str) -> Markup:
    """Rendered Markdown; raw HTML in the text is escaped, not passed through. A Markdown
    note's front matter and comments are left out, as search leaves them out: its fields
    are shown above, and CommonMark would make the block a heading."""
    shown = snippet_text.mask(text, doc_type)
    return Markup(_markdown().render(shown))  # markdown-it escapes: html off


def highlight(snippet: str) -> Markup:
    """A snippet with its «matches» in <mark>, everything else escaped."""
    escaped = html.escape(snippet, quote=False)
    return Markup(_MARKED.sub(r"<mark>\1</mark>", escaped))  # escaped above


def when(value: Any) -> str:
    """A stored time as a person reads it: ``2026-11-03 09:00 UTC``, or ``2026-11-03``
    for a date alone (midnight). Anything else is shown as it is."""
    text = str(value or "")
    found = _TIME.match(text)
    if not found:
        return text
    day, clock, rest = found.group(1), found.group(2), found.group(3) or ""
    if clock is None or (clock == "00:00" and not rest.strip(":.0")):
        return day
    return f"{day} {clock} UTC"


def provenance(item: Any) -> str:
    """``source · author · 2026-11-03 09:00 UTC · email``: where an item came from."""
    parts = [
        str(getattr(item, "source", "") or ""),
        str(getattr(item, "author", "") or ""),
        when(getattr(item, "timestamp", "")),
        str(getattr(item, "doc_type", "") or ""),
    ]
    return " · ".join(part for part in parts if part)


def fields(doc: Any) -> list[tuple[str, str]]:
    """The document view's provenance rows (shown as text: a URL is not made a link)."""
    rows = [(name, str(getattr(doc, name))) for name in PROVENANCE if getattr(doc, name)]
    rows = [(name, when(value) if name == "timestamp" else value) for name, value in rows]
    if doc.participants:
        rows.append(("participants", ", ".join(doc.participants)))
    if doc.url:
        rows.append(("url", doc.url))
    rows += [("scope", doc.scope), ("created", when(doc.created_at))]
    if doc.updated_at:
        rows.append(("updated", when(doc.updated_at)))
    if doc.importance is not None:
        rows.append(("importance", str(doc.importance)))
    return rows


def asset(name: str) -> Response:
    """A file the page loads (its stylesheet, its icon), from inside the package."""
    if name not in _ASSETS:
        return Response("not found", 404, media_type="text/plain")
    data = (ASSETS / name).read_bytes()
    return Response(data, media_type=_ASSETS[name], headers={"Cache-Control": "max-age=3600"})
