"""Form tokens: every form of the web page that changes something carries one.

A token is an HMAC, under a secret this server process drew at start, of the form's
action (its path: restoring one document is not restoring another) and the session
cookie the page was rendered for. Another site can make a signed-in browser post a form,
but cannot read the page that holds the token, so it cannot send one that matches;
a token read by a person signed in with one token does not work under another. The
Host/Origin check (:class:`~trove.interfaces.http.edge.HostCheck`) refuses other
origins first; the token is what holds where a browser sends no Origin.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets
from urllib.parse import parse_qs

FIELD = "form_token"


class FormTokens:
    """Makes and checks the tokens of one server process's forms."""

    def __init__(self, secret: bytes | None = None) -> None:
        self._secret = secret or secrets.token_bytes(32)

    def token(self, session: str, action: str) -> str:
        """The token of the form posting to ``action`` for the session ``session`` (the
        session cookie's value; empty before sign-in and on a server without tokens)."""
        message = f"{action}\x00{session}".encode()
        digest = hmac.new(self._secret, message, hashlib.sha256).digest()
        return base64.urlsafe_b64encode(digest).decode().rstrip("=")

    def valid(self, given: str, session: str, action: str) -> bool:
        return hmac.compare_digest(given.encode(), self.token(session, action).encode())


def form_fields(body: bytes) -> dict[str, str]:
    """An urlencoded form body (the pages post nothing else), one value per name."""
    fields = parse_qs(body.decode("utf-8", "replace"), keep_blank_values=True)
    return {name: values[0] for name, values in fields.items()}
