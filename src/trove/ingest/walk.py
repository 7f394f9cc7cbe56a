"""Ingest a folder and keep the store in step with it.

Each file's documents are keyed by (namespace, source, path relative to the root), so
re-running updates in place. Per file:

- unchanged (same hash as when it was stored): one hash, no parsing, no embedding; not
  even read when its size and times are those recorded when it was stored;
- changed: parsed again, and its document replaced in one transaction, same id;
- new, with the content of a file that is gone: a rename or move; the document keeps
  its id (and its edges) and takes the new path;
- gone: tombstoned when ``sync`` is set.

Writes go in batches, one transaction each, so an interrupted run leaves whole
documents only, and running it again finishes the job.
"""

from __future__ import annotations

import hashlib
import io
import os
import time
from collections import defaultdict
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from trove import originals
from trove import write as writer
from trove.backends.base import FileStat
from trove.errors import (
    EmbedderError,
    EmbedderMismatch,
    MissingDependency,
    NotFound,
    StoreError,
    TroveError,
)
from trove.ids import document_id
from trove.ingest import ownership
from trove.ingest.files import DEFAULT_MAX_BYTES, FileEntry, list_files
from trove.ingest.known import Known
from trove.ingest.links import LinkIndex, sync_links
from trove.ingest.parse import Parsed, Parser, default_workers
from trove.ingest.readers import (
    BY_NAME,
    Corrupt,
    Format,
    ReadOptions,
    Record,
    RecordError,
    Unreadable,
    format_for,
    split_source_id,
)
from trove.ingest.readers.records import field_map, keyed_hash
from trove.ingest.report import UNSUPPORTED, IngestProgress, IngestReport, ProgressCallback
from trove.timeutil import to_iso

if TYPE_CHECKING:
    from trove.store import Store

__all__ = ["DEFAULT_MAX_BYTES", "IngestProgress", "IngestReport", "ingest"]

# A batch is one transaction (and one call to the embedder).
BATCH_DOCUMENTS = 512
BATCH_BYTES = 16 * 1024 * 1024
_BLOCK = 1 << 20
_EMPTY = hashlib.sha256(b"").hexdigest()
_NOTES = BY_NAME["markdown"].suffixes
# A file modified this close before a run started may change again within the same tick
# of its clock, keeping its size and mtime: its stat is not recorded, so the next run
# reads it (git's "racy" files). 2 s also covers FAT's 2-second mtime resolution.
_RACY_NS = 2_000_000_000
# Errors about the store or the embedder, not about a file: the run stops.
_FATAL = (EmbedderMismatch, EmbedderError, StoreError, MissingDependency)


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
    ``keep_originals`` stores each changed file's bytes
    with its document (see :mod:`trove.originals`; one copy per distinct content).
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
        source=source if source is not None else folder.name,
        namespace=namespace,
        options=options,
        max_bytes=max_bytes,
        sync=sync,
        dry_run=dry_run,
        workers=default_workers() if workers is None else max(1, workers),
        progress=progress,
    )
    run.force = force
    run.keep_originals = keep_originals
    if base.is_file():
        only, include, exclude = [base.name], (), ()
    run.go(include, exclude, follow_symlinks, only)
    run.report.seconds = time.perf_counter() - started
    return run.report


@dataclass
class _Item:
    """One document on its way to the store."""

    rel: str
    source_id: str
    fields: dict[str, Any]
    doc_id: str | None
    moved: bool
    size: int
    # The file to keep as the document's original (keep_originals; whole-file documents).
    original: Path | None = None
    # Or its bytes (a message of an mbox, an attachment): data, name, media type.
    original_bytes: tuple[bytes, str, str] | None = None


@dataclass
class _Batch:
    items: list[_Item] = field(default_factory=list)
    size: int = 0
    # File hashes to record once this batch is stored (derived formats).
    hashes: dict[str, str] = field(default_factory=dict)
    # File stats to record (or forget) once this batch is stored.
    stats: dict[str, FileStat | None] = field(default_factory=dict)


@dataclass(frozen=True)
class _Job:
    entry: FileEntry
    format: Format
    digest: str
    info: os.stat_result
    moved_from: str | None


class _TooLarge(Exception):
    pass


