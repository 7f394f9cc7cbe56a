"""The one error hierarchy: everything trove raises on purpose is a TroveError."""

from __future__ import annotations


class TroveError(Exception):
    """Base class of every error trove raises on purpose."""


class NotFound(TroveError):
    """A document, edge or file that was asked for does not exist."""


class InvalidQuery(TroveError):
    """A search request that cannot be run: unknown filter, bad mode, bad raw syntax."""


class QueryTimeout(InvalidQuery):
    """A search ran past its time budget and was stopped; narrow the query or its filters."""


class Forbidden(TroveError):
    """The caller may not do this here (a denied write, a global write without the right)."""


class InvalidInput(TroveError):
    """A value given to a write that trove cannot store (bad timestamp, bad tag ...)."""


class ContentTooLarge(InvalidInput):
    """A write larger than the server allows (``max_content_tokens``)."""


class StoreError(TroveError):
    """The store file itself cannot be used."""


class NotATroveStore(StoreError):
    """The file exists but is not a trove store (another SQLite database, or not SQLite)."""


class CorruptStore(StoreError):
    """The store file is damaged (truncated, or pages that fail SQLite's checks)."""


class SchemaTooNew(StoreError):
    """The file was written by a newer trove; upgrade trove to open it."""


class EmbedderMismatch(TroveError):
    """The store's vectors were made by another embedder (model id or dimension)."""


class EmbedderError(TroveError):
    """The embedder failed: endpoint down, timed out, model file corrupt."""


class MissingDependency(TroveError, ImportError):
    """An optional feature needs an extra that is not installed; the message names it."""

    def __init__(self, package: str, extra: str, feature: str) -> None:
        self.package = package
        self.extra = extra
        super().__init__(f"{feature} needs the '{package}' package: pip install 'trove[{extra}]'")
