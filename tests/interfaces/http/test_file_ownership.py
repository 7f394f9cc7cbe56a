"""A document that came from an ingested file is owned by it (issue 11)."""

from __future__ import annotations

import os
import time
from pathlib import Path

import httpx
import pytest

import trove
from trove.errors import Forbidden
from trove.interfaces.config import ServerConfig
from trove.interfaces.http import create_app

FILE_TEXT = "# Apples\n\nApples grow on trees in the orchard."


def _settled(path: Path) -> None:
    """An old mtime, so the ingest records the file's stat (and skips it by stat)."""
    past = time.time() - 3600
    os.utime(path, (past, past))


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    root = tmp_path / "notes"
    root.mkdir()
    (root / "apples.md").write_text(FILE_TEXT, encoding="utf-8")
    _settled(root / "apples.md")
    return root


def _only_doc(kb: trove.Store, namespace: str = "default") -> trove.Document:
    [doc] = kb.list(namespace).items
    return doc


def test_a_library_edit_is_restored_by_the_next_ingest(durable_target: str, folder: Path) -> None:
    with trove.open(durable_target, embedder=None) as kb:
        assert kb.ingest(folder).added == 1
        assert kb.ingest(folder).unchanged == 1  # skipped by stat and hash
        doc_id = _only_doc(kb).id
        kb.update(doc_id, text="An agent's edit of the apples note.", tags=["edited"])
        report = kb.ingest(folder)
        assert (report.updated, report.unchanged) == (1, 0)
        doc = kb.get(doc_id)
        assert doc is not None and "orchard" in doc.text and "edited" not in doc.tags
        assert kb.ingest(folder).unchanged == 1  # restored once, then unchanged again


def test_a_workspace_may_not_edit_a_file_document_unless_allowed(
    tmp_path: Path, folder: Path
) -> None:
    with trove.open(tmp_path / "kb.db", embedder=None) as kb:
        kb.ingest(folder)
        doc_id = _only_doc(kb).id
        with pytest.raises(Forbidden, match=r"apples\.md.*edit the file"):
            kb.workspace().update(doc_id, text="changed by an agent")
        own = kb.add("a note of the agent's own")
        kb.workspace().update(own, text="the agent's note, edited")  # not a file's
        kb.workspace(allow_file_edits=True).update(doc_id, text="allowed edit")
        assert kb.ingest(folder).updated == 1


def test_http_update_of_a_file_document_is_forbidden(
    tmp_path: Path, folder: Path, serve: object
) -> None:
    with trove.open(tmp_path / "kb.db", embedder=None) as kb:
        kb.ingest(folder)
        doc_id = _only_doc(kb).id
        configs = {
            "strict": ServerConfig.from_dict({}),
            "allowed": ServerConfig.from_dict({"allow_file_edits": True}),
        }
        with serve(create_app(kb, configs["strict"])) as url:  # type: ignore[operator]
            answer = httpx.patch(f"{url}/v1/items/{doc_id}", json={"text": "agent edit"})
        assert answer.status_code == 403, answer.text
        assert answer.json()["error"]["code"] == "forbidden"
        assert "edit the file" in answer.json()["error"]["message"]
        with serve(create_app(kb, configs["allowed"])) as url:  # type: ignore[operator]
            answer = httpx.patch(f"{url}/v1/items/{doc_id}", json={"text": "agent edit"})
        assert answer.status_code == 200, answer.text
