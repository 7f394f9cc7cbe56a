"""The vector cache file's int16 codes, kept as what its int8 codes leave over.

A row's int16 code of a coordinate (scale 32,767) lies within 66 of ``STEP`` (129) times
its int8 code (scale 254, clipped at 127) wherever the int8 code is not clipped (a
rotated coordinate within +-0.5): 32,767 / 254 is 129.004, and each code's rounding adds
at most half a step. So the file keeps, beside the int8 codes a search scans, one signed
byte a coordinate, the *residual* ``fine - STEP * code``, instead of two; a row with a
residual that does not fit in a byte (a coordinate the int8 code clipped: a vector
concentrated on few directions even after the rotation) keeps its whole int16 row in a
list of exceptions at the end of the file. The codes read back are the bits that were
saved, so rescoring, and every ranking, is what it was: the file is one byte a dimension
smaller (384 B a 384-d row; 1,276 -> 892 B a SciFact chunk with its id and sketch).
"""

from __future__ import annotations

import os
import weakref
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np
else:  # numpy loads where first used: opening a store, stats, keyword search need none
    from trove.lazy import numpy as np

STEP = 129  # int16 code per int8 code step: round(32767 / 254)


def split(fine: np.ndarray, codes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(residuals (n, d) int8, rows that need their whole int16 codes kept aside) of rows
    whose int16 codes are ``fine`` and int8 codes ``codes``; such rows' residuals are 0."""
    residual = fine.astype(np.int32) - STEP * codes.astype(np.int32)
    aside = np.asarray(((residual < -128) | (residual > 127)).any(axis=1))
    residual[aside] = 0
    return residual.astype(np.int8), aside


class FileRows:
    """The int16 codes of rows of a cache file, read by ``pread`` (a search wants a few
    dozen to a few hundred of them, ~1 us each) and joined to their mapped int8 codes.
    The file stays open while the index does, so a file renamed over it by a later save
    leaves these rows as they were mapped.

    ``residuals`` and ``whole`` are the file offsets of the residuals (n, d) and of the
    int16 rows kept aside, which belong to ``aside`` (ascending row numbers)."""

    def __init__(
        self, path: Path, codes: np.ndarray, residuals: int, aside: np.ndarray, whole: int
    ) -> None:
        self._fd = os.open(path, os.O_RDONLY)
        weakref.finalize(self, os.close, self._fd)
        self._codes, self._aside = codes, aside
        self._residuals, self._whole = residuals, whole

    def __call__(self, rows: np.ndarray) -> np.ndarray:
        fd, d, offset = self._fd, self._codes.shape[1], self._residuals
        data = b"".join([os.pread(fd, d, offset + d * row) for row in rows.tolist()])
        fine = self._codes[rows].astype(np.int16)
        fine *= STEP
        fine += np.frombuffer(data, np.int8).reshape(len(rows), d)
        if len(self._aside):
            at = np.minimum(np.searchsorted(self._aside, rows), len(self._aside) - 1)
            for i in np.flatnonzero(self._aside[at] == rows).tolist():
                row = os.pread(fd, 2 * d, self._whole + 2 * d * int(at[i]))
                fine[i] = np.frombuffer(row, np.int16)
        return fine
