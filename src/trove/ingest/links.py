"""Links between notes: ``[[wiki links]]`` and relative Markdown links become
``links_to`` edges between the documents of one source, once the documents exist.

A wiki link names a note by its file name (``[[Cache decision]]``, any folder) or its
path (``[[design/Cache decision]]``); when several notes share the name, the one nearest
the linking note wins. A Markdown link is a path relative to the linking file.
"""

from __future__ import annotations

import posixpath
from collections import defaultdict
from collections.abc import Collection, Iterable, Mapping

from trove.ingest.readers import BY_NAME, format_for, split_source_id
from trove.ingest.target import Target

EDGE_TYPE = "links_to"
_NOTES = BY_NAME["markdown"].suffixes


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
    target: Target, index: LinkIndex, sources: Iterable[tuple[str, Iterable[str]]]
) -> int:
    """Make the ``links_to`` edges out of each (file, link targets) match its links;
    returns how many edges were added."""
    added = 0
    with target.transaction():
        for rel, targets in sources:
            src = index.paths.get(rel)
            if src is None:
                continue
            wanted = {dst for t in targets if (dst := index.resolve(rel, t)) is not None}
            have = set(target.edges_from(src, EDGE_TYPE))
            for dst in have - wanted:
                target.unlink(src, dst, EDGE_TYPE)
            for dst in sorted(wanted - have):
                target.link(src, dst, EDGE_TYPE)
                added += 1
    return added


def link_notes(
    target: Target,
    namespace: str,
    source: str,
    parsed: Mapping[str, tuple[str, ...]],
    known: Collection[str],
    look_back: bool,
) -> int | None:
    """Sync the links of the notes read in a run (``parsed``: source_id -> links); with
    ``look_back`` (a note was added or moved) also those of the notes stored before
    (``known``) and not read again: the new note may be the target they were missing.
    Returns how many edges were added, None when there was nothing to link."""
    docs = {
        sid: doc_id
        for sid, doc_id, _, deleted in target.iter_source(namespace, source)
        if not deleted and split_source_id(sid)[1] is None
    }
    sources = dict(parsed)
    if look_back:
        sources.update(_stored_links(target, docs, known, parsed))
    if not sources:
        return None
    return sync_links(target, LinkIndex(docs), sources.items())


def _stored_links(
    target: Target, docs: Mapping[str, str], known: Collection[str], parsed: Collection[str]
) -> dict[str, tuple[str, ...]]:
    """The links of the notes stored before this run and not read again in it."""
    ids = [
        doc_id
        for sid, doc_id in docs.items()
        if sid in known and sid not in parsed and sid.lower().endswith(_NOTES)
    ]
    found: dict[str, tuple[str, ...]] = {}
    for start in range(0, len(ids), 500):
        for doc in target.documents(ids[start : start + 500]).values():
            links = doc.metadata.get("links")
            if doc.source_id and isinstance(links, list) and links:
                found[doc.source_id] = tuple(str(link) for link in links)
    return found


def link_attachments(
    target: Target, namespace: str, source: str, attachments: Iterable[tuple[str, str]]
) -> None:
    """``attachment_of`` edges from each (attachment, message) source_id pair."""
    ids = {
        sid: doc_id for sid, doc_id, _, gone in target.iter_source(namespace, source) if not gone
    }
    for child, parent in attachments:
        if child in ids and parent in ids:
            target.link(ids[child], ids[parent], "attachment_of")
