"""Upsert modes, lookup by key, hard delete, clear, and atomic groups of writes (issue 16),
on every backend."""

from __future__ import annotations

import threading
from typing import Any

import pytest

import trove
from trove import InvalidInput, NotFound


def test_replace_is_the_default_and_blanks_fields_not_given(kb: trove.Store) -> None:
    doc_id = kb.add("v1", source="chat", source_id="m1", author="ana", tags=["a"])
    assert kb.add("v2", source="chat", source_id="m1") == doc_id
    doc = kb.get(doc_id)
    assert doc is not None and (doc.text, doc.author, doc.tags) == ("v2", "", ())


def test_merge_changes_only_the_fields_given(kb: trove.Store) -> None:
    doc_id = kb.add("v1", source="chat", source_id="m1", author="ana", tags=["a"], title="T")
    assert kb.add("v2", source="chat", source_id="m1", on_conflict="merge") == doc_id
    doc = kb.get(doc_id)
    assert doc is not None
    assert (doc.text, doc.author, doc.tags, doc.title) == ("v2", "ana", ("a",), "T")
    assert kb.search("v2")[0].doc_id == doc_id


def test_merge_without_text_in_add_many_keeps_the_text(kb: trove.Store) -> None:
    doc_id = kb.add("stored text", source="s", source_id="1", author="ana")
    [same] = kb.add_many([{"source": "s", "source_id": "1", "author": "bo"}], on_conflict="merge")
    doc = kb.get(doc_id)
    assert same == doc_id and doc is not None and (doc.text, doc.author) == ("stored text", "bo")


def test_merge_of_a_missing_document_creates_it(kb: trove.Store) -> None:
    doc_id = kb.add("new", source="s", source_id="x", author="ana", on_conflict="merge")
    doc = kb.get(doc_id)
    assert doc is not None and (doc.text, doc.author) == ("new", "ana")


def test_keep_leaves_the_stored_document_untouched(kb: trove.Store) -> None:
    doc_id = kb.add("v1", source="s", source_id="1", author="ana")
    before = kb.get(doc_id)
    [result] = kb.write_many([{"text": "v2", "source": "s", "source_id": "1"}], on_conflict="keep")
    assert (result.id, result.action) == (doc_id, "unchanged")
    assert kb.get(doc_id) == before
    [fresh] = kb.write_many([{"text": "n", "source": "s", "source_id": "2"}], on_conflict="keep")
    assert fresh.action == "added"


def test_keep_results_stay_in_the_items_order(kb: trove.Store) -> None:
    kept = kb.add("old", source="s", source_id="1")
    ids = kb.add_many(
        [{"text": f"t{i}", "source": "s", "source_id": str(i)} for i in range(4)],
        on_conflict="keep",
        batch_size=2,
    )
    assert ids[1] == kept and len(ids) == 4 and len(set(ids)) == 4


def test_unknown_conflict_mode_is_invalid_and_writes_nothing(kb: trove.Store) -> None:
    with pytest.raises(InvalidInput, match="on_conflict"):
        kb.add("x", on_conflict="upsert")
    assert kb.stats().documents == 0


def test_get_by_key(kb: trove.Store) -> None:
    doc_id = kb.add("hello", source="chat", source_id="m1", namespace="team")
    doc = kb.get_by_key("chat", "m1", namespace="team")
    assert doc is not None and doc.id == doc_id
    assert kb.get_by_key("chat", "m1") is None
    assert kb.get_by_key("chat", "m2", namespace="team") is None
    sid = kb.add("mine", source="chat", source_id="m1", scope="session", session="s1")
    found = kb.get_by_key("chat", "m1", scope="session", session="s1")
    assert found is not None and found.id == sid


def test_get_by_dedupe_key(kb: trove.Store) -> None:
    """A dedupe key names an item as well as (source, source_id) does (issue 30)."""
    doc_id = kb.add("tea", dedupe_key="ana:drink", namespace="team")
    found = kb.get_by_key(dedupe_key="ana:drink", namespace="team")
    assert found is not None and found.id == doc_id
    assert kb.get_by_key(dedupe_key="ana:drink") is None  # another namespace
    assert kb.get_by_key(dedupe_key="ana:drink", namespace="team", scope="global") is None
    for bad in ({}, {"source_id": "x", "dedupe_key": "y"}, {"dedupe_key": 5}):
        with pytest.raises(trove.InvalidInput):
            kb.get_by_key(**bad)  # type: ignore[arg-type]


def test_delete_says_whether_it_deleted(kb: trove.Store) -> None:
    doc_id = kb.add("gone soon")
    assert kb.delete(doc_id) is True
    assert kb.delete(doc_id) is False
    with pytest.raises(NotFound):
        kb.delete("nope")


def test_purge_by_ids_removes_chosen_documents_for_good(kb: trove.Store) -> None:
    a, b, c = (kb.add(f"apple {i}", source="s", source_id=str(i)) for i in range(3))
    kb.link(a, b)
    assert kb.purge(ids=[a, "unknown"]) == 1
    assert kb.get(a) is None and kb.get(b) is not None
    with pytest.raises(NotFound):
        kb.restore(a)
    assert {h.doc_id for h in kb.search("apple")} == {b, c}
    assert kb.neighbors(b) == []
    with pytest.raises(InvalidInput):
        kb.purge(ids=a)  # type: ignore[arg-type]


