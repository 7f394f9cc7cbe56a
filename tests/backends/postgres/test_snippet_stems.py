"""Snippets on PostgreSQL: the words the server stems for a search's hits are asked for in
one round trip (the query's words and the texts' words that start like them)."""

from __future__ import annotations

from typing import Any

import psycopg
import pytest

import trove


def test_a_search_asks_for_its_stems_once_and_marks_every_form(
    pg_target: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    with trove.open(pg_target, embedder="hash:64") as kb:
        kb.add("The runner was running while others ran; runs happen daily.", source_id="a")
        kb.add("Caching layers: a cache cached what the caches held.", source_id="b")
        sent: list[str] = []
        execute = psycopg.Cursor.execute

        def traced(self: psycopg.Cursor, query: Any, *args: Any, **kwargs: Any) -> Any:
            sent.append(str(query))
            return execute(self, query, *args, **kwargs)

        monkeypatch.setattr(psycopg.Cursor, "execute", traced)
        for mode in ("keyword", "semantic"):
            sent.clear()
            kb.backend._stems.clear()  # type: ignore[attr-defined]  # nothing known yet
            hits = {h.doc_id: h.snippet for h in kb.search("running caches", mode=mode)}
            assert len([s for s in sent if "to_tsvector" in s]) == 1
            assert sorted(hits.values()) == [
                "The runner was «running» while others ran; «runs» happen daily.",
                "«Caching» layers: a «cache» «cached» what the «caches» held.",
            ]
