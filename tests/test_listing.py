"""The list cursor (trove.operations.listing encode_cursor / decode_cursor), directly: it
round-trips (created time, id), is URL-safe, and anything else is an InvalidQuery naming it."""

from __future__ import annotations

import base64
import json

import pytest

from trove.errors import InvalidQuery
from trove.models import Document
from trove.operations.listing import decode_cursor, encode_cursor
from trove.timeutil import to_epoch


def b64(payload: bytes) -> str:
    return base64.urlsafe_b64encode(payload).decode().rstrip("=")


@pytest.mark.parametrize("doc_id", ["37b1bf2fd7d7f5955c18", "a", "ünïcode id", "x" * 41])
def test_round_trip_of_created_time_and_id(doc_id: str) -> None:
    doc = Document(id=doc_id, text="t", created_at="2026-11-03T09:00:00.123456Z")
    cursor = encode_cursor(doc)
    assert decode_cursor(cursor) == (to_epoch(doc.created_at), doc_id)
    assert "=" not in cursor and set(cursor) <= set(
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
    )


def test_the_cursor_is_the_json_pair_in_url_safe_base64() -> None:
    assert decode_cursor(b64(json.dumps([1.5, "id"]).encode())) == (1.5, "id")
    assert decode_cursor(b64(b'["7", 8]')) == (7.0, "8")  # values are coerced


@pytest.mark.parametrize(
    "cursor",
    [
        "!!!",
        "a",
        b64(b"not json"),
        b64(b"\xff\xfe"),
        b64(b"42"),
        b64(b"[1]"),
        b64(b'[1, "a", 2]'),
        b64(b'["soon", "id"]'),
        b64(b'[null, "id"]'),
        b64(b"{}"),
    ],
)
def test_anything_else_is_an_invalid_query_naming_the_cursor(cursor: str) -> None:
    with pytest.raises(InvalidQuery) as caught:
        decode_cursor(cursor)
    assert str(caught.value) == f"not a cursor from list(): {cursor!r}"
