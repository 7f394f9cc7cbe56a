"""One time budget for one whole search (``SEARCH_BUDGET_S``), whatever it runs.

A search is many steps: parsing, index statements (several per leg, and a wider window
when filters leave too few hits), the query's embedding on another thread, fusion,
snippets, text for the hits. Each used to get a fresh 5 s, so a search of many steps ran
far past it. :func:`within` starts the budget once, where a search enters the store; every
step draws on what is left: a backend's statements are stopped by it (SQLite's progress
handler, PostgreSQL's ``statement_timeout``: see :func:`expired` and :func:`left`), and
the Python stages call :func:`check` between steps.

The budget travels in a context variable rather than as an argument: it must reach
statements deep in a backend (a visibility check, a snippet's read) that know nothing of
the search that runs them, on the thread that embeds the query too (:func:`carried`).
Outside a search there is no budget and nothing is stopped.

The time an embedder takes to answer is not the search's to spend (a model's first load
takes seconds on a cold process, and an HTTP embedder has its own timeout): the budget
is moved on by it (:func:`paused`).
"""

from __future__ import annotations

import contextvars
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from trove.errors import QueryTimeout
from trove.search.bounds import SEARCH_BUDGET_S


class _Budget:
    """When the search must stop; moved on (under a lock: two threads share it) by the
    time spent waiting for the embedder."""

    def __init__(self, seconds: float) -> None:
        self.end = time.monotonic() + seconds
        self.lock = threading.Lock()

    def move_on(self, seconds: float) -> None:
        with self.lock:
            self.end += seconds


_current: contextvars.ContextVar[_Budget | None] = contextvars.ContextVar(
    "trove_search_budget", default=None
)


@contextmanager
def within(seconds: float | None = None) -> Iterator[None]:
    """Run a search within ``seconds`` (``SEARCH_BUDGET_S`` if None); a search inside
    another (reranking's wider one, each phrasing) draws on the outer search's budget."""
    if _current.get() is not None:
        yield
        return
    token = _current.set(_Budget(SEARCH_BUDGET_S if seconds is None else seconds))
    try:
        yield
    finally:
        _current.reset(token)


def left() -> float | None:
    """Seconds left to this search (0 or less: past it); None outside a search."""
    budget = _current.get()
    return None if budget is None else budget.end - time.monotonic()


def expired() -> bool:
    """Whether this search has run past its budget (never, outside a search): what
    SQLite's progress handler asks every thousand steps of a statement."""
    budget = _current.get()
    return budget is not None and time.monotonic() > budget.end


def error() -> QueryTimeout:
    return QueryTimeout(
        f"the search ran past its {SEARCH_BUDGET_S:g} s budget; "
        "use fewer words or narrower filters"
    )


def check() -> None:
    """Between a search's steps: ``QueryTimeout`` if its budget is spent."""
    if expired():
        raise error()


@contextmanager
def paused() -> Iterator[None]:
    """Time spent in here (waiting for the embedder) is not charged to the search."""
    budget = _current.get()
    start = time.monotonic()
    try:
        yield
    finally:
        if budget is not None:
            budget.move_on(time.monotonic() - start)


@contextmanager
def outside() -> Iterator[None]:
    """Work a search waits for that is not its own: a derived index catching up with what
    other processes committed (or waiting while another thread does). Its cost follows the
    writes, not the query, so no budget stops its statements and its time is not charged;
    the search's own steps stay bounded."""
    budget = _current.get()
    if budget is None:
        yield
        return
    token = _current.set(None)
    start = time.monotonic()
    try:
        yield
    finally:
        _current.reset(token)
        budget.move_on(time.monotonic() - start)


def carried(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn`` to run on another thread within this search's budget (a thread starts
    with a context of its own)."""
    context = contextvars.copy_context()
    return lambda *args, **kwargs: context.run(fn, *args, **kwargs)
