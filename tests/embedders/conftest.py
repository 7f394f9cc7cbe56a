"""Embedder fixtures: the real models, loaded once per test session."""

from __future__ import annotations

import pytest

from trove.embedders.default import MiniLMEmbedder


@pytest.fixture(scope="session")
def minilm() -> MiniLMEmbedder:
    embedder = MiniLMEmbedder()
    embedder.load()
    return embedder
