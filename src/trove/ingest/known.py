"""What the store already holds for one (namespace, source): documents by source_id,
grouped by the file they came from, and the file hashes recorded for derived formats.

A Markdown or text document's content hash is its file's hash, so the store's own
column says whether the file changed. For the other formats (HTML, PDF, mail, records)
the text is extracted, so the walk records the hash of the file it read, per file, in
the store's meta table: an unchanged file then costs one hash, no parsing, and a
container whose records did not change is not rewritten at all.
"""

from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .readers import split_source_id

if TYPE_CHECKING:
    from ..store import Store

_MANIFEST = "ingest.file:"


@dataclass(frozen=True)
class KnownDoc:
    doc_id: str
    content_hash: str
    deleted: bool


class Known:
    """The documents of one source, loaded once per run (one query)."""

    def __init__(self, store: Store, namespace: str, source: str) -> None:
        self.store = store
        self.namespace = namespace
        self.source = source
        self.docs: dict[str, KnownDoc] = {}
        self.by_file: dict[str, list[str]] = defaultdict(list)
        for source_id, doc_id, digest, deleted in store.iter_source(namespace, source):
            self.docs[source_id] = KnownDoc(doc_id, digest, deleted)
            self.by_file[split_source_id(source_id)[0]].append(source_id)

    def live(self, rel: str) -> list[str]:
        """source_ids of a file's documents that are not tombstoned."""
        return [sid for sid in self.by_file.get(rel, ()) if not self.docs[sid].deleted]

    def _key(self, rel: str) -> str:
        return _MANIFEST + json.dumps([self.namespace, self.source, rel], ensure_ascii=False)

    def file_hash(self, rel: str) -> str | None:
        """The hash recorded when a derived-format file was last fully stored."""
        return self.store.backend.get_meta(self._key(rel))

    def set_file_hashes(self, hashes: dict[str, str | None]) -> None:
        """Record (or, for None, forget) file hashes, in one transaction."""
        if not hashes:
            return
        backend = self.store.backend
        with backend.transaction():
            for rel, digest in hashes.items():
                backend.set_meta(self._key(rel), digest)
