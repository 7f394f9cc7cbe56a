"""The statements a test's PostgreSQL connections send, traced through psycopg."""

from __future__ import annotations

from typing import Any

import psycopg
import pytest


def statements(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The text of every statement sent from now on."""
    sent: list[str] = []
    execute = psycopg.Cursor.execute

    def traced(self: psycopg.Cursor, query: Any, *args: Any, **kwargs: Any) -> Any:
        sent.append(query.as_string(self) if hasattr(query, "as_string") else str(query))
        return execute(self, query, *args, **kwargs)

    monkeypatch.setattr(psycopg.Cursor, "execute", traced)
    return sent
