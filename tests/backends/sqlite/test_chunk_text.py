"""Schema 14: a chunk's text stored once (offsets into its document's text) and a
contentless word index; the migration from schema 13 and every write path after it."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

import trove
from trove.backends.sqlite.chunk_text import DERIVED_MAX_CHARS
from trove.backends.sqlite.schema import LATEST_VERSION
from trove.check import check

pytestmark = pytest.mark.sqlite_only

FIXTURE = Path(__file__).parent / "fixtures" / "schema13.db"


def _conn(kb: trove.Store) -> Any:
    return kb.backend.conn  # type: ignore[attr-defined]


def _found(kb: trove.Store, query: str) -> set[str | None]:
    return {h.source_id for h in kb.search(query, mode="keyword", limit=20)}


def _consistent(kb: trove.Store) -> None:
    report = check(kb)
    assert report.ok, report.problems


def test_a_schema_13_store_migrates_and_reads_as_before(tmp_path: Path) -> None:
    path = tmp_path / "kb.db"
    shutil.copy(FIXTURE, path)
    with trove.open(path, embedder=None) as kb:
        assert kb.stats().schema_version == LATEST_VERSION == 16
        _consistent(kb)
        assert _found(kb, "walrus floes") == {"long"}
        assert _found(kb, "otters asleep") == {"md"}
        assert _found(kb, "secret") == set()  # front matter is not indexed
        assert _found(kb, "hidden") == set()  # nor an HTML comment
        assert _found(kb, "书库") == {"cjk"}
        assert _found(kb, "azure portal") == {"mem"}  # indexed by its keyword text
        assert _found(kb, "blue door") == set()
        assert _found(kb, "puffin second") == {"edited"}
        assert _found(kb, "first") == set()
        assert _found(kb, "gulls") == set()
        conn = _conn(kb)
        own = dict(
            conn.execute(
                "SELECT d.source_id, c.text FROM chunk c JOIN document d ON d.id = c.doc_id"
            )
        )
        assert own["long"] is None and own["cjk"] is None and own["edited"] is None
        assert own["md"] is not None and "secret" not in own["md"]
        assert own["mem"] == "azure portal"
        assert not conn.execute("SELECT 1 FROM sqlite_schema WHERE name = 'chunk_fts_content'")
        # Chunk ids are never reused: the old counter (a deleted chunk's id) holds.
        kb.add("a new note about terns", source="fixture", source_id="new")
        [(new_id,)] = conn.execute("SELECT max(id) FROM chunk")
        assert new_id == 9
        hit = kb.search("otters", mode="keyword")[0]
        assert "Otters" in (hit.snippet or "")
        _consistent(kb)


def test_writes_after_the_migration_keep_the_word_index_in_step(tmp_path: Path) -> None:
    path = tmp_path / "kb.db"
    shutil.copy(FIXTURE, path)
    with trove.open(path, embedder=None) as kb:
        kb.add_many(
            [{"text": "The walrus now sleeps. " * 80, "source": "fixture", "source_id": "long"}]
        )
        md = kb.get_by_key("fixture", "md")
        assert md is not None
        kb.delete(md.id)
        kb.purge([md.id])
        kb.add("a note in a session", session="s1", scope="session")
        _consistent(kb)
        assert _found(kb, "floes") == set()
        assert _found(kb, "sleeps") == {"long"}
        assert _found(kb, "otters") == set()
        kb.clear("default")
        assert kb.stats().chunks == 0
        _consistent(kb)


def test_a_new_store_keeps_each_chunk_text_once(tmp_path: Path) -> None:
    with trove.open(tmp_path / "kb.db", embedder=None) as kb:
        kb.add_many([{"text": f"tern {i} " * 400, "source_id": str(i)} for i in range(3)])
        kb.add("x " * (DERIVED_MAX_CHARS // 2 + 10) + "albatross", source_id="big")
        kb.add("a\x00b tern", source_id="nul")
        conn = _conn(kb)
        kept = {
            str(source_id): (int(chunks), int(own))
            for source_id, chunks, own in conn.execute(
                "SELECT d.source_id, count(*), count(c.text) FROM chunk c JOIN document d "
                "ON d.id = c.doc_id GROUP BY 1"
            )
        }
        assert all(kept[str(i)][1] == 0 < kept[str(i)][0] for i in range(3))
        # A long document's chunks keep their own text: cutting it out reads it all.
        assert kept["big"][0] == kept["big"][1] > 1
        assert kept["nul"] == (1, 1)
        assert _found(kb, "albatross") == {"big"}
        assert _found(kb, "tern") == {"0", "1", "2", "nul"}
        _consistent(kb)


def test_check_finds_a_word_index_out_of_step(tmp_path: Path) -> None:
    with trove.open(tmp_path / "kb.db", embedder=None) as kb:
        kb.add_many([{"text": f"heron {i}", "source_id": str(i)} for i in range(5)])
        _conn(kb).execute("INSERT INTO chunk_fts (rowid, head, text) VALUES (999, '', 'stray')")
        assert any("chunk_fts" in p for p in check(kb).problems)
        _conn(kb).execute("DELETE FROM chunk_fts WHERE rowid = 999")
        _consistent(kb)
        _conn(kb).execute("DELETE FROM chunk_fts WHERE rowid = (SELECT min(id) FROM chunk)")
        assert any("chunk_fts" in p for p in check(kb).problems)
