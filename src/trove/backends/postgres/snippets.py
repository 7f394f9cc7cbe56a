"""Snippets in the PostgreSQL backend: a chunk's text with the query's words (stemmed by
the server, as the index was) and CJK runs marked."""

from __future__ import annotations

from collections.abc import Sequence

from trove.backends.postgres import text as text_index
from trove.backends.postgres.connection import Connected
from trove.errors import InvalidQuery
from trove.search import snippet
from trove.search.query import ParsedQuery, has_cjk


class Snippets(Connected):
    """Mixin of the PostgreSQL backend: snippets."""

    def stems(self, words: Sequence[str]) -> dict[str, tuple[str, ...]]:
        raise NotImplementedError

    def snippets(self, query: ParsedQuery, chunk_ids: Sequence[int]) -> dict[int, str]:
        """A snippet per chunk with the query's words (stemmed) and CJK runs marked."""
        words = [text_index.fold(w) for w in query.words]
        needles = list(query.substrings) + query.cjk_runs()
        if query.raw is not None:
            try:
                phrases = text_index.RawQuery(query.raw).phrases()
            except InvalidQuery:
                phrases = []
            texts = [p.text for p in phrases]
            words += [w for t in texts for w in text_index.words(t)]
            needles += [t for t in texts if has_cjk(t)]
        rows = self.rows("SELECT id, text FROM chunk WHERE id = ANY(%s)", (list(chunk_ids),))
        texts_by_id = {int(cid): str(text) for cid, text in rows}
        query_stems = self.stems(words) if words else {}
        wanted = {lex for w in words for lex in query_stems.get(w, ())}
        tokens = {cid: text_index.candidate_spans(t, wanted) for cid, t in texts_by_id.items()}
        maybe = {w for spans in tokens.values() for _, _, w in spans}
        stems = self.stems(sorted(maybe)) if maybe else {}
        found = {}
        for cid, text in texts_by_id.items():
            spans: list[tuple[int, int]] = []
            if wanted:
                spans += text_index.mark_spans(tokens[cid], stems, wanted)
            if needles:
                spans += snippet.substring_intervals(text, needles)
            found[cid] = snippet.make(text, spans)
        return found
