"""`trove migrate` copies what ingest recorded of each file: a folder ingested into a
store, then copied, is unchanged in the copy without a file being read again."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

import trove
from trove.ingest import ownership
from trove.ingest.report import IngestReport
from trove.interfaces.cli import cli
from trove.tools.copy import migrate

OLD_NS = time.time_ns() - 3600 * 10**9


def write(path: Path, text: str) -> None:
    """A file as if last modified an hour ago (its stat is recorded)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    os.utime(path, ns=(OLD_NS, OLD_NS))


def counts(report: IngestReport) -> tuple[int, int, int, int]:
    return report.files_read, report.added, report.updated, report.unchanged


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    root = tmp_path / "vault"
    write(root / "a.md", "# Alpha\n\nabout kafka, see [[b]]\n")
    write(root / "sub" / "b.txt", "about postgres\n")
    write(root / "page.html", "<html><body><p>about pulsar</p></body></html>")
    lines = "".join(json.dumps({"body": f"line {i}"}) + "\n" for i in range(3))
    write(root / "chat.jsonl", lines)
    return root


@pytest.fixture(params=["file", "postgres"])
def destination(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "file":
        return str(tmp_path / "copy.db")
    return str(request.getfixturevalue("pg_target"))


def test_a_migrated_store_reads_no_unchanged_file_again(
    tmp_path: Path, vault: Path, destination: str
) -> None:
    src = tmp_path / "src.db"
    with trove.open(src, embedder=None) as kb:
        assert counts(kb.ingest(vault, fields={"text": "body"})) == (4, 6, 0, 0)
        assert counts(kb.ingest(vault, fields={"text": "body"})) == (0, 0, 0, 6)
    report = migrate(src, destination)
    assert report.copied == 6 and report.files == 4
    with trove.open(destination, embedder=None) as kb:
        assert counts(kb.ingest(vault, fields={"text": "body"})) == (0, 0, 0, 6)
        # The hash recorded for the records file covers its field mapping, in the copy too.
        assert counts(kb.ingest(vault, fields={"text": "body", "id": "body"})) == (1, 3, 0, 3)


def test_ownership_and_edit_marks_travel(tmp_path: Path, vault: Path, destination: str) -> None:
    src = tmp_path / "src.db"
    with trove.open(src, embedder=None) as kb:
        kb.ingest(vault, fields={"text": "body"})
        doc = next(h for h in kb.search("kafka") if h.source_id == "a.md")
        kb.update(doc.doc_id, text="edited in the store")
    migrate(src, destination)
    with trove.open(destination, embedder=None) as kb:
        assert ownership.claimed(kb.backend, "default", "vault")
        assert ownership.edited_files(kb.backend, "default", "vault") == {"a.md"}
        # The edited file is read again, to restore the file's text; nothing else is.
        assert counts(kb.ingest(vault, fields={"text": "body"})) == (1, 0, 1, 5)
        assert ownership.edited_files(kb.backend, "default", "vault") == set()
        assert kb.search("kafka")[0].source_id == "a.md"


def test_copying_again_keeps_the_file_records(tmp_path: Path, vault: Path) -> None:
    src, dst = tmp_path / "src.db", tmp_path / "copy.db"
    with trove.open(src, embedder=None) as kb:
        kb.ingest(vault, fields={"text": "body"})
    migrate(src, dst)
    again = migrate(src, dst)
    assert again.copied == 0 and again.files == 4
    with trove.open(dst, embedder=None) as kb:
        assert counts(kb.ingest(vault, fields={"text": "body"})) == (0, 0, 0, 6)


def test_cli_migrate_says_how_many_file_records(tmp_path: Path, vault: Path) -> None:
    src, dst = tmp_path / "src.db", tmp_path / "copy.db"
    with trove.open(src, embedder=None) as kb:
        kb.ingest(vault, fields={"text": "body"})
    result = CliRunner().invoke(cli, ["migrate", str(src), str(dst)])
    assert result.exit_code == 0, result.output
    assert "4 file records" in result.output
    result = CliRunner().invoke(cli, ["migrate", str(src), str(tmp_path / "again.db"), "--json"])
    assert json.loads(result.stdout)["files"] == 4
