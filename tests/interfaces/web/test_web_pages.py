"""The search page as a person meets it: the CLI's floor with the weaker hits counted and
one click away, an empty state, errors shown on the search page with the form kept,
readable dates, pages past the first 100 results, an icon; and a Markdown note's front
matter kept out of the document view (on the shipped samples)."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

import httpx
import pytest

pytest.importorskip("fastapi", reason="needs the server extra")

import trove
from trove.interfaces.config import ServerConfig
from trove.interfaces.http import create_app
from trove.search.calibration import FLOOR

Serve = Callable[[Any], AbstractContextManager[str]]
SAMPLES = Path(__file__).resolve().parents[3] / "samples" / "notes"
MANY = 250  # more results than one page of the most the form allows (100)


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[trove.Store]:
    with trove.open(tmp_path_factory.mktemp("pages") / "kb.db", embedder="hash:64") as kb:
        kb.ingest(SAMPLES)
        kb.add_many(
            [
                # Each its own length: its own score, so one order whatever the limit.
                {"text": "pagination entry " + "more " * i, "title": f"entry {i}"}
                for i in range(MANY)
            ]
        )
        kb.add("standup at nine", title="Standup", timestamp="2026-11-03T09:00:00Z")
        yield kb


@pytest.fixture(scope="module")
def web(store: trove.Store, serve: Serve) -> Iterator[httpx.Client]:
    app = create_app(store, ServerConfig.from_dict({}))
    with serve(app) as url, httpx.Client(base_url=url, timeout=60) as client:
        yield client


def titles(page: httpx.Response) -> list[str]:
    return re.findall(r'class="title" href="[^"]+">([^<]+)</a>', page.text)


def test_weak_hits_are_hidden_counted_and_one_click_away(web: httpx.Client) -> None:
    page = web.get("/", params={"q": "zzqx flurbish", "mode": "hybrid"})
    assert page.status_code == 200 and titles(page) == []
    assert "0 results for" in page.text and "Try other words" in page.text  # empty state
    hidden = re.search(r"(\d+) weaker hits? below ([\d.]+) hidden", page.text)
    assert hidden and int(hidden.group(1)) > 0 and float(hidden.group(2)) == FLOOR
    show = re.search(r'<a href="([^"]+)">show (?:it|them)</a>', page.text)
    assert show and "all=1" in show.group(1)
    everything = web.get(show.group(1).replace("&amp;", "&"))
    assert len(titles(everything)) == int(hidden.group(1))
    scores = [float(s) for s in re.findall(r'class="score"[^>]*>([\d.]+)<', everything.text)]
    assert scores and all(s < FLOOR for s in scores)


def test_an_error_shows_on_the_search_page_with_the_form_kept(web: httpx.Client) -> None:
    bad = web.get("/", params={"q": "redis", "since": "last tuesdayish", "source": "notes"})
    assert bad.status_code == 400 and "invalid_query" in bad.text
    assert '<form method="get" action="/" role="search"' in bad.text
    assert 'value="redis"' in bad.text and 'value="notes"' in bad.text  # what was typed
    assert "Most recent" not in bad.text
    missing = web.get("/doc/nosuchid")
    assert missing.status_code == 404 and "not_found" in missing.text
    assert 'role="search"' in missing.text and "<h1>Browse" not in missing.text


def test_dates_are_readable(web: httpx.Client, store: trove.Store) -> None:
    page = web.get("/", params={"q": "standup nine", "mode": "keyword", "all": "1"})
    assert "2026-11-03 09:00 UTC" in page.text and "2026-11-03T09:00:00Z" not in page.text
    [hit] = store.search("standup nine", mode="keyword", limit=1)
    view = web.get(f"/doc/{hit.doc_id}").text
    assert "<dd>2026-11-03 09:00 UTC</dd>" in view
    assert not re.search(r"<dd>\d{4}-\d\d-\d\dT", view)  # created too


def test_results_page_past_the_first_hundred(web: httpx.Client) -> None:
    params = {"q": "pagination entry", "mode": "keyword", "all": "1", "limit": "100"}
    first = web.get("/", params=params)
    assert len(titles(first)) == 100 and 'rel="next"' in first.text
    seen = set(titles(first))
    url = re.search(r'href="([^"]+)" rel="next"', first.text)
    while url:
        page = web.get(url.group(1).replace("&amp;", "&"))
        shown = titles(page)
        assert shown and not seen & set(shown) and 'rel="prev"' in page.text
        seen |= set(shown)
        url = re.search(r'href="([^"]+)" rel="next"', page.text)
    assert sum(t.startswith("entry ") for t in seen) == MANY
    third = web.get("/", params={**params, "page": "3"})
    assert re.search(r'<ol class="results" start="201">', third.text)


def test_the_page_has_an_icon(web: httpx.Client) -> None:
    assert 'rel="icon" href="/static/favicon.svg"' in web.get("/").text
    for path in ("/static/favicon.svg", "/favicon.ico"):
        icon = web.get(path)
        assert icon.status_code == 200 and icon.headers["content-type"] == "image/svg+xml"
        assert icon.text.startswith("<svg")
    assert web.get("/static/base.html").status_code == 404  # templates are not served


def test_the_document_view_leaves_front_matter_out(web: httpx.Client, store: trove.Store) -> None:
    [doc] = [d for d in store.list(limit=500).items if d.title == "Why we dropped Redis"]
    assert doc.text.startswith("---\ntitle: Why we dropped Redis\n")
    view = web.get(f"/doc/{doc.id}").text
    rendered = view.split('<section class="rendered"', 1)[1].split("</section>", 1)[0]
    assert "title:" not in rendered and "<h2>" not in rendered.split("<h1>", 1)[0]
    assert "<h1>Why we dropped Redis</h1>" in rendered
    assert "title: Why we dropped Redis" in view  # the exact stored text still shows it