class _Run:
    """The state of one ingest run."""

    def __init__(
        self,
        store: Store,
        folder: Path,
        *,
        source: str,
        namespace: str,
        options: ReadOptions,
        max_bytes: int,
        sync: bool,
        dry_run: bool,
        workers: int,
        progress: ProgressCallback | None,
    ) -> None:
        self.store = store
        self.folder = folder
        self.source = source
        self.namespace = namespace
        self.options = options
        self.max_bytes = max_bytes
        self.sync = sync
        self.dry_run = dry_run
        self.on_progress = progress
        self.report = IngestReport(dry_run=dry_run)
        # Stats of files modified after this are not trusted (see _RACY_NS).
        self.settled_before = time.time_ns() - _RACY_NS
        self.known = Known(store, namespace, source)
        # Files whose documents the library edited: read again, to restore the file's text.
        self.edited = ownership.edited_files(store.backend, namespace, source)
        self.force = False  # read every file, changed or not
        self.reread: set[str] = set()
        self.ids_in_use = {d.doc_id: sid for sid, d in self.known.docs.items()}
        self.batch = _Batch()
        self.seen: set[str] = set()
        self.failed_files: set[str] = set()
        self.complete: set[str] = set()  # changed containers read to the end
        self.gone_by_hash: dict[str, list[str]] = defaultdict(list)
        self.gone: set[str] = set()
        self.renamed: dict[str, str] = {}  # old path -> new path
        self.links: dict[str, tuple[str, ...]] = {}
        self.written: set[str] = set()  # doc ids written in this run
        self.parser: Parser[_Job] = Parser(workers, heavy_files=0)
        self.total = 0
        self.done = 0
        self.documents = 0
        self.keep_originals = False
        self.attachments: list[tuple[str, str]] = []  # (attachment sid, message sid)

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
        self._find_gone({e.rel for e in listing.files}, only)
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
            self._flush()
        except BaseException:
            self.parser.close(cancel=True)
            raise
        self.parser.close()
        self._finish_moves()
        self._delete_gone()
        if not self.dry_run:
            self._link()
            backend = self.store.backend
            ownership.claim(backend, self.namespace, self.source)
            ownership.restored(backend, self.namespace, self.source, self.reread)
            self._link_attachments()

    def _find_gone(self, listed: set[str], only: Collection[str] | None) -> None:
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

    # --- one file ---------------------------------------------------------------------

    def _file(self, entry: FileEntry, fmt: Format | None) -> None:
        if fmt is None:
            self.report.skipped.append((entry.rel, UNSUPPORTED))
            self._step(entry.rel)
            return
        self.report.files += 1
        if self._same_stat(entry, fmt):
            self._step(entry.rel)
            return
        if fmt.stream is not None:
            self._stream(entry, fmt)
            return
        try:
            data, info = _read(entry.path, self.max_bytes)
        except _TooLarge:
            self._problem("skipped", entry.rel, f"larger than {self.max_bytes} bytes")
            return
        except OSError as exc:
            self._io_problem(entry.rel, exc)
            return
        self.report.files_read += 1
        digest = hashlib.sha256(data).hexdigest()
        if self._unchanged(entry.rel, fmt, digest):
            self._remember(entry.rel, info, digest)
            self._step(entry.rel)
            return
        moved = self._moved_from(entry.rel, self._keyed(fmt, digest))
        job = _Job(entry, fmt, digest, info, moved)
        self.parser.submit(job, fmt.name, entry.rel, data, self.options)
        for done, parsed in self.parser.ready():
            self._parsed(done, parsed)

    def _same_stat(self, entry: FileEntry, fmt: Format) -> bool:
        """Whether the file is unchanged by its size and times alone, not read: they are
        those recorded with its hash, and that hash is still the stored one."""
        recorded = self.known.stats.get(entry.rel)
        if recorded is None or entry.rel in self.edited or self.force:
            return False
        try:
            info = os.stat(entry.path)
        except OSError:
            return False  # reading it says what is wrong
        if (info.st_size, info.st_mtime_ns, info.st_ctime_ns) != (
            recorded.size,
            recorded.mtime_ns,
            recorded.ctime_ns,
        ):
            return False
        if fmt.stream is None and info.st_size > self.max_bytes:
            return False  # reading it skips it, as before the limit was lowered
        return self._unchanged(entry.rel, fmt, recorded.content_hash)

    def _remember(self, rel: str, info: os.stat_result, digest: str) -> None:
        """Record the stat of a file with the hash of what was read of it, unless it was
        modified too recently to trust (then forget any older record)."""
        recorded = self.known.stats.get(rel)
        if info.st_mtime_ns >= self.settled_before:
            if recorded is not None:
                self.batch.stats[rel] = None
            return
        stat = FileStat(info.st_size, info.st_mtime_ns, info.st_ctime_ns, digest)
        if stat != recorded:
            self.batch.stats[rel] = stat
            if len(self.batch.stats) >= BATCH_DOCUMENTS:
                self._flush()

    def _stream(self, entry: FileEntry, fmt: Format) -> None:
        """A container read as a stream: records are stored as they come."""
        assert fmt.stream is not None
        try:
            digest, info = _hash_file(entry.path)
        except OSError as exc:
            self._io_problem(entry.rel, exc)
            return
        self.report.files_read += 1
        if self._unchanged(entry.rel, fmt, digest):
            self._remember(entry.rel, info, digest)
            self._step(entry.rel)
            return
        moved_from = self._moved_from(entry.rel, self._keyed(fmt, digest))
        for done, parsed in self.parser.drain():  # keep the files in order
            self._parsed(done, parsed)
        try:
            with open(entry.path, "rb", buffering=0) as raw:
                info = os.fstat(raw.fileno())
                stream = _HashingReader(raw)
                buffered = io.BufferedReader(stream, _BLOCK)
                for record in fmt.stream(entry.rel, buffered, self.options):
                    self._record(entry.rel, record, None, moved_from)
                while buffered.read(_BLOCK):  # the hash covers the whole file
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

    def _unchanged(self, rel: str, fmt: Format, digest: str) -> bool:
        known = self.known
        if rel in self.edited or self.force:
            return False  # edited in the store: the file's version is restored
        if fmt.verbatim:
            doc = known.docs.get(rel)
            if doc is None or doc.deleted or doc.content_hash != digest:
                return False
            self.seen.add(rel)
            self.report.unchanged += 1
            return True
        if not fmt.container and rel not in known.by_file:
            return False  # never stored: no need to look up a recorded hash
        if known.file_hash(rel) != self._keyed(fmt, digest):
            return False
        live = known.live(rel)
        if not fmt.container and not live:
            return False  # its document was deleted: store it again, as a text file would be
        self.seen.update(known.by_file.get(rel, ()))
        self.report.unchanged += len(live)
        return True

    def _keyed(self, fmt: Format, digest: str) -> str:
        return keyed_hash(digest, fmt.name, self.options.fields, self.options.records)

    def _moved_from(self, rel: str, digest: str) -> str | None:
        """The gone file this new file was moved from, matched by content hash."""
        if rel in self.known.by_file:
            return None
        candidates = self.gone_by_hash.get(digest)
        if not candidates:
            return None
        old = candidates.pop(0)
        self.renamed[old] = rel
        return old

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
            where = f"{rel}#{record.where}" if record.where else rel
            if record.skipped:
                self.report.skipped.append((where, record.reason))
            else:
                self.report.failed.append((where, record.reason))
                if record.retry:
                    self.failed_files.add(rel)
            return
        sid = rel if record.key is None else f"{rel}#{record.key}"
        self.report.notes.extend((sid, note) for note in record.notes)
        if not str(record.fields.get("text") or "").strip():
            # An empty note or a message without a body has nothing to find; a store
            # refuses empty text, and --sync retires what such a file held before.
            self.report.skipped.append((sid, "no text"))
            return
        fields = dict(record.fields)
        fields.update(source=self.source, source_id=sid, namespace=self.namespace)
        if mtime is not None and record.key is None:
            fields.setdefault("timestamp", to_iso(mtime))
        old_sid = None
        if moved_from is not None:
            old_sid = moved_from if record.key is None else f"{moved_from}#{record.key}"
        doc_id = self._doc_id(sid, old_sid)
        self.seen.add(sid)
        size = len(fields["text"])
        item = _Item(rel, sid, fields, doc_id, moved_from is not None, size)
        if self.keep_originals and record.key is None:
            item.original = self.folder / rel
        elif self.keep_originals:
            item.original_bytes = record.original
        if record.attachment_of is not None:
            parent = f"{rel}#{record.attachment_of}" if record.attachment_of else rel
            self.attachments.append((sid, parent))
        self.batch.items.append(item)
        self.batch.size += size
        if record.key is None and (record.links or sid in self.known.docs):
            self.links[sid] = record.links
        if len(self.batch.items) >= BATCH_DOCUMENTS or self.batch.size >= BATCH_BYTES:
            self._flush()

    def _doc_id(self, sid: str, old_sid: str | None) -> str | None:
        """The id to write under: the stored one (which a moved document keeps), else the
        natural one, unless a document moved away from this path still holds it."""
        for key in (sid, old_sid):
            if key is not None and key in self.known.docs:
                return self.known.docs[key].doc_id
        natural = document_id(self.namespace, "workspace", self.source, sid, None, "")
        holder = self.ids_in_use.get(natural)
        if holder is None or holder == sid:
            return None
        moved_here = f"{sid}\x00{holder}"
        return document_id(self.namespace, "workspace", self.source, moved_here, None, "")

    def _file_done(self, rel: str, fmt: Format, digest: str, info: os.stat_result) -> None:
        if rel in self.edited and rel not in self.failed_files:
            self.reread.add(rel)
        if not fmt.verbatim:
            self.batch.hashes[rel] = self._keyed(fmt, digest)
        self._remember(rel, info, digest)
        self._step(rel)

    def _problem(self, kind: str, rel: str, reason: str, moved_from: str | None = None) -> None:
        (self.report.skipped if kind == "skipped" else self.report.failed).append((rel, reason))
        if kind == "failed":
            self.failed_files.add(rel)
        if moved_from is not None:
            self.renamed.pop(moved_from, None)  # not moved after all: the old one is gone
        self._step(rel)

    def _io_problem(self, rel: str, exc: OSError, moved_from: str | None = None) -> None:
        if isinstance(exc, FileNotFoundError):
            self._problem("skipped", rel, "vanished before it could be read", moved_from)
        else:
            self._problem("failed", rel, exc.strerror or str(exc), moved_from)

    # --- writing ----------------------------------------------------------------------

    def _flush(self) -> None:
        batch, self.batch = self.batch, _Batch()
        if self.dry_run:
            for item in batch.items:
                self._count(item, self._would(item), 0)
            return
        prepared = []
        for item in batch.items:
            try:
                doc = writer.prepare(
                    item.fields, author_tier=self.store.author_tier, doc_id=item.doc_id
                )
            except TroveError as exc:
                self._item_failed(item, str(exc))
                continue
            prepared.append((item, doc))
        results: list[writer.WriteResult] = []
        if prepared:
            try:
                results = self.store.writer.write([doc for _, doc in prepared])
            except _FATAL:
                raise
            except TroveError as exc:
                for item, _ in prepared:
                    self._item_failed(item, str(exc))
                prepared = []
        for (item, _), result in zip(prepared, results, strict=True):
            self.ids_in_use[result.id] = item.source_id
            self.written.add(result.id)
            self._count(item, result.action, result.chunks)
            if item.original is not None or item.original_bytes is not None:
                self._keep_original(item, result.id)
        failed = self.failed_files
        self.known.record(
            {rel: h for rel, h in batch.hashes.items() if rel not in failed},
            {rel: st for rel, st in batch.stats.items() if rel not in failed},
        )
        self._progress("")

    def _keep_original(self, item: _Item, doc_id: str) -> None:
        """Store the file's bytes beside its document; a failure (too large, unreadable)
        is reported against the file, and the document stays stored."""
        try:
            if item.original is not None:
                originals.attach(self.store, doc_id, item.original, item.original.name)
            elif item.original_bytes is not None:
                originals.attach(self.store, doc_id, *item.original_bytes)
        except TroveError as exc:
            self.report.failed.append((item.rel, f"original not kept: {exc}"))

    def _would(self, item: _Item) -> str:
        old = self.known.docs.get(item.source_id)
        if old is None:
            return "added"
        text_hash = hashlib.sha256(item.fields["text"].encode("utf-8", "replace")).hexdigest()
        return "unchanged" if text_hash == old.content_hash and not old.deleted else "updated"

    def _count(self, item: _Item, action: str, chunks: int) -> None:
        self.documents += 1
        self.report.chunks += chunks
        if item.moved:
            return  # counted once per file, as moved
        if action == "added":
            self.report.added += 1
        elif action == "unchanged":
            self.report.unchanged += 1
        else:
            self.report.updated += 1

    def _item_failed(self, item: _Item, reason: str) -> None:
        self.report.failed.append((item.source_id, reason))
        self.failed_files.add(item.rel)
        self.links.pop(item.source_id, None)

    # --- after the files --------------------------------------------------------------

    def _finish_moves(self) -> None:
        forget: list[str] = []
        for old, new in sorted(self.renamed.items()):
            if new in self.failed_files:
                continue
            self.gone.discard(old)
            self.report.moved.append((old, new))
            forget.append(old)
        if not self.dry_run:
            self.known.forget(forget)

    def _delete_gone(self) -> None:
        if not self.sync:
            return
        doomed = [sid for rel in sorted(self.gone) for sid in self.known.live(rel)]
        for rel in sorted(self.complete):
            doomed += [sid for sid in self.known.live(rel) if sid not in self.seen]
        for sid in doomed:
            if self.known.docs[sid].doc_id in self.written:
                continue  # moved to another path in this run, not gone
            if not self.dry_run:
                try:
                    self.store.delete(self.known.docs[sid].doc_id)
                except NotFound:
                    continue  # purged by someone else meanwhile
            self.report.deleted += 1
        if not self.dry_run:
            self.known.forget(self.gone)

    def _link(self) -> None:
        if not (self.links or self.report.added or self.report.moved):
            return
        docs = {
            sid: doc_id
            for sid, doc_id, _, deleted in self.store.iter_source(self.namespace, self.source)
            if not deleted and split_source_id(sid)[1] is None
        }
        sources = dict(self.links)
        if self.report.added or self.report.moved:
            # A new or moved note may be the target that older notes' links were missing.
            sources.update(self._stored_links(docs, parsed=sources))
        if sources:
            self.report.links = sync_links(self.store, LinkIndex(docs), sources.items())

    def _link_attachments(self) -> None:
        """``attachment_of`` edges from each attachment read in this run to its message."""
        if not self.attachments:
            return
        ids = {
            sid: doc_id
            for sid, doc_id, _, gone in self.store.iter_source(self.namespace, self.source)
            if not gone
        }
        for child, parent in self.attachments:
            if child in ids and parent in ids:
                self.store.link(ids[child], ids[parent], "attachment_of")

    def _stored_links(
        self, docs: Mapping[str, str], parsed: Collection[str]
    ) -> dict[str, tuple[str, ...]]:
        """The links of the notes stored before this run and not read again in it."""
        ids = [
            doc_id
            for sid, doc_id in docs.items()
            if sid in self.known.docs and sid not in parsed and sid.lower().endswith(_NOTES)
        ]
        found: dict[str, tuple[str, ...]] = {}
        for start in range(0, len(ids), 500):
            for doc in self.store.backend.get_documents(ids[start : start + 500]).values():
                links = doc.metadata.get("links")
                if doc.source_id and isinstance(links, list) and links:
                    found[doc.source_id] = tuple(str(link) for link in links)
        return found

    # --- progress ---------------------------------------------------------------------

    def _step(self, rel: str) -> None:
        self.done += 1
        self._progress(rel)

    def _progress(self, current: str) -> None:
        if self.on_progress is not None:
            self.on_progress(
                IngestProgress(self.total, self.done, self.documents, self.report.chunks, current)
            )


