"""`trove migrate`: copying a store between backends, streaming and resumable."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

import trove
from trove import EmbedderMismatch, NotFound
from trove.interfaces.cli import cli
from trove.tools.copy import migrate

QUERIES = ["kitten on a mat", "rocket fuel", "postman", "tea leaves", "park"]


def fill(target: str | Path) -> dict[str, str]:
    with trove.open(target, embedder="hash:64") as kb:
        ids = {
            title: kb.add(text, title=title, source="s", source_id=title, tags=[title])
            for title, text in [
                ("cats", "The cat sat on the warm mat and purred at the kitten."),
                ("dogs", "A dog barked at the postman; puppies chase sticks in the park."),
                ("rockets", "The rocket engine burns liquid oxygen and kerosene fuel."),
                ("tea", "Green tea leaves are steamed, rolled and dried before brewing."),
                ("long", "\n\n".join(f"Paragraph {i} about the park." for i in range(200))),
            ]
        }
        kb.link(ids["cats"], ids["dogs"], "relates_to", 0.5)
        gone = kb.add("a deleted note", source="s", source_id="gone")
        kb.delete(gone)
        kb.add("an expired note", expires_at="2000-01-01")
        ids["gone"] = gone
    return ids


def results(target: str | Path) -> dict[str, list[tuple[str, str, int]]]:
    found = {}
    # Reads that are not counted: the copies are compared field by field afterwards.
    with trove.open(target, record_access=False) as kb:
        for mode in ("keyword", "semantic", "hybrid"):
            for query in QUERIES:
                hits = kb.search(query, mode=mode, limit=5)
                found[f"{mode}:{query}"] = [(h.doc_id, h.snippet, h.chunk.index) for h in hits]
    return found


def test_round_trip_sqlite_postgres_sqlite_keeps_search_results(
    tmp_path: Path, pg_target: str
) -> None:
    src, back = tmp_path / "src.db", tmp_path / "back.db"
    ids = fill(src)
    there = migrate(src, pg_target)
    assert there.copied == 7 and there.edges == 1 and there.vectors == there.chunks
    assert there.embedder is not None and there.embedder["model_id"] == "hash:64"
    again = migrate(pg_target, back)
    assert again.copied == 7 and again.vectors == there.vectors
    assert results(back) == results(src)
    with trove.open(pg_target) as kb:
        assert kb.search("kitten mat", mode="semantic")[0].doc_id == ids["cats"]
        assert [e.dst for e in kb.neighbors(ids["cats"])] == [ids["dogs"]]
        assert kb.get(ids["gone"]) is None and kb.stats().deleted == 1
        assert kb.stats().expired == 1 and kb.stats().vectors == kb.stats().chunks
    with trove.open(src) as a, trove.open(back) as b:
        for doc_id in ids.values():
            assert a.backend.get_document(doc_id) == b.backend.get_document(doc_id)


def test_an_interrupted_copy_resumes(tmp_path: Path, pg_target: str) -> None:
    src = tmp_path / "src.db"
    fill(src)
    calls = []

    def stop_after_first_batch(n: int) -> None:
        calls.append(n)
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        migrate(src, pg_target, batch_size=3, progress=stop_after_first_batch)
    resumed = migrate(src, pg_target, batch_size=3)
    assert resumed.unchanged == 3 and resumed.copied == 4
    with trove.open(pg_target) as kb, trove.open(src) as original:
        assert kb.stats().documents == original.stats().documents
        assert kb.stats().vectors == original.stats().vectors


def test_a_destination_with_another_embedder_is_refused(tmp_path: Path, pg_target: str) -> None:
    src = tmp_path / "src.db"
    fill(src)
    with trove.open(pg_target, embedder="hash:32") as kb:
        kb.add("made with another model")
    with pytest.raises(EmbedderMismatch, match="hash:32"):
        migrate(src, pg_target)


def test_a_missing_source_is_not_created(tmp_path: Path, pg_target: str) -> None:
    with pytest.raises(NotFound):
        migrate(tmp_path / "nope.db", pg_target)
    assert not (tmp_path / "nope.db").exists()


def test_cli_migrate_and_a_postgres_db_option(tmp_path: Path, pg_target: str) -> None:
    src = tmp_path / "src.db"
    fill(src)
    runner = CliRunner()
    result = runner.invoke(cli, ["migrate", str(src), pg_target, "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["copied"] == 7
    result = runner.invoke(cli, ["--db", pg_target, "search", "kitten", "--all", "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)[0]["title"] == "cats"
    result = runner.invoke(cli, ["migrate", str(tmp_path / "missing.db"), pg_target])
    assert result.exit_code == 1 and "does not exist" in result.output
