"""The word index, persisted beside the store file: mapped, shared, caught up by id.

``<store>.trove-index/words.postings`` holds a :class:`WordIndex` (the vocabulary in
term order, every segment's postings, each row's chunk id and length). A process maps the
postings read-only, so processes serving one store share them, and opening costs reading
the chunk ids and the vocabulary rather than tokenizing every chunk (tens of seconds at
100k chunks on a busy machine).

Why it is never wrong, as for the vector cache (see vector_index/cache.py): a save
commits a fresh epoch to ``meta`` as the file takes its place, and the file is used only
while the two agree (a restored or replaced store has another epoch); chunk ids are never
reused and a chunk's text never changes under its id, so the rows the cache shares with
the chunk table are right; opening drops the rows gone since and indexes the new ones.
The schema version is in the header too (the tokenizer belongs to the schema). A
truncated or foreign file is ignored; too stale a one (``STALE_SHARE``) is rebuilt.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from trove.backends.sqlite.connection import cache_folder
from trove.backends.sqlite.vector_index.cache import private_file, save_file
from trove.backends.sqlite.word_index.fts import WordIndex, _Segment

if TYPE_CHECKING:
    import numpy as np

    from trove.backends.sqlite.parts import SQLiteParts
    from trove.backends.sqlite.word_index.fts import Tokenizer
else:  # numpy loads where first used: opening a store, stats, keyword search need none
    from trove.lazy import numpy as np

MAGIC = b"TROVEWRD"
FORMAT = 1
EPOCH_KEY = "word_cache_epoch"
STALE_SHARE = 0.2
_ALIGN = 64
_PREFIX = len(MAGIC) + 16  # magic, header length, file size
# Segment arrays that are never written to after a load (a merge builds a new segment):
# stored narrowed; the ids, lengths and alive flags grow in place and keep their types.
_NARROW = ("starts", "tf")


def cache_path(db_path: str) -> Path:
    return Path(cache_folder(db_path)) / "words.postings"


def load(backend: SQLiteParts, tokenize: Tokenizer) -> WordIndex | None:
    """The cached word index caught up with the file, or None (no usable cache)."""
    if backend.memory:
        return None
    epoch = backend.get_meta(EPOCH_KEY)
    if epoch is None:
        return None
    schema = int(backend.conn.execute("PRAGMA user_version")[0][0])
    index = _read(cache_path(backend.path), epoch, schema, tokenize)
    if index is None:
        return None
    cached = np.sort(index.ids())
    stored = backend.live_chunk_ids()
    gone = np.setdiff1d(cached, stored, assume_unique=True)
    missing = np.setdiff1d(stored, cached, assume_unique=True)
    if len(gone) + len(missing) > STALE_SHARE * max(len(cached), 1):
        return None
    index.remove(gone.tolist())
    for start in range(0, len(missing), 1_000):
        index.add(backend.chunk_texts(missing[start : start + 1_000].tolist()))
    return index


def save(backend: SQLiteParts, index: WordIndex) -> bool:
    """Write ``index`` (complete for this store) as its cache; False if it cannot be."""
    if backend.memory:
        return False

    def write(tmp: Path, epoch: str) -> None:
        schema = int(backend.conn.execute("PRAGMA user_version")[0][0])
        _write(tmp, epoch, schema, index)

    return save_file(backend, cache_path(backend.path), EPOCH_KEY, write, rows=len(index))


def _write(path: Path, epoch: str, schema: int, index: WordIndex) -> None:
    state = index.state()
    vocab = "\n".join(state.pop("vocab")).encode()
    arrays: list[tuple[str, np.ndarray]] = [("vocab", np.frombuffer(vocab, np.uint8))]
    for name in ("ids", "length", "alive"):
        arrays.append((name, state.pop(name)))
    segments = state.pop("segments")
    state["segments"] = [{"first_row": g.first_row, "row_count": g.row_count} for g in segments]
    for i, segment in enumerate(segments):
        for name in ("terms", "starts", "rows", "tf"):
            array = getattr(segment, name)
            arrays.append((f"{i}.{name}", _narrow(array) if name in _NARROW else array))
    entries, offset = [], 0
    for name, array in arrays:
        entries.append([name, array.dtype.str, list(array.shape), offset])
        offset = _aligned(offset + array.nbytes)
    header = json.dumps(
        {"format": FORMAT, "epoch": epoch, "schema": schema, "arrays": entries, **state}
    ).encode()
    start = _aligned(_PREFIX + len(header))
    with private_file(path) as handle:
        # The file's own size is in its prefix: a truncated copy is told from a whole one.
        size = (start + offset).to_bytes(8, "little")
        handle.write(MAGIC + len(header).to_bytes(8, "little") + size + header)
        for (_, array), (_, _, _, at) in zip(arrays, entries, strict=True):
            handle.seek(start + at)
            handle.write(np.ascontiguousarray(array).tobytes())
        handle.truncate(start + offset)
        handle.flush()
        os.fsync(handle.fileno())


def _narrow(array: np.ndarray) -> np.ndarray:
    """``array`` in the narrowest integer type of its kind that holds every value of it:
    the file records each array's type, and a search reads a uint8 frequency or an int32
    offset as it does a wider one (SciFact: every frequency below 256, 0.7 MiB saved)."""
    if not len(array):
        return array
    for dtype in (np.uint8, np.uint16, np.int32):
        info = np.iinfo(dtype)
        if info.min <= int(array.min()) and int(array.max()) <= info.max:
            return array if array.dtype.itemsize <= info.bits // 8 else array.astype(dtype)
    return array


def _aligned(offset: int) -> int:
    return -(-offset // _ALIGN) * _ALIGN


def _read(path: Path, epoch: str, schema: int, tokenize: Tokenizer) -> WordIndex | None:
    try:
        with path.open("rb") as handle:
            prefix = handle.read(_PREFIX)
            if len(prefix) < _PREFIX or prefix[: len(MAGIC)] != MAGIC:
                return None
            length = int.from_bytes(prefix[len(MAGIC) : len(MAGIC) + 8], "little")
            expected = int.from_bytes(prefix[len(MAGIC) + 8 :], "little")
            if length > 64 << 20:
                return None
            header: Any = json.loads(handle.read(length))
        size = path.stat().st_size
    except (OSError, ValueError):
        return None
    if size != expected or not isinstance(header, dict) or header.get("format") != FORMAT:
        return None  # truncated, or not a file this code wrote
    if header.get("epoch") != epoch or header.get("schema") != schema:
        return None
    start = _aligned(_PREFIX + length)
    arrays: dict[str, np.ndarray] = {}
    try:
        for name, dtype, shape, at in header["arrays"]:
            count = int(np.prod(shape))
            if start + at + count * np.dtype(dtype).itemsize > size:
                return None
            if count == 0:
                arrays[name] = np.zeros(shape, dtype)
            else:
                # A plain view of the mapped pages: operations on np.memmap return memmaps,
                # whose bookkeeping doubled warm query times.
                mapped = np.memmap(path, dtype, "r", start + at, tuple(shape))
                arrays[name] = np.asarray(mapped)
        raw = arrays.pop("vocab")
        vocab = bytes(raw).decode().split("\n") if len(raw) else []
        segments = []
        for i, meta in enumerate(header["segments"]):
            part = [arrays[f"{i}.{k}"] for k in ("terms", "starts", "rows", "tf")]
            first, count = meta["first_row"], meta["row_count"]
            segments.append(_Segment(part[0], part[1], part[2], part[3], first, count))
        scalars = {k: header[k] for k in ("rows", "newest", "live", "live_tokens")}
        ids, lengths, alive = arrays["ids"], arrays["length"], arrays["alive"]
    except (KeyError, TypeError, ValueError, UnicodeDecodeError):
        return None
    return WordIndex.adopt(tokenize, vocab, segments, ids, lengths, alive, **scalars)
