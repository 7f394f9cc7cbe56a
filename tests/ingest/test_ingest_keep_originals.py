"""``keep_originals`` asked of files already stored without originals: they are
unchanged, so they are not written again, but they get their originals (a whole file
without being parsed or embedded again; an mbox's messages by reading it again)."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

import trove
from helpers.ingest_samples import CountingEmbedder, message, write_mbox, write_pdf
from trove import originals
from trove.ingest import parse
from trove.interfaces.cli import cli


def _aged(*paths: Path) -> None:
    """Modified a minute ago: their stats are recorded, so a rerun need not read them."""
    old = time.time_ns() - 60_000_000_000
    for path in paths:
        os.utime(path, ns=(old, old))


def _folder(vault: Path, tmp_path: Path) -> dict[str, bytes]:
    (vault / "a.md").write_text("# Alpha\n\nabout kafka\n", encoding="utf-8")
    write_pdf(vault / "b.pdf", ["Service contract between Bea and Ana."])
    mails = [
        message("Hello", "First mail\n", message_id="<m1@example.com>"),
        message(
            "Report",
            "See attached\n",
            message_id="<m2@example.com>",
            attachments=[("r.html", b"<html><body><p>Quarterly numbers</p></body></html>")],
        ),
    ]
    write_mbox(vault / "mail.mbox", mails)
    _aged(*vault.iterdir())
    return {p.name: p.read_bytes() for p in vault.iterdir()}


def _ids(kb: trove.Store) -> dict[str, str]:
    return {sid: doc_id for sid, doc_id, _, _ in kb.iter_source("default", "vault")}


def test_unchanged_files_get_the_originals_they_lack(
    kb: trove.Store, vault: Path, tmp_path: Path
) -> None:
    files = _folder(vault, tmp_path)
    first = kb.ingest(vault)
    assert first.added == 5 and first.originals == 0 and first.failed == []
    ids = _ids(kb)
    with pytest.raises(trove.NotFound):
        kb.original(ids["a.md"])

    kept = kb.ingest(vault, keep_originals=True)
    assert (kept.added, kept.updated, kept.unchanged, kept.chunks) == (0, 0, 5, 0)
    assert kept.originals == 5 and kept.failed == []
    assert kept.files_read == 1  # the mbox, for its messages; a.md and b.pdf by stat
    assert "5 unchanged" in kept.summary() and "5 originals kept" in kept.summary()
    assert kb.original(ids["a.md"]).data == files["a.md"]
    assert kb.original(ids["b.pdf"]).data == files["b.pdf"]
    assert kb.original(ids["b.pdf"]).media_type == "application/pdf"
    assert b"Subject: Hello" in kb.original(ids["mail.mbox#m1@example.com"]).data
    assert b"Quarterly" in kb.original(ids["mail.mbox#m2@example.com/attachment-1"]).data
    assert _ids(kb) == ids  # same documents

    again = kb.ingest(vault, keep_originals=True)
    assert (again.unchanged, again.originals, again.files_read) == (5, 0, 0)
    assert "originals kept" not in again.summary()


def test_dry_run_counts_but_keeps_nothing(kb: trove.Store, vault: Path) -> None:
    (vault / "a.md").write_text("# Alpha\n\nabout kafka\n", encoding="utf-8")
    kb.ingest(vault)
    preview = kb.ingest(vault, keep_originals=True, dry_run=True)
    assert preview.originals == 1 and "1 would be originals kept" in preview.summary()
    with pytest.raises(trove.NotFound):
        kb.original(_ids(kb)["a.md"])


def test_keeping_originals_embeds_and_parses_nothing_again(
    tmp_path: Path, vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _folder(vault, tmp_path)
    embedder = CountingEmbedder()
    with trove.open(tmp_path / "kb.db", embedder=embedder) as kb:
        kb.ingest(vault)
        parsed: list[str] = []
        real = parse.parse

        def counting(format_name: str, rel: str, data: bytes, options: object) -> parse.Parsed:
            parsed.append(rel)
            return real(format_name, rel, data, options)  # type: ignore[arg-type]

        monkeypatch.setattr(parse, "parse", counting)
        embedder.texts.clear()
        kept = kb.ingest(vault, keep_originals=True)
        assert kept.originals == 5 and kept.chunks == 0
        assert embedder.texts == [] and parsed == []  # the mbox streams; nothing embedded


def test_a_file_that_cannot_be_kept_is_reported_and_stays_stored(
    tmp_path: Path, vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (vault / "a.md").write_text("# Alpha\n\n" + "kafka " * 100, encoding="utf-8")
    monkeypatch.setenv("TROVE_MAX_ORIGINAL_BYTES", "10")
    with trove.open(tmp_path / "kb.db", embedder=None) as kb:
        kb.ingest(vault)
        report = kb.ingest(vault, keep_originals=True)
        assert report.unchanged == 1 and report.originals == 0
        assert [p for p, _ in report.failed] == ["a.md"]
        assert "original not kept" in report.failed[0][1]
        assert kb.get(_ids(kb)["a.md"]) is not None


def test_cli_ingest_file_keep_originals_then_get_original(tmp_path: Path, vault: Path) -> None:
    note = vault / "a.md"
    note.write_text("# Alpha\n\nabout kafka\n", encoding="utf-8")
    runner = CliRunner()
    base = ["--db", str(tmp_path / "kb.db"), "--embedder", "none"]
    assert runner.invoke(cli, [*base, "ingest", str(note)]).exit_code == 0
    result = runner.invoke(cli, [*base, "ingest", str(note), "--keep-originals"])
    assert result.exit_code == 0, result.output
    assert "1 unchanged" in result.stdout and "1 originals kept" in result.stdout
    with trove.open(tmp_path / "kb.db", embedder=None) as kb:
        doc_id = _ids(kb)["a.md"]
    out = tmp_path / "out"
    out.mkdir()
    got = runner.invoke(cli, [*base, "get", doc_id, "--original", "-o", str(out)])
    assert got.exit_code == 0, got.output
    assert (out / "a.md").read_bytes() == note.read_bytes()


def test_backend_says_which_documents_have_originals(kb: trove.Store) -> None:
    ids = kb.add_many([{"text": f"note {i}"} for i in range(600)])
    kept = {ids[0], ids[499], ids[500], ids[599]}  # both sides of SQLite's 500-id statement
    for doc_id in kept:
        originals.keep(kb, doc_id, b"bytes", "n.txt")
    assert kb.backend.with_originals([*ids, "no-such-id"]) == kept
    assert kb.backend.with_originals([]) == set()
