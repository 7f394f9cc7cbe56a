"""Embedders turn text into vectors for semantic search; pick one with get_embedder.

Built in: ``default`` (all-MiniLM-L6-v2 int8 on onnxruntime, offline), ``multilingual``
(USE multilingual v3, extra ``multilingual``), ``openai:MODEL`` (any OpenAI-compatible
endpoint, extra ``openai``), ``sentence-transformers:NAME``, ``fastembed:NAME`` and
``hash[:DIMENSION]`` (deterministic, for tests). Plugins add names through the
``trove.embedders`` entry-point group.
"""

from trove.embedders.base import SCRIPTS, Embedder, scripts_of
from trove.embedders.hashing import HashEmbedder
from trove.embedders.registry import get_embedder

__all__ = ["SCRIPTS", "Embedder", "HashEmbedder", "get_embedder", "scripts_of"]
