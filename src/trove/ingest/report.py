"""What an ingest run did, and how far along it is."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import Any

UNSUPPORTED = "unsupported file type"


@dataclass
class IngestReport:
    """Counts are of documents (an mbox holds many); problems are named by path
    (``path#message-id`` or ``path#line 12`` inside a container)."""

    added: int = 0
    updated: int = 0
    unchanged: int = 0
    deleted: int = 0
    # (old path, new path) of files that were renamed or moved: same documents.
    moved: list[tuple[str, str]] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)
    failed: list[tuple[str, str]] = field(default_factory=list)
    # (path, note) about documents stored with a caveat (text decoded with replacements).
    notes: list[tuple[str, str]] = field(default_factory=list)
    files: int = 0
    # Files whose content was read; the others were known unchanged by their stat.
    files_read: int = 0
    chunks: int = 0
    links: int = 0
    # Originals stored in this run (keep_originals), unchanged files' included.
    originals: int = 0
    seconds: float = 0.0
    dry_run: bool = False

    @property
    def unsupported(self) -> Counter[str]:
        """Files skipped for their type, by suffix."""
        return Counter(
            PurePosixPath(path).suffix.lower() or "(none)"
            for path, reason in self.skipped
            if reason == UNSUPPORTED
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "added": self.added,
            "updated": self.updated,
            "unchanged": self.unchanged,
            "deleted": self.deleted,
            "moved": [{"from": a, "to": b} for a, b in self.moved],
            "skipped": [{"path": p, "reason": r} for p, r in self.skipped],
            "failed": [{"path": p, "reason": r} for p, r in self.failed],
            "files": self.files,
            "files_read": self.files_read,
            "chunks": self.chunks,
            "links": self.links,
            "originals": self.originals,
            "seconds": round(self.seconds, 3),
            "dry_run": self.dry_run,
        }

    def summary(self) -> str:
        verb = "would be " if self.dry_run else ""
        kept = f", {self.originals} {verb}originals kept" if self.originals else ""
        return (
            f"{self.added} {verb}added, {self.updated} {verb}updated, "
            f"{self.unchanged} unchanged, {self.deleted} {verb}deleted, "
            f"{len(self.moved)} {verb}moved, {len(self.skipped)} skipped, "
            f"{len(self.failed)} failed{kept}"
        )


@dataclass(frozen=True)
class IngestProgress:
    """Where a run is: called after the listing, after each file and after each write."""

    files_total: int
    files_done: int
    documents: int
    chunks: int
    current: str


ProgressCallback = Callable[[IngestProgress], None]
