"""Ingest a folder and keep the store in step with it.

Each file's documents are keyed by (namespace, source, path relative to the root), so
re-running updates in place. Per file (the decisions are :mod:`trove.ingest.changes`'s):

- unchanged (same hash as when it was stored): one hash, no parsing, no embedding; not
  even read when its size and times are those recorded when it was stored;
- changed: parsed again, and its document replaced in one transaction, same id;
- new, with the content of a file that is gone: a rename or move; the document keeps
  its id (and its edges) and takes the new path;
- gone: tombstoned when ``sync`` is set.

Writes go in batches, one transaction each, so an interrupted run leaves whole
documents only, and running it again finishes the job. The store is reached through
:class:`trove.ingest.target.Target` only.
"""

from __future__ import annotations

import hashlib
import io
import os
import time
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from trove.errors import MissingDependency, NotFound
from trove.ids import document_id
from trove.ingest.batches import Batches, Item
from trove.ingest.changes import Changes
from trove.ingest.files import (
    BLOCK,
    DEFAULT_MAX_BYTES,
    FileEntry,
    HashingReader,
    TooLarge,
    hash_file,
    list_files,
    read_whole,
)
from trove.ingest.kept import Missing
from trove.ingest.known import Known
from trove.ingest.links import link_attachments, link_notes
from trove.ingest.parse import Parsed, Parser, default_workers
from trove.ingest.readers import (
    Corrupt,
    Format,
    ReadOptions,
    Record,
    RecordError,
    Unreadable,
    format_for,
)
from trove.ingest.readers.records import field_map
from trove.ingest.report import UNSUPPORTED, IngestProgress, IngestReport, ProgressCallback
from trove.ingest.target import Target
from trove.timeutil import to_iso

__all__ = ["DEFAULT_MAX_BYTES", "IngestProgress", "IngestReport", "ingest"]


def ingest(
    store: Target,
    root: str | os.PathLike[str],
    *,
    source: str | None = None,
    namespace: str = "default",
    include: Sequence[str] = (),
    exclude: Sequence[str] = (),
    sync: bool = False,
    max_bytes: int = DEFAULT_MAX_BYTES,
    follow_symlinks: bool = False,
    dry_run: bool = False,
    fields: Mapping[str, str] | None = None,
    records: str | None = None,
    workers: int | None = None,
    progress: ProgressCallback | None = None,
    only: Collection[str] | None = None,
    force: bool = False,
    keep_originals: bool = False,
) -> IngestReport:
    """Store every readable file under ``root`` (or ``root`` itself if it is a file).

    ``fields`` maps document fields to record fields for JSON/JSONL (``{"text": "body",
    "time": "sent_at", "id": "uuid"}``), ``records`` names the list of records inside a
    JSON document. ``max_bytes`` skips larger files (mbox and JSONL are streamed, so it
    bounds each message or line instead). ``only`` limits the run to these paths
    relative to the folder (what ``trove watch`` saw change); a listed path that no
    longer exists counts as gone. ``force`` reads every file again, even unchanged ones.
    ``keep_originals`` stores each file's bytes with its document (see
    :mod:`trove.originals`; one copy per distinct content); an unchanged file stored
    without them gets them too, its documents neither parsed nor embedded again when
    the original is the whole file (:mod:`trove.ingest.kept`).
    """
    base = Path(root).expanduser()
    if not base.exists():
        raise NotFound(f"{base} does not exist")
    base = base.resolve()
    folder = base if base.is_dir() else base.parent
    options = ReadOptions(fields=dict(fields or {}), records=records, max_record_bytes=max_bytes)
    field_map(options.fields)  # a bad mapping fails before any file is read
    started = time.perf_counter()
    run = _Run(
        store,
        folder,
        _Settings(
            source=source if source is not None else folder.name,
            namespace=namespace,
            options=options,
            max_bytes=max_bytes,
            sync=sync,
            dry_run=dry_run,
            force=force,
            keep_originals=keep_originals,
        ),
        Parser(default_workers() if workers is None else max(1, workers), heavy_files=0),
        progress,
    )
    if base.is_file():
        only, include, exclude = [base.name], (), ()
    run.go(include, exclude, follow_symlinks, only)
    run.report.seconds = time.perf_counter() - started
    return run.report


