"""Originals: the source bytes a document was made from, kept inside the store.

Opt-in (``add(original=...)``, ``ingest(keep_originals=True)``). Content-addressed by
SHA-256: one copy per distinct content however many documents (or re-ingests, or mails
carrying the same attachment) refer to it; the backend drops a blob with its last
reference when documents are purged. Bytes move in pieces of :data:`PIECE`, in and out,
so a large original is never held whole by trove.
"""

from __future__ import annotations

import io
import os
import re
import reprlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, Protocol

from trove.errors import ContentTooLarge, InvalidInput, NotFound

if TYPE_CHECKING:
    import hashlib
    import mimetypes
    import unicodedata

else:  # loaded when an original is first read or written: opening a store needs none
    from trove.lazy import LazyModule

    hashlib = LazyModule("hashlib")
    mimetypes = LazyModule("mimetypes")
    unicodedata = LazyModule("unicodedata")

PIECE = 1 << 20
# Default bound on one original; TROVE_MAX_ORIGINAL_BYTES or Store(max_original_bytes=).
DEFAULT_MAX_ORIGINAL_BYTES = 1 << 30
_UNSAFE = re.compile(r"[^\w.\- ()+,@=]+")
# A media type (RFC 6838 ``type/subtype``, RFC 9110 parameters), in printable ASCII: it is
# sent as a header, and a NUL, CR/LF or non-ASCII one broke the response.
_TOKEN = r"[A-Za-z0-9!#$%&'*+.^_`|~-]+"
_MEDIA_TYPE = re.compile(rf'{_TOKEN}/{_TOKEN}(?: *; *{_TOKEN}=(?:{_TOKEN}|"[^"\\]*"))*')
FALLBACK_TYPE = "application/octet-stream"


@dataclass(frozen=True)
class OriginalInfo:
    """What is stored about a document's original (not its bytes)."""

    doc_id: str
    sha256: str
    name: str
    media_type: str
    size: int


@dataclass(frozen=True)
class Original:
    """A document's original: its bytes, file name and media type."""

    data: bytes
    name: str
    media_type: str

    @property
    def size(self) -> int:
        return len(self.data)


class OriginalStore(Protocol):
    """The part of a backend that keeps originals (every backend's, by
    :class:`~trove.backends.base.Backend`)."""

    def put_original(
        self, doc_id: str, digest: str, size: int, source: IO[bytes], name: str, media_type: str
    ) -> None: ...
    def original_info(self, doc_id: str) -> OriginalInfo | None: ...
    def original_pieces(self, digest: str, piece: int = ...) -> Iterator[bytes]: ...


class Holder(Protocol):
    """What reading and writing originals needs of a store: its backend, whether a
    document is live, and its bound on one original (None: the environment's or 1 GiB)."""

    @property
    def backend(self) -> OriginalStore: ...
    @property
    def max_original_bytes(self) -> int | None: ...
    def peek(self, doc_id: str) -> Any: ...


def max_bytes(store: Holder) -> int:
    configured = store.max_original_bytes
    if configured is not None:
        return int(configured)
    env = os.environ.get("TROVE_MAX_ORIGINAL_BYTES", "")
    return int(env) if env.isdigit() else DEFAULT_MAX_ORIGINAL_BYTES


def safe_name(name: str, fallback: str = "original") -> str:
    """A file name safe to create in a folder: no path parts, no control or odd
    characters, not hidden, at most 200 characters (``../../x.pdf`` -> ``x.pdf``)."""
    name = unicodedata.normalize("NFC", str(name)).replace("\\", "/").split("/")[-1]
    name = _UNSAFE.sub("_", name).strip(" .")
    name = name.lstrip(".-") or fallback
    if len(name) > 200:
        stem, dot, ext = name.rpartition(".")
        name = (stem[: 200 - len(ext) - 1] + dot + ext) if dot and len(ext) < 16 else name[:200]
    return name


def media_type(value: Any) -> str:
    """``value`` if it is a media type fit to be a header (``text/plain; charset=utf-8``)."""
    if not is_media_type(value):
        raise InvalidInput(
            f"media_type {reprlib.repr(value)} is not a media type (like text/plain)"
        )
    return str(value)


def is_media_type(value: Any) -> bool:
    return (
        isinstance(value, str)
        and len(value) <= 255
        and value.isascii()
        and value.isprintable()
        and _MEDIA_TYPE.fullmatch(value) is not None
    )


def guess_type(name: str) -> str:
    return mimetypes.guess_type(name)[0] or "application/octet-stream"


