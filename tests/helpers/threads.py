"""One harness for concurrency tests: run N workers at once, re-raise what they raised."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


def run_threads(
    work: Callable[[int], T], count: int, *, together: bool = False, timeout: float = 120.0
) -> list[T]:
    """Call ``work(0)`` … ``work(count - 1)``, each on a thread of its own, and return their
    results in that order once every thread has ended.

    ``together``: every thread waits at a barrier before calling ``work``, so the calls
    start as nearly at once as threads can. The first exception a worker raised is raised
    here (after all threads ended); a thread still running after ``timeout`` seconds fails
    the test instead of hanging it.
    """
    results: list[T | None] = [None] * count
    errors: list[BaseException] = []
    start = threading.Barrier(count, timeout=timeout) if together else None

    def run(i: int) -> None:
        try:
            if start is not None:
                start.wait()
            results[i] = work(i)
        except BaseException as exc:  # re-raised below, in the test's thread
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(i,), daemon=True) for i in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout)
    running = sum(thread.is_alive() for thread in threads)
    if running:
        raise AssertionError(f"{running} of {count} threads still running after {timeout}s")
    if errors:
        raise errors[0]
    return results  # type: ignore[return-value]
