"""Snippets in the SQLite backend: a chunk's text with the query's words (stemmed by
the index's own tokenizer) and CJK runs marked."""

from __future__ import annotations

import functools
import json
from collections.abc import Collection, Mapping, Sequence
from typing import TYPE_CHECKING

from trove.backends.sqlite.connection import Connected
from trove.search.cjk import has_cjk

if TYPE_CHECKING:
    from trove.search import snippet
    from trove.search.query import ParsedQuery
else:  # loaded at the first snippet: opening a store or counting it needs neither
    from trove.lazy import LazyModule

    snippet = LazyModule("trove.search.snippet")

# Words whose tokens the snippets keep (about 100 bytes each); then they start afresh.
_MAX_CACHED_WORDS = 100_000


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
        texts = {cid: text for cid, (_, text) in self._chunk_texts(chunk_ids).items()}
        fast = snippet.ascii_word_intervals(
            self._word_tokens, list(texts.values()), stems, self._separates
        )
        for (cid, text), ascii_spans in zip(texts.items(), fast, strict=True):
            spans = ascii_spans
            if spans is None:  # not ASCII: tokenized whole
                spans = snippet.word_intervals(self._tokenize, text, stems) if stems else []
            if needles:
                spans += snippet.substring_intervals(text, needles)
            found[cid] = snippet.make(text, spans)
        return found

    def _word_tokens(self, words: Collection[str]) -> Mapping[str, str]:
        """The index's token of each lower-case ASCII word (its stem), cached."""
        cache = self._tokens_of_words
        if len(cache) > _MAX_CACHED_WORDS:  # a fresh dict: a reader of the old one keeps it
            cache = self._tokens_of_words = {}
        missing = [w for w in words if w not in cache]
        if missing:
            # One call: a space separates tokens, and a run of ASCII letters and digits is
            # one token.
            tokens = self._tokenize(" ".join(missing).encode())
            if len(tokens) == len(missing):
                cache.update(zip(missing, (t for _, _, t in tokens), strict=True))
            else:  # not for such words; but a word of several tokens must match none
                for word in missing:
                    alone = self._tokenize(word.encode())
                    cache[word] = alone[0][2] if len(alone) == 1 else ""
        return cache

    @functools.cached_property
    def _tokens_of_words(self) -> dict[str, str]:
        return {}

    def _separates(self, char: str) -> bool:
        """Whether the index's tokenizer reads ``char`` (outside ASCII) as a separator,
        asked of the tokenizer itself once per character (its Unicode tables are not
        Python's: a symbol new to Python may be a letter to it)."""
        known = self._separators.get(char)
        if known is None:
            tokens = [t for _, _, t in self._tokenize(f"a{char}b".encode())]
            known = self._separators[char] = tokens == ["a", "b"]
        return known

    @functools.cached_property
    def _separators(self) -> dict[str, bool]:
        return {}

    def _chunk_texts(self, chunk_ids: Sequence[int]) -> dict[int, tuple[str, str]]:
        rows = self.conn.execute(
            "SELECT id, head, text FROM chunk WHERE id IN (SELECT value FROM json_each(?))",
            (json.dumps(list(chunk_ids)),),
        )
        return {int(cid): (str(head), str(text)) for cid, head, text in rows}
