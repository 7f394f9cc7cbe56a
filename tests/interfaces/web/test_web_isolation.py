"""Randomized isolation of the web page: no signed-in person sees, downloads or restores
an item the rules keep from their token.

Items are written into namespaces x scopes x sessions (some with an original, some
deleted), linked at random; then each token (namespace x session) signs in through the
login form and reads at random through every page that shows items: search (every mode,
the floor off, pages of 100), the document view and its links, the original's download,
browse (recent, deleted, by source, by tag) and stats; and posts the restore form (with
a valid token for that form) for items it must not touch. The rule is the library's
(README, "Agent memory"): namespace N with session S sees global items and N's items
that are not session-scoped or belong to S; without a session, no session-scoped item.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

pytest.importorskip("fastapi", reason="needs the server extra")

import trove
from helpers.isolation import allowed, server_config, token
from helpers.web import signed_in
from trove.interfaces.http import create_app
from trove.interfaces.web import routes
from trove.interfaces.web.forms import FormTokens

Serve = Callable[[Any], AbstractContextManager[str]]
NAMESPACES = ("north", "south")
SESSIONS = ("s1", "s2")
READER_SESSIONS = (None, "s1", "s3")
WORDS = ["apple", "river", "stone", "cloud", "maple", "ember", "harbor", "violet"]
MODES = ("keyword", "semantic", "hybrid")
READS = 10  # per token (x 6 tokens)
# The server's form tokens, under a secret the test knows (see the test's monkeypatch).
FORMS = FormTokens(b"test-secret-" * 3)
_DOC_LINK = re.compile(r'href="/doc/([0-9A-Za-z_-]+)"')


@dataclass(frozen=True)
class Item:
    id: str
    namespace: str
    scope: str
    session: str | None
    source: str
    tag: str
    deleted: bool


def populate(kb: trove.Store, rng: random.Random) -> list[Item]:
    items = []
    places = [("workspace", None), ("global", None)] + [("session", s) for s in SESSIONS]
    for namespace in NAMESPACES:
        for scope, session in places:
            for n in range(3):
                text = " ".join(rng.choices(WORDS, k=6)) + f" {namespace} {scope} {n}"
                source, tag = f"src-{namespace}-{scope}-{session}", f"t{rng.randrange(3)}"
                kept = {"original": text.encode(), "original_name": "a.txt"} if n == 1 else {}
                doc_id = kb.add(
                    text,
                    namespace=namespace,
                    scope=scope,
                    session=session,
                    source=source,
                    tags=[tag],
                    title=f"item {namespace} {scope} {session} {n}",
                    **kept,
                )
                deleted = n == 2
                if deleted:
                    kb.delete(doc_id)
                items.append(Item(doc_id, namespace, scope, session, source, tag, deleted))
    live = [item for item in items if not item.deleted]
    for _ in range(len(live) * 2):
        src, dst = rng.sample(live, 2)
        kb.link(src.id, dst.id, rng.choice(("relates_to", "supersedes")), rng.random())
    return items


def shown(page: httpx.Response) -> set[str]:
    """The ids of the items a page links to (results, lists, links)."""
    return set(_DOC_LINK.findall(page.text))


def check(web: httpx.Client, items: list[Item], namespace: str, session: str | None, seed: int):
    rng = random.Random(seed)
    by_id = {item.id: item for item in items}
    where = f"web reader {namespace}/{session} seed {seed}"

    def all_visible(ids: set[str]) -> None:
        assert ids <= set(by_id), (where, ids - set(by_id))
        hidden = {i for i in ids if not allowed(by_id[i], namespace, session)}
        assert not hidden, (where, hidden)

    for _ in range(READS):
        query = " ".join(rng.sample(WORDS, rng.randint(1, 3)))
        params = {"q": query, "mode": rng.choice(MODES), "all": "1", "limit": "100"}
        all_visible(shown(web.get("/", params=params)))
        item = rng.choice(items)
        visible = allowed(item, namespace, session)
        view = web.get(f"/doc/{item.id}")
        assert (view.status_code == 200) == visible, (where, item, view.status_code)
        all_visible(shown(view))
        original = web.get(f"/doc/{item.id}/original")
        assert original.status_code in ((200, 404) if visible else (404,)), (where, item)
        if item.deleted and not visible:
            # A valid token for that restore form (as if the page had offered one): it is
            # the workspace, not the token, that keeps the item out of reach.
            action = f"/doc/{item.id}/restore"
            data = {"form_token": FORMS.token(token(namespace, session), action)}
            assert web.post(action, data=data).status_code == 404, (where, item)
        browse = {"recent": "1"} if rng.random() < 0.5 else {"tag": item.tag}
        all_visible(shown(web.get("/browse", params=browse)))
        all_visible(shown(web.get("/browse", params={"source": item.source})))
    all_visible(shown(web.get("/browse", params={"deleted": "1"})))
    mine = [i for i in items if i.namespace == namespace and allowed(i, namespace, session)]
    stats = web.get("/stats").text
    documents = re.search(r"<th scope=\"row\">documents</th><td>(\d+)</td>", stats)
    assert documents and int(documents.group(1)) == sum(not i.deleted for i in mine), where


@pytest.fixture(params=["sqlite", "postgres"])
def target(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "postgres":
        return str(request.getfixturevalue("pg_target"))
    return str(tmp_path / "kb.db")


@pytest.mark.slow
def test_no_web_reader_sees_or_restores_what_the_rules_keep_from_it(
    target: str, serve: Serve, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(routes, "FormTokens", lambda: FORMS)
    rng = random.Random(20261204)
    with trove.open(target, embedder="hash:64") as kb:
        items = populate(kb, rng)
        with serve(create_app(kb, server_config(NAMESPACES, READER_SESSIONS))) as url:
            for namespace in NAMESPACES:
                for session in READER_SESSIONS:
                    with signed_in(url, token(namespace, session)) as web:
                        check(web, items, namespace, session, rng.randrange(1 << 30))
        assert all((kb.get(i.id) is None) == i.deleted for i in items)  # nothing restored
