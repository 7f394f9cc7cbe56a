"""Snippets in the SQLite backend: a chunk's text with the query's words (stemmed by
the index's own tokenizer) and CJK runs marked."""

from __future__ import annotations

import json
from collections.abc import Sequence

from trove.backends.sqlite.connection import Connected
from trove.search import snippet
from trove.search.query import ParsedQuery, has_cjk


class Snippets(Connected):
    """Mixin of the SQLite backend: snippets."""

    def snippets(self, query: ParsedQuery, chunk_ids: Sequence[int]) -> dict[int, str]:
        """A snippet per chunk with the query's words (stemmed) and CJK runs marked."""
        raw_terms = query.raw_terms()
        words = list(query.words) + [t for t in raw_terms if not has_cjk(t)]
        # One call for all the words: a space separates tokens, so the same stems.
        stems = {t for _, _, t in self._tokenize(" ".join(words).encode(), query=True)}
        needles = list(query.substrings) + [t for t in raw_terms if has_cjk(t)]
        needles += query.cjk_runs()
        found = {}
        for cid, (_, text) in self._chunk_texts(chunk_ids).items():
            spans = snippet.word_intervals(self._tokenize, text, stems) if stems else []
            if needles:
                spans += snippet.substring_intervals(text, needles)
            found[cid] = snippet.make(text, spans)
        return found

    def _chunk_texts(self, chunk_ids: Sequence[int]) -> dict[int, tuple[str, str]]:
        rows = self.conn.execute(
            "SELECT id, head, text FROM chunk WHERE id IN (SELECT value FROM json_each(?))",
            (json.dumps(list(chunk_ids)),),
        )
        return {int(cid): (str(head), str(text)) for cid, head, text in rows}
