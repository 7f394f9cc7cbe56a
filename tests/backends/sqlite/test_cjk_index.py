"""The SQLite CJK bigram index: only chunks with CJK text write to it, it follows their
updates and deletes, and a store from before it (schema 3, trigrams) migrates to it."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import apsw
import pytest

import trove
from trove.backends.sqlite.schema import APPLICATION_ID, LATEST_VERSION, MIGRATIONS
from trove.backends.sqlite.word_index import fts as keyword
from trove.search.query import cjk_grams, parse

pytestmark = pytest.mark.sqlite_only


def indexed(kb: trove.Store) -> set[int]:
    conn = kb.backend.conn  # type: ignore[attr-defined]
    return {int(r[0]) for r in conn.execute("SELECT rowid FROM chunk_cjk")}


def chunk_ids(kb: trove.Store, doc_id: str) -> set[int]:
    conn = kb.backend.conn  # type: ignore[attr-defined]
    return {int(r[0]) for r in conn.execute("SELECT id FROM chunk WHERE doc_id = ?", (doc_id,))}


def titles(hits: list[trove.Hit]) -> list[str]:
    return [hit.title for hit in hits]


@pytest.fixture
def kb(db_path: Path) -> Iterator[trove.Store]:
    with trove.open(db_path, embedder=None) as store:
        yield store


def test_grams_of_cjk_text() -> None:
    assert cjk_grams("知识库") == ["知识", "识库"]
    assert cjk_grams("战国无双3") == ["战国", "国无", "无双", "双3", "3"]
    assert cjk_grams("使用SQLite文件") == ["使用", "用s", "sqlite", "e文", "文件"]
    assert cjk_grams("库，redis 北京") == ["库", "北京"]  # words apart from CJK: not here
    assert cjk_grams("plain English") == []


def test_query_parts() -> None:
    query = parse("redis 知识库 库 Redis")
    assert query.words == ("redis",)
    assert query.cjk == ("知识库", "库")
    assert keyword.cjk_match(query) == '"知识" OR "识库"'
    assert query.substrings == ("库",)


def test_english_chunks_write_nothing_to_the_cjk_index(kb: trove.Store) -> None:
    kb.add_many({"text": f"plain English note {i}", "title": "Note"} for i in range(20))
    assert indexed(kb) == set()


def test_only_chunks_with_cjk_are_indexed(kb: trove.Store) -> None:
    kb.add("Plain English.\n\n" * 200, title="english")
    mixed = kb.add("Plain English.\n\n" * 200 + "最后一段是中文。", title="mixed")
    titled = kb.add("English body", title="中文标题")
    cjk_chunks = [cid for cid in chunk_ids(kb, mixed) if cid in indexed(kb)]
    assert len(cjk_chunks) == 1 < len(chunk_ids(kb, mixed))
    assert chunk_ids(kb, titled) <= indexed(kb)
    assert set(titles(kb.search("中文"))) == {"中文标题", "mixed"}


def test_updated_and_deleted_chunks_leave_the_cjk_index(kb: trove.Store) -> None:
    doc_id = kb.add("北京团队负责测试。", source="notes", source_id="a")
    first = chunk_ids(kb, doc_id)
    assert indexed(kb) == first
    kb.add("The Beijing team tests it.", source="notes", source_id="a")  # same key: update
    assert indexed(kb) == set()
    assert kb.search("北京") == []
    kb.add("上海团队负责测试。", source="notes", source_id="a")
    assert indexed(kb) == chunk_ids(kb, doc_id) != first
    assert kb.search("北京") == [] and len(kb.search("上海")) == 1
    kb.delete(doc_id)
    kb.purge()
    assert indexed(kb) == set()


def _v3_store(path: Path) -> None:
    """A file as trove wrote it at schema 3: a trigram index over every chunk."""
    conn = apsw.Connection(str(path))
    for version, migration in enumerate(MIGRATIONS[:3], 1):
        with conn:
            migration(conn)
            conn.execute(f"PRAGMA application_id = {APPLICATION_ID}")
            conn.execute(f"PRAGMA user_version = {version}")
    now = time.time()
    docs = [
        ("cn", "数据库迁移", "我们决定把知识库迁移到单个 SQLite 文件，北京团队负责测试。"),
        ("en", "Cache decision", "We dropped Redis because the cache hit rate was low."),
    ]
    with conn:
        for doc_id, title, text in docs:
            conn.execute(
                "INSERT INTO document (id, namespace, title, text, content_hash, created_at, "
                "updated_at) VALUES (?, 'default', ?, ?, ?, ?, ?)",
                (doc_id, title, text, doc_id, now, now),
            )
            conn.execute(
                "INSERT INTO chunk (doc_id, idx, start_char, end_char, head, text, text_hash) "
                "VALUES (?, 0, 0, ?, ?, ?, ?)",
                (doc_id, len(text), title, text, doc_id),
            )
    conn.close()


def test_schema_3_store_migrates_and_answers_cjk_queries(db_path: Path) -> None:
    _v3_store(db_path)
    with trove.open(db_path, embedder=None) as kb:
        assert kb.stats().schema_version == LATEST_VERSION
        conn = kb.backend.conn  # type: ignore[attr-defined]
        tables = {str(r[0]) for r in conn.execute("SELECT name FROM sqlite_schema")}
        assert "chunk_tri" not in tables and "chunk_cjk" in tables
        assert len(indexed(kb)) == 1  # the Chinese chunk only
        assert titles(kb.search("知识库迁移")) == ["数据库迁移"]
        assert titles(kb.search("北京")) == ["数据库迁移"]
        assert titles(kb.search("redis")) == ["Cache decision"]
        assert titles(kb.search("marath redi")) == ["Cache decision"]
        kb.add("上海团队", title="new")
        assert titles(kb.search("上海")) == ["new"]
        doc = kb.search("北京")[0]
        kb.delete(doc.doc_id)
        kb.purge()
        assert kb.search("北京") == [] and len(indexed(kb)) == 1
