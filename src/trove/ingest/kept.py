"""Originals of unchanged files: ``keep_originals`` asked of a file stored without them.

A file that did not change is not parsed or written again, so the originals it should
have are attached here instead: a whole-file document takes the file's bytes as they
are (no parsing, no chunking, no embedding); a file whose records carry their own bytes
(the messages of an mbox, the attachments of a mail) is read again, and its documents,
whose text is the same, are left as stored while their originals are kept.
"""

from __future__ import annotations

from pathlib import Path

from trove.errors import TroveError
from trove.ingest.known import Known
from trove.ingest.readers import Format
from trove.ingest.report import IngestReport
from trove.ingest.target import Target


class Missing:
    """Finds (and, for whole files, attaches) the originals unchanged files lack."""

    def __init__(
        self, store: Target, known: Known, folder: Path, report: IngestReport, *, dry_run: bool
    ) -> None:
        self.store = store
        self.known = known
        self.folder = folder
        self.report = report
        self.dry_run = dry_run
        self.kept: set[str] | None = None  # ids of the source's documents with one

    def _has(self, sid: str) -> bool:
        if self.kept is None:  # one look-up for the run, at its first unchanged file
            self.kept = self.store.with_originals([d.doc_id for d in self.known.docs.values()])
        return self.known.docs[sid].doc_id in self.kept

    def settled(self, rel: str, fmt: Format) -> bool:
        """Whether the unchanged file ``rel`` has every original it should have now;
        False when it must be read again for them."""
        lacking = [
            sid
            for sid in self.known.live(rel)
            if (sid == rel or fmt.record_originals) and not self._has(sid)
        ]
        if not lacking:
            return True
        if lacking != [rel]:
            return False  # records' own bytes: only reading the file gives them
        if not self.dry_run:
            try:
                path = self.folder / rel
                self.store.attach_original(self.known.docs[rel].doc_id, path, path.name, "")
            except (TroveError, OSError) as exc:
                self.report.failed.append((rel, f"original not kept: {exc}"))
                return True
        self.report.originals += 1
        return True
