"""The standard suites' async tests run under pytest-asyncio (langchain-tests brings it);
they come unmarked from the library, so they are marked here as they are collected."""

from __future__ import annotations

import inspect
from typing import Any

import pytest


@pytest.hookimpl(tryfirst=True)
def pytest_pycollect_makeitem(collector: Any, name: str, obj: Any) -> None:
    if name.startswith("test") and inspect.iscoroutinefunction(obj):
        pytest.mark.asyncio(obj)
