"""Ingest a folder: read each file that changed, store it, skip what did not.

A file's document is keyed by (namespace, source, path relative to the root), so
re-running updates in place. Unchanged files cost one hash and no parsing.
"""

from __future__ import annotations

import fnmatch
import hashlib
import os
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import NotFound, TroveError
from ..timeutil import to_iso
from .readers import READERS, Unreadable

if TYPE_CHECKING:
    from ..store import Store

from ..ids import document_id

DEFAULT_MAX_BYTES = 100 * 1024 * 1024
_BATCH_BYTES = 16 * 1024 * 1024
_BATCH_FILES = 256


@dataclass
class IngestReport:
    """What one ingest run did, file by file where it matters."""

    added: int = 0
    updated: int = 0
    unchanged: int = 0
    deleted: int = 0
    skipped: list[tuple[str, str]] = field(default_factory=list)
    failed: list[tuple[str, str]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "added": self.added,
            "updated": self.updated,
            "unchanged": self.unchanged,
            "deleted": self.deleted,
            "skipped": [{"path": p, "reason": r} for p, r in self.skipped],
            "failed": [{"path": p, "reason": r} for p, r in self.failed],
        }


Progress = Callable[[str], None]


def ingest(
    store: Store,
    root: str | os.PathLike[str],
    *,
    source: str | None = None,
    namespace: str = "default",
    include: Sequence[str] = (),
    exclude: Sequence[str] = (),
    sync: bool = False,
    max_bytes: int = DEFAULT_MAX_BYTES,
    progress: Progress | None = None,
) -> IngestReport:
    """Store every readable file under ``root`` (or ``root`` itself if it is a file)."""
    base = Path(root).expanduser()
    if not base.exists():
        raise NotFound(f"{base} does not exist")
    base = base.resolve()
    folder = base if base.is_dir() else base.parent
    source = source if source is not None else folder.name
    known = {
        sid: (digest, deleted) for sid, _, digest, deleted in store.iter_source(namespace, source)
    }
    report = IngestReport()
    seen: set[str] = set()
    batch: list[dict[str, Any]] = []
    batch_bytes = 0
    for path in iter_files(base, include, exclude):
        rel = path.relative_to(folder).as_posix()
        seen.add(rel)
        if progress:
            progress(rel)
        item = _read(path, rel, known, max_bytes, report)
        if item is None:
            continue
        item.update(source=source, source_id=rel, namespace=namespace)
        batch.append(item)
        batch_bytes += len(item["text"])
        if len(batch) >= _BATCH_FILES or batch_bytes >= _BATCH_BYTES:
            _flush(store, batch, report)
            batch, batch_bytes = [], 0
    _flush(store, batch, report)
    if sync and base.is_dir():
        for rel, (_, deleted) in known.items():
            if rel not in seen and not deleted:
                store.delete(document_id(namespace, "workspace", source, rel, None, ""))
                report.deleted += 1
    return report


def iter_files(base: Path, include: Sequence[str], exclude: Sequence[str]) -> Iterator[Path]:
    """Files under ``base`` in a stable order; hidden entries and symlinked folders are
    not entered (that also makes symlink loops harmless)."""
    if base.is_file():
        yield base
        return
    for dirpath, dirnames, filenames in os.walk(base, followlinks=False):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        for name in sorted(filenames):
            if name.startswith("."):
                continue
            path = Path(dirpath) / name
            rel = path.relative_to(base).as_posix()
            if include and not any(fnmatch.fnmatch(rel, p) for p in include):
                continue
            if any(fnmatch.fnmatch(rel, p) for p in exclude):
                continue
            if path.is_symlink() and not _inside(path, base):
                continue
            yield path


def _read(
    path: Path,
    rel: str,
    known: dict[str, tuple[str, bool]],
    max_bytes: int,
    report: IngestReport,
) -> dict[str, Any] | None:
    reader = READERS.get(path.suffix.lower())
    if reader is None:
        report.skipped.append((rel, "unsupported file type"))
        return None
    try:
        stat = path.stat()
        if stat.st_size > max_bytes:
            report.skipped.append((rel, f"larger than {max_bytes} bytes"))
            return None
        data = path.read_bytes()
    except OSError as exc:  # vanished or unreadable between listing and reading
        report.failed.append((rel, exc.strerror or str(exc)))
        return None
    previous = known.get(rel)
    # The store hashes the UTF-8 text, which is exactly the bytes of a text file.
    if previous and not previous[1] and hashlib.sha256(data).hexdigest() == previous[0]:
        report.unchanged += 1
        return None
    try:
        item = reader(path, data)
    except Unreadable as exc:
        report.skipped.append((rel, str(exc).split(": ", 1)[-1]))
        return None
    item.setdefault("timestamp", to_iso(stat.st_mtime))
    return item


def _flush(store: Store, batch: list[dict[str, Any]], report: IngestReport) -> None:
    if not batch:
        return
    try:
        results = store.write_many(batch)
    except TroveError as exc:
        for item in batch:
            report.failed.append((item["source_id"], str(exc)))
        return
    for result in results:
        if result.action == "added":
            report.added += 1
        elif result.action == "unchanged":
            report.unchanged += 1
        else:
            report.updated += 1


def _inside(path: Path, base: Path) -> bool:
    try:
        path.resolve().relative_to(base)
    except ValueError:
        return False
    return True
