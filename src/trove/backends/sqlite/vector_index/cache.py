"""The vector index, persisted beside the store file: opened in milliseconds, shared.

``<store>.trove-index/<vector table>.vectors`` holds what :class:`VectorIndex` keeps in
memory (int16 and int8 codes and the sign-bit sketch, rows in id order; the int16 codes
as residuals of the int8 ones, fine_rows.py). A process maps the ids, int8 codes and
sketch read-only, so every process serving one store shares their pages through the OS
page cache, and opening it costs reading the vector table's list of ids, not the seconds
(at 100k chunks) of reading and encoding every vector. The residuals are read (``pread``)
for the few rows a search rescores, not mapped: a search's rows are anywhere in the
file, so a mapping would soon hold every page of them in the process's resident memory
(384 MB at 1M chunks).

It is a cache: the store file stays the truth, deleting the directory loses nothing, and
a cache that does not match the file is never used. Why a matching one is right:
- each save commits a fresh random *epoch* to the store's ``meta`` table and writes it
  into the file; the file is used only while the two agree. A store restored from an
  older copy, or another store at the same path, holds another epoch (or none);
- chunk ids are AUTOINCREMENT, never reused within a store's history, and a chunk's vector
  never changes under its id in one vector table (changed text gets new chunk ids;
  re-embedding writes a new table, which has its own cache file). So every id the cache
  shares with the vector table carries the right vector. Opening drops the cached ids the
  table no longer has and reads the vectors it lacks from the file (a private overlay);
- the file is written aside, flushed, and renamed into place while the epoch commits, so
  a crash leaves the old file or the new one; a truncated or foreign file (its size, magic
  and header are checked) is ignored.
When much has changed since the save (``STALE_SHARE``), the cache is not used: the caller
loads the index from the file and saves a fresh cache.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO

import apsw

from trove.backends.sqlite.connection import cache_folder
from trove.backends.sqlite.vector_index.codes import decode
from trove.backends.sqlite.vector_index.fine_rows import FileRows, split
from trove.backends.sqlite.vector_index.index import RowWriter, VectorIndex

if TYPE_CHECKING:
    import secrets

    import numpy as np

    from trove.backends.base import EmbedderLock
    from trove.backends.sqlite.parts import SQLiteParts
else:  # numpy loads where first used: opening a store, stats, keyword search need none
    from trove.lazy import LazyModule
    from trove.lazy import numpy as np

    secrets = LazyModule("secrets")  # with random, hmac and hashlib: for a new cache file

MAGIC = b"TROVEVEC"
FORMAT = 3  # 2: int8 codes beside the int16 ones; 3: int16 codes as residuals
EPOCH_KEY = "vector_cache_epoch"
# Past this share of rows gone or new since the save, load from the file instead.
STALE_SHARE = 0.2
# An index of fewer rows is rebuilt from the store by each process that needs it, and no
# file is kept: at SciFact's 8,719 chunks both indexes build in 0.6-0.9 s of one core
# (in the background, from a process's second query), while their files would add 10 MB
# (1,214 bytes a chunk) to a 27 MB store (docs/benchmarks.md, "Caches where they pay").
MIN_ROWS = 10_000
_ALIGN = 64
_LOOKUPS = 256  # missing ids below the cache's newest: looked up one by one, up to this


def cache_path(db_path: str, table: str) -> Path:
    return Path(cache_folder(db_path)) / f"{table}.vectors"


class LayeredIndex:
    """A read-only mapped base index plus a private in-memory overlay of later rows:
    the interface of :class:`VectorIndex` that the semantic searcher uses."""

    def __init__(self, base: VectorIndex) -> None:
        self.base = base
        self.dimension = base.dimension
        self.overlay = VectorIndex(base.dimension, base.rotation)

    def __len__(self) -> int:
        return len(self.base) + len(self.overlay)

    @property
    def nbytes(self) -> int:
        return self.base.nbytes + self.overlay.nbytes

    def add(self, ids: np.ndarray, vectors: np.ndarray) -> None:
        self.base.remove(ids)  # a row lives in one layer
        self.overlay.add(ids, vectors)

    def remove(self, ids: np.ndarray) -> None:
        self.base.remove(ids)
        self.overlay.remove(ids)

    def ids(self) -> np.ndarray:
        return np.concatenate([self.base.ids(), self.overlay.ids()])

    def search(
        self, query: np.ndarray, k: int, candidates: np.ndarray | None = None
    ) -> tuple[np.ndarray, np.ndarray]:
        ids, scores = self.base.search(query, k, candidates)
        if not len(self.overlay):
            return ids, scores
        more_ids, more_scores = self.overlay.search(query, k, candidates)
        ids, scores = np.concatenate([ids, more_ids]), np.concatenate([scores, more_scores])
        order = np.argsort(-scores, kind="stable")[:k]
        return ids[order], scores[order]


def load(backend: SQLiteParts, lock: EmbedderLock) -> LayeredIndex | None:
    """The cached index of ``lock.table``, caught up with the file; None when there is no
    usable cache (none, foreign, truncated, another epoch, or too stale)."""
    if backend.memory:
        return None
    epoch = backend.get_meta(EPOCH_KEY)
    if epoch is None:
        return None
    base = _read(cache_path(backend.path, lock.table), epoch, lock)
    if base is None:
        return None
    cached = base.ids()
    stored = vector_ids(backend, lock.table)
    gone = np.setdiff1d(cached, stored, assume_unique=True)
    missing = np.setdiff1d(stored, cached, assume_unique=True)
    newest = int(cached[-1]) if len(cached) else 0
    old_missing = missing[missing <= newest]
    if len(gone) + len(missing) > STALE_SHARE * max(len(cached), 1):
        return None
    if len(old_missing) > _LOOKUPS:
        return None
    index = LayeredIndex(base)
    index.remove(gone)
    for ids, vectors in backend.iter_vectors(lock.table, after=newest):
        index.add(ids, vectors)
    if len(old_missing):
        ids, vectors = _vectors_of(backend, lock, old_missing)
        index.add(ids, vectors)
    return index


def save(backend: SQLiteParts, lock: EmbedderLock, index: VectorIndex) -> bool:
    """Write ``index`` (loaded from this store's ``lock.table``) as the store's cache; False
    when the store or its directory cannot be written (read-only: the cache is optional)."""
    if backend.memory:
        return False
    path = cache_path(backend.path, lock.table)

    def write(tmp: Path, epoch: str) -> None:
        _write(tmp, epoch, lock, index)

    return save_file(backend, path, EPOCH_KEY, write, rows=len(index))


def save_file(
    backend: SQLiteParts,
    path: Path,
    epoch_key: str,
    write: Callable[[Path, str], None],
    *,
    rows: int,
) -> bool:
    """Write a cache file of an index of ``rows`` rows beside the store (``write(temporary
    path, epoch)``) and put it in place as its epoch commits to ``meta`` under
    ``epoch_key``; False when the index is too small to be worth a file (``MIN_ROWS``) or
    the store or its directory cannot be written (read-only: a cache is optional)."""
    if rows < MIN_ROWS:
        return False
    if backend.conn.read_only:
        return False  # nothing is written beside a store opened read-only
    epoch = secrets.token_hex(16)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
    try:
        path.parent.mkdir(mode=0o700, exist_ok=True)  # private, as the store file is
        remove_leftovers(path.parent)
        write(tmp, epoch)
        # The epoch commits as the file takes its place: one of the two saving processes
        # wins both, or the file and the epoch disagree and the cache is not used.
        with backend.transaction():
            backend.set_meta(epoch_key, epoch)
            os.replace(tmp, path)
    except (OSError, apsw.Error):  # read-only, busy, closed meanwhile: no cache this time
        with contextlib.suppress(OSError):
            tmp.unlink()
        return False
    return True


def private_file(path: Path) -> BinaryIO:
    """A new file only its owner can read: the cache holds what the store holds."""
    return os.fdopen(os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600), "wb")


def remove_leftovers(folder: Path) -> None:
    """Delete half-written files of saving processes that died (kill -9, power loss):
    each is as large as the cache it was to become."""
    for leftover in folder.glob(".*.tmp"):
        try:
            pid = int(leftover.name.split(".")[-3])
            os.kill(pid, 0)  # raises if no such process
        except ProcessLookupError:
            with contextlib.suppress(OSError):
                leftover.unlink()
        except (ValueError, IndexError, OSError):
            continue


def vector_ids(backend: SQLiteParts, table: str) -> np.ndarray:
    """Every chunk id with a vector in ``table``, ascending."""
    # The ids' own index is faster to read than the table (every vector's page), and one
    # string parsed by numpy faster than a Python object a row.
    rows = backend.conn.execute(
        f"SELECT group_concat(id) FROM (SELECT id FROM {table} INDEXED BY {table}_ids ORDER BY id)"
    )
    text = rows[0][0] if rows else None
    ids = np.fromstring(text, np.int64, sep=",") if text else np.zeros(0, np.int64)
    return ids if bool(np.all(ids[1:] > ids[:-1])) else np.unique(ids)


def _vectors_of(
    backend: SQLiteParts, lock: EmbedderLock, ids: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    found, blobs = [], []
    for cid in ids.tolist():
        for row in backend.conn.execute(f"SELECT codes FROM {lock.table} WHERE id = ?", (cid,)):
            found.append(cid)
            blobs.append(row[0])
    vectors = decode(blobs) if blobs else np.zeros((0, lock.dimension), np.float32)
    return np.asarray(found, np.int64), vectors


class _Layout:
    """Offsets of the rotation, ids, int8 codes, residuals and sketch, then of the count
    of rows kept whole, their row numbers and their int16 codes; the file's size."""

    def __init__(self, n: int, dimension: int, words: int, header: int) -> None:
        self.rotation = _aligned(len(MAGIC) + 8 + header)
        self.ids = _aligned(self.rotation + 4 * dimension * dimension)
        self.codes = _aligned(self.ids + 8 * n)
        self.residuals = _aligned(self.codes + n * dimension)
        self.sketch = _aligned(self.residuals + n * dimension)
        self.aside = _aligned(self.sketch + 8 * words * n)  # the count, then row numbers
        self._dimension = dimension

    def whole(self, aside: int) -> int:
        """Offset of the int16 codes of the ``aside`` rows kept whole."""
        return _aligned(self.aside + 8 + 8 * aside)

    def size(self, aside: int) -> int:
        return self.whole(aside) + 2 * self._dimension * aside


def _aligned(offset: int) -> int:
    return -(-offset // _ALIGN) * _ALIGN


def _header(epoch: str, lock: EmbedderLock, n: int) -> bytes:
    return json.dumps(
        {"format": FORMAT, "epoch": epoch, "lock": lock.to_dict(), "rows": n}, sort_keys=True
    ).encode()


def _write(path: Path, epoch: str, lock: EmbedderLock, index: VectorIndex) -> None:
    d = index.dimension
    words = -(-d // 64)
    handles: list[BinaryIO] = []
    layouts: list[_Layout] = []
    aside_rows: list[np.ndarray] = []
    aside_fine: list[np.ndarray] = []

    def allocate(n: int) -> RowWriter:
        header = _header(epoch, lock, n)
        at = _Layout(n, d, words, len(header))
        handle = private_file(path)
        handles.append(handle)
        handle.write(MAGIC + len(header).to_bytes(8, "little") + header)
        handle.seek(at.rotation)
        handle.write(np.ascontiguousarray(index.rotation, np.float32).tobytes())
        handle.truncate(at.size(0))
        handle.flush()
        layouts.append(at)
        fd = handle.fileno()

        # Written, not mapped: the pages of a writable mapping would count in this
        # process's resident memory (the whole file, 0.9 GB at 1M chunks) on top of the
        # index being saved.
        def write(
            start: int, ids: np.ndarray, fine: np.ndarray, codes: np.ndarray, sketch: np.ndarray
        ) -> None:
            residuals, aside = split(fine, codes)
            aside_rows.append(start + np.flatnonzero(aside))
            aside_fine.append(fine[aside])
            _write_at(fd, ids.astype(np.int64), at.ids + 8 * start)
            _write_at(fd, codes, at.codes + d * start)
            _write_at(fd, residuals, at.residuals + d * start)
            for word in range(words):  # a line of the sketch per word
                _write_at(fd, sketch[word], at.sketch + 8 * (word * n + start))

        return write

    try:
        index.export(allocate)
        for handle, at in zip(handles, layouts, strict=True):
            rows = np.concatenate([np.zeros(0, np.int64), *aside_rows]).astype(np.int64)
            fd, count = handle.fileno(), len(rows)
            _write_at(fd, np.array([count, *rows.tolist()], np.int64), at.aside)
            if count:
                _write_at(fd, np.concatenate(aside_fine).astype(np.int16), at.whole(count))
            os.ftruncate(fd, at.size(count))
            os.fsync(handle.fileno())
    finally:
        for handle in handles:
            handle.close()


def _write_at(fd: int, array: np.ndarray, offset: int) -> None:
    data = memoryview(np.ascontiguousarray(array).tobytes())
    while data:
        written = os.pwrite(fd, data, offset)
        data, offset = data[written:], offset + written


def _mapped(path: Path, dtype: Any, mode: Any, offset: int, shape: tuple[int, ...]) -> np.ndarray:
    """A read-only view of part of ``path``'s pages, as a plain ndarray: operations on an
    ``np.memmap`` return memmaps, whose bookkeeping doubled warm query times."""
    return np.asarray(np.memmap(path, dtype, mode, offset, shape))


def _read(path: Path, epoch: str, lock: EmbedderLock) -> VectorIndex | None:
    """The mapped index in ``path`` if it is whole and of this epoch and embedder."""
    try:
        with path.open("rb") as handle:
            start = handle.read(len(MAGIC) + 8)
            if len(start) < len(MAGIC) + 8 or start[: len(MAGIC)] != MAGIC:
                return None
            length = int.from_bytes(start[len(MAGIC) :], "little")
            if length > 1 << 20:
                return None
            header = json.loads(handle.read(length))
        size = path.stat().st_size
    except (OSError, ValueError):
        return None
    if not isinstance(header, dict) or header.get("format") != FORMAT:
        return None
    if header.get("epoch") != epoch or header.get("lock") != lock.to_dict():
        return None
    n, d = header.get("rows"), lock.dimension
    if not isinstance(n, int) or n < 0:
        return None
    words = -(-d // 64)
    at = _Layout(n, d, words, length)
    aside = _aside_rows(path, at, size, n)
    if aside is None:  # truncated (or grown): not ours to trust
        return None
    rotation = np.array(np.memmap(path, np.float32, "r", at.rotation, (d, d)))
    if n == 0:
        ids, codes = np.zeros(0, np.int64), np.zeros((0, d), np.int8)
        rows = FileRows(path, codes, at.residuals, aside, at.whole(0))
        return VectorIndex.adopt(ids, rows, codes, np.zeros((words, 0), np.uint64), rotation)
    ids = _mapped(path, np.int64, "r", at.ids, (n,))
    if n > 1 and not bool(np.all(ids[1:] > ids[:-1])):
        return None
    codes = _mapped(path, np.int8, "r", at.codes, (n, d))
    sketch = _mapped(path, np.uint64, "r", at.sketch, (words, n))
    rows = FileRows(path, codes, at.residuals, aside, at.whole(len(aside)))
    return VectorIndex.adopt(ids, rows, codes, sketch, rotation)


def _aside_rows(path: Path, at: _Layout, size: int, n: int) -> np.ndarray | None:
    """The row numbers kept whole (ascending, each below ``n``), or None when the file's
    size is not what they and the layout make it."""
    if size < at.size(0):
        return None
    try:
        with path.open("rb") as handle:
            handle.seek(at.aside)
            count = int.from_bytes(handle.read(8), "little")
            if count > n or size != at.size(count):
                return None
            rows = np.frombuffer(handle.read(8 * count), np.int64)
    except OSError:
        return None
    if len(rows) != count or (count and not (rows[0] >= 0 and rows[-1] < n)):
        return None
    return rows if bool(np.all(rows[1:] > rows[:-1])) else None
