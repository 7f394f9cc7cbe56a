"""The SQLite backend's document rows: its fast row maker agrees with the shared one."""

from __future__ import annotations

from trove.backends.rows import document_values
from trove.backends.sqlite.documents import _json_list, _row
from trove.models import Document
from trove.write import prepare


def test_the_fast_row_of_a_document_equals_the_shared_one() -> None:
    full = prepare(
        {
            "text": "t",
            "tags": ["b", "ä"],
            "participants": ["p"],
            "metadata": {"z": 1, "a": [1, "é"]},
            "timestamp": "2026-11-03T09:00:00.5Z",
            "expires_at": 4102444800,
            "entities": ["e"],
            "source_turn_ids": ["s1"],
        }
    )
    stamped = Document(
        **{**vars(full), "created_at": "2026-12-01T00:00:00Z", "last_accessed": None}
    )
    for doc in (prepare({"text": "t"}), full, stamped, stamped):  # twice: the cached times
        assert _row(doc) == document_values(doc, _json_list)
