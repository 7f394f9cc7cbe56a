"""Keep a folder in sync: ingest it once, then ingest what changes, as it changes.

watchfiles (the ``watch`` extra) reports changes from the operating system (inotify,
FSEvents, ReadDirectoryChangesW); a burst of changes (an editor's save, a ``git
checkout``) is grouped into one run that looks only at the changed paths, with
``sync`` on: deleted files are tombstoned, a rename keeps its document.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

from trove.errors import InvalidInput, MissingDependency, NotFound
from trove.ingest.files import hidden
from trove.ingest.report import IngestReport

# How long the folder must be quiet before a burst of changes is ingested.
DEFAULT_DEBOUNCE_MS = 300
# How often the watcher wakes when nothing happens (to notice a stop request).
_TICK_MS = 200


class StopEvent(Protocol):
    def is_set(self) -> bool: ...


class Ingests(Protocol):
    """What is watched into: a store (:meth:`trove.Store.ingest`)."""

    def ingest(self, path: str | os.PathLike[str], **options: Any) -> IngestReport: ...


def watch(
    store: Ingests,
    root: str | os.PathLike[str],
    *,
    debounce_ms: int = DEFAULT_DEBOUNCE_MS,
    stop: StopEvent | None = None,
    on_report: Callable[[IngestReport], None] | None = None,
    force_polling: bool | None = None,
    **options: Any,
) -> None:
    """Ingest ``root`` (with ``sync``), then again for each burst of changes, until
    ``stop`` is set (or Ctrl-C). ``options`` are :func:`ingest`'s; ``on_report`` gets
    each run's report, the first one once the folder is being watched."""
    try:
        import watchfiles
    except ImportError as exc:
        raise MissingDependency("watchfiles", "watch", "trove watch") from exc
    folder = Path(root).expanduser()
    if not folder.is_dir():
        raise NotFound(f"{folder} is not a folder")
    folder = folder.resolve()
    if "only" in options or "sync" in options:
        raise InvalidInput("watch always syncs the whole folder; do not pass only or sync")
    report = on_report or (lambda _: None)
    watching = False
    changes_seen = watchfiles.watch(
        folder,
        watch_filter=_Filter(folder),
        step=debounce_ms,
        debounce=max(1600, 4 * debounce_ms),
        stop_event=stop,
        rust_timeout=_TICK_MS,
        yield_on_timeout=True,
        force_polling=force_polling,
    )
    for changes in changes_seen:
        if not watching:
            # The watcher is live now, so nothing that changes from here on is missed;
            # what changed before is in this full run.
            watching = True
            report(store.ingest(folder, sync=True, **options))
            continue
        paths = {rel for _, path in changes if (rel := _relative(folder, path)) is not None}
        if paths:
            report(store.ingest(folder, sync=True, only=paths, **options))


def _relative(folder: Path, path: str) -> str | None:
    try:
        return Path(path).relative_to(folder).as_posix()
    except ValueError:
        return None


class _Filter:
    """Changes worth a run: readable formats, folders, and deleted paths (which may have
    been either); not hidden entries, nor the store's own files if they live here."""

    def __init__(self, folder: Path) -> None:
        from trove.ingest.readers import (
            format_for,  # here: the CLI imports this module for its defaults
        )

        self.folder = folder
        self.format_for = format_for

    def __call__(self, change: Any, path: str) -> bool:
        rel = _relative(self.folder, path)
        if rel is None or hidden(rel):
            return False
        return self.format_for(rel) is not None or os.path.isdir(path) or not os.path.exists(path)
