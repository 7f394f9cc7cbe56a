"""The web page's forms that change something (sign in, sign out, restore) carry a token
tied to the form and the session cookie, and an Origin other than the server's own
scheme, host and port is refused, even another port on localhost."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest

pytest.importorskip("fastapi", reason="needs the server extra")

import trove
from helpers.web import form_token, signed_in
from trove.interfaces.config import ServerConfig
from trove.interfaces.http import create_app

Serve = Callable[[Any], AbstractContextManager[str]]
ANA = "ana-forms-token-0123456789"
BO = "bo-forms-token-0123456789"
CONFIG = {
    "namespace": "ana",
    "tokens": [{"name": "ana", "token": ANA}, {"name": "bo", "token": BO, "namespace": "ana"}],
}


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[trove.Store]:
    with trove.open(tmp_path_factory.mktemp("forms") / "kb.db", embedder=None) as kb:
        yield kb


@pytest.fixture(scope="module")
def url(store: trove.Store, serve: Serve) -> Iterator[str]:
    with serve(create_app(store, ServerConfig.from_dict(CONFIG))) as base:
        yield base


def deleted(store: trove.Store, text: str) -> str:
    doc = store.workspace("ana").add(text, title="Doomed")
    store.delete(doc)
    return doc


def test_restore_needs_the_token_of_that_form_and_that_session(
    url: str, store: trove.Store
) -> None:
    doc, other = deleted(store, "a note to bring back"), deleted(store, "another one")
    assert doc != other
    action = f"/doc/{doc}/restore"
    with signed_in(url, ANA) as ana, signed_in(url, BO) as bo:
        mine = form_token(ana.get(f"/doc/{doc}").text, action)
        elsewhere = form_token(ana.get(f"/doc/{other}").text, f"/doc/{other}/restore")
        logout = form_token(ana.get("/").text, "/logout")
        for forged in ({}, {"form_token": ""}, {"form_token": elsewhere}, {"form_token": logout}):
            refused = ana.post(action, data=forged)
            assert refused.status_code == 403 and "invalid_form" in refused.text, forged
            assert '<form method="get" action="/"' in refused.text  # the search form kept
        # Another session's page gave that token: it does not work with this cookie.
        assert bo.post(action, data={"form_token": mine}).status_code == 403
        assert store.get(doc) is None  # nothing was restored
        assert ana.post(action, data={"form_token": mine}).status_code == 303
    assert store.get(doc) is not None


def test_sign_in_and_out_need_their_form_tokens(url: str) -> None:
    with httpx.Client(base_url=url, timeout=60) as client:
        refused = client.post("/login", data={"token": ANA})
        assert refused.status_code == 403 and "set-cookie" not in refused.headers
        assert 'type="password"' in refused.text  # the form again, to send once more
    with signed_in(url, ANA) as ana:
        assert ana.post("/logout").status_code == 403
        assert ana.get("/").status_code == 200  # still signed in
        out = form_token(ana.get("/").text, "/logout")
        assert ana.post("/logout", data={"form_token": out}).headers["location"] == "/login"


def test_only_the_servers_own_origin_may_post(url: str, store: trove.Store) -> None:
    doc = deleted(store, "a note that other sites must not bring back")
    action = f"/doc/{doc}/restore"
    port = urlsplit(url).port
    with signed_in(url, ANA) as ana:
        data = {"form_token": form_token(ana.get(f"/doc/{doc}").text, action)}
        others = (
            "http://localhost:3000",
            f"http://localhost:{port + 1}",
            f"https://127.0.0.1:{port}",
            "http://127.0.0.1",
            "null",
        )
        for origin in others:
            refused = ana.post(action, data=data, headers={"Origin": origin})
            assert refused.status_code == 403, origin
            assert refused.json()["error"]["code"] == "invalid_origin", origin
        assert store.get(doc) is None
        same = ana.post(action, data=data, headers={"Origin": url})
        assert same.status_code == 303
    assert store.get(doc) is not None
    # The API follows the same rule (one Host/Origin check in front of everything).
    api = httpx.get(f"{url}/v1/stats", headers={"Origin": "http://localhost:3000"})
    assert api.status_code == 403