def attach(
    store: Holder,
    doc_id: str,
    original: bytes | os.PathLike[str] | str,
    name: str = "",
    media_type: str = "",
) -> OriginalInfo:
    """Store ``original`` (bytes, or the path of a file, read in pieces) as ``doc_id``'s."""
    if isinstance(original, bytes | bytearray | memoryview):
        data = bytes(original)
        size, digest = len(data), hashlib.sha256(data).hexdigest()
        opener: Any = lambda: io.BytesIO(data)  # noqa: E731
    elif isinstance(original, str | os.PathLike):
        path = Path(original)
        size, digest = _hash_file(path, max_bytes(store))
        opener = lambda: path.open("rb")  # noqa: E731
        name = name or path.name
    else:
        raise InvalidInput("original must be bytes or the path of a file")
    limit = max_bytes(store)
    if size > limit:
        raise ContentTooLarge(
            f"the original is {size} bytes; this store keeps at most {limit} "
            "(max_original_bytes, or TROVE_MAX_ORIGINAL_BYTES)"
        )
    name, kind = described(name, media_type)
    with opener() as source:
        store.backend.put_original(doc_id, digest, size, source, name, kind)
    return OriginalInfo(doc_id, digest, name, kind, size)


def keep(
    store: Holder,
    doc_id: str,
    original: bytes | os.PathLike[str] | str,
    name: str = "",
    media_type: str = "",
) -> OriginalInfo:
    """:func:`attach` to a live document, replacing the original it had; NotFound if the
    document is absent, deleted or expired."""
    if store.peek(doc_id) is None:
        raise NotFound(f"no document with id {doc_id!r}")
    return attach(store, doc_id, original, name, media_type)


def described(name: str, kind: str) -> tuple[str, str]:
    """An original's file name (made safe) and media type (checked; guessed from the
    name when not given), as every way in (add, ingest, import) stores them."""
    name = safe_name(name) if name else ""
    return name, media_type(kind or (guess_type(name) if name else FALLBACK_TYPE))


def info(store: Holder, doc_id: str) -> OriginalInfo:
    """The original of a live document; NotFound if the document or its original is not."""
    if store.peek(doc_id) is None:
        raise NotFound(f"no document with id {doc_id!r}")
    found = store.backend.original_info(doc_id)
    if found is None:
        raise NotFound(f"document {doc_id!r} has no original (ingest with --keep-originals)")
    return found


def pieces(store: Holder, found: OriginalInfo) -> Iterator[bytes]:
    return store.backend.original_pieces(found.sha256)


def write_to(store: Holder, found: OriginalInfo, target: IO[bytes]) -> int:
    written = 0
    for piece in pieces(store, found):
        target.write(piece)
        written += len(piece)
    return written


def output_path(target: str | os.PathLike[str], found: OriginalInfo) -> Path:
    """Where ``get --original -o TARGET`` writes: TARGET itself, or inside a folder a
    sanitised name (never outside the folder, whatever the stored name says)."""
    path = Path(target)
    if path.is_dir():
        fallback = f"{found.doc_id}{mimetypes.guess_extension(found.media_type) or ''}"
        inside = path / safe_name(found.name, fallback)
        if inside.resolve().parent != path.resolve():
            raise InvalidInput(f"refusing to write {inside} outside {path}")
        return inside
    return path


def _hash_file(path: Path, limit: int) -> tuple[int, str]:
    digest = hashlib.sha256()
    size = 0
    try:
        with path.open("rb") as source:
            while piece := source.read(PIECE):
                size += len(piece)
                if size > limit:
                    break
                digest.update(piece)
    except OSError as exc:
        raise InvalidInput(f"cannot read {path}: {exc.strerror}") from None
    return size, digest.hexdigest()


class _PiecesReader(io.RawIOBase):
    """A file-like view of an iterator of byte pieces (a backend's blob being read), so
    one backend's original streams into another's without being held whole."""

    def __init__(self, pieces: Iterator[bytes]) -> None:
        self._pieces = pieces
        self._left = b""

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        if not self._left:
            self._left = next(self._pieces, b"")
        size = min(len(buffer), len(self._left))
        buffer[:size] = self._left[:size]
        self._left = self._left[size:]
        return size


def copy_original(src: Any, dst: Any, doc_id: str) -> bool:
    """Copy ``doc_id``'s original from one backend to another (``trove migrate``);
    False when it has none. A blob the destination holds already is not read."""
    found = src.original_info(doc_id)
    if found is None:
        return False
    reader = io.BufferedReader(_PiecesReader(src.original_pieces(found.sha256)), PIECE)
    dst.put_original(doc_id, found.sha256, found.size, reader, found.name, found.media_type)
    return True
