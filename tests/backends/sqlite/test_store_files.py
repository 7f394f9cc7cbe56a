"""The store file: one vector table however many write first, private on disk, damaged
files refused, read-only files readable, `trove check`."""

from __future__ import annotations

import os
import stat
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import apsw
import pytest
from click.testing import CliRunner

import trove
from trove.errors import CorruptStore, NotATroveStore, StoreError
from trove.interfaces.cli import cli


def test_two_writers_of_the_first_vectors_share_one_table(durable_target: str) -> None:
    # Both opened before either wrote a vector: each saw no lock. The second to lock
    # must find the first's table, not make its own (which orphaned vectors before).
    with (
        trove.open(durable_target, embedder="hash:64") as one,
        trove.open(durable_target, embedder="hash:64") as two,
    ):
        model = one.vectors.resolve().model_id
        first = one.backend.lock_vectors("hash:64", model, 64)
        second = two.backend.lock_vectors("hash:64", model, 64)
        assert second == first
        one.add("alpha note", source="s", source_id="1")
        two.add("beta note", source="s", source_id="2")
        assert {h.source_id for h in two.search("note", mode="semantic")} == {"1", "2"}
        assert two.stats().vectors == 2


@pytest.mark.sqlite_only
def test_new_store_files_are_private(tmp_path: Path) -> None:
    path = tmp_path / "new" / "kb.db"
    with trove.open(path, embedder=None) as kb:
        kb.add("mail and notes", source="s", source_id="1")
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    for name in os.listdir(path.parent):
        assert stat.S_IMODE((path.parent / name).stat().st_mode) == 0o600, name


@pytest.mark.sqlite_only
def test_a_read_only_store_file_opens_for_reading(tmp_path: Path) -> None:
    path = tmp_path / "kb.db"
    with trove.open(path, embedder=None) as kb:
        kb.add("kept for reading", source="s", source_id="1")
    path.chmod(0o444)
    try:
        with trove.open(path, embedder=None) as kb:
            assert [h.source_id for h in kb.search("reading")] == ["1"]
    finally:
        path.chmod(0o600)


def _filled(path: Path) -> None:
    with trove.open(path, embedder=None) as kb:
        kb.add_many(
            [{"text": f"note {i} " * 300, "source": "s", "source_id": str(i)} for i in range(200)]
        )


@pytest.mark.sqlite_only
def test_a_truncated_store_is_refused_not_repaired(tmp_path: Path) -> None:
    path = tmp_path / "kb.db"
    _filled(path)
    size = path.stat().st_size
    with path.open("r+b") as handle:
        handle.truncate(size // 2)
    with pytest.raises(CorruptStore, match=r"damaged .* does not repair"):
        trove.open(path, embedder=None)
    assert path.stat().st_size == size // 2  # untouched


@pytest.mark.sqlite_only
def test_a_file_that_is_not_sqlite_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "kb.db"
    path.write_bytes(b"not a database at all" * 100)
    with pytest.raises(NotATroveStore):
        trove.open(path, embedder=None)


@pytest.mark.sqlite_only
def test_trove_check_reports_a_sound_store_and_a_half_written_one(tmp_path: Path) -> None:
    path = tmp_path / "kb.db"
    _filled(path)
    runner = CliRunner()
    result = runner.invoke(cli, ["--db", str(path), "--embedder", "none", "check"])
    assert result.exit_code == 0, result.output
    assert "200 documents" in result.output and result.output.rstrip().endswith("ok")
    with trove.open(path, embedder=None) as kb:
        kb.backend.conn.execute(  # type: ignore[attr-defined]
            "UPDATE document SET text = 'changed behind its hash' WHERE source_id = '7'"
        )
    result = runner.invoke(cli, ["--db", str(path), "--embedder", "none", "check", "--json"])
    assert result.exit_code == 1
    assert "does not match its content hash" in result.output
    assert "do not cover its text" in result.output


@contextmanager
def _unwritable(folder: Path) -> Iterator[None]:
    """``folder`` and its files made read-only for this process, for real: modes, and for
    root (whom modes do not stop) the immutable attribute as well, which the kernel
    enforces for root too. Undone afterwards so the test folder can be removed."""
    files = list(folder.iterdir())
    for path in files:
        path.chmod(0o444)
    folder.chmod(0o555)
    immutable = os.geteuid() == 0
    try:
        if immutable:
            done = subprocess.run(["chattr", "+i", str(folder)], capture_output=True)
            if done.returncode:
                pytest.skip(f"root, and chattr +i fails here: {done.stderr!r}")
        assert not os.access(folder, os.W_OK)  # the kernel says so: the test is real
        yield
    finally:
        if immutable:
            subprocess.run(["chattr", "-i", str(folder)], check=False)
        folder.chmod(0o700)
        for path in files:
            path.chmod(0o600)


@pytest.mark.sqlite_only
def test_a_store_in_a_read_only_folder_answers_searches_and_refuses_writes(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "shelf"
    folder.mkdir()
    path = folder / "kb.db"
    with trove.open(path, embedder="hash:64") as kb:
        kb.add("kept for reading on a read-only shelf", source="s", source_id="1")
    before = sorted(os.listdir(folder))
    with _unwritable(folder), trove.open(path, embedder="hash:64") as kb:
        for mode in ("keyword", "semantic", "hybrid"):
            assert [h.source_id for h in kb.search("reading shelf", mode=mode)] == ["1"]
        assert kb.get(kb.search("reading")[0].doc_id) is not None
        with pytest.raises(StoreError, match=r"kb\.db is open read-only"):
            kb.add("a new note", source="s", source_id="2")
        assert kb.stats().documents == 1
    # Nothing was made beside the file: no -wal or -shm, no index cache.
    assert sorted(os.listdir(folder)) == before


@pytest.mark.sqlite_only
def test_damage_met_by_a_search_names_the_file_and_trove_check(tmp_path: Path) -> None:
    path = tmp_path / "kb.db"
    _filled(path)
    conn = apsw.Connection(str(path))
    [[page_size]] = conn.execute("PRAGMA page_size")
    leaves = [p for (p,) in conn.execute("SELECT pageno FROM dbstat WHERE name = 'chunk'")]
    conn.close()
    with path.open("r+b") as handle:  # the chunk table's pages: opening reads none of them
        for page in leaves[1:]:
            handle.seek((page - 1) * page_size)
            handle.write(b"\xff" * page_size)
    damaged = r"kb\.db is damaged .*`trove --db .* check`"
    with trove.open(path, embedder=None) as kb, pytest.raises(CorruptStore, match=damaged):
        kb.search("note 17")
    result = CliRunner().invoke(cli, ["--db", str(path), "--embedder", "none", "check"])
    assert result.exit_code == 1
    assert "cannot be read: the file is damaged" in result.output
