"""The vector index cache beside a store file: used when it matches, never when it does
not, and the first query of a fresh process never waits for a full load."""

from __future__ import annotations

import os
import shutil
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

import trove
from trove.backends.base import EmbedderLock
from trove.backends.sqlite.vector_index import cache as sqlite_index_cache
from trove.backends.sqlite.vector_index.cache import LayeredIndex, cache_path
from trove.backends.sqlite.vector_index.index import VectorIndex

# Files for stores of any size: these stores are smaller than MIN_ROWS (the policy's own
# tests, at the end, put it back).
pytestmark = pytest.mark.usefixtures("small_caches")
MIN_ROWS = sqlite_index_cache.MIN_ROWS

WORDS = [
    "alpha",
    "bravo",
    "charlie",
    "delta",
    "echo",
    "foxtrot",
    "golf",
    "hotel",
    "india",
    "juliet",
    "kilo",
    "lima",
]
QUERIES = ["alpha bravo", "kilo lima delta", "echo hotel", "juliet", "golf india charlie"]


def _docs(start: int, count: int) -> list[dict[str, str]]:
    rng = np.random.default_rng(start)
    return [
        {"text": " ".join(rng.choice(WORDS, 6)) + f" item{i}", "source": "t", "source_id": str(i)}
        for i in range(start, start + count)
    ]


def _build(path: Path, count: int = 300) -> None:
    with trove.open(path, embedder="hash:32") as kb:
        kb.add_many(_docs(0, count))


def _answers(path: Path) -> list[list[str]]:
    with trove.open(path) as kb:
        return [[h.doc_id for h in kb.search(q, mode="semantic", limit=5)] for q in QUERIES]


def _truth(path: Path) -> list[list[str]]:
    """The answers of an index loaded from the file alone (no cache involved)."""
    with trove.open(path) as kb:
        searcher = kb.backend._searcher_for(kb.backend.vector_lock())  # type: ignore[attr-defined]
        searcher._cache_tried = True  # never look at a cache
        searcher._install(searcher._load(), save=False)
        return [[h.doc_id for h in kb.search(q, mode="semantic", limit=5)] for q in QUERIES]


def _searcher(kb: trove.Store):  # type: ignore[no-untyped-def]
    return kb.backend._searcher_for(kb.backend.vector_lock())  # type: ignore[attr-defined]


def _table(path: Path) -> str:
    with trove.open(path, embedder=None) as kb:
        lock = kb.backend.vector_lock()
        assert lock is not None
        return lock.table


def test_warm_saves_a_cache_that_a_fresh_open_maps(db_path: Path) -> None:
    _build(db_path)
    truth = _truth(db_path)
    with trove.open(db_path) as kb:
        kb.warm()
        # The process that loaded the index searches the mapped cache it saved, too.
        assert isinstance(_searcher(kb)._index, LayeredIndex)
    assert cache_path(str(db_path), _table(db_path)).exists()
    with trove.open(db_path) as kb:
        kb.search("alpha", mode="semantic")
        index = _searcher(kb)._index
        assert isinstance(index, LayeredIndex)
        assert isinstance(index.base._codes.base, np.memmap)  # mapped, not copied
        assert len(index.overlay) == 0
    assert _answers(db_path) == truth


@pytest.mark.skipif(not Path("/proc/self/maps").exists(), reason="reads /proc/self/maps")
def test_a_mapped_index_reads_its_int16_codes_rather_than_mapping_them(db_path: Path) -> None:
    # Mapped, a search's int16 rows (anywhere in the file) would soon put every page of
    # them in the process's resident memory: 384 MB of residuals at 1M chunks.
    _build(db_path, count=2_000)
    truth = _truth(db_path)
    with trove.open(db_path) as kb:
        kb.warm()
    path = cache_path(str(db_path), _table(db_path))
    header = int.from_bytes(path.read_bytes()[8:16], "little")
    with trove.open(db_path) as kb:
        assert [[h.doc_id for h in kb.search(q, mode="semantic", limit=5)] for q in QUERIES] == (
            truth
        )
        layout = sqlite_index_cache._Layout(len(_searcher(kb)._index), 32, 1, header)
        fine, codes = (layout.residuals, layout.sketch), (layout.codes, layout.residuals)
        mapped = {fine: 0, codes: 0}
        for line in Path("/proc/self/maps").read_text().splitlines():
            if line.endswith(str(path)):
                span, _, offset = line.split()[:3]
                start, end = (int(x, 16) for x in span.split("-"))
                first = int(offset, 16)
                for part in mapped:
                    mapped[part] += max(0, min(first + end - start, part[1]) - max(first, part[0]))
        assert mapped[codes] >= codes[1] - codes[0]  # the int8 codes are mapped
        assert mapped[fine] <= 2 * os.sysconf("SC_PAGE_SIZE")  # at most the pages at its edges
        assert layout.sketch - layout.residuals == 2_000 * 32  # a byte a coordinate


