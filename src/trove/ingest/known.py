"""What the store already holds for one (namespace, source): documents by source_id,
grouped by the file they came from, the file hashes recorded for derived formats, and
each stored file's stat.

A Markdown or text document's content hash is its file's hash, so the store's own
column says whether the file changed. For the other formats (HTML, PDF, mail, records)
the text is extracted, so the walk records the hash of the file it read, per file, in
the store's meta table: an unchanged file then costs one hash, no parsing, and a
container whose records did not change is not rewritten at all.

Beside the hash, the walk records each stored file's size, mtime and ctime (as git's
index does): a file that still has them still has that hash, so it is not read at all.
The hash stays the identity; the stat only stands in for reading the file. ctime cannot
be set back by a program (``os.utime`` sets mtime, and changes ctime), so an edit whose
mtime was restored is still seen (not on Windows, where Python's ctime is the creation
time). A stat is recorded only for a file last modified well before the run started
(see ``walk._RACY_NS``).
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from trove.backends.base import FileStat
from trove.ingest.readers import split_source_id

if TYPE_CHECKING:
    from trove.store import Store

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
        self.stats: dict[str, FileStat] = store.backend.file_stats(namespace, source)

    def live(self, rel: str) -> list[str]:
        """source_ids of a file's documents that are not tombstoned."""
        return [sid for sid in self.by_file.get(rel, ()) if not self.docs[sid].deleted]

    def _key(self, rel: str) -> str:
        return _MANIFEST + json.dumps([self.namespace, self.source, rel], ensure_ascii=False)

    def file_hash(self, rel: str) -> str | None:
        """The hash recorded when a derived-format file was last fully stored."""
        return self.store.backend.get_meta(self._key(rel))

    def record(
        self, hashes: Mapping[str, str | None], stats: Mapping[str, FileStat | None]
    ) -> None:
        """Record (or, for None, forget) file hashes and stats, in one transaction."""
        if not (hashes or stats):
            return
        backend = self.store.backend
        with backend.transaction():
            for rel, digest in hashes.items():
                backend.set_meta(self._key(rel), digest)
            if stats:
                backend.set_file_stats(self.namespace, self.source, stats)

    def forget(self, rels: Iterable[str]) -> None:
        """Forget what was recorded of these files (gone, or moved away)."""
        gone = dict.fromkeys(rels)
        self.record(gone, {rel: None for rel in gone if rel in self.stats})
