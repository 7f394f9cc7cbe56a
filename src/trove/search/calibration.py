"""Calibrated scores: what a hit's ``score`` means.

A hit's score is an estimate, in [0, 1], of the probability that it is relevant to the
query, the same meaning in every mode and language, so that a cut-off (``min_score``)
means one thing everywhere. The retrievers' own scores cannot say that: BM25 is
unbounded and grows with the query's length, cosine similarity has a different scale per
model, and the hybrid fusion's z-scores are relative to one query's list (a lone hit
scored 0.0).

The estimate is a logistic model per mode (and per embedding model for the modes that
use one) over what the retrievers already give: each leg's raw score, its score relative
to the leg's best, its rank, whether the leg found the document at all, the query's
length and script, and the share of the query's terms the document holds (its
coverage: unlike BM25, whose idf is near zero in a store of a few documents, it means
the same in a store of three notes as in one of five thousand abstracts). It is fitted
on the train splits (SciFact train, CMRC 2018 trial) and on small stores drawn from them
(so that a store of a few notes is in the training distribution) by
``bench/calibrate.py`` and stored beside this module (``calibration.json``, versioned).
Within one query's list the estimates are made non-increasing in the fused order, so
calibration never reorders hits; the raw scores stay in ``explain``.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache, lru_cache
from pathlib import Path
from typing import Any

from trove.search import exact
from trove.search.cjk import has_cjk
from trove.search.snippet import fold_ascii

MODEL_FILE = Path(__file__).with_name("calibration.json")
# The version of the feature layout below; a calibration file of another version is not used.
FEATURES_VERSION = 2
# The floor the CLI and MCP apply by default (the library applies none); see
# docs/benchmarks.md for what it hides (bench/nonsense.py) and README "What a score means".
FLOOR = 0.3
MCP_FLOOR = FLOOR
# A document one leg did not return sits below that leg's deepest rank.
_ABSENT_RANK = 201.0


@dataclass(frozen=True)
class QueryInfo:
    """What calibration needs to know about the query itself."""

    terms: int
    cjk: bool
    # The query's words and CJK grams, for the coverage feature.
    words: tuple[str, ...] = ()
    grams: tuple[str, ...] = ()
    # What the caller asked for, as phrases (search/exact.py): a hit holding them all is
    # shown at least at the floor.
    phrases: tuple[str, ...] = ()


_TOKEN = re.compile(r"[^\W_]+")


def query_info(
    words: Sequence[str], cjk: Sequence[str], cjk_script: bool, phrases: Sequence[str] = ()
) -> QueryInfo:
    """QueryInfo from a parsed query's words and CJK segments (lower-cased), and the
    phrases it asks for (``exact.phrases``). A raw query has no parsed words: its phrases'
    words stand in, so that its length and coverage are a plain query's."""
    if not words and not cjk and phrases:
        words = exact.words(phrases)
        cjk = [w for p in phrases for w in p.split() if has_cjk(w)]
    grams = tuple(dict.fromkeys(g for s in cjk for g in ([s] if len(s) < 2 else _pairs(s))))
    terms = len(words) + sum(max(1, len(s) - 1) for s in cjk)
    return QueryInfo(terms, cjk_script, tuple(words), grams, tuple(phrases))


def _pairs(segment: str) -> list[str]:
    return [segment[i : i + 2] for i in range(len(segment) - 1)]


# Coverage reads at most this much of a document (a long note would otherwise slow every hit
# in it; the train sets' documents are all shorter).
COVERAGE_CHARS = 50_000


def document_texts(get: Callable[..., Any], docs: Mapping[str, Any]) -> dict[str, str]:
    """Title and text of each hit's document (``get``: a backend's get_document)."""
    bodies = {}
    for doc_id in docs:
        full = get(doc_id, with_text=True)
        if full is not None:
            bodies[doc_id] = full.text[:COVERAGE_CHARS]
    return titled(docs, bodies)


