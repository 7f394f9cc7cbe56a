"""Sign sketches of vectors: one bit a dimension, packed in 64-bit words, compared by
Hamming distance, and the rows nearest a query's sketch cut by a histogram of those
distances. The vector index (index.py) ranks its rows by them before scoring
the nearest from their codes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np
else:  # numpy loads where first used: opening a store, stats, keyword search need none
    from trove.lazy import numpy as np

SCAN = 65_536  # sketches compared at a time (across every query of a batch)
_SAMPLE, _SAMPLE_MIN = 16, 4_096  # a nearest-sketch cut is estimated from every 16th row


def pack_signs(positive: np.ndarray, words: int) -> np.ndarray:
    """(n, d) booleans -> (words, n) uint64: one line of 64-bit words per word position."""
    packed = np.zeros((len(positive), words * 8), np.uint8)
    packed[:, : -(-positive.shape[1] // 8)] = np.packbits(positive, axis=1, bitorder="little")
    return np.ascontiguousarray(packed.view(np.uint64).T)


def distances(
    sketch: np.ndarray, q_sketch: np.ndarray, rows: np.ndarray | None, n: int, words: int
) -> np.ndarray:
    """Hamming distances (uint16) over the first ``words`` words from the query's sketch
    to each of the first ``n`` rows of ``sketch`` ((words, rows) uint64), or to ``rows``."""
    size = n if rows is None else len(rows)
    found = np.zeros(size, np.uint16)
    # A block at a time: the temporaries stay in cache, and are not fresh pages each
    # query (page faults on fresh temporaries doubled the time at 1M rows).
    block = min(size, SCAN)
    word = np.empty(block, np.uint64)
    count = np.empty(block, np.uint8)
    for start in range(0, size, block):
        end = min(start + block, size)
        part, out, into = word[: end - start], count[: end - start], found[start:end]
        for w in range(words):
            if rows is None:
                np.bitwise_xor(sketch[w, start:end], q_sketch[w], out=part)
            else:
                np.take(sketch[w], rows[start:end], out=part)
                np.bitwise_xor(part, q_sketch[w], out=part)
            np.bitwise_count(part, out=out)
            into += out
    return found


def distances_many(sketch: np.ndarray, queries: np.ndarray, n: int) -> np.ndarray:
    """:func:`distances` of several queries' sketches (``queries``: (m, words) uint64) to
    the first ``n`` rows, (m, n): one scan of each sketch word for all of them."""
    m, words = queries.shape
    found = np.zeros((m, n), np.uint16)
    block = max(1, min(n, SCAN // max(m, 1)))
    word = np.empty((m, block), np.uint64)
    count = np.empty((m, block), np.uint8)
    for start in range(0, n, block):
        end = min(start + block, n)
        part, out = word[:, : end - start], count[:, : end - start]
        for w in range(words):
            np.bitwise_xor(sketch[w, None, start:end], queries[:, w, None], out=part)
            np.bitwise_count(part, out=out)
            found[:, start:end] += out
    return found


def smallest(distances: np.ndarray, count: int, bits: int) -> np.ndarray:
    """Positions of ``count`` smallest distances, ascending (ties cut arbitrarily).

    Distances are small integers, so a histogram finds the cut in two linear passes,
    several times faster than argpartition at 1M rows. Over many rows, the histogram of
    every ``_SAMPLE``-th row (rows are in no order of distance) gives a cut that keeps a
    little more than ``count``, and the exact cut is found among those.
    """
    if len(distances) >= _SAMPLE * _SAMPLE_MIN and count * 4 < len(distances):
        sample = np.cumsum(np.bincount(distances[::_SAMPLE], minlength=bits + 2))
        cut = int(np.searchsorted(sample, count // _SAMPLE + count // (4 * _SAMPLE) + 64))
        found = np.flatnonzero(distances <= cut)
        if len(found) >= count:
            return found[smallest(distances[found], count, bits)]
    cumulative = np.cumsum(np.bincount(distances, minlength=bits + 2))
    cut = int(np.searchsorted(cumulative, count))
    found = np.flatnonzero(distances <= cut)
    if len(found) <= count:
        return found
    # Too many: drop the last rows at the cut.
    at_cut = np.flatnonzero(distances[found] == cut)
    return np.delete(found, at_cut[len(at_cut) - (len(found) - count) :])


def smallest_many(distances: np.ndarray, counts: list[int], bits: int) -> list[np.ndarray]:
    """:func:`smallest` of each row of ``distances`` ((m, n), ``counts[i]`` of row i): the
    histograms of every row in one count when the rows are few enough to count whole."""
    m, n = distances.shape
    if n >= _SAMPLE * _SAMPLE_MIN or m < 2:
        return [smallest(row, count, bits) for row, count in zip(distances, counts, strict=True)]
    width = bits + 2
    shifted = distances + (np.arange(m, dtype=np.intp) * width)[:, None]
    cumulative = np.cumsum(np.bincount(shifted.ravel(), minlength=m * width).reshape(m, width), 1)
    found = []
    for row, count, line in zip(distances, counts, cumulative, strict=True):
        cut = int(np.searchsorted(line, count))
        kept = np.flatnonzero(row <= cut)
        if len(kept) > count:  # too many: drop the last rows at the cut, as smallest does
            at_cut = np.flatnonzero(row[kept] == cut)
            kept = np.delete(kept, at_cut[len(at_cut) - (len(kept) - count) :])
        found.append(kept)
    return found
