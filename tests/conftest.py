"""Shared fixtures: real SQLite stores, in a temporary file and in memory."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

import trove

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "kb.db"


@pytest.fixture(params=["file", "memory"])
def kb(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[trove.Store]:
    """A keyword-only store; every test using it runs on a file and in memory."""
    target = ":memory:" if request.param == "memory" else tmp_path / "kb.db"
    with trove.open(target, embedder=None) as store:
        yield store
