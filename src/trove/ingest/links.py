"""Links between notes: ``[[wiki links]]`` and relative Markdown links become
``links_to`` edges between the documents of one source, once the documents exist.

A wiki link names a note by its file name (``[[Cache decision]]``, any folder) or its
path (``[[design/Cache decision]]``); when several notes share the name, the one nearest
the linking note wins. A Markdown link is a path relative to the linking file.
"""

from __future__ import annotations

import posixpath
from collections import defaultdict
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING

from trove.ingest.readers import format_for

if TYPE_CHECKING:
    from trove.store import Store

EDGE_TYPE = "links_to"


class LinkIndex:
    """Finds the document a link points to, among the documents of one source."""

    def __init__(self, doc_ids: Mapping[str, str]) -> None:
        # Only files that are one document can be linked to (not a record of an mbox).
        self.paths = dict(doc_ids)
        self.folded = {rel.lower(): rel for rel in self.paths}
        self.by_name: dict[str, list[str]] = defaultdict(list)
        self.by_stem_path: dict[str, str] = {}
        for rel in self.paths:
            stem_path = posixpath.splitext(rel)[0].lower()
            self.by_stem_path.setdefault(stem_path, rel)
            self.by_name[posixpath.basename(stem_path)].append(rel)

    def resolve(self, source: str, target: str) -> str | None:
        """The doc id ``target`` (as written in file ``source``) points to, if stored."""
        rel = self._wiki(source, target[2:-2]) if target.startswith("[[") else None
        if rel is None and not target.startswith("[["):
            rel = self._path(source, target)
        if rel is None or rel == source:
            return None
        return self.paths[rel]

    def _path(self, source: str, target: str) -> str | None:
        base = "" if target.startswith("/") else posixpath.dirname(source)
        rel = posixpath.normpath(posixpath.join(base, target.lstrip("/")))
        if rel.startswith("../"):
            return None
        for candidate in (rel, rel + ".md"):
            if candidate in self.paths:
                return candidate
            if candidate.lower() in self.folded:
                return self.folded[candidate.lower()]
        return None

    def _wiki(self, source: str, name: str) -> str | None:
        key = name.strip().lower()
        if format_for(key) is not None and key in self.folded:
            return self.folded[key]
        key = posixpath.splitext(key)[0] if format_for(key) is not None else key
        if "/" in key:
            return self.by_stem_path.get(key.lstrip("/"))
        candidates = self.by_name.get(key, [])
        if not candidates:
            return None
        here = posixpath.dirname(source)
        # Nearest first: the same folder, then the shortest path.
        return min(candidates, key=lambda r: (posixpath.dirname(r) != here, r.count("/"), r))


def sync_links(
    store: Store, index: LinkIndex, sources: Iterable[tuple[str, Iterable[str]]]
) -> int:
    """Make the ``links_to`` edges out of each (file, link targets) match its links;
    returns how many edges were added."""
    added = 0
    backend = store.backend
    with backend.transaction():
        for rel, targets in sources:
            src = index.paths.get(rel)
            if src is None:
                continue
            wanted = {dst for t in targets if (dst := index.resolve(rel, t)) is not None}
            have = {e.dst for e in backend.edges_of([src], EDGE_TYPE) if e.src == src}
            for dst in have - wanted:
                store.unlink(src, dst, EDGE_TYPE)
            for dst in sorted(wanted - have):
                store.link(src, dst, EDGE_TYPE)
                added += 1
    return added
