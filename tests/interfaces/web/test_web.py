"""The web page at ``/``, over real HTTP against uvicorn on a loopback port."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from typing import Any

import httpx
import pytest

pytest.importorskip("fastapi", reason="needs the server extra")

import trove
from helpers import web
from helpers.web import form_token, sign_in
from trove.interfaces.config import ServerConfig
from trove.interfaces.http import create_app

ANA = "ana-web-token-0123456789"
BO = "bo-web-token-0123456789"
READER = "reader-web-token-0123456789"
Serve = Callable[[Any], AbstractContextManager[str]]
CONFIG = {
    "namespace": "ana",
    "tokens": [
        {"name": "ana", "token": ANA},
        {"name": "bo", "token": BO, "namespace": "bo"},
        {"name": "reader", "token": READER, "allow_write": False, "allow_delete": False},
    ],
}
NOTE = """# Deploy runbook

Deploys go out on **tuesdays**. <script>alert('x')</script>

![tracker](http://example.com/pixel.png)
"""


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[trove.Store]:
    with trove.open(tmp_path_factory.mktemp("web") / "kb.db", embedder="hash:64") as kb:
        ana = kb.workspace("ana")
        runbook = ana.add(
            NOTE, title="Deploy runbook", source="wiki", author="ana", tags=["ops", "deploy"]
        )
        ana.add("the tuesday deploy was moved to wednesday", title="Deploy moved", source="chat")
        related = ana.add("rollback steps for a failed deploy", title="Rollback", source="wiki")
        ana.link(runbook, related, "relates_to")
        kb.workspace("bo").add("bo's private tuesday note", title="Bo note")
        yield kb


@pytest.fixture(scope="module")
def url(store: trove.Store, serve: Serve) -> Iterator[str]:
    with serve(create_app(store, ServerConfig.from_dict(CONFIG))) as base:
        yield base


@contextmanager
def signed_in(url: str, token: str = ANA) -> Iterator[httpx.Client]:
    with web.signed_in(url, token) as client:
        yield client


@pytest.fixture
def ana(url: str) -> Iterator[httpx.Client]:
    with signed_in(url) as client:
        yield client


def doc_id(store: trove.Store, title: str) -> str:
    page = store.list("ana", limit=100)
    return next(doc.id for doc in page.items if doc.title == title)


def test_the_page_asks_for_a_token_once_and_keeps_it_in_an_httponly_cookie(url: str) -> None:
    with httpx.Client(base_url=url) as anonymous:
        first = anonymous.get("/")
        assert first.status_code == 303 and first.headers["location"] == "/login"
        form = anonymous.get("/login")
        assert 'type="password"' in form.text and 'method="post"' in form.text
        assert sign_in(anonymous, "wrong").status_code == 401
        signed = sign_in(anonymous, ANA)
    cookie = signed.headers["set-cookie"].lower()
    assert "httponly" in cookie and "samesite=strict" in cookie and "path=/" in cookie
    assert ANA not in signed.headers["location"]  # never in a URL
    with signed_in(url) as ana:
        page = ana.get("/")
        assert page.status_code == 200 and "Most recent" in page.text
        assert ANA not in page.text
        out = {"form_token": form_token(page.text, "/logout")}
        assert ana.post("/logout", data=out).headers["location"] == "/login"


def test_search_shows_count_title_provenance_score_and_highlight(ana: httpx.Client) -> None:
    # all=1: the floor off (the test embedder's scores are not what the floor is set for)
    page = ana.get("/", params={"q": "tuesdays", "mode": "keyword", "all": "1"})
    assert page.status_code == 200
    count = re.search(r"(\d+) results? for", page.text)
    assert count and int(count.group(1)) == page.text.count('class="title"') >= 1
    assert "Deploy runbook" in page.text and "wiki · ana" in page.text
    assert "<mark>tuesdays</mark>" in page.text
    assert re.search(r'class="score"[^>]*>0\.\d\d<', page.text)
    # Filters narrow: chat has no runbook.
    chat = ana.get("/", params={"q": "deploy", "mode": "keyword", "source": "chat"})
    assert "Deploy moved" in chat.text and "Deploy runbook" not in chat.text
    tagged = ana.get("/", params={"q": "deploy", "mode": "keyword", "tags": "ops"})
    assert "Deploy runbook" in tagged.text and "Deploy moved" not in tagged.text
    old = ana.get("/", params={"q": "deploy", "mode": "keyword", "until": "2000-01-01"})
    assert "0 results" in old.text


def test_each_token_sees_only_its_namespace(url: str, store: trove.Store) -> None:
    with signed_in(url, BO) as bo:
        assert "Deploy runbook" not in bo.get("/", params={"q": "tuesday"}).text
        assert "Bo note" in bo.get("/").text
        missing = bo.get(f"/doc/{doc_id(store, 'Deploy runbook')}")
        assert missing.status_code == 404 and "not_found" in missing.text


def test_document_view_renders_markdown_safely_with_the_exact_text_and_links(
    ana: httpx.Client, store: trove.Store
) -> None:
    page = ana.get(f"/doc/{doc_id(store, 'Deploy runbook')}")
    assert page.status_code == 200
    assert "<h1>Deploy runbook</h1>" in page.text and "<strong>tuesdays</strong>" in page.text
    assert "<script>" not in page.text and "&lt;script&gt;" in page.text
    assert "<img" not in page.text and "[image: tracker]" in page.text  # never fetched
    assert "# Deploy runbook\n\nDeploys go out on **tuesdays**." in page.text  # exact text
    assert 'href="/browse?tag=ops"' in page.text and "wiki" in page.text
    assert 'to <a href="/doc/' in page.text and ">Rollback</a>" in page.text
    policy = page.headers["content-security-policy"]
    assert "img-src 'self'" in policy and "default-src 'none'" in policy  # no tracker pixel
    back = ana.get(f"/doc/{doc_id(store, 'Rollback')}")
    assert 'from <a href="/doc/' in back.text and ">Deploy runbook</a>" in back.text


def test_a_deleted_document_is_shown_with_restore(url: str, store: trove.Store) -> None:
    doomed = store.workspace("ana").add("short-lived note", title="Doomed")
    store.delete(doomed)
    with signed_in(url, READER) as reader:
        shown = reader.get(f"/doc/{doomed}")
        assert "was deleted" in shown.text and "Restore" not in shown.text
        # The reader has no restore form; its own logout token does not restore either.
        forged = {"form_token": form_token(shown.text, "/logout")}
        assert reader.post(f"/doc/{doomed}/restore", data=forged).status_code == 403
    with signed_in(url) as ana:
        listed = ana.get("/browse", params={"deleted": "1"}).text
        assert "Doomed" in listed and 'class="badge">deleted' in listed
        view = ana.get(f"/doc/{doomed}").text
        assert "Restore</button>" in view
        token = form_token(view, f"/doc/{doomed}/restore")
        restored = ana.post(f"/doc/{doomed}/restore", data={"form_token": token})
        assert restored.status_code == 303
    assert store.get(doomed) is not None


def test_browse_by_source_tag_recent_and_stats(ana: httpx.Client) -> None:
    index = ana.get("/browse").text
    assert 'href="/browse?source=wiki"' in index and 'href="/browse?tag=deploy"' in index
    wiki = ana.get("/browse", params={"source": "wiki"}).text
    assert "Deploy runbook" in wiki and "Rollback" in wiki and "Deploy moved" not in wiki
    tag = ana.get("/browse", params={"tag": "ops"}).text
    assert "Deploy runbook" in tag and "Rollback" not in tag
    assert "Deploy moved" in ana.get("/browse", params={"recent": "1"}).text
    assert 'href="/browse?deleted=1"' in index
    stats = ana.get("/stats").text
    assert "documents" in stats and "Bo note" not in stats


def test_a_bad_filter_is_an_error_page_not_a_crash(ana: httpx.Client) -> None:
    page = ana.get("/", params={"q": "deploy", "since": "not a date"})
    assert page.status_code == 400 and "invalid_query" in page.text
    assert "<form" in page.text or "Browse" in page.text  # still a page, with the nav


def test_host_and_origin_checks_apply_to_the_page(url: str) -> None:
    with httpx.Client(base_url=url) as client:
        assert client.get("/login", headers={"Host": "evil.example"}).status_code == 421
        forged = client.post(
            "/login", data={"token": ANA}, headers={"Origin": "http://evil.example"}
        )
        assert forged.status_code == 403


def test_assets_ship_in_the_package(ana: httpx.Client) -> None:
    css = ana.get("/static/style.css")
    assert css.status_code == 200 and css.headers["content-type"].startswith("text/css")
    page = ana.get("/").text
    assert "http://" not in page and "https://" not in page  # nothing from elsewhere
    assert "<script" not in page


def test_a_kept_original_is_offered_for_download(store: trove.Store, ana: httpx.Client) -> None:
    kept = store.add(
        "minutes of the march meeting",
        namespace="ana",
        title="Minutes",
        original=b"%PDF-1.4 minutes",
        original_name="minutes.pdf",
        media_type="application/pdf",
    )
    page = ana.get(f"/doc/{kept}")
    assert f'href="/doc/{kept}/original"' in page.text and "minutes.pdf" in page.text
    got = ana.get(f"/doc/{kept}/original")
    assert got.status_code == 200 and got.content == b"%PDF-1.4 minutes"
    assert got.headers["content-type"] == "application/pdf"
    assert 'filename="minutes.pdf"' in got.headers["content-disposition"]
    plain = doc_id(store, "Rollback")
    assert "/original" not in ana.get(f"/doc/{plain}").text
    assert ana.get(f"/doc/{plain}/original").status_code == 404
    with signed_in(ana.base_url.__str__().rstrip("/"), BO) as bo:  # another namespace
        assert bo.get(f"/doc/{kept}/original").status_code == 404