def test_clear_removes_one_namespace_only(kb: trove.Store) -> None:
    for i in range(3):
        kb.add(f"note {i}", namespace="scratch")
    kb.add("session note", namespace="scratch", scope="session", session="x")
    keep = kb.add("note kept", namespace="main")
    gone = kb.add("deleted note", namespace="scratch", source_id="d")
    kb.delete(gone)
    assert kb.clear("scratch") == 5
    assert kb.stats("scratch").documents == 0 and kb.stats("scratch").deleted == 0
    assert [h.doc_id for h in kb.search("note", namespace="main")] == [keep]
    assert kb.clear("scratch") == 0
    with pytest.raises(InvalidInput):
        kb.clear("")


def test_transaction_commits_a_group_and_emits_after_commit(kb: trove.Store) -> None:
    seen: list[dict[str, Any]] = []
    kb.subscribe(seen.append)
    first = kb.add("first", source="s", source_id="0")
    seen.clear()
    with kb.transaction():
        a = kb.add("alpha memory")
        b = kb.add("beta memory")
        kb.link(a, b)
        kb.update(first, text="first, changed")
        kb.delete(b)
        assert seen == []  # not yet committed
    assert [e["kind"] for e in seen] == ["written", "written", "updated", "deleted"]
    assert kb.get(a) is not None and kb.get(b) is None


def test_transaction_that_raises_keeps_nothing_and_emits_nothing(kb: trove.Store) -> None:
    seen: list[dict[str, Any]] = []
    kb.subscribe(seen.append)
    kept = kb.add("kept memory", source="s", source_id="k")
    seen.clear()
    with pytest.raises(RuntimeError), kb.transaction():
        kb.add("lost memory", source="s", source_id="l")
        kb.update(kept, text="changed memory")
        kb.delete(kept)
        raise RuntimeError("halfway")
    assert seen == []
    doc = kb.get(kept)
    assert doc is not None and doc.text == "kept memory"
    assert kb.get_by_key("s", "l") is None
    assert [h.doc_id for h in kb.search("memory")] == [kept]
    # The store still works after the rollback.
    again = kb.add("after memory", source="s", source_id="a")
    assert {h.doc_id for h in kb.search("memory")} == {kept, again}


def test_clear_while_another_caller_writes(durable_target: str) -> None:
    """Writes racing a clear are each kept whole or removed whole; none is half there."""
    with trove.open(durable_target, embedder=None) as kb:
        kb.add_many([{"text": f"old {i}", "namespace": "busy"} for i in range(20)])
    errors: list[BaseException] = []

    def write() -> None:
        try:
            with trove.open(durable_target, embedder=None) as other:
                for i in range(20):
                    other.add(f"racing memory {i}", namespace="busy", source_id=str(i))
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    thread = threading.Thread(target=write)
    with trove.open(durable_target, embedder=None) as kb:
        thread.start()
        kb.clear("busy")
        thread.join()
        assert errors == []
        for doc_id in kb.backend.namespace_documents("busy"):
            doc = kb.get(doc_id)
            assert doc is not None and doc.text.startswith("racing memory")
            assert kb.search(doc.text, namespace="busy", mode="keyword")


def test_cli_purge_clear_and_dedupe(tmp_path: Any) -> None:
    from click.testing import CliRunner

    from trove.interfaces.cli import cli

    db = str(tmp_path / "kb.db")
    with trove.open(db, embedder=None) as kb:
        a = kb.add("scratch one", namespace="tmp")
        kb.add("we meet every monday at nine")
        kb.add("we meet every monday at nine!")
    run = CliRunner().invoke
    refused = run(cli, ["--db", db, "clear", "tmp"], input="n\n")
    assert refused.exit_code != 0 and "Aborted" in refused.output
    assert run(cli, ["--db", db, "purge", a, "--yes", "--json"]).output.strip().endswith("1\n}")
    done = run(cli, ["--db", db, "clear", "tmp", "--yes", "--json"])
    assert done.exit_code == 0 and '"cleared": 0' in done.output
    dry = run(cli, ["--db", db, "dedupe", "--dry-run"])
    assert dry.exit_code == 0 and "would mark 1 group" in dry.output
    merged = run(cli, ["--db", db, "add", "x", "--source-id", "k", "--on-conflict", "keep"])
    assert merged.exit_code == 0, merged.output


def test_cli_search_rerank_and_cluster(tmp_path: Any) -> None:
    import json

    from click.testing import CliRunner

    from trove.interfaces.cli import cli

    db = str(tmp_path / "kb.db")
    with trove.open(db, embedder=None) as kb:
        a = kb.add("tea notes", importance=0.9)
        kb.add("tea notes two")
        cluster = kb.clusters.create("drinks", members=[a])
    run = CliRunner().invoke
    ranked = run(cli, ["--db", db, "search", "tea", "--rerank", "memory", "--json", "--all"])
    assert ranked.exit_code == 0 and json.loads(ranked.output)[0]["doc_id"] == a
    inside = run(cli, ["--db", db, "search", "tea", "--cluster", cluster.id, "--json", "--all"])
    assert [h["doc_id"] for h in json.loads(inside.output)] == [a]


def test_hybrid_search_inside_a_transaction(store_target: str) -> None:
    from trove.embedders import HashEmbedder

    with trove.open(store_target, embedder=HashEmbedder(16)) as kb, kb.transaction():
        doc_id = kb.add("searched before the commit")
        assert [h.doc_id for h in kb.search("searched commit", mode="hybrid")] == [doc_id]