def titled(docs: Mapping[str, Any], bodies: Mapping[str, str]) -> dict[str, str]:
    """Title and text of each hit's document, from its header and its text's first
    ``COVERAGE_CHARS`` characters (as a backend's ``hit_details`` reads them), and what an
    entry has indexed instead of its text (``keyword_text``, ``semantic_text``)."""
    return {doc_id: _indexed(doc, bodies.get(doc_id, "")) for doc_id, doc in docs.items()}


def _indexed(doc: Any, body: str) -> str:
    own = [t for t in (getattr(doc, "keyword_text", None), getattr(doc, "semantic_text", None))]
    return "\n".join([doc.title, body, *(t for t in own if t)])


def coverage(query: QueryInfo, text: str) -> float:
    """The share of the query's words and CJK grams that ``text`` holds. A word counts
    when a token of the text starts with its first letters (all but two, at least four:
    "notes" finds "note", "deployed" finds "deploy"), a rough stand-in for stemming."""
    terms = len(query.words) + len(query.grams)
    if not terms or not text:
        return 0.0
    lowered = text.lower() if query.grams or not text.isascii() else ""
    found = sum(1 for gram in query.grams if gram in lowered)
    if lowered:
        for word in query.words:
            found += _starts_token(lowered, word[: max(4, len(word) - 2)])
        return found / terms
    # ASCII text: its tokens are the words of fold_ascii, each after a space, so a token
    # starts with a stem where the folded text holds a space and the stem (one search,
    # not a find and a check of the character before at every occurrence).
    folded = b" " + fold_ascii(text)
    for stem, needle in _needles(query.words):
        if needle is not None:
            # find, not `in`: bytes' `in` first reads the needle as an integer, raising
            # and clearing a TypeError (twice find's overhead, 70 times a search)
            found += folded.find(needle) >= 0
        elif not stem:
            found += _TOKEN.search(text) is not None
    return found / terms


@lru_cache(maxsize=64)
def _needles(words: tuple[str, ...]) -> list[tuple[str, bytes | None]]:
    """Each word's stem, and what a folded ASCII text holds where a token starts with it
    (None when no ASCII token can: a stem outside ASCII or not letters and digits)."""
    needles = []
    for word in words:
        stem = word[: max(4, len(word) - 2)]
        ascii_word = stem.isascii() and stem.isalnum()
        needles.append((stem, b" " + stem.encode("ascii") if ascii_word else None))
    return needles


def _starts_token(text: str, stem: str) -> bool:
    """Whether a token of ``text`` (a run of ``_TOKEN``: letters and digits, which is
    what ``str.isalnum`` says of a character) starts with ``stem``: a find at a token's
    start, rather than tokenizing the whole text (most of a search's time on SciFact)."""
    if not stem:
        return _TOKEN.search(text) is not None
    if not stem.isalnum():  # a token holds only such characters
        return False
    at = text.find(stem)
    while at != -1:
        if at == 0 or not text[at - 1].isalnum():
            return True
        at = text.find(stem, at + 1)
    return False


def model_key(legs: Sequence[str], model_id: str | None) -> str:
    """``keyword``, or ``semantic@MODEL`` / ``hybrid@MODEL`` for modes that embed."""
    if list(legs) == ["keyword"]:
        return "keyword"
    mode = "semantic" if list(legs) == ["semantic"] else "hybrid"
    return f"{mode}@{model_id or '*'}"


def features(
    parts: Mapping[str, Mapping[str, float]],
    tops: Mapping[str, float],
    legs: Sequence[str],
    query: QueryInfo,
    position: int,
    cover: float = 0.0,
) -> list[float]:
    """The feature vector of one hit: per leg (keyword first), then the query's and the
    hit's coverage, the fused position last."""
    row: list[float] = []
    for leg in legs:
        part = parts.get(leg)
        top = tops.get(leg, 0.0)
        if part is None:
            row += [0.0, 0.0, 0.0, math.log(_ABSENT_RANK)]
            continue
        score = float(part["score"])
        if leg == "keyword":  # BM25: unbounded, so its log and its share of the best
            row += [1.0, math.log1p(max(score, 0.0)), score / top if top > 0 else 0.0]
        else:  # cosine: bounded, its distance from the best says how clear the winner is
            row += [1.0, score, score - top]
        row.append(math.log(float(part["rank"])))
    cjk = 1.0 if query.cjk else 0.0
    keyword_log = row[1] if legs and legs[0] == "keyword" else 0.0
    row += [cjk, math.log1p(query.terms), cjk * keyword_log, cover, math.log(position)]
    return row


