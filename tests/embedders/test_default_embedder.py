"""The real default embedder inside a store: offline, semantic matches without shared words."""

from __future__ import annotations

from pathlib import Path

import trove


def test_default_store_finds_meaning_not_just_words(tmp_path: Path) -> None:
    path = tmp_path / "kb.db"
    with trove.open(path) as kb:  # a new file uses the default embedder
        kb.add_many(
            [
                {"text": "The physician prescribed antibiotics for the infection.", "title": "a"},
                {"text": "Our quarterly revenue grew by twelve percent.", "title": "b"},
                {"text": "The striker scored twice in the final match.", "title": "c"},
            ]
        )
        hits = kb.search("doctor gave medicine to a sick patient", mode="semantic")
        assert hits[0].title == "a"
        assert kb.search("football goal")[0].title == "c"  # hybrid, no shared word
        lock = kb.stats().embedder
        assert lock is not None and lock["model_id"] == "all-MiniLM-L6-v2-int8"
        assert lock["dimension"] == 384 and lock["spec"] == "default"
    with trove.open(path) as kb:  # keyword work on a store with vectors loads no model
        kb.stats()
        kb.search("physician", mode="keyword")
        kb.get(kb.search("physician", mode="keyword")[0].doc_id)
        assert not kb.vectors.loaded
