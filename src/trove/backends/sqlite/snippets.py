"""Snippets in the SQLite backend: a chunk's text with the query's words (stemmed by
the index's own tokenizer) and CJK runs marked; and what search shows of its hits."""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from trove.backends import stemmer
from trove.backends.rows import CHUNK_OF_C, HEADER_OF_D, hit_rows
from trove.backends.sqlite.chunk_text import TEXT_OF_C, TEXT_OF_C_D
from trove.backends.sqlite.connection import Connected
from trove.backends.sqlite.documents import document
from trove.search.cjk import has_cjk

if TYPE_CHECKING:
    from trove import hits as hit_models
    from trove.search import passage, snippet
    from trove.search.query import ParsedQuery
else:  # loaded at the first search: opening a store or counting it needs neither
    from trove.lazy import LazyModule

    hit_models = LazyModule("trove.hits")
    passage = LazyModule("trove.search.passage")
    snippet = LazyModule("trove.search.snippet")

# CHUNK_OF_C, its text read through the document where the chunk keeps none (chunk_text.py).
_CHUNK_OF_C = CHUNK_OF_C.replace("c.text", TEXT_OF_C_D, 1)


class Snippets(Connected):
    """Mixin of the SQLite backend: snippets."""

    def snippets(self, query: ParsedQuery, chunk_ids: Sequence[int]) -> dict[int, str]:
        """A snippet per chunk with the query's words (stemmed) and CJK runs marked."""
        rows = self.conn.execute(
            f"SELECT c.id, {TEXT_OF_C} FROM chunk c "
            "WHERE c.id IN (SELECT value FROM json_each(?))",
            (json.dumps(list(chunk_ids)),),
        )
        return self._marked(query, {int(cid): str(text) for cid, text in rows})

    def hit_details(
        self, query: ParsedQuery, hits: Sequence[tuple[str, int]], chars: int
    ) -> hit_models.HitDetails:
        """Of each (document id, chunk id): the document's header and its text's first
        ``chars`` characters, and its passage (search/passage.py: of its chunks, or of
        a long document the one ranked) with its snippet. One statement where a header
        read, a text read and a chunk read took three (a tenth of a keyword search on
        SciFact)."""
        rows = self.conn.execute(
            # substr() counts characters; a text of no more bytes than that is all of it
            # (octet_length is the stored size: no count).
            f"SELECT {HEADER_OF_D}, CASE WHEN octet_length(d.text) <= ? THEN d.text "
            f"ELSE substr(d.text, 1, ?) END, {_CHUNK_OF_C} FROM json_each(?) AS r "
            "CROSS JOIN document d ON d.id = r.value ->> 0 "
            # A chunk replaced since it was ranked has no row: its document still counts.
            # At most MAX_CHUNKS chunks: none numbered past them (an index seek; a count
            # per chunk row made a 50 MB text's search quadratic).
            "LEFT JOIN chunk c ON c.doc = d.seq AND (c.id = r.value ->> 1 OR "
            "NOT EXISTS (SELECT 1 FROM chunk x WHERE x.doc = d.seq AND x.idx >= ?))",
            (chars, chars, json.dumps(list(hits)), passage.MAX_CHUNKS),
        )
        documents, texts, candidates = hit_rows(rows, document)
        # Chosen when a hit's snippet or chunk is first read: it needs no store (spans).
        chosen = passage.Deferred(query, candidates, dict(hits), functools.partial(spans, query))
        return hit_models.HitDetails(documents, texts, chosen)

    def _marked(self, query: ParsedQuery, texts: dict[int, str]) -> dict[int, str]:
        """A snippet of each chunk text, by chunk id."""
        found = spans(query, texts)
        return {cid: snippet.make(text, found[cid]) for cid, text in texts.items()}


def spans(query: ParsedQuery, texts: Mapping[int, str]) -> dict[int, list[tuple[int, int]]]:
    """Where each chunk text holds the query's words (stemmed as the index stems them)
    and CJK runs; no store needed (backends/stemmer.py)."""
    raw_terms = query.raw_terms()
    words = list(query.words) + [t for t in raw_terms if not has_cjk(t)]
    # One call for all the words: a space separates tokens, so the same stems.
    stems = {t for _, _, t in stemmer.tokenize(" ".join(words).encode(), query=True)}
    needles = list(query.substrings) + [t for t in raw_terms if has_cjk(t)]
    needles += query.cjk_runs()
    found = {}
    fast: list[list[tuple[int, int]] | None] = (
        snippet.ascii_word_intervals(
            stemmer.word_tokens, list(texts.values()), stems, stemmer.separates
        )
        if stems
        else [[] for _ in texts]  # a query of CJK only: no word to look for
    )
    for (cid, text), ascii_spans in zip(texts.items(), fast, strict=True):
        marks = ascii_spans
        if marks is None:  # not ASCII: tokenized whole
            marks = snippet.word_intervals(stemmer.tokenize, text, stems) if stems else []
        if needles:
            marks += snippet.substring_intervals(text, needles)
        found[cid] = marks
    return found