@dataclass(frozen=True)
class _Settings:
    """What the caller asked of one run."""

    source: str
    namespace: str
    options: ReadOptions
    max_bytes: int
    sync: bool
    dry_run: bool
    force: bool  # read every file, changed or not
    keep_originals: bool


@dataclass(frozen=True)
class _Job:
    entry: FileEntry
    format: Format
    digest: str
    info: os.stat_result
    moved_from: str | None


class _Run:
    """The state of one ingest run: the files read, the batch on its way, the report."""

    def __init__(
        self,
        store: Target,
        folder: Path,
        settings: _Settings,
        parser: Parser[_Job],
        progress: ProgressCallback | None,
    ) -> None:
        self.store = store
        self.folder = folder
        self.settings = settings
        self.on_progress = progress
        self.report = IngestReport(dry_run=settings.dry_run)
        self.known = Known(store, settings.namespace, settings.source)
        self.changes = Changes(
            self.known,
            folder,
            settings.options,
            edited=store.edited_files(settings.namespace, settings.source),
            force=settings.force,
            max_bytes=settings.max_bytes,
        )
        self.parser = parser
        self.batches = Batches(
            store, self.known, self.report, dry_run=settings.dry_run, progress=self._progress
        )
        self.missing = (
            Missing(store, self.known, folder, self.report, dry_run=settings.dry_run)
            if settings.keep_originals
            else None
        )
        self.reread: set[str] = set()  # edited files read again
        self.complete: set[str] = set()  # changed containers read to the end
        self.attachments: list[tuple[str, str]] = []  # (attachment sid, message sid)
        self.total = 0
        self.done = 0

    # --- the run ----------------------------------------------------------------------

    def go(
        self,
        include: Sequence[str],
        exclude: Sequence[str],
        follow_symlinks: bool,
        only: Collection[str] | None,
    ) -> None:
        listing = list_files(
            self.folder,
            include=include,
            exclude=exclude,
            follow_symlinks=follow_symlinks,
            only=only,
        )
        self.report.skipped.extend(listing.skipped)
        self.changes.find_gone({e.rel for e in listing.files}, only)
        self.total = len(listing.files)
        self._progress("")
        formats = [format_for(e.rel) for e in listing.files]
        # The pool starts only if enough heavy files are listed to repay its start-up.
        self.parser.heavy_left = sum(1 for f in formats if f is not None and f.heavy)
        try:
            for entry, fmt in zip(listing.files, formats, strict=True):
                self._file(entry, fmt)
            for job, parsed in self.parser.drain():
                self._parsed(job, parsed)
            self.batches.flush()
        except BaseException:
            self.parser.close(cancel=True)
            raise
        self.parser.close()
        self._finish_moves()
        self._delete_gone()
        if not self.settings.dry_run:
            self._link()
            self.store.claim_source(self.settings.namespace, self.settings.source, self.reread)
            if self.attachments:
                link_attachments(
                    self.store, self.settings.namespace, self.settings.source, self.attachments
                )
            self.store.fold_log()

    # --- one file ---------------------------------------------------------------------

    def _file(self, entry: FileEntry, fmt: Format | None) -> None:
        if fmt is None:
            self.report.skipped.append((entry.rel, UNSUPPORTED))
            self._step(entry.rel)
            return
        self.report.files += 1
        if self._counted(entry.rel, fmt, self.changes.same_stat(entry, fmt)):
            self._step(entry.rel)
            return
        if fmt.stream is not None:
            self._stream(entry, fmt)
            return
        try:
            data, info = read_whole(entry.path, self.settings.max_bytes)
        except TooLarge:
            self._problem("skipped", entry.rel, f"larger than {self.settings.max_bytes} bytes")
            return
        except OSError as exc:
            self._io_problem(entry.rel, exc)
            return
        self.report.files_read += 1
        digest = hashlib.sha256(data).hexdigest()
        if self._counted(entry.rel, fmt, self.changes.unchanged(entry.rel, fmt, digest)):
            self._remember(entry.rel, info, digest)
            self._step(entry.rel)
            return
        moved = self.changes.moved_from(entry.rel, self.changes.keyed(fmt, digest))
        job = _Job(entry, fmt, digest, info, moved)
        self.parser.submit(job, fmt.name, entry.rel, data, self.settings.options)
        for done, parsed in self.parser.ready():
            self._parsed(done, parsed)

    def _counted(self, rel: str, fmt: Format, unchanged: int | None) -> bool:
        """Count a file's unchanged documents; whether it was unchanged (and, when
        originals are kept, has them: else it is read again for them)."""
        if unchanged is None:
            return False
        if self.missing is not None and not self.missing.settled(rel, fmt):
            return False
        self.report.unchanged += unchanged
        return True

    def _remember(self, rel: str, info: os.stat_result, digest: str) -> None:
        """Record the stat of a file with the hash of what was read of it, unless it was
        modified too recently to trust (then forget any older record)."""
        record, stat = self.changes.stat_to_record(rel, info, digest)
        if record:
            self.batches.file_stat(rel, stat)

    def _stream(self, entry: FileEntry, fmt: Format) -> None:
        """A container read as a stream: records are stored as they come."""
        assert fmt.stream is not None
        try:
            digest, info = hash_file(entry.path)
        except OSError as exc:
            self._io_problem(entry.rel, exc)
            return
        self.report.files_read += 1
        if self._counted(entry.rel, fmt, self.changes.unchanged(entry.rel, fmt, digest)):
            self._remember(entry.rel, info, digest)
            self._step(entry.rel)
            return
        moved_from = self.changes.moved_from(entry.rel, self.changes.keyed(fmt, digest))
        for done, parsed in self.parser.drain():  # keep the files in order
            self._parsed(done, parsed)
        try:
            with open(entry.path, "rb", buffering=0) as raw:
                info = os.fstat(raw.fileno())
                stream = HashingReader(raw)
                buffered = io.BufferedReader(stream, BLOCK)
                for record in fmt.stream(entry.rel, buffered, self.settings.options):
                    self._record(entry.rel, record, None, moved_from)
                while buffered.read(BLOCK):  # the hash covers the whole file
                    pass
        except Corrupt as exc:
            self._problem("failed", entry.rel, str(exc), moved_from)
            return
        except (Unreadable, MissingDependency) as exc:
            self._problem("skipped", entry.rel, str(exc), moved_from)
            return
        except OSError as exc:
            self._io_problem(entry.rel, exc, moved_from)
            return
        self.complete.add(entry.rel)
        # What was parsed is what gets recorded, even if the file changed since hashing.
        self._file_done(entry.rel, fmt, stream.hash.hexdigest(), info)

    def _parsed(self, job: _Job, parsed: Parsed) -> None:
        rel = job.entry.rel
        if parsed.problem is not None:
            kind, reason = parsed.problem
            self._problem(kind, rel, reason, job.moved_from)
            return
        for record in parsed.records:
            self._record(rel, record, job.info.st_mtime, job.moved_from)
        self._file_done(rel, job.format, job.digest, job.info)

    def _record(
        self, rel: str, record: Record | RecordError, mtime: float | None, moved_from: str | None
    ) -> None:
        if isinstance(record, RecordError):
            self._record_error(rel, record)
            return
        sid = rel if record.key is None else f"{rel}#{record.key}"
        self.report.notes.extend((sid, note) for note in record.notes)
        if not str(record.fields.get("text") or "").strip() and not (
            record.own_title and str(record.fields.get("title") or "").strip()
        ):
            # An empty note or a message without a body has nothing to find (a title made
            # of its file's name finds only the file); --sync retires what such a file held
            # before. A data record's own title is a document (a title-only record).
            self.report.skipped.append((sid, "no text"))
            return
        fields = dict(record.fields)
        fields.update(source=self.settings.source, source_id=sid, namespace=self.namespace)
        if mtime is not None and record.key is None:
            fields.setdefault("timestamp", to_iso(mtime))
        old_sid = None
        if moved_from is not None:
            old_sid = moved_from if record.key is None else f"{moved_from}#{record.key}"
        doc_id = self._doc_id(sid, old_sid)
        self.changes.seen.add(sid)
        size = len(fields["text"])
        item = Item(rel, sid, fields, doc_id, moved_from is not None, size)
        if self.settings.keep_originals and record.key is None:
            item.original = self.folder / rel
        elif self.settings.keep_originals:
            item.original_bytes = record.original
        if record.attachment_of is not None:
            parent = f"{rel}#{record.attachment_of}" if record.attachment_of else rel
            self.attachments.append((sid, parent))
        if record.key is None and (record.links or sid in self.known.docs):
            self.batches.links[sid] = record.links
        self.batches.add(item)

    def _record_error(self, rel: str, record: RecordError) -> None:
        where = f"{rel}#{record.where}" if record.where else rel
        if record.skipped:
            self.report.skipped.append((where, record.reason))
        else:
            self.report.failed.append((where, record.reason))
            if record.retry:
                self.batches.failed_files.add(rel)

    @property
    def namespace(self) -> str:
        return self.settings.namespace

    def _doc_id(self, sid: str, old_sid: str | None) -> str | None:
        """The id to write under: the stored one (which a moved document keeps), else the
        natural one, unless a document moved away from this path still holds it."""
        for key in (sid, old_sid):
            if key is not None and key in self.known.docs:
                return self.known.docs[key].doc_id
        source = self.settings.source
        natural = document_id(self.namespace, "workspace", source, sid, None, "")
        holder = self.batches.ids_in_use.get(natural)
        if holder is None or holder == sid:
            return None
        moved_here = f"{sid}\x00{holder}"
        return document_id(self.namespace, "workspace", source, moved_here, None, "")

    def _file_done(self, rel: str, fmt: Format, digest: str, info: os.stat_result) -> None:
        if rel in self.changes.edited and rel not in self.batches.failed_files:
            self.reread.add(rel)
        if not fmt.verbatim:
            self.batches.file_hash(rel, self.changes.keyed(fmt, digest))
        self._remember(rel, info, digest)
        self._step(rel)

    def _problem(self, kind: str, rel: str, reason: str, moved_from: str | None = None) -> None:
        (self.report.skipped if kind == "skipped" else self.report.failed).append((rel, reason))
        if kind == "failed":
            self.batches.failed_files.add(rel)
        if moved_from is not None:
            # not moved after all: the old one is gone
            self.changes.renamed.pop(moved_from, None)
        self._step(rel)

    def _io_problem(self, rel: str, exc: OSError, moved_from: str | None = None) -> None:
        if isinstance(exc, FileNotFoundError):
            self._problem("skipped", rel, "vanished before it could be read", moved_from)
        else:
            self._problem("failed", rel, exc.strerror or str(exc), moved_from)

    # --- after the files --------------------------------------------------------------

    def _finish_moves(self) -> None:
        moves = self.changes.moves(self.batches.failed_files)
        self.report.moved.extend(moves)
        if not self.settings.dry_run:
            self.known.forget(old for old, _ in moves)

    def _delete_gone(self) -> None:
        if not self.settings.sync:
            return
        for sid in self.changes.doomed(self.complete):
            if self.known.docs[sid].doc_id in self.batches.written:
                continue  # moved to another path in this run, not gone
            if not self.settings.dry_run:
                try:
                    self.store.delete(self.known.docs[sid].doc_id)
                except NotFound:
                    continue  # purged by someone else meanwhile
            self.report.deleted += 1
        if not self.settings.dry_run:
            self.known.forget(self.changes.gone)

    def _link(self) -> None:
        look_back = bool(self.report.added or self.report.moved)
        links = self.batches.links
        if not (links or look_back):
            return
        settings = self.settings
        added = link_notes(
            self.store, settings.namespace, settings.source, links, self.known.docs, look_back
        )
        if added is not None:
            self.report.links = added

    # --- progress ---------------------------------------------------------------------

    def _step(self, rel: str) -> None:
        self.done += 1
        self._progress(rel)

    def _progress(self, current: str) -> None:
        if self.on_progress is not None:
            self.on_progress(
                IngestProgress(
                    self.total, self.done, self.batches.documents, self.report.chunks, current
                )
            )
