"""A store made keyword-only stays keyword-only until it is switched (issue 11).

``default_embedder="hash:64"`` stands in for the default model: an "auto" open of a
store without vectors would otherwise embed with it.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

import trove
from trove.errors import EmbedderMismatch, InvalidQuery
from trove.interfaces.cli import cli

HASH = "hash:64"


def test_a_store_made_keyword_only_stays_so_on_a_plain_open(durable_target: str) -> None:
    with trove.open(durable_target, embedder=None) as kb:
        kb.add("first note about apples")
    with trove.open(durable_target, default_embedder=HASH) as kb:
        assert not kb.has_embedder
        kb.add("second note about pears")
        stats = kb.stats()
        assert not kb.vectors.loaded
    assert stats.keyword_only
    assert (stats.chunks, stats.vectors, stats.chunks_without_vectors) == (2, 0, 2)


def test_creation_alone_is_recorded(tmp_path: Path) -> None:
    path = tmp_path / "kb.db"
    trove.open(path, embedder=None).close()
    with trove.open(path, default_embedder=HASH) as kb:
        kb.add("a note")
        assert kb.stats().keyword_only and kb.stats().vectors == 0


def test_semantic_search_on_a_keyword_only_store_is_an_error(durable_target: str) -> None:
    with trove.open(durable_target, embedder=None) as kb:
        kb.add("apples and pears")
    with trove.open(durable_target, default_embedder=HASH) as kb:
        assert [h.doc_id for h in kb.search("apples")]  # keyword by default
        with pytest.raises(InvalidQuery, match="keyword-only"):
            kb.search("apples", mode="semantic")


def test_an_explicit_embedder_does_not_add_vectors_to_some_documents(
    durable_target: str,
) -> None:
    with trove.open(durable_target, embedder=None) as kb:
        kb.add("apples and pears")
    with (
        trove.open(durable_target, embedder=HASH) as kb,
        pytest.raises(EmbedderMismatch, match="reembed"),
    ):
        kb.add("plums")
    with trove.open(durable_target, embedder=None) as kb:
        assert kb.stats().documents == 1


def test_reembed_switches_explicitly(durable_target: str) -> None:
    with trove.open(durable_target, embedder=None) as kb:
        kb.add("apples and pears")
        assert kb.reembed(HASH) == 1
    with trove.open(durable_target) as kb:
        assert kb.has_embedder
        kb.add("plums and cherries")
        stats = kb.stats()
        assert kb.search("plums", mode="semantic")
    assert not stats.keyword_only
    assert (stats.vectors, stats.chunks_without_vectors) == (2, 0)


def test_a_keyword_only_handle_refuses_to_write_into_a_store_with_vectors(
    durable_target: str,
) -> None:
    with trove.open(durable_target, embedder=HASH) as kb:
        doc_id = kb.add("apples and pears")
    with trove.open(durable_target, embedder=None) as kb:
        with pytest.raises(EmbedderMismatch, match="semantic search"):
            kb.add("plums")
        kb.delete(doc_id)  # what needs no vector still works
        stats = kb.stats()
    assert stats.deleted == 1 and not stats.keyword_only


def test_stats_count_vectors_in_the_namespace_asked(durable_target: str) -> None:
    with trove.open(durable_target, embedder=HASH) as kb:
        kb.add("apples", namespace="a")
        kb.add("pears", namespace="b")
        kb.add("plums", namespace="b")
        assert kb.stats("a").vectors == 1
        assert kb.stats("b").vectors == 2
        assert kb.stats().vectors == 3


def test_cli_keyword_only_store_and_semantic_mode(tmp_path: Path) -> None:
    db = str(tmp_path / "kb.db")
    runner = CliRunner()
    made = runner.invoke(cli, ["--db", db, "--embedder", "none", "add", "apples and pears"])
    assert made.exit_code == 0, made.output
    semantic = runner.invoke(cli, ["--db", db, "search", "apples", "--mode", "semantic"])
    assert semantic.exit_code == 1
    assert "keyword-only" in semantic.output
    stats = runner.invoke(cli, ["--db", db, "stats", "--json"])
    assert stats.exit_code == 0, stats.output
    assert '"keyword_only": true' in stats.output
