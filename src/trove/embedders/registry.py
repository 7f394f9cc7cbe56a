"""Embedders by name: ``get_embedder("default")``, ``get_embedder("openai:MODEL")`` ...

A spec is ``NAME`` or ``NAME:MODEL``. Besides the built-in names, any installed package
can add one through the ``trove.embedders`` entry-point group; the entry point names a
factory called as ``factory(model, **options)`` (``model`` is None for a bare ``NAME``)
that returns an :class:`Embedder`. Built-in names win over plugins.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from trove.embedders.base import Embedder
from trove.errors import EmbedderError

if TYPE_CHECKING:
    import importlib.metadata

ENTRY_POINT_GROUP = "trove.embedders"

Factory = Callable[..., Embedder]


def _default(model: str | None, **options: Any) -> Embedder:
    from trove.embedders.default import MiniLMEmbedder

    _no_model("default", model)
    return MiniLMEmbedder(**options)


def _multilingual(model: str | None, **options: Any) -> Embedder:
    from trove.embedders.multilingual import MultilingualEmbedder

    _no_model("multilingual", model)
    return MultilingualEmbedder(**options)


def _hash(model: str | None, **options: Any) -> Embedder:
    from trove.embedders.hashing import HashEmbedder

    if model is None:
        return HashEmbedder(**options)
    if not model.isdigit() or int(model) == 0:
        raise EmbedderError(f"'hash:{model}': the hash embedder takes a dimension, e.g. hash:64")
    return HashEmbedder(int(model), **options)


def _openai(model: str | None, **options: Any) -> Embedder:
    from trove.embedders.openai import DEFAULT_MODEL, OpenAIEmbedder

    return OpenAIEmbedder(model or DEFAULT_MODEL, **options)


def _sentence_transformers(model: str | None, **options: Any) -> Embedder:
    from trove.embedders.sentence_transformers import SentenceTransformersEmbedder

    return SentenceTransformersEmbedder(_need_model("sentence-transformers", model), **options)


def _fastembed(model: str | None, **options: Any) -> Embedder:
    from trove.embedders.fastembed import FastEmbedEmbedder

    return FastEmbedEmbedder(_need_model("fastembed", model), **options)


def _no_model(name: str, model: str | None) -> None:
    if model is not None:
        raise EmbedderError(f"'{name}:{model}': the {name} embedder has one model; use '{name}'")


def _need_model(name: str, model: str | None) -> str:
    if not model:
        raise EmbedderError(f"'{name}' needs a model name: '{name}:NAME'")
    return model


BUILTIN: dict[str, Factory] = {
    "default": _default,
    "multilingual": _multilingual,
    "hash": _hash,
    "openai": _openai,
    "sentence-transformers": _sentence_transformers,
    "fastembed": _fastembed,
    # the model ids that the store records, so that a store's embedder can be rebuilt
    "all-MiniLM-L6-v2-int8": _default,
    "use-multilingual-v3": _multilingual,
}


def plugins() -> dict[str, importlib.metadata.EntryPoint]:
    """Embedders that installed packages register, by name."""
    import importlib.metadata  # here: a slow import, paid only by who looks a plugin up

    found = importlib.metadata.entry_points(group=ENTRY_POINT_GROUP)
    return {entry.name: entry for entry in found if entry.name not in BUILTIN}


def known_names() -> list[str]:
    return sorted(BUILTIN) + sorted(plugins())


def get_embedder(spec: str | Embedder, **options: Any) -> Embedder:
    """The embedder that ``spec`` names, built with ``options``; an Embedder passes through.

    Raises EmbedderError for an unknown name or a plugin that fails, MissingDependency
    when the embedder needs an extra that is not installed.
    """
    if isinstance(spec, Embedder):
        return spec
    name, _, model = spec.partition(":")
    factory = BUILTIN.get(name)
    if factory is None:
        entry = plugins().get(name)
        if entry is None:
            raise EmbedderError(
                f"unknown embedder {spec!r}; known: {', '.join(known_names())}"
                " (a NAME takes a model as NAME:MODEL)"
            )
        factory = _load_plugin(entry)
    embedder = factory(model or None, **options)
    if not isinstance(embedder, Embedder):
        raise EmbedderError(
            f"the embedder factory for {name!r} returned {type(embedder).__name__},"
            " not an Embedder"
        )
    return embedder


def _load_plugin(entry: importlib.metadata.EntryPoint) -> Factory:
    try:
        factory = entry.load()
    except Exception as exc:  # a broken plugin must not look like a trove bug
        raise EmbedderError(
            f"the embedder plugin {entry.name!r} ({entry.value}) cannot be loaded: {exc}"
        ) from exc
    if not callable(factory):
        raise EmbedderError(f"the embedder plugin {entry.name!r} ({entry.value}) is not callable")
    return factory
