"""The SQLite substring fallback (one-character CJK words): it finds a term where the
lower-cased head and text hold it, with or without lower() in the scan."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

import trove
from trove.backends.sqlite.chunk_text import TEXT_OF_C
from trove.backends.sqlite.search import _contains, _needs_lower

pytestmark = pytest.mark.sqlite_only


@pytest.fixture
def kb(tmp_path: Path) -> Iterator[trove.Store]:
    with trove.open(tmp_path / "kb.db", embedder=None) as store:
        yield store


def test_only_terms_with_ascii_letters_or_newlines_need_lower() -> None:
    assert not _needs_lower("库")
    assert not _needs_lower("한")
    assert not _needs_lower("3")
    assert _needs_lower("ab")
    assert _needs_lower("库a")
    assert _needs_lower("\n")


def test_the_scan_without_lower_matches_what_lower_matches(kb: trove.Store) -> None:
    kb.add_many(
        [
            {"title": "库房", "text": "nothing here"},
            {"title": "notes", "text": "书库 AB 한국"},
            {"title": "AB", "text": "plain"},
            {"title": "other", "text": "nothing"},
        ]
    )
    conn = kb.backend.conn  # type: ignore[attr-defined]
    for term in ("库", "한", "ab", "b", "s\n书", "x"):
        lowered = conn.execute(
            "SELECT c.id FROM chunk c "
            f"WHERE instr(lower(c.head || char(10) || {TEXT_OF_C}), ?) > 0",
            (term,),
        )
        args = (term,) if _needs_lower(term) else (term, term)
        found = conn.execute(
            f"SELECT c.id FROM chunk c JOIN document d ON d.id = c.doc_id WHERE {_contains(term)}",
            args,
        )
        assert found == lowered, term
    assert {h.title for h in kb.search("库", mode="keyword")} == {"库房", "notes"}