@cache
def _models() -> dict[str, Any]:
    try:
        data = json.loads(MODEL_FILE.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    if data.get("features_version") != FEATURES_VERSION:
        return {}
    return dict(data.get("models", {}))


def reload() -> None:
    """Forget the loaded calibration (after ``bench/calibrate.py`` wrote a new one)."""
    _models.cache_clear()
    _model_for.cache_clear()


@cache  # looked up for every hit; read, never changed
def _model_for(key: str) -> dict[str, Any] | None:
    models = _models()
    if key in models:
        return dict(models[key])
    # An embedding model without its own fit borrows the default model's: cosine scales
    # differ between models, so its scores are rougher (bench/calibrate.py can fit it).
    mode = key.split("@", 1)[0]
    fallback = models.get("fallback", {}).get(mode)
    return dict(models[fallback]) if fallback in models else None


def probability(key: str, row: Sequence[float]) -> float:
    """The fitted model's estimate for one feature vector (a rank prior without a fit)."""
    model = _model_for(key)
    if model is None or len(model["weights"]) != len(row):
        # No fit for this layout: a plain prior that falls with rank, so scores are still
        # probabilities-shaped and ordered (documented as uncalibrated).
        return 0.5 / math.exp(row[-1])
    z = float(model["bias"]) + sum(
        w * (x - m) / s
        for w, x, m, s in zip(model["weights"], row, model["mean"], model["scale"], strict=True)
    )
    return 1.0 / (1.0 + math.exp(-max(-60.0, min(60.0, z))))


def calibrate(
    fused: Sequence[Any],
    lists: Mapping[str, Sequence[Any]],
    query: QueryInfo,
    model_id: str | None,
    texts: Mapping[str, str] | None = None,
) -> tuple[str, list[list[float]], list[float]]:
    """(model key, feature rows, calibrated scores) for fused hits (with ``.parts`` and
    ``.doc_id``) from the legs' ranked ``lists`` (hits with ``.score``, best first);
    ``texts``: each hit's document text (title and body) by document id."""
    legs = [leg for leg in ("keyword", "semantic") if leg in lists]
    tops = {leg: float(hits[0].score) for leg, hits in lists.items() if hits}
    key = model_key(legs, model_id)
    texts = texts or {}
    rows = [
        features(f.parts, tops, legs, query, i, coverage(query, texts.get(f.doc_id, "")))
        for i, f in enumerate(fused, 1)
    ]
    scores = monotone([probability(key, row) for row in rows])
    # The coverage feature (second to last) is 1.0 wherever a hit can hold the phrases.
    held = [row[-2] >= 1.0 and exact.holds(query.phrases, texts.get(f.doc_id, ""))
            for f, row in zip(fused, rows, strict=True)]  # fmt: skip
    return key, rows, lift(scores, held)


def lift(scores: Sequence[float], held: Sequence[bool], floor: float = FLOOR) -> list[float]:
    """``scores`` (non-increasing) with each hit that holds what was asked for (``held``)
    at least at ``floor``, and the hits ranked above it raised to stay above it: the
    order stays."""
    pairs = zip(scores, held, strict=True)
    result = [max(score, floor) if hold else score for score, hold in pairs]
    for i in range(len(result) - 2, -1, -1):
        if result[i] <= result[i + 1]:
            result[i] = min(1.0, round(result[i + 1] + 1e-6, 6))
    return result


def monotone(values: Sequence[float]) -> list[float]:
    """Make the estimates non-increasing in the given (fused) order: no reordering."""
    # Strictly decreasing by a millionth where the model would rise: equal scores would let
    # an evaluator (pytrec_eval breaks ties by id) reorder what the retrievers ranked.
    result: list[float] = []
    for value in values:
        value = round(min(1.0, max(0.0, value)), 6)
        if result:
            value = max(0.0, min(value, round(result[-1] - 1e-6, 6)))
        result.append(value)
    return result
