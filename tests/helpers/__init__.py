"""Helpers shared by tests in several folders: ``from helpers.threads import run_threads``.

pytest puts ``tests/`` on ``sys.path`` when it imports ``tests/conftest.py`` (the default
"prepend" import mode; test folders have no ``__init__.py``), so this package imports
from any test module.
"""
