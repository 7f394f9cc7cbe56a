"""``trove serve``: the HTTP JSON API. :func:`create_app` builds it (:mod:`.app`), one
module per group of routes beside it; request bodies in :mod:`.bodies`, the caller's
identity in :mod:`.auth`, response models in :mod:`.models`."""

from trove.interfaces.http.app import create_app, serve
from trove.interfaces.http.auth import SESSION_HEADER

__all__ = ["SESSION_HEADER", "create_app", "serve"]