def _read(path: str, limit: int) -> tuple[bytes, os.stat_result]:
    """The whole file and its stat when opened, or _TooLarge, reading at most
    ``limit + 1`` bytes (the file may grow after it was listed)."""
    with open(path, "rb") as handle:
        info = os.fstat(handle.fileno())
        if info.st_size > limit:
            raise _TooLarge
        # Asked for limit + 1 bytes, read() allocates that much (100 MB) for a 2 KB file:
        # that was two thirds of an unchanged run. Ask for the size, then for any growth.
        data = handle.read(info.st_size + 1)
        if len(data) > info.st_size:
            data += handle.read(limit + 1 - len(data))
    if len(data) > limit:
        raise _TooLarge
    return data, info


def _hash_file(path: str) -> tuple[str, os.stat_result]:
    """The file's hash and its stat when opened."""
    digest = hashlib.sha256()
    with open(path, "rb", buffering=0) as handle:
        info = os.fstat(handle.fileno())
        buffer = bytearray(_BLOCK)
        view = memoryview(buffer)
        while True:
            n = handle.readinto(buffer)
            if not n:
                break
            digest.update(view[:n])
    return digest.hexdigest(), info


class _HashingReader(io.RawIOBase):
    """A raw file that hashes every byte read through it."""

    def __init__(self, raw: io.FileIO) -> None:
        self.raw = raw
        self.hash = hashlib.sha256()

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        n = self.raw.readinto(buffer)
        if n:
            self.hash.update(memoryview(buffer)[:n])
        return n or 0
