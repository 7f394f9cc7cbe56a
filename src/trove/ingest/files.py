"""Which files an ingest reads, and reading them: a safe, stable walk of the folder.

Hidden entries are not entered. A symlink is followed only when it stays inside the
root, unless the caller asks to follow every link; a folder is entered at most once
(by its device and inode), so symlink loops end. Paths are kept relative to the root.
The walk costs no stat call per plain file (the directory entry's type is enough):
size and time are read from the open file.
"""

from __future__ import annotations

import errno
import fnmatch
import hashlib
import io
import os
import stat
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

# Files larger than this are skipped (and reported) unless the caller raises the cap.
DEFAULT_MAX_BYTES = 100 * 1024 * 1024
# Files are hashed (and streamed) this many bytes at a time.
BLOCK = 1 << 20


@dataclass(frozen=True)
class FileEntry:
    """A file to consider: where to open it and its path relative to the root."""

    path: str
    rel: str


@dataclass
class Listing:
    files: list[FileEntry] = field(default_factory=list)
    # (relative path, why) for entries that were seen but not listed.
    skipped: list[tuple[str, str]] = field(default_factory=list)


def list_files(
    folder: Path,
    *,
    include: Sequence[str] = (),
    exclude: Sequence[str] = (),
    follow_symlinks: bool = False,
    only: Iterable[str] | None = None,
) -> Listing:
    """Files under ``folder`` (an absolute, resolved path), sorted by relative path.

    ``only`` limits the walk to these relative paths (files, or folders to walk); the
    ones that do not exist are left out.
    """
    walker = _Walker(folder, include, exclude, follow_symlinks)
    if only is None:
        walker.walk_dir(str(folder), "")
    else:
        for rel in sorted(set(only)):
            walker.visit(os.path.join(folder, rel), rel)
    walker.listing.files.sort(key=lambda e: e.rel)
    return walker.listing


def hidden(rel: str) -> bool:
    return any(part.startswith(".") for part in rel.split("/"))


class _Walker:
    def __init__(
        self, root: Path, include: Sequence[str], exclude: Sequence[str], follow: bool
    ) -> None:
        self.root = root
        self.include = include
        self.exclude = exclude
        self.follow = follow
        self.listing = Listing()
        self.entered: set[tuple[int, int]] = set()

    def wanted(self, rel: str) -> bool:
        if self.include and not any(fnmatch.fnmatch(rel, p) for p in self.include):
            return False
        return not any(fnmatch.fnmatch(rel, p) for p in self.exclude)

    def visit(self, path: str, rel: str) -> None:
        """One path given by the caller (``only``), whatever it is now."""
        if not rel or hidden(rel) or any(fnmatch.fnmatch(rel, p) for p in self.exclude):
            return
        if os.path.islink(path):
            self.link(path, rel)
        elif os.path.isdir(path):
            self.walk_dir(path, rel)
        elif os.path.isfile(path) and self.wanted(rel):
            self.listing.files.append(FileEntry(path, rel))

    def walk_dir(self, path: str, rel: str) -> None:
        try:
            info = os.stat(path)
            identity = (info.st_dev, info.st_ino)
            if identity in self.entered:
                self.listing.skipped.append((rel or ".", "symlink loop: folder already read"))
                return
            self.entered.add(identity)
            with os.scandir(path) as scan:
                entries = sorted(scan, key=lambda e: e.name)
        except OSError as exc:
            self.listing.skipped.append((rel or ".", exc.strerror or str(exc)))
            return
        for entry in entries:
            if entry.name.startswith("."):
                continue
            child = f"{rel}/{entry.name}" if rel else entry.name
            try:
                if entry.is_symlink():
                    self.link(entry.path, child)
                elif entry.is_dir(follow_symlinks=False):
                    if not any(fnmatch.fnmatch(child, p) for p in self.exclude):
                        self.walk_dir(entry.path, child)
                elif entry.is_file(follow_symlinks=False) and self.wanted(child):
                    self.listing.files.append(FileEntry(entry.path, child))
            except OSError as exc:  # vanished while listing, or unreadable
                self.listing.skipped.append((child, exc.strerror or str(exc)))

    def link(self, path: str, rel: str) -> None:
        try:
            info = os.stat(path)
        except OSError as exc:
            loop = exc.errno == errno.ELOOP
            self.listing.skipped.append((rel, "symlink loop" if loop else "broken symlink"))
            return
        if not self.follow and not _inside(path, self.root):
            self.listing.skipped.append(
                (rel, "symlink leads outside the folder (--follow-symlinks to follow it)")
            )
            return
        if stat.S_ISDIR(info.st_mode):
            if _above(path):
                self.listing.skipped.append((rel, "symlink loop: leads back to a folder above it"))
                return
            # Without --follow-symlinks, a folder inside the root is read by its own path.
            if self.follow and not any(fnmatch.fnmatch(rel, p) for p in self.exclude):
                self.walk_dir(path, rel)
        elif stat.S_ISREG(info.st_mode) and self.wanted(rel):
            self.listing.files.append(FileEntry(path, rel))


def _above(link: str) -> bool:
    """Whether a symlink to a folder points at a folder that contains the link."""
    try:
        target = Path(link).resolve()
    except (OSError, RuntimeError):
        return True
    return target in Path(link).parent.resolve().parents or target == Path(link).parent.resolve()


def _inside(path: str, root: Path) -> bool:
    try:
        Path(path).resolve().relative_to(root)
    except (ValueError, OSError, RuntimeError):  # RuntimeError: a loop of links
        return False
    return True


class TooLarge(Exception):
    """The file is larger than the limit it is read with."""


def read_whole(path: str, limit: int) -> tuple[bytes, os.stat_result]:
    """The whole file and its stat when opened, or TooLarge, reading at most
    ``limit + 1`` bytes (the file may grow after it was listed)."""
    with open(path, "rb") as handle:
        info = os.fstat(handle.fileno())
        if info.st_size > limit:
            raise TooLarge
        # Asked for limit + 1 bytes, read() allocates that much (100 MB) for a 2 KB file:
        # that was two thirds of an unchanged run. Ask for the size, then for any growth.
        data = handle.read(info.st_size + 1)
        if len(data) > info.st_size:
            data += handle.read(limit + 1 - len(data))
    if len(data) > limit:
        raise TooLarge
    return data, info


def hash_file(path: str) -> tuple[str, os.stat_result]:
    """The file's hash and its stat when opened."""
    digest = hashlib.sha256()
    with open(path, "rb", buffering=0) as handle:
        info = os.fstat(handle.fileno())
        buffer = bytearray(BLOCK)
        view = memoryview(buffer)
        while True:
            n = handle.readinto(buffer)
            if not n:
                break
            digest.update(view[:n])
    return digest.hexdigest(), info


class HashingReader(io.RawIOBase):
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
