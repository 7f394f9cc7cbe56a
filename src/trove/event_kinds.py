"""The kinds of change event (:mod:`trove.events` says what each means), in a module of
their own: ``trove --help`` lists them as ``--kind`` choices without loading the event
machinery (logging, threads; tests/coldstart/test_imports.py)."""

EVENT_KINDS = ("written", "updated", "deleted", "restored", "purged", "retrieved")
