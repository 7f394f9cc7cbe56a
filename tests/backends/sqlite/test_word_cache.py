"""The word index cache beside a store file: mapped when it matches, never used when it
does not, and rankings equal to an index built from the file."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import numpy as np
import pytest

import trove
from trove.backends.sqlite.word_index import cache as sqlite_word_cache
from trove.backends.sqlite.word_index.cache import cache_path

# Files for stores of any size: these stores are smaller than MIN_ROWS.
pytestmark = pytest.mark.usefixtures("small_caches")

WORDS = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india"]
QUERIES = ["alpha bravo", "delta echo golf", "hotel", "india charlie", "foxtrot alpha"]


def _docs(start: int, count: int) -> list[dict[str, str]]:
    rng = np.random.default_rng(start)
    return [
        {"text": " ".join(rng.choice(WORDS, 8)) + f" item{i}", "source": "t", "source_id": str(i)}
        for i in range(start, start + count)
    ]


def _build(path: Path, count: int = 300) -> None:
    with trove.open(path, embedder=None) as kb:
        kb.add_many(_docs(0, count))


def _rank(kb: trove.Store) -> list[list[tuple[str, float]]]:
    return [
        [(h.doc_id, round(h.score, 6)) for h in kb.search(q, mode="keyword", limit=10)]
        for q in QUERIES
    ]


def _warm_answers(path: Path) -> tuple[list[list[tuple[str, float]]], object]:
    with trove.open(path, embedder=None) as kb:
        kb.warm()
        words = kb.backend._words  # type: ignore[attr-defined]
        return _rank(kb), words._index


def _truth(path: Path) -> list[list[tuple[str, float]]]:
    """Rankings from an index built from the file (no cache involved)."""
    with trove.open(path, embedder=None) as kb:
        kb.backend.set_meta(sqlite_word_cache.EPOCH_KEY, None)  # any cache is now foreign
        kb.warm()
        return _rank(kb)


def test_warm_saves_the_cache_and_a_fresh_warm_maps_it(db_path: Path) -> None:
    _build(db_path)
    first, built = _warm_answers(db_path)
    assert cache_path(str(db_path)).exists()
    # The process that built the index searches the mapped cache it saved, too.
    assert isinstance(built._segments[0].rows.base, np.memmap)  # type: ignore[attr-defined]
    again, index = _warm_answers(db_path)
    assert isinstance(index._segments[0].rows.base, np.memmap)  # type: ignore[attr-defined]
    assert again == first


def test_rankings_from_the_cache_equal_a_fresh_build(db_path: Path) -> None:
    _build(db_path)
    _warm_answers(db_path)
    cached, _ = _warm_answers(db_path)
    assert cached == _truth(db_path)


def test_writes_after_the_save_are_indexed_and_deletions_gone(db_path: Path) -> None:
    _build(db_path)
    _warm_answers(db_path)
    with trove.open(db_path, embedder=None) as kb:
        gone = kb.search("alpha bravo", mode="keyword", limit=1)[0].doc_id
        new = kb.add("alpha bravo alpha bravo zulu", source="t", source_id="new")
        kb.delete(gone)
        kb.purge()
    ranked, index = _warm_answers(db_path)
    assert isinstance(index._segments[0].rows.base, np.memmap)  # type: ignore[attr-defined]
    ids = [d for d, _ in ranked[0]]
    assert new in ids and gone not in ids
    assert ranked == _truth(db_path)


@pytest.mark.parametrize("damage", ["truncate", "foreign", "empty"])
def test_a_damaged_cache_is_ignored_then_replaced(db_path: Path, damage: str) -> None:
    _build(db_path)
    _warm_answers(db_path)
    path = cache_path(str(db_path))
    data = path.read_bytes()
    path.write_bytes(
        {"truncate": data[: len(data) - 70], "foreign": b"y" * len(data), "empty": b""}[damage]
    )
    with trove.open(db_path, embedder=None) as kb:
        epoch = kb.backend.get_meta(sqlite_word_cache.EPOCH_KEY)
    ranked, _ = _warm_answers(db_path)
    with trove.open(db_path, embedder=None) as kb:  # rebuilt from the file, saved anew
        assert kb.backend.get_meta(sqlite_word_cache.EPOCH_KEY) != epoch
    assert path.read_bytes()[:8] == sqlite_word_cache.MAGIC  # replaced
    assert ranked == _truth(db_path)


def test_deleting_the_cache_loses_nothing(db_path: Path) -> None:
    _build(db_path)
    cached, _ = _warm_answers(db_path)
    shutil.rmtree(f"{db_path}.trove-index")
    assert _warm_answers(db_path)[0] == cached


def test_a_restored_older_store_ignores_the_newer_cache(db_path: Path, tmp_path: Path) -> None:
    _build(db_path, 100)
    with trove.open(db_path, embedder=None) as kb:
        kb.backend.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    shutil.copyfile(db_path, tmp_path / "backup.db")
    with trove.open(db_path, embedder=None) as kb:
        kb.add_many(_docs(1000, 100))
    _warm_answers(db_path)  # the cache knows chunk ids the backup never had
    os.remove(db_path)
    for suffix in ("-wal", "-shm"):
        Path(f"{db_path}{suffix}").unlink(missing_ok=True)
    shutil.copyfile(tmp_path / "backup.db", db_path)
    with trove.open(db_path, embedder=None) as kb:
        kb.add_many(_docs(5000, 100))  # reuses those ids for other text
        epoch = kb.backend.get_meta(sqlite_word_cache.EPOCH_KEY)
    ranked, _ = _warm_answers(db_path)
    with trove.open(db_path, embedder=None) as kb:  # rebuilt from the file, saved anew
        assert kb.backend.get_meta(sqlite_word_cache.EPOCH_KEY) != epoch
    assert ranked == _truth(db_path)


def _tf_types(path: Path) -> set[str]:
    data = cache_path(str(path)).read_bytes()
    length = int.from_bytes(data[8:16], "little")
    header = json.loads(data[24 : 24 + length])
    return {dtype for name, dtype, _, _ in header["arrays"] if name.endswith(".tf")}


@pytest.mark.parametrize("repeats", [3, 300])
def test_frequencies_stored_narrow_rank_as_the_index_built_from_the_file(
    db_path: Path, repeats: int
) -> None:
    # A byte a frequency when every one is below 256; a word 300 times in one chunk keeps
    # two bytes. Either way the cached index ranks as the one built from the file.
    _build(db_path)
    with trove.open(db_path, embedder=None) as kb:
        kb.add("xo " * repeats + "zulu", source="t", source_id="many")
    _warm_answers(db_path)
    assert _tf_types(db_path) == ({"|u1"} if repeats < 256 else {"<u2"})
    cached, _ = _warm_answers(db_path)
    assert cached == _truth(db_path)
    with trove.open(db_path, embedder=None) as kb:
        kb.warm()
        top = kb.search("xo", mode="keyword", limit=1)[0]
        assert top.doc_id == kb.search("zulu", mode="keyword", limit=1)[0].doc_id
