"""Snippets in the PostgreSQL backend: a chunk's text with the query's words (stemmed by
the server, as the index was) and CJK runs marked; and what search shows of its hits."""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from typing import Any

from trove.backends.postgres import text as text_index
from trove.backends.postgres.connection import Connected
from trove.backends.postgres.documents import document
from trove.backends.postgres.shown import SHOWN, passages_of
from trove.backends.rows import hit_rows
from trove.errors import InvalidQuery
from trove.hits import HitDetails
from trove.search import passage, snippet
from trove.search.query import ParsedQuery, has_cjk


class Snippets(Connected):
    """Mixin of the PostgreSQL backend: snippets."""

    def stems(self, words: Sequence[str]) -> dict[str, tuple[str, ...]]:
        raise NotImplementedError

    def snippets(self, query: ParsedQuery, chunk_ids: Sequence[int]) -> dict[int, str]:
        """A snippet per chunk with the query's words (stemmed) and CJK runs marked."""
        rows = self.rows("SELECT id, text FROM chunk WHERE id = ANY(%s)", (list(chunk_ids),))
        return self._marked(query, {int(cid): str(text) for cid, text in rows})

    def hit_details(
        self, query: ParsedQuery, hits: Sequence[tuple[str, int]], chars: int
    ) -> HitDetails:
        """Of each (document id, chunk id): the document's header and its text's first
        ``chars`` characters, and its passage (search/passage.py: of its chunks, or of
        a long document the one ranked) with its snippet, in one round trip."""
        rows = self.rows(
            f"SELECT {SHOWN} FROM unnest(%s::text[], %s::bigint[]) AS r(doc_id, chunk_id) "
            f"JOIN document d ON d.id = r.doc_id {passages_of('r')}",
            (
                chars,
                [doc_id for doc_id, _ in hits],
                [chunk_id for _, chunk_id in hits],
                passage.MAX_CHUNKS,
            ),
        )
        return self.details_of(query, rows, hits)

    def details_of(
        self, query: ParsedQuery, rows: Sequence[Sequence[Any]], hits: Sequence[tuple[str, int]]
    ) -> HitDetails:
        """:meth:`hit_details` of the rows it reads (also read by a k-NN with its hits)."""
        documents, texts, candidates = hit_rows(rows, document)
        # The words the choice marks are stemmed now, by the server; the choice, which
        # needs no store then, when a hit's passage or snippet is first read.
        read = {p.chunk_id: p.text for passages in candidates.values() for p in passages}
        chosen = passage.Deferred(query, candidates, dict(hits), self._marker(query, read))
        return HitDetails(documents, texts, chosen)

    def _marked(self, query: ParsedQuery, texts_by_id: dict[int, str]) -> dict[int, str]:
        """A snippet of each chunk text, by chunk id."""
        spans = self._spans(query, texts_by_id)
        return {cid: snippet.make(text, spans[cid]) for cid, text in texts_by_id.items()}

    def _spans(
        self, query: ParsedQuery, texts_by_id: Mapping[int, str]
    ) -> dict[int, list[tuple[int, int]]]:
        """Where each chunk text holds the query's words (stemmed) and CJK runs."""
        return self._marker(query, texts_by_id)(texts_by_id)

    def _marker(self, query: ParsedQuery, texts_by_id: Mapping[int, str]) -> passage.Spans:
        """:meth:`_spans` of these texts as a function that needs no store: what needs
        the server (the stems) is read now."""
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
        # The query's words and the texts' words that start like them, stemmed in one
        # round trip (a word and its stem share their first letters: text.candidate_spans).
        starts = set(words)
        tokens = {cid: text_index.candidate_spans(t, starts) for cid, t in texts_by_id.items()}
        maybe = {w for spans in tokens.values() for _, _, w in spans}
        stems = self.stems(sorted(starts | maybe)) if words else {}
        wanted = {lex for w in words for lex in stems.get(w, ())}
        return functools.partial(_marks, tokens, stems, wanted, needles)


def _marks(
    tokens: Mapping[int, list[tuple[int, int, str]]],
    stems: Mapping[str, Sequence[str]],
    wanted: set[str],
    needles: list[str],
    texts_by_id: Mapping[int, str],
) -> dict[int, list[tuple[int, int]]]:
    """The spans of each text (``tokens``: its candidate words, with their ``stems``)."""
    found = {}
    for cid, text in texts_by_id.items():
        spans: list[tuple[int, int]] = []
        if wanted:
            spans += text_index.mark_spans(tokens[cid], stems, wanted)
        if needles:
            spans += snippet.substring_intervals(text, needles)
        found[cid] = spans
    return found
