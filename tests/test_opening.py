"""Opening a store: create=False, options checked first, no file left by a failed open,
a closed store raises TroveError."""

from __future__ import annotations

from pathlib import Path

import pytest

import trove
from trove.errors import EmbedderError, InvalidInput, InvalidQuery, StoreError
from trove.opening import accepted_options, assemble
from trove.store import Store


def test_create_false_refuses_a_missing_file(tmp_path: Path) -> None:
    path = tmp_path / "typo.db"
    with pytest.raises(StoreError, match=f"no store at {path}"):
        trove.open(path, create=False)
    assert list(tmp_path.iterdir()) == []
    with trove.open(path, embedder=None) as kb:
        kb.add("now it exists")
    with trove.open(path, create=False, embedder=None) as kb:
        assert kb.stats().documents == 1


@pytest.mark.parametrize(
    ("options", "error"),
    [
        ({"embedder": "no-such-embedder"}, EmbedderError),
        ({"chunk_chars": 5}, InvalidInput),
        ({"chunk_overlap": 5000}, InvalidInput),
        ({"keyword_weight": 3}, InvalidInput),
        ({"chunk_size": 500}, InvalidInput),
        ({"fusion": "no-such-fusion"}, InvalidQuery),  # refused by Store, after assemble
    ],
)
def test_a_failed_open_leaves_no_file(
    tmp_path: Path, options: dict[str, object], error: type[Exception]
) -> None:
    with pytest.raises(error):
        trove.open(tmp_path / "kb.db", **options)
    assert list(tmp_path.iterdir()) == []


def test_a_failed_open_keeps_an_existing_file(tmp_path: Path) -> None:
    path = tmp_path / "kb.db"
    with trove.open(path, embedder=None) as kb:
        kb.add("keep me")
    with pytest.raises(InvalidInput):
        trove.open(path, chunk_chars=5)
    with trove.open(path, embedder=None) as kb:
        assert kb.stats().documents == 1


def test_a_store_keeps_the_parts_trove_open_assembles(tmp_path: Path) -> None:
    with trove.open(tmp_path / "kb.db", embedder=None) as opened:
        parts = assemble(opened.backend, embedder=None, chunk_chars=300, record_access=False)
        kb = Store(parts, fusion="rrf")
        assert (kb.backend, kb.vectors, kb.events) == (parts.backend, parts.vectors, parts.events)
        assert (kb.access, kb._pool, kb._lock) == (parts.access, parts.pool, parts.lock)
        assert (kb.chunk_chars, kb.fusion, kb.access.enabled) == (300, "rrf", False)
        doc_id = kb.add("made of the parts it was handed")
        assert opened.get(doc_id) is not None  # the one backend both stores share
        assert not kb.has_embedder


def test_trove_open_takes_the_options_of_the_parts_and_of_the_store() -> None:
    assert {"embedder", "chunk_chars", "record_access", "record_retrievals"} <= accepted_options()
    assert {"fusion", "keyword_weight", "llm", "busy_timeout_ms"} <= accepted_options()


def test_a_closed_store_raises_a_trove_error(tmp_path: Path) -> None:
    kb = trove.open(tmp_path / "kb.db", embedder=None)
    doc_id = kb.add("hello")
    kb.close()
    for use in (lambda: kb.get(doc_id), lambda: kb.search("hello"), lambda: kb.add("x")):
        with pytest.raises(StoreError, match="closed"):
            use()
    kb.close()  # closing twice is harmless


def test_a_dedupe_key_decides_the_id_over_source_id(tmp_path: Path) -> None:
    """README: dedupe_key wins when both it and (source, source_id) are given."""
    with trove.open(tmp_path / "kb.db", embedder=None) as kb:
        first = kb.add("v1", source="crm", source_id="42", dedupe_key="customer:42")
        second = kb.add("v2", source="crm", source_id="43", dedupe_key="customer:42")
        assert first == second
        assert kb.add("v3", source="crm", source_id="42") != first


def test_add_many_batch_size_is_as_documented() -> None:
    import inspect

    default = inspect.signature(trove.Store.add_many).parameters["batch_size"].default
    page = Path(__file__).resolve().parents[1] / "docs" / "python.md"
    assert f"Store.add_many(dicts, batch_size={default})" in page.read_text(encoding="utf-8")
