"""Fixtures for the ingest tests."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

import trove


@pytest.fixture
def store(tmp_path: Path) -> Iterator[trove.Store]:
    """A keyword-only SQLite store: for format tests, which do not depend on the backend."""
    with trove.open(tmp_path / "kb.db", embedder=None) as kb:
        yield kb
