"""What a closed store's backend becomes: every use is a clear StoreError."""

from __future__ import annotations

from collections.abc import Callable
from typing import NoReturn

from trove.errors import StoreError


class ClosedBackend:
    """Stands in for a closed store's backend: every use is a clear StoreError."""

    def __getattr__(self, name: str) -> Callable[..., NoReturn]:
        raise StoreError("this store is closed; open it again with trove.open()")

    def close(self) -> None:
        """Closing twice is harmless."""
