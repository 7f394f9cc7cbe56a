"""``trove ingest --keep-originals`` and ``trove get ID --original [-o]``."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

import trove
from trove.interfaces.cli import cli


def _invoke(db: Path, *args: str, code: int = 0) -> str:
    result = CliRunner(env={"TROVE_EMBEDDER": "hash:64"}).invoke(cli, ["--db", str(db), *args])
    assert result.exit_code == code, result.output
    return result.stdout


def _ingest(tmp_path: Path, *extra: str) -> tuple[Path, dict[str, str]]:
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "a.md").write_text("# Alpha\n\nthe alpha note\n")
    (folder / "b.html").write_text("<html><title>Beta</title><p>beta page</p></html>")
    (folder / "copy.md").write_text("# Alpha\n\nthe alpha note\n")  # same bytes as a.md
    db = tmp_path / "kb.db"
    _invoke(db, "ingest", str(folder), "--json", *extra)
    with trove.open(db, embedder=None) as kb:
        ids = {sid: doc_id for sid, doc_id, _, _ in kb.iter_source("default", "docs")}
    return db, ids


def test_ingest_keeps_originals_once_per_content(tmp_path: Path) -> None:
    db, ids = _ingest(tmp_path, "--keep-originals")
    assert _invoke(db, "get", ids["b.html"], "--original").startswith("<html>")
    with trove.open(db, embedder=None) as kb:
        assert len(kb.backend.original_hashes()) == 2  # a.md and copy.md share one blob
        assert kb.original(ids["copy.md"]).name == "copy.md"
        assert kb.original(ids["a.md"]).media_type == "text/markdown"


def test_without_the_flag_nothing_is_kept(tmp_path: Path) -> None:
    db, ids = _ingest(tmp_path)
    out = _invoke(db, "get", ids["a.md"], "--original", "--json", code=1)
    assert json.loads(out)["error"]["code"] == "not_found"


def test_output_to_a_folder_uses_a_safe_name_inside_it(tmp_path: Path) -> None:
    db = tmp_path / "kb.db"
    with trove.open(db, embedder=None) as kb:
        doc_id = kb.add("evil", original=b"payload", original_name="../../x.pdf")
    target = tmp_path / "out"
    target.mkdir()
    out = json.loads(_invoke(db, "get", doc_id, "--original", "-o", str(target), "--json"))
    assert out["path"] == str(target / "x.pdf")
    assert (target / "x.pdf").read_bytes() == b"payload"
    assert not (tmp_path / "x.pdf").exists()
    assert sorted(p.name for p in target.iterdir()) == ["x.pdf"]  # no temporary left
    _invoke(db, "get", doc_id, "--original", "-o", str(tmp_path / "named.bin"))
    assert (tmp_path / "named.bin").read_bytes() == b"payload"


def test_update_keeps_a_file_as_the_original_and_sets_the_compression_level(
    tmp_path: Path,
) -> None:
    db = tmp_path / "kb.db"
    with trove.open(db, embedder=None) as kb:
        raw, summary = kb.add("the raw log"), kb.add("the summary of the log")
        deleted = kb.add("gone")
        kb.delete(deleted)
    pdf = tmp_path / "log.pdf"
    pdf.write_bytes(b"%PDF-1.4 bytes")
    out = _invoke(db, "update", summary, "--original", str(pdf), "--compression-level", "1")
    assert "updated" in out
    assert _invoke(db, "get", summary, "--original").encode() == pdf.read_bytes()
    with trove.open(db, embedder=None) as kb:
        kept = kb.original(summary)
        assert (kept.name, kept.media_type) == ("log.pdf", "application/pdf")
        assert kb.get(summary).compression_level == 1  # type: ignore[union-attr]
    listed = _invoke(db, "list", "--max-compression", "0", "--format", "tsv")
    assert [line.split("\t")[0] for line in listed.splitlines()] == [raw]
    refused = _invoke(db, "update", deleted, "--original", str(pdf), "--json", code=1)
    assert json.loads(refused)["error"]["code"] == "not_found"
    _invoke(db, "update", raw, "--compression-level", "-1", code=2)
