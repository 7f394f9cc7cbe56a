"""Real servers on loopback ports: uvicorn in a thread here, ``trove mcp`` as a subprocess."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import Any

import pytest

from helpers.loopback import serving

Serve = Callable[[Any], AbstractContextManager[str]]


@pytest.fixture(scope="session")
def serve() -> Serve:
    """``with serve(app) as url:`` runs the app on a free loopback port."""
    return serving
