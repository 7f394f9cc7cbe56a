"""``trove export --format markdown DIR``: the store as a vault of Markdown notes.

One file per live document, named after its title (made unique with its id where two
titles meet), with YAML front matter that ``trove ingest`` reads back: ``title``,
``tags``, ``author`` and ``date`` become those fields again; the rest of the provenance
(id, source, source_id, doc_type, participants, url, thread, channel, namespace,
metadata) lands in metadata. Each outgoing edge becomes a ``[[link]]`` under a closing
``## Links`` heading, which ingest turns back into a ``links_to`` edge. The body is the
document's text as stored.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from trove.errors import InvalidInput
from trove.models import Document

if TYPE_CHECKING:
    from trove.store import Store

# A note's own YAML front matter, as the Markdown reader finds it.
_FRONT_MATTER = re.compile(
    r"\A\ufeff?---[ \t]*\r?\n(?P<body>(?:.*\r?\n)*?)(?:---|\.\.\.)[ \t]*(?:\r?\n|\Z)"
)
_UNSAFE = re.compile(r'[\\/:*?"<>|#^\[\]\s]+')
_PAGE = 200


@dataclass
class VaultReport:
    notes: int = 0
    links: int = 0

    def to_dict(self) -> dict[str, int]:
        return {"notes": self.notes, "links": self.links}


def export_markdown(store: Store, directory: str | os.PathLike[str]) -> VaultReport:
    """Write the store's live documents (every namespace) as notes under ``directory``."""
    root = Path(directory)
    if root.exists() and any(root.iterdir()):
        raise InvalidInput(f"{root} is not empty; export a vault into a new folder")
    root.mkdir(parents=True, exist_ok=True)
    docs = [doc for doc in _live(store)]
    names = _names(docs)
    report = VaultReport()
    for doc in docs:
        edges = [e for e in store.backend.edges_of([doc.id], None) if e.src == doc.id]
        links = [(e.type, names[e.dst]) for e in edges if e.dst in names]
        (root / f"{names[doc.id]}.md").write_text(_note(doc, links), encoding="utf-8")
        report.notes += 1
        report.links += len(links)
    return report


def _live(store: Store) -> Iterator[Document]:
    after: str | None = None
    while docs := store.backend.iter_documents(after=after, limit=_PAGE):
        after = docs[-1].id
        yield from (d for d in docs if store.get(d.id) is not None)


def _names(docs: list[Document]) -> dict[str, str]:
    """A file name per document: its title, or its source id, made safe and unique."""
    names: dict[str, str] = {}
    taken: set[str] = set()
    for doc in sorted(docs, key=lambda d: (d.created_at or "", d.id)):
        base = _UNSAFE.sub(" ", doc.title or doc.source_id or doc.id).strip(" .")[:80]
        name = base or doc.id
        if name.lower() in taken:
            name = f"{base} {doc.id[:12]}"
        taken.add(name.lower())
        names[doc.id] = name
    return names


def _note(doc: Document, links: list[tuple[str, str]]) -> str:
    own, body = _own_front_matter(doc.text)
    head: dict[str, Any] = {**own, "title": doc.title or doc.source_id or doc.id}
    if doc.tags:
        head["tags"] = list(doc.tags)
    if doc.author:
        head["author"] = doc.author
    if doc.timestamp:
        head["date"] = doc.timestamp
    trove: dict[str, Any] = {"id": doc.id, "namespace": doc.namespace, "source": doc.source}
    for name in ("source_id", "doc_type", "url", "thread_id", "channel", "scope"):
        if getattr(doc, name):
            trove[name] = getattr(doc, name)
    if doc.participants:
        trove["participants"] = list(doc.participants)
    if doc.importance is not None:
        trove["importance"] = doc.importance
    # Keys the note's own front matter holds come back from it on ingest.
    metadata = {k: v for k, v in doc.metadata.items() if k not in own}
    if metadata:
        trove["metadata"] = metadata
    head["trove"] = trove
    front = yaml.safe_dump(head, allow_unicode=True, sort_keys=False, width=1_000_000)
    body = body if body.endswith("\n") else body + "\n"
    if links:
        body += "\n## Links\n\n" + "".join(f"- {kind}: [[{name}]]\n" for kind, name in links)
    return f"---\n{front}---\n\n{body}"


def _own_front_matter(text: str) -> tuple[dict[str, Any], str]:
    """A note's own front matter (as a mapping) and the text after it, so the exported
    note has one block: ingest reads only the first, and a second would show as text.
    Front matter that is not a YAML mapping stays in the body, as stored."""
    found = _FRONT_MATTER.match(text)
    if not found:
        return {}, text
    try:
        own = yaml.safe_load(found.group("body"))
    except yaml.YAMLError:
        return {}, text
    if not isinstance(own, dict):
        return {}, text
    return {str(k): v for k, v in own.items()}, text[found.end() :].lstrip("\r\n")
