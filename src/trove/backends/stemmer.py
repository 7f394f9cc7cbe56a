"""The word index's tokenizer, one for the process: FTS5's porter over unicode61 with
diacritics removed, on a private in-memory connection. What marks a hit's words and what
PostgreSQL's postings count need no store's connection: a passage chosen after its store
closed (search/passage.py chooses it when first read) is marked as the index has it."""

from __future__ import annotations

import threading
from collections.abc import Collection, Mapping
from typing import Any

import apsw

# The tokenizer and its arguments, as the SQLite word index (``chunk_fts``) names them.
NAME, ARGS = "porter", ("unicode61", "remove_diacritics", "2")

_lock = threading.Lock()
_tokenizer: apsw.FTS5Tokenizer | None = None


def tokenize(data: bytes, query: bool = False) -> list[tuple[int, int, str]]:
    """(start byte, end byte, token) of each token of ``data`` (utf-8)."""
    reason = apsw.FTS5_TOKENIZE_QUERY if query else apsw.FTS5_TOKENIZE_DOCUMENT
    with _lock:  # one call at a time on the one connection
        tokens: Any = _get()(data, reason, None, include_colocated=False)
    return tokens  # tuples as they come: a snippet tokenizes every hit's text


def terms(text: str, query: bool = False) -> list[str]:
    """The tokens of ``text``, without their offsets."""
    reason = apsw.FTS5_TOKENIZE_QUERY if query else apsw.FTS5_TOKENIZE_DOCUMENT
    with _lock:
        found = _get()(
            text.encode("utf-8"), reason, None, include_offsets=False, include_colocated=False
        )
    return [str(token) for token in found]


def _get() -> apsw.FTS5Tokenizer:
    global _tokenizer
    if _tokenizer is None:
        _tokenizer = apsw.Connection(":memory:").fts5_tokenizer(NAME, list(ARGS))
    return _tokenizer


def word_tokens(words: Collection[str]) -> Mapping[str, str]:
    """The token of each lower-case ASCII word (its stem: what the tokenizer makes of it
    alone), cached; a word of several tokens gets "" (it matches no token)."""
    global _tokens_of_words
    cache = _tokens_of_words
    if len(cache) > _MAX_CACHED_WORDS:  # a fresh dict: a reader of the old one keeps it
        cache = _tokens_of_words = {}
    missing = [w for w in words if w not in cache]
    if missing:
        # One call: a space separates tokens, and a run of ASCII letters and digits is
        # one token.
        tokens = tokenize(" ".join(missing).encode())
        if len(tokens) == len(missing):
            cache.update(zip(missing, (t for _, _, t in tokens), strict=True))
        else:  # not for such words; but a word of several tokens must match none
            for word in missing:
                alone = tokenize(word.encode())
                cache[word] = alone[0][2] if len(alone) == 1 else ""
    return cache


def separates(char: str) -> bool:
    """Whether the tokenizer reads ``char`` (outside ASCII) as a separator, asked of the
    tokenizer itself once per character (its Unicode tables are not Python's: a symbol
    new to Python may be a letter to it)."""
    known = _separators.get(char)
    if known is None:
        tokens = [t for _, _, t in tokenize(f"a{char}b".encode())]
        known = _separators[char] = tokens == ["a", "b"]
    return known


# Words whose tokens are kept (about 100 bytes each); then they start afresh.
_MAX_CACHED_WORDS = 100_000
_tokens_of_words: dict[str, str] = {}
_separators: dict[str, bool] = {}
