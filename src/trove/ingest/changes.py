"""Which files changed since they were stored: the stat, hash, move and gone decisions
of one ingest run.

- unchanged: same hash as when it was stored (for Markdown and text, the document's own
  content hash; for derived formats, the hash recorded of the file), or, without
  reading it, the size and times recorded with that hash;
- moved: a new path whose content is that of a file that is gone; its documents keep
  their ids and take the new path;
- gone: stored, no longer there (tombstoned when the run syncs).
"""

from __future__ import annotations

import hashlib
import os
import time
from collections import defaultdict
from collections.abc import Collection
from pathlib import Path

from trove.backends.file_state import FileStat
from trove.ingest.files import FileEntry
from trove.ingest.known import Known
from trove.ingest.readers import Format, ReadOptions, format_for
from trove.ingest.readers.records import keyed_hash

_EMPTY = hashlib.sha256(b"").hexdigest()
# A file modified this close before a run started may change again within the same tick
# of its clock, keeping its size and mtime: its stat is not recorded, so the next run
# reads it (git's "racy" files). 2 s also covers FAT's 2-second mtime resolution.
RACY_NS = 2_000_000_000


class Changes:
    """The decisions of one run about the files of one source, against what is known."""

    def __init__(
        self,
        known: Known,
        folder: Path,
        options: ReadOptions,
        *,
        edited: set[str],
        force: bool,
        max_bytes: int,
    ) -> None:
        self.known = known
        self.folder = folder
        self.options = options
        self.edited = edited  # edited in the store: read again, to restore the file's text
        self.force = force  # read every file, changed or not
        self.max_bytes = max_bytes
        # Stats of files modified after this are not trusted (see RACY_NS).
        self.settled_before = time.time_ns() - RACY_NS
        self.seen: set[str] = set()  # source_ids still there
        self.gone: set[str] = set()
        self.gone_by_hash: dict[str, list[str]] = defaultdict(list)
        self.renamed: dict[str, str] = {}  # old path -> new path

    def find_gone(self, listed: set[str], only: Collection[str] | None) -> None:
        """Files that have documents but are no longer there: deleted, or moved (when a
        new file has the same content)."""
        scope = None if only is None else [rel.rstrip("/") for rel in only]
        for rel in self.known.by_file:
            if rel in listed or not self.known.live(rel):
                continue
            if scope is not None and not any(rel == s or rel.startswith(s + "/") for s in scope):
                continue
            if os.path.exists(self.folder / rel):
                continue  # there, but not read this time (a glob, a size limit, hidden)
            self.gone.add(rel)
            digest = self._stored_hash(rel)
            if digest and digest != _EMPTY:
                self.gone_by_hash[digest].append(rel)

    def _stored_hash(self, rel: str) -> str | None:
        fmt = format_for(rel)
        if fmt is not None and fmt.verbatim and rel in self.known.docs:
            return self.known.docs[rel].content_hash
        return self.known.file_hash(rel)

    def same_stat(self, entry: FileEntry, fmt: Format) -> int | None:
        """Whether the file is unchanged by its size and times alone, not read: they are
        those recorded with its hash, and that hash is still the stored one. Returns
        what :meth:`unchanged` does."""
        recorded = self.known.stat(entry.rel)
        if recorded is None or entry.rel in self.edited or self.force:
            return None
        try:
            info = os.stat(entry.path)
        except OSError:
            return None  # reading it says what is wrong
        if (info.st_size, info.st_mtime_ns, info.st_ctime_ns) != (
            recorded.size,
            recorded.mtime_ns,
            recorded.ctime_ns,
        ):
            return None
        if fmt.stream is None and info.st_size > self.max_bytes:
            return None  # reading it skips it, as before the limit was lowered
        return self.unchanged(entry.rel, fmt, recorded.content_hash)

    def unchanged(self, rel: str, fmt: Format, digest: str) -> int | None:
        """How many documents of the file are unchanged when its content has this hash;
        None when it changed (or must be read again)."""
        known = self.known
        if rel in self.edited or self.force:
            return None  # edited in the store: the file's version is restored
        if fmt.verbatim:
            doc = known.docs.get(rel)
            if doc is None or doc.deleted or doc.content_hash != digest:
                return None
            self.seen.add(rel)
            return 1
        if not fmt.container and rel not in known.by_file:
            return None  # never stored: no need to look up a recorded hash
        if known.file_hash(rel) != self.keyed(fmt, digest):
            return None
        live = known.live(rel)
        if not fmt.container and not live:
            return None  # its document was deleted: store it again, as a text file would be
        self.seen.update(known.by_file.get(rel, ()))
        return len(live)

    def keyed(self, fmt: Format, digest: str) -> str:
        return keyed_hash(digest, fmt.name, self.options.fields, self.options.records)

    def moved_from(self, rel: str, digest: str) -> str | None:
        """The gone file this new file was moved from, matched by content hash."""
        if rel in self.known.by_file:
            return None
        candidates = self.gone_by_hash.get(digest)
        if not candidates:
            return None
        old = candidates.pop(0)
        self.renamed[old] = rel
        return old

    def stat_to_record(
        self, rel: str, info: os.stat_result, digest: str
    ) -> tuple[bool, FileStat | None]:
        """(whether to record, what) of a file read with this hash: its stat, unless it
        was modified too recently to trust (then forget any older record)."""
        recorded = self.known.stat(rel)
        if info.st_mtime_ns >= self.settled_before:
            return recorded is not None, None
        stat = FileStat(info.st_size, info.st_mtime_ns, info.st_ctime_ns, digest)
        return stat != recorded, stat

    def moves(self, failed: Collection[str]) -> list[tuple[str, str]]:
        """The renames that held (the new file was stored); their old paths are not gone."""
        done = []
        for old, new in sorted(self.renamed.items()):
            if new in failed:
                continue
            self.gone.discard(old)
            done.append((old, new))
        return done

    def doomed(self, complete: Collection[str]) -> list[str]:
        """source_ids of the documents whose file is gone, or whose record a container
        read to the end no longer holds."""
        doomed = [sid for rel in sorted(self.gone) for sid in self.known.live(rel)]
        for rel in sorted(complete):
            doomed += [sid for sid in self.known.live(rel) if sid not in self.seen]
        return doomed
