"""What the store already holds for one (namespace, source): documents by source_id,
grouped by the file they came from, and what was recorded of each stored file.

A Markdown or text document's content hash is its file's hash, so the store's own
column says whether the file changed. For the other formats (HTML, PDF, mail, records)
the text is extracted, so ingest records the hash of the file it read, per file (the
``file_hash`` of its row in the store's ``file_stat`` table): an unchanged file then
costs one hash, no parsing, and a container whose records did not change is not
rewritten at all.

Beside the hash, ingest records each stored file's size, mtime and ctime (as git's
index does): a file that still has them still has that hash, so it is not read at all.
The hash stays the identity; the stat only stands in for reading the file. ctime cannot
be set back by a program (``os.utime`` sets mtime, and changes ctime), so an edit whose
mtime was restored is still seen (not on Windows, where Python's ctime is the creation
time). A stat is recorded only for a file last modified well before the run started
(see ``changes.RACY_NS``).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from trove.backends.file_state import FileStat, FileState
from trove.ingest.readers import split_source_id
from trove.ingest.target import Target


@dataclass(frozen=True)
class KnownDoc:
    doc_id: str
    content_hash: str
    deleted: bool


class Known:
    """The documents and file records of one source, loaded once per run (two queries)."""

    def __init__(self, target: Target, namespace: str, source: str) -> None:
        self.target = target
        self.namespace = namespace
        self.source = source
        self.docs: dict[str, KnownDoc] = {}
        self.by_file: dict[str, list[str]] = defaultdict(list)
        for source_id, doc_id, digest, deleted in target.iter_source(namespace, source):
            self.docs[source_id] = KnownDoc(doc_id, digest, deleted)
            self.by_file[split_source_id(source_id)[0]].append(source_id)
        self.files: dict[str, FileState] = target.file_states(namespace, source)

    def live(self, rel: str) -> list[str]:
        """source_ids of a file's documents that are not tombstoned."""
        return [sid for sid in self.by_file.get(rel, ()) if not self.docs[sid].deleted]

    def stat(self, rel: str) -> FileStat | None:
        """The size, times and hash recorded of a file when it was last read."""
        state = self.files.get(rel)
        return None if state is None else state.stat

    def file_hash(self, rel: str) -> str | None:
        """The hash recorded when a derived-format file was last fully stored."""
        state = self.files.get(rel)
        return None if state is None else state.file_hash

    def record(self, hashes: Mapping[str, str], stats: Mapping[str, FileStat | None]) -> None:
        """Record file hashes and (or, for None, forget) stats, in one transaction."""
        changed: dict[str, FileState | None] = {}
        for rel in dict.fromkeys([*hashes, *stats]):
            old = self.files.get(rel, FileState())
            stat = stats.get(rel, old.stat)
            new = FileState(stat, hashes.get(rel, old.file_hash))
            changed[rel] = new if new.stat is not None or new.file_hash is not None else None
        self._store(changed)

    def forget(self, rels: Iterable[str]) -> None:
        """Forget what was recorded of these files (gone, or moved away)."""
        self._store(dict.fromkeys(rel for rel in rels if rel in self.files))

    def _store(self, changed: Mapping[str, FileState | None]) -> None:
        changed = {rel: st for rel, st in changed.items() if st != self.files.get(rel)}
        if not changed:
            return
        self.target.set_file_states(self.namespace, self.source, changed)
        for rel, state in changed.items():
            if state is None:
                self.files.pop(rel, None)
            else:
                self.files[rel] = state
