"""Signing in to the web page as a person does: the sign-in form's token, then the post."""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager

import httpx


def form_token(page: str, action: str) -> str:
    """The token of the form posting to ``action`` on ``page`` (web/forms.py)."""
    form = re.search(rf'action="{re.escape(action)}"[^>]*>\s*<input [^>]*value="([^"]+)"', page)
    assert form, f"no form to {action}"
    return form.group(1)


def sign_in(client: httpx.Client, token: str) -> httpx.Response:
    form = form_token(client.get("/login").text, "/login")
    return client.post("/login", data={"token": token, "form_token": form})


@contextmanager
def signed_in(url: str, token: str) -> Iterator[httpx.Client]:
    """A client of the page at ``url``, signed in with ``token``."""
    with httpx.Client(base_url=url, timeout=60) as client:
        response = sign_in(client, token)
        assert response.status_code == 303 and response.headers["location"] == "/"
        yield client
