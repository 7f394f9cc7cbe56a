"""The stat, hash, move and gone decisions (trove.ingest.changes) and the file records
(trove.ingest.known), on a fake of the store protocol (trove.ingest.target.Target):
ingest needs no store to decide what changed."""

from __future__ import annotations

import hashlib
import os
import time
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from trove.backends.file_state import FileStat, FileState
from trove.ingest.changes import RACY_NS, Changes
from trove.ingest.files import FileEntry
from trove.ingest.known import Known
from trove.ingest.readers import ReadOptions, format_for

OLD_NS = time.time_ns() - 3600 * 10**9


class FakeTarget:
    """What Known reads of a store: one source's documents and file records."""

    def __init__(self, docs: dict[str, tuple[str, str, bool]], files: dict[str, FileState]):
        self.docs = docs
        self.files = files
        self.writes: list[dict[str, FileState | None]] = []

    def iter_source(self, namespace: str, source: str) -> Iterator[tuple[str, str, str, bool]]:
        for sid, (doc_id, digest, deleted) in self.docs.items():
            yield sid, doc_id, digest, deleted

    def file_states(self, namespace: str, source: str) -> dict[str, FileState]:
        return dict(self.files)

    def set_file_states(
        self, namespace: str, source: str, states: Mapping[str, FileState | None]
    ) -> None:
        self.writes.append(dict(states))


def sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def changes(target: Any, folder: Path, **options: Any) -> Changes:
    known = Known(target, "default", "vault")
    settings = {"edited": set(), "force": False, "max_bytes": 10**6, **options}
    return Changes(known, folder, ReadOptions(), **settings)


def test_a_file_with_its_recorded_stat_is_unchanged_unread(tmp_path: Path) -> None:
    path = tmp_path / "a.md"
    path.write_text("alpha")
    os.utime(path, ns=(OLD_NS, OLD_NS))
    info = os.stat(path)
    stat = FileStat(info.st_size, OLD_NS, info.st_ctime_ns, sha("alpha"))
    target = FakeTarget({"a.md": ("d1", sha("alpha"), False)}, {"a.md": FileState(stat)})
    fmt = format_for("a.md")
    assert fmt is not None
    entry = FileEntry(str(path), "a.md")
    assert changes(target, tmp_path).same_stat(entry, fmt) == 1
    assert changes(target, tmp_path, force=True).same_stat(entry, fmt) is None
    assert changes(target, tmp_path, edited={"a.md"}).same_stat(entry, fmt) is None


def test_a_derived_file_is_unchanged_by_its_recorded_hash(tmp_path: Path) -> None:
    docs = {"m.mbox#a": ("d1", "x", False), "m.mbox#b": ("d2", "y", True)}
    target = FakeTarget(docs, {"m.mbox": FileState(None, sha("mail"))})
    fmt = format_for("m.mbox")
    assert fmt is not None
    decide = changes(target, tmp_path)
    assert decide.unchanged("m.mbox", fmt, sha("mail")) == 1  # one live document
    assert decide.seen == {"m.mbox#a", "m.mbox#b"}
    assert decide.unchanged("m.mbox", fmt, sha("other")) is None


def test_a_gone_file_is_matched_to_its_new_path_by_hash(tmp_path: Path) -> None:
    target = FakeTarget({"old.md": ("d1", sha("moved"), False)}, {})
    decide = changes(target, tmp_path)
    decide.find_gone(listed={"new.md"}, only=None)
    assert decide.gone == {"old.md"}
    assert decide.moved_from("new.md", sha("moved")) == "old.md"
    assert decide.moves(failed=set()) == [("old.md", "new.md")] and decide.gone == set()


def test_a_racy_stat_is_not_recorded_and_forgets_the_old_one(tmp_path: Path) -> None:
    old = FileStat(1, OLD_NS, OLD_NS, sha("a"))
    target = FakeTarget({}, {"a.md": FileState(old)})
    decide = changes(target, tmp_path)
    path = tmp_path / "a.md"
    path.write_text("b")
    recent = os.stat(path)
    assert recent.st_mtime_ns > time.time_ns() - RACY_NS
    assert decide.stat_to_record("a.md", recent, sha("b")) == (True, None)
    os.utime(path, ns=(OLD_NS, OLD_NS))
    settled = os.stat(path)
    record, stat = decide.stat_to_record("a.md", settled, sha("b"))
    assert record and stat == FileStat(1, OLD_NS, settled.st_ctime_ns, sha("b"))


def test_known_merges_hashes_and_stats_into_one_record_per_file() -> None:
    stat = FileStat(1, OLD_NS, OLD_NS, "h")
    target = FakeTarget({}, {"a.html": FileState(stat, "k"), "b.md": FileState(stat)})
    known = Known(target, "default", "vault")
    known.record({"a.html": "k2"}, {"b.md": None, "c.pdf": stat})
    assert target.writes == [
        {"a.html": FileState(stat, "k2"), "b.md": None, "c.pdf": FileState(stat)}
    ]
    known.record({"a.html": "k2"}, {})  # the same again: nothing written
    known.forget(["a.html", "nope.md"])
    assert target.writes[1:] == [{"a.html": None}]
    assert set(known.files) == {"c.pdf"}
