"""Times in and out: callers give ISO strings, datetimes or epoch seconds; the file keeps
epoch seconds (REAL) so range filters are plain numeric comparisons on an index."""

from __future__ import annotations

import math
import time
from datetime import date, datetime, timezone

from trove.errors import InvalidInput

TimeLike = str | int | float | datetime | date
# Epoch seconds of 0001-01-01 and 9999-12-31T23:59:59Z: the times ISO-8601 can write.
_EARLIEST, _LATEST = -62135596800.0, 253402300799.0


def to_epoch(value: TimeLike | None, *, field: str = "timestamp") -> float | None:
    """Parse a time given by a caller. Naive times are taken as UTC."""
    if value is None or value == "":
        return None
    epoch = _epoch(value, field)
    if not (math.isfinite(epoch) and _EARLIEST <= epoch <= _LATEST):
        raise InvalidInput(f"{field}: {value!r} is not a time between years 1 and 9999")
    return epoch


def _epoch(value: TimeLike, field: str) -> float:
    if isinstance(value, bool):
        raise InvalidInput(f"{field}: expected a time, got {value!r}")
    if isinstance(value, int | float):
        return float(value) if abs(value) < 1e300 else math.inf
    if isinstance(value, datetime):
        moment = value
    elif isinstance(value, date):
        moment = datetime(value.year, value.month, value.day)
    elif isinstance(value, str):
        text = value.strip()
        if text.endswith(("Z", "z")):
            text = text[:-1] + "+00:00"
        try:
            moment = datetime.fromisoformat(text)
            if moment.tzinfo is None:
                moment = moment.replace(tzinfo=timezone.utc)
            return moment.timestamp()
        except (ValueError, OverflowError):
            raise InvalidInput(
                f"{field}: {value!r} is not an ISO-8601 time (e.g. 2026-11-03T09:00:00Z)"
            ) from None
    else:
        raise InvalidInput(f"{field}: expected a time, got {type(value).__name__}")
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=timezone.utc)
    return moment.timestamp()


def to_iso(epoch: float | None) -> str | None:
    """Format epoch seconds as ISO-8601 UTC, with microseconds only when there are some."""
    if epoch is None:
        return None
    moment = datetime.fromtimestamp(epoch, tz=timezone.utc)
    spec = "seconds" if moment.microsecond == 0 else "microseconds"
    return moment.isoformat(timespec=spec).replace("+00:00", "Z")


def now() -> float:
    return time.time()