@pytest.mark.skipif(not Path("/proc/self/maps").exists(), reason="reads /proc/self/maps")
def test_a_save_writes_the_file_without_mapping_it(
    db_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A writable mapping's pages count in the saving process's resident memory, on top
    # of the index it saves (the whole file: 1.2 GB at 1M chunks).
    _build(db_path)
    export, seen = VectorIndex.export, []

    def export_and_look(self: VectorIndex, allocate: object) -> None:
        export(self, allocate)  # type: ignore[arg-type]
        seen.extend(
            line for line in Path("/proc/self/maps").read_text().splitlines() if ".tmp" in line
        )

    monkeypatch.setattr(VectorIndex, "export", export_and_look)
    with trove.open(db_path) as kb:
        kb.warm()
    assert cache_path(str(db_path), _table(db_path)).exists()
    assert seen == []


def test_first_query_without_cache_is_exact_and_loads_nothing(db_path: Path) -> None:
    _build(db_path)
    truth = _truth(db_path)
    with trove.open(db_path) as kb:
        first = [[h.doc_id for h in kb.search(q, mode="semantic", limit=5)] for q in QUERIES[:1]]
        assert not _searcher(kb).ready  # answered by sqlite-vec's exact scan
    assert first == truth[:1]
    assert not cache_path(str(db_path), _table(db_path)).exists()


def test_second_query_loads_in_background_and_saves_the_cache(db_path: Path) -> None:
    _build(db_path)
    with trove.open(db_path) as kb:
        for q in QUERIES:
            kb.search(q, mode="semantic")
        searcher = _searcher(kb)
        searcher._loader.join(timeout=30)
        assert searcher.ready
    assert cache_path(str(db_path), _table(db_path)).exists()


def test_deleting_the_cache_loses_nothing(db_path: Path) -> None:
    _build(db_path)
    with trove.open(db_path) as kb:
        kb.warm()
    cached = _answers(db_path)
    shutil.rmtree(f"{db_path}.trove-index")
    assert _answers(db_path) == cached == _truth(db_path)


def test_writes_after_the_save_are_seen_and_deletions_never_return(db_path: Path) -> None:
    _build(db_path)
    with trove.open(db_path) as kb:
        kb.warm()
        gone = kb.search("alpha bravo", mode="semantic", limit=1)[0].doc_id
    with trove.open(db_path, embedder="hash:32") as kb:  # another process's writes
        new = kb.add("alpha bravo alpha bravo", source="t", source_id="fresh")
        kb.delete(gone)
        kb.purge()
    with trove.open(db_path) as kb:
        hits = [h.doc_id for h in kb.search("alpha bravo", mode="semantic", limit=10)]
        index = _searcher(kb)._index
        assert isinstance(index, LayeredIndex) and len(index.overlay) == 1
    assert new in hits and gone not in hits
    assert _answers(db_path) == _truth(db_path)


@pytest.mark.parametrize("damage", ["truncate", "foreign", "empty"])
def test_a_damaged_cache_is_ignored_then_replaced(db_path: Path, damage: str) -> None:
    _build(db_path)
    with trove.open(db_path) as kb:
        kb.warm()
    path = cache_path(str(db_path), _table(db_path))
    data = path.read_bytes()
    path.write_bytes(
        {"truncate": data[: len(data) - 100], "foreign": b"x" * len(data), "empty": b""}[damage]
    )
    with trove.open(db_path) as kb:
        kb.search("alpha", mode="semantic")
        assert not _searcher(kb).ready  # not used
        kb.warm()
    assert path.read_bytes()[:8] == sqlite_index_cache.MAGIC
    assert _answers(db_path) == _truth(db_path)


def test_a_store_restored_from_an_older_copy_ignores_the_newer_cache(
    db_path: Path, tmp_path: Path
) -> None:
    _build(db_path, 100)
    old = tmp_path / "backup.db"
    with trove.open(db_path) as kb:
        kb.backend.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    shutil.copyfile(db_path, old)
    with trove.open(db_path, embedder="hash:32") as kb:
        kb.add_many(_docs(1000, 100))
        kb.warm()  # the cache now holds ids the backup never had
    os.remove(db_path)
    for suffix in ("-wal", "-shm"):
        Path(f"{db_path}{suffix}").unlink(missing_ok=True)
    shutil.copyfile(old, db_path)
    with trove.open(db_path, embedder="hash:32") as kb:  # the restored store grows again,
        kb.add_many(_docs(5000, 100))  # reusing the ids the cache knows other vectors of
    with trove.open(db_path) as kb:
        kb.search("alpha", mode="semantic")
        assert not isinstance(_searcher(kb)._index, LayeredIndex)
    assert _answers(db_path) == _truth(db_path)


def test_a_read_only_store_answers_from_its_cache(db_path: Path) -> None:
    _build(db_path)
    with trove.open(db_path) as kb:
        kb.warm()
        kb.backend.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    truth = _answers(db_path)
    os.chmod(db_path, stat.S_IRUSR | stat.S_IRGRP | stat.S_IROTH)
    try:
        with trove.open(db_path) as kb:
            hits = [[h.doc_id for h in kb.search(q, mode="semantic", limit=5)] for q in QUERIES]
            assert isinstance(_searcher(kb)._index, LayeredIndex)
    finally:
        os.chmod(db_path, 0o644)
    assert hits == truth


def test_a_read_only_store_without_a_cache_still_answers(db_path: Path) -> None:
    _build(db_path)
    truth = _truth(db_path)
    with trove.open(db_path) as kb:
        kb.backend.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    os.chmod(db_path, stat.S_IRUSR | stat.S_IRGRP | stat.S_IROTH)
    try:
        with trove.open(db_path) as kb:
            hits = [[h.doc_id for h in kb.search(q, mode="semantic", limit=5)] for q in QUERIES]
            kb.warm()  # loads privately; saving the cache fails quietly
    finally:
        os.chmod(db_path, 0o644)
    assert hits == truth
    if os.geteuid() != 0:  # root writes through file modes; see the next test
        assert not cache_path(str(db_path), _table(db_path)).exists()


def test_a_save_that_cannot_write_leaves_nothing_behind(
    db_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _build(db_path)

    def refuse(*_: object) -> None:
        raise PermissionError("read-only file system")

    monkeypatch.setattr(os, "replace", refuse)
    with trove.open(db_path) as kb:
        kb.warm()  # the load succeeds; its save does not
        assert _searcher(kb).ready
        assert kb.backend.get_meta(sqlite_index_cache.EPOCH_KEY) is None  # rolled back
    assert list(Path(f"{db_path}.trove-index").iterdir()) == []
    assert _answers(db_path) == _truth(db_path)


_WARM = """
import sys, trove
from trove.backends.sqlite.vector_index import cache
cache.MIN_ROWS = 0  # as the small_caches fixture: a cache for this small store
with trove.open(sys.argv[1]) as kb:
    kb.warm()
    print(kb.search("alpha bravo", mode="semantic", limit=3)[0].doc_id)
"""


def test_processes_opening_while_the_cache_is_rebuilt(db_path: Path) -> None:
    _build(db_path, 2000)
    runs = [
        subprocess.Popen([sys.executable, "-c", _WARM, str(db_path)], stdout=subprocess.PIPE)
        for _ in range(3)
    ]
    answers = {run.communicate(timeout=120)[0] for run in runs}
    assert all(run.returncode == 0 for run in runs)
    assert len(answers) == 1
    with trove.open(db_path) as kb:
        kb.search("alpha", mode="semantic")
        assert isinstance(_searcher(kb)._index, LayeredIndex)  # one of them left a valid cache
    assert _answers(db_path) == _truth(db_path)


_WRITER = """
import sys, trove
sys.path.insert(0, sys.argv[2])
from test_index_cache import _docs
with trove.open(sys.argv[1], embedder="hash:32") as kb:
    for start in range(10_000, 10**9, 200):
        kb.add_many(_docs(start, 200))
        print(start, flush=True)
"""


@pytest.mark.slow
def test_kill_during_a_bulk_write_leaves_file_and_cache_consistent(
    db_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sqlite_index_cache, "STALE_SHARE", 100.0)  # use it however stale
    _build(db_path, 500)
    with trove.open(db_path) as kb:
        kb.warm()
    writer = subprocess.Popen(
        [sys.executable, "-c", _WRITER, str(db_path), str(Path(__file__).parent)],
        stdout=subprocess.PIPE,
    )
    assert writer.stdout is not None
    for _ in range(3):
        writer.stdout.readline()  # a few batches committed, and more under way
    time.sleep(0.05)
    os.kill(writer.pid, signal.SIGKILL)
    writer.wait()
    with trove.open(db_path) as kb:
        stats = kb.stats()
        assert kb.backend.vector_count() == stats.chunks
        kb.search("alpha", mode="semantic")
        index = _searcher(kb)._index
        assert isinstance(index, LayeredIndex)
        assert len(index) == stats.chunks
    assert _answers(db_path) == _truth(db_path)


def test_layered_index_merges_base_and_overlay() -> None:
    rng = np.random.default_rng(1)
    vectors = rng.standard_normal((50, 16)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    whole = VectorIndex(16)
    whole.add(np.arange(1, 51), vectors)
    first = VectorIndex(16)
    first.add(np.arange(1, 41), vectors[:40])
    parts: list[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]] = []

    def allocate(n: int):  # type: ignore[no-untyped-def]
        return lambda at, ids, fine, codes, sketch: parts.append((ids, fine, codes, sketch))

    first.export(allocate)
    ids, fine, codes = (np.concatenate([p[i] for p in parts]) for i in range(3))
    sketch = np.concatenate([p[3] for p in parts], axis=1)
    adopted = VectorIndex.adopt(ids, fine.__getitem__, codes, sketch, first.rotation)
    layered = LayeredIndex(adopted)
    layered.add(np.arange(41, 51), vectors[40:])
    layered.remove([3])
    whole.remove([3])
    for q in vectors[:5]:
        assert layered.search(q, 7)[0].tolist() == whole.search(q, 7)[0].tolist()
    with pytest.raises(trove.InvalidInput):
        layered.base.add(np.array([99]), vectors[:1])


def test_a_save_removes_files_half_written_by_dead_processes(db_path: Path) -> None:
    _build(db_path)
    folder = Path(f"{db_path}.trove-index")
    folder.mkdir()
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    leftover = folder / f".chunk_vec_1.vectors.{dead.pid}.0badf00d.tmp"
    leftover.write_bytes(b"half")
    mine = folder / f".chunk_vec_1.vectors.{os.getpid()}.0badf00d.tmp"  # a live writer's
    mine.write_bytes(b"busy")
    with trove.open(db_path) as kb:
        kb.warm()
    assert not leftover.exists() and mine.exists()


def test_cache_files_are_private_like_the_store(db_path: Path) -> None:
    _build(db_path, 30_000 // 100)
    with trove.open(db_path) as kb:
        kb.warm()
    folder = Path(f"{db_path}.trove-index")
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    files = list(folder.iterdir())
    assert files and all(stat.S_IMODE(f.stat().st_mode) == 0o600 for f in files)


def test_stats_count_the_caches_beside_the_file(db_path: Path) -> None:
    _build(db_path)
    with trove.open(db_path) as kb:
        assert kb.stats().cache_bytes == 0  # none saved yet
        kb.warm()
        kb.search("alpha")  # the word index too, where it is cached
        folder = Path(f"{db_path}.trove-index")
        on_disk = sum(p.stat().st_size for p in folder.iterdir())
        stats = kb.stats()
        assert stats.cache_bytes == on_disk > 0
        assert stats.cache_bytes >= cache_path(str(db_path), _table(db_path)).stat().st_size
        assert kb.stats("default").cache_bytes == 0  # a namespace's share is not known
    cli = subprocess.run(
        [sys.executable, "-m", "trove", "--db", str(db_path), "stats"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert ["cache_bytes", str(on_disk)] in [line.split() for line in cli.stdout.splitlines()]


def test_the_file_gives_back_the_int16_codes_it_saved_bit_for_bit(tmp_path: Path) -> None:
    # The file keeps a byte a coordinate (what the int8 code leaves over) and whole rows
    # only for vectors whose int8 code clips: both read back as the codes that were saved.
    rng = np.random.default_rng(7)
    index = VectorIndex(64)
    spread = rng.standard_normal((300, 64)).astype(np.float32)
    # Turned back by the rotation, these are near one axis after it: coordinates past
    # 0.5, which the int8 code clips.
    peaked = np.tile(index.rotation[:, 3], (5, 1)) + 0.05 * rng.standard_normal((5, 64))
    vectors = np.concatenate([spread, peaked.astype(np.float32)])
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    index.add(np.arange(1, 306) * 3, vectors)
    index.remove([6, 903])
    lock = EmbedderLock("hash:64", "hash", 64, "chunk_vec_1")
    path = tmp_path / "chunk_vec_1.vectors"
    sqlite_index_cache._write(path, "e", lock, index)
    read = sqlite_index_cache._read(path, "e", lock)
    assert read is not None
    everything = np.arange(len(read))
    saved = index._fine_rows(np.flatnonzero(index._alive[: index._n]))
    assert np.array_equal(read._fine_rows(everything), saved)
    assert np.array_equal(read._fine_rows(everything[::-1]), saved[::-1])
    header = int.from_bytes(path.read_bytes()[8:16], "little")
    layout = sqlite_index_cache._Layout(303, 64, 1, header)
    whole = int((np.abs(saved).max(axis=1) > 127.5 * 129).sum())  # clipped by the int8 code
    assert whole >= 4  # the 4 peaked rows still there
    assert path.stat().st_size == layout.size(whole) < layout.size(0) + 2 * 64 * 303
    for q in vectors[:20]:
        assert read.search(q, 5)[0].tolist() == index.search(q, 5)[0].tolist()
    with path.open("r+b") as handle:  # a file cut short is not used
        handle.truncate(layout.size(whole) - 1)
    assert sqlite_index_cache._read(path, "e", lock) is None


def _cache_files(path: Path) -> list[str]:
    folder = Path(f"{path}.trove-index")
    return sorted(p.name for p in folder.iterdir()) if folder.exists() else []


def test_a_store_under_min_rows_keeps_no_cache_files(
    db_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sqlite_index_cache, "MIN_ROWS", MIN_ROWS)  # the default
    _build(db_path)
    truth = _truth(db_path)
    with trove.open(db_path) as kb:
        kb.warm()  # both indexes built in memory, neither saved
        assert isinstance(_searcher(kb)._index, VectorIndex)
        assert kb.backend._words._index is not None  # type: ignore[attr-defined]
        assert [[h.doc_id for h in kb.search(q, mode="semantic", limit=5)] for q in QUERIES] == (
            truth
        )
        assert kb.stats().cache_bytes == 0
    assert _cache_files(db_path) == []
    assert _answers(db_path) == truth  # a fresh process rebuilds them


def test_the_files_are_kept_from_min_rows_rows_on(
    db_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sqlite_index_cache, "MIN_ROWS", 301)
    _build(db_path, 300)
    with trove.open(db_path) as kb:
        kb.warm()
    assert _cache_files(db_path) == []
    with trove.open(db_path) as kb:
        kb.add_many(_docs(300, 1))
        kb.warm()
        assert kb.stats().cache_bytes > 0
    assert _cache_files(db_path) == [f"{_table(db_path)}.vectors", "words.postings"]
