"""Originals: kept source bytes, content-addressed, readable only where the document is."""

from __future__ import annotations

import base64
import hashlib
import json
from pathlib import Path

import pytest

import trove
from trove.errors import ContentTooLarge, InvalidInput, NotFound
from trove.originals import safe_name


def test_original_round_trip_with_name_and_type(kb: trove.Store) -> None:
    doc_id = kb.add("the contract", original=b"%PDF-1.4 body", original_name="contract.pdf")
    got = kb.original(doc_id)
    assert (got.data, got.name, got.media_type) == (
        b"%PDF-1.4 body",
        "contract.pdf",
        "application/pdf",
    )
    info = kb.original_info(doc_id)
    assert info.size == 13 and info.sha256 == hashlib.sha256(b"%PDF-1.4 body").hexdigest()


def test_same_content_is_stored_once_and_goes_with_the_last_reference(kb: trove.Store) -> None:
    blob = b"same attachment" * 100
    ids = [kb.add(f"mail {i}", original=blob, original_name="a.pdf") for i in range(50)]
    assert list(kb.backend.original_hashes().values()) == [len(blob)]
    for doc_id in ids[:-1]:
        kb.delete(doc_id)
    kb.purge()
    assert kb.original(ids[-1]).data == blob  # one reference left: the blob stays
    kb.delete(ids[-1])
    kb.purge()
    assert kb.backend.original_hashes() == {}


def test_purge_by_id_and_replacement_drop_unreferenced_blobs(kb: trove.Store) -> None:
    a = kb.add("a", source="s", source_id="1", original=b"one")
    kb.add("a2", source="s", source_id="1", original=b"two")  # re-ingest, new bytes
    assert sorted(kb.backend.original_hashes().values()) == [3]
    assert kb.original(a).data == b"two"
    kb.purge([a])
    assert kb.backend.original_hashes() == {}


def test_no_original_and_deleted_document_are_not_found(kb: trove.Store) -> None:
    plain = kb.add("no original")
    with pytest.raises(NotFound, match="no original"):
        kb.original(plain)
    kept = kb.add("with", original=b"x")
    kb.delete(kept)
    with pytest.raises(NotFound):
        kb.original(kept)


def test_workspace_reads_only_visible_originals(kb: trove.Store) -> None:
    mine = kb.add("mine", namespace="a", original=b"secret")
    other = kb.workspace("b")
    with pytest.raises(NotFound):
        other.original(mine)
    assert kb.workspace("a").original(mine).data == b"secret"
    session_doc = kb.add("s", namespace="a", scope="session", session="s1", original=b"s")
    with pytest.raises(NotFound):
        kb.workspace("a", session="s2").original(session_doc)


def test_size_limit_is_configurable(kb: trove.Store) -> None:
    kb.max_original_bytes = 10
    with pytest.raises(ContentTooLarge, match="max_original_bytes"):
        kb.add("big", original=b"x" * 11)
    assert kb.stats().documents == 0  # the document and its original, or neither


def test_original_from_a_path_is_read_in_pieces(kb: trove.Store, tmp_path: Path) -> None:
    path = tmp_path / "report.html"
    data = bytes(range(256)) * 9000  # > 2 pieces
    path.write_bytes(data)
    doc_id = kb.add("report", original=path)
    assert kb.original_info(doc_id).name == "report.html"
    assert b"".join(kb.original_pieces(doc_id)) == data


@pytest.mark.parametrize(
    ("name", "safe"),
    [
        ("../../x.pdf", "x.pdf"),
        ("..\\..\\evil.exe", "evil.exe"),
        (".bashrc", "bashrc"),
        ("a/b\x00c.txt", "b_c.txt"),
        ("", "original"),
        ("..", "original"),
        ("Übersicht März.pdf", "Übersicht März.pdf"),
    ],
)
def test_safe_name(name: str, safe: str) -> None:
    assert safe_name(name) == safe


def test_migrate_and_backup_carry_originals(tmp_path: Path, pg_target: str) -> None:
    from trove.tools.copy import migrate
    from trove.transfer.backup import backup

    src = tmp_path / "src.db"
    data = bytes(range(256)) * 6000  # several pieces
    with trove.open(src, embedder=None) as kb:
        doc_id = kb.add("scan", original=data, original_name="scan.pdf")
        kb.add("same bytes", original=data)
    report = migrate(src, pg_target)
    assert report.originals == 2
    back = tmp_path / "back.db"
    migrate(pg_target, back)
    backup(back, tmp_path / "copy.db")
    for target in (pg_target, str(back), str(tmp_path / "copy.db")):
        with trove.open(target, embedder=None) as kb:
            got = kb.original(doc_id)
            assert (got.data, got.name) == (data, "scan.pdf")
            assert list(kb.backend.original_hashes().values()) == [len(data)]


def test_export_import_carries_originals(kb: trove.Store, tmp_path: Path) -> None:
    import io

    from trove.transfer.jsonl import export_jsonl, import_jsonl

    data = bytes(range(256)) * 5000  # two pieces
    doc_id = kb.add("scan", original=data, original_name="scan.pdf")
    empty = kb.add("empty file", original=b"", original_name="empty.txt")
    out = io.StringIO()
    assert export_jsonl(kb, out).originals == 2
    with trove.open(tmp_path / "imported.db", embedder=None) as other:
        report = import_jsonl(other, io.StringIO(out.getvalue()).readlines())
        assert report.originals == 2
        assert other.original(doc_id).data == data
        assert other.original(empty).data == b""
        again = io.StringIO()
        export_jsonl(other, again)
        assert again.getvalue() == out.getvalue()  # byte-exact round trip
    lines = out.getvalue().splitlines(keepends=True)
    at = next(i for i, line in enumerate(lines) if '"piece": 1' in line)
    record = json.loads(lines[at])
    record["data"] = base64.b64encode(b"\0" * len(base64.b64decode(record["data"]))).decode()
    lines[at] = json.dumps(record) + "\n"
    other = trove.open(tmp_path / "damaged.db", embedder=None)
    with other, pytest.raises(InvalidInput, match="damaged"):
        import_jsonl(other, lines)
