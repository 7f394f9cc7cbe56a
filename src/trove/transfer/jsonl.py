"""Export a store to one JSONL file and import it back: every document with every field,
its chunk spans, optionally its vectors and tombstones, and the edges between documents.

The file is plain JSON lines, one record each, in a fixed order (a header, documents by
id, then edges), with sorted keys, so exporting the same store on SQLite or PostgreSQL
gives the same bytes, and export → import → export is byte-exact::

    {"kind": "header", "format": "trove-export", "version": 1, "embedder": {...} | null,
     "vectors": false}
    {"kind": "document", "document": {...every Document field...},
     "chunks": [[index, start, end, heading], ...], "vectors": ["<base64 float32>", ...]}
    {"kind": "edge", "src": ..., "dst": ..., "type": ..., "weight": ..., "created_at": ...}
    {"kind": "original", "doc_id": ..., "piece": 0, "data": "<base64>", ...}  (see
     :mod:`.originals_jsonl`)

Import upserts by document id: a document not in the store is added; one whose stored
version is the same is left alone; otherwise the newer ``updated_at`` wins (the stored one
when it is newer, so importing an old export never rolls back later edits). Chunks travel
as spans, so search sees exactly what the source saw; vectors travel when exported (and
the embedder matches), else the importing store embeds the chunks it lacks.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Callable, Iterable, Iterator
from dataclasses import asdict, dataclass
from typing import IO, TYPE_CHECKING, Any

import numpy as np

from trove.backends.base import Backend, EmbedderLock
from trove.backends.writes import ChunkRow
from trove.errors import InvalidInput
from trove.models import Chunk, Document, Edge
from trove.timeutil import now, to_epoch
from trove.transfer import import_checks
from trove.transfer.import_checks import FIELDS
from trove.transfer.originals_jsonl import OriginalSink, export_originals
from trove.transfer.restore import Item, Restore

if TYPE_CHECKING:
    from trove.store import Store

FORMAT = "trove-export"
VERSION = 1
_PAGE = 200


@dataclass
class TransferReport:
    """What an export or import did."""

    documents: int = 0
    added: int = 0
    updated: int = 0
    unchanged: int = 0
    kept_newer: int = 0
    edges: int = 0
    vectors: int = 0
    embedded: int = 0
    originals: int = 0

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _line(record: dict[str, Any]) -> str:
    return json.dumps(record, ensure_ascii=False, sort_keys=True, separators=(",", ":")) + "\n"


def export_jsonl(
    store: Store,
    out: IO[str],
    *,
    deleted: bool = True,
    vectors: bool = False,
    progress: Callable[[int], None] | None = None,
) -> TransferReport:
    """Write every document (expired ones too; tombstoned ones when ``deleted``), its
    chunk spans and (with ``vectors``) its vectors, then the edges between them.

    Everything is read from one snapshot: a page of documents and its chunks are read by
    separate statements, and a write between them made a file that import refuses."""
    with store.backend.snapshot():
        return _export(store.backend, out, deleted, vectors, progress)


def _export(
    backend: Backend,
    out: IO[str],
    deleted: bool,
    vectors: bool,
    progress: Callable[[int], None] | None,
) -> TransferReport:
    lock = backend.vector_lock()
    report = TransferReport()
    out.write(
        _line(
            {
                "kind": "header",
                "format": FORMAT,
                "version": VERSION,
                # Which model made the vectors; the table they live in is the store's own.
                "embedder": None if lock is None else _embedder(lock),
                "vectors": vectors and lock is not None,
            }
        )
    )
    exported: list[str] = []
    for docs in _pages(backend):
        docs = [d for d in docs if deleted or d.deleted_at is None]
        table = lock.table if vectors and lock is not None else None
        chunks = backend.export_chunks([d.id for d in docs], table)
        for doc in docs:
            rows = chunks.get(doc.id, [])
            record: dict[str, Any] = {
                "kind": "document",
                "document": _document_dict(doc),
                "chunks": [_span(row.chunk) for row, _ in rows],
            }
            if table is not None:
                record["vectors"] = [_encode(v) for _, v in rows]
                report.vectors += sum(v is not None for _, v in rows)
            out.write(_line(record))
            exported.append(doc.id)
        report.documents += len(docs)
        if progress:
            progress(len(docs))
    for edge in _edges(backend, exported):
        out.write(_line({"kind": "edge", **edge.to_dict()}))
        report.edges += 1
    report.originals = export_originals(backend, exported, out)
    return report


def _embedder(lock: EmbedderLock) -> dict[str, Any]:
    return {"spec": lock.spec, "model_id": lock.model_id, "dimension": lock.dimension}


def _pages(backend: Backend) -> Iterator[list[Document]]:
    after: str | None = None
    while docs := backend.iter_documents(after=after, limit=_PAGE):
        after = docs[-1].id
        yield docs


def _edges(backend: Backend, doc_ids: list[str]) -> list[Edge]:
    """Edges whose both ends were exported, in one order on every backend."""
    mine = set(doc_ids)
    found: dict[tuple[str, str, str], Edge] = {}
    for start in range(0, len(doc_ids), _PAGE):
        for edge in backend.edges_of(doc_ids[start : start + _PAGE], None):
            if edge.src in mine and edge.dst in mine:
                found[(edge.src, edge.dst, edge.type)] = edge
    return [found[key] for key in sorted(found)]


def _span(chunk: Chunk) -> list[Any]:
    return [chunk.index, chunk.start, chunk.end, chunk.heading]


def _document_dict(doc: Document) -> dict[str, Any]:
    data = {name: getattr(doc, name) for name in FIELDS}
    data["participants"] = list(doc.participants)
    data["tags"] = list(doc.tags)
    return data


def _encode(vector: np.ndarray | None) -> str | None:
    if vector is None:
        return None
    return base64.b64encode(np.asarray(vector, dtype="<f4").tobytes()).decode("ascii")


def _decode(text: Any) -> np.ndarray | None:
    if text is None:
        return None
    try:
        raw = base64.b64decode(str(text), validate=True)
        return np.frombuffer(raw, dtype="<f4").astype(np.float32)
    except ValueError:
        raise InvalidInput("a vector in the export is not base64 float32") from None


def import_jsonl(
    store: Store,
    lines: Iterable[str],
    *,
    progress: Callable[[int], None] | None = None,
) -> TransferReport:
    """Upsert the documents and edges of an export into ``store`` (see the module doc)."""
    records = _records(lines)
    _, header = next(records, (0, None))
    if header is None or header.get("format") != FORMAT:
        raise InvalidInput("not a trove export: the first line must be its header")
    if header.get("version") != VERSION:
        raise InvalidInput(f"trove export version {header.get('version')!r} is not supported")
    report = TransferReport()
    sink = _Sink(store, header, report)
    originals = OriginalSink(store.backend)
    batch: list[tuple[Document, list[ChunkRow], dict[str, Any]]] = []

    def flush() -> None:
        if batch:
            sink.documents(batch)
            if progress:
                progress(len(batch))
            batch.clear()

    for number, record in records:
        kind = record.get("kind")
        if kind == "document":
            try:  # checked before anything of its batch is written
                batch.append((*import_checks.document(record), record))
            except InvalidInput as exc:
                raise InvalidInput(f"line {number} of the export: {exc}") from None
            if len(batch) >= _PAGE:
                flush()
        elif kind == "edge":
            flush()  # both ends must be stored first
            sink.edge(record)
        elif kind == "original":
            flush()
            originals.add(record)
        else:
            raise InvalidInput(f"unknown record kind {kind!r} in a trove export")
    flush()
    sink.finish()
    report.originals = originals.count
    return report


def _records(lines: Iterable[str]) -> Iterator[tuple[int, dict[str, Any]]]:
    numbered = enumerate(lines, 1)
    number = 0
    while True:
        try:  # a file opened as text decodes as it is read
            number, line = next(numbered, (0, ""))
        except UnicodeDecodeError:
            raise InvalidInput(f"line {number + 1} of the export is not UTF-8 text") from None
        if not number:
            return
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except ValueError as exc:
            raise InvalidInput(f"line {number} of the export is not JSON: {exc}") from None
        except RecursionError:
            raise InvalidInput(f"line {number} of the export is nested too deeply") from None
        if not isinstance(record, dict):
            raise InvalidInput(f"line {number} of the export is not a JSON object")
        yield number, record


class _Sink:
    """Writes imported records: documents through :class:`Restore`, a batch per
    transaction, and edges."""

    def __init__(self, store: Store, header: dict[str, Any], report: TransferReport) -> None:
        self.store = store
        self.backend = store.backend
        self.report = report
        self.restore = Restore(self.backend, _vector_lock(header), _refusal, decode=_decode)

    def documents(self, batch: list[tuple[Document, list[ChunkRow], dict[str, Any]]]) -> None:
        items = [Item(doc, rows, record.get("vectors") or []) for doc, rows, record in batch]
        counts = self.restore.documents(items, keep_newer=True)
        for name in ("added", "updated", "unchanged", "kept_newer"):
            setattr(self.report, name, getattr(self.report, name) + counts[name])
        self.report.documents += len(batch)
        self.report.vectors = self.restore.vectors

    def edge(self, record: dict[str, Any]) -> None:
        try:
            src, dst, kind = str(record["src"]), str(record["dst"]), str(record["type"])
            weight = float(record.get("weight", 1.0))
        except (KeyError, TypeError, ValueError):
            raise InvalidInput(f"an edge record needs src, dst and type: {record!r}") from None
        if len(self.backend.get_documents([src, dst])) < 2:
            return  # an end was not imported (e.g. a tombstone left out of the export)
        stamp = to_epoch(record.get("created_at")) or now()
        self.backend.put_edge(src, dst, kind, weight, stamp)
        self.report.edges += 1

    def finish(self) -> None:
        self.restore.finish()
        # Chunks that came without vectors are embedded here, as a write would have.
        if self.store.has_embedder:
            self.report.embedded = self.store.reembed(missing=True)


def _vector_lock(header: dict[str, Any]) -> EmbedderLock | None:
    """The embedder of the export's vectors, None when it carries none."""
    if not header.get("vectors") or not header.get("embedder"):
        return None
    try:
        spec = header["embedder"]
        return EmbedderLock(str(spec["spec"]), str(spec["model_id"]), int(spec["dimension"]), "")
    except (KeyError, TypeError, ValueError):
        raise InvalidInput("the export's header names no valid embedder") from None


def _refusal(mine: EmbedderLock, theirs: EmbedderLock) -> str:
    return (
        f"the export's vectors were made by {theirs.model_id} ({theirs.dimension}-d), "
        f"this store's by {mine.model_id} ({mine.dimension}-d); export without "
        "--vectors to have them embedded again, or import into a new store"
    )
