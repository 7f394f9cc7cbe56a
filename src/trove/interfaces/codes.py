"""The HTTP status and stable error code of each library error, for every interface.

HTTP and the web page answer with the status, MCP tools and ``trove --json`` report the
code; the table is kept apart from the servers so the CLI can use it without them.
"""

from __future__ import annotations

from trove import errors

# (HTTP status, code) by error class; the first match in this order wins.
ERROR_CODES: tuple[tuple[type[errors.TroveError], int, str], ...] = (
    (errors.NotFound, 404, "not_found"),
    (errors.Forbidden, 403, "forbidden"),
    (errors.InvalidQuery, 400, "invalid_query"),
    (errors.ContentTooLarge, 413, "content_too_large"),
    (errors.InvalidInput, 422, "invalid_input"),
    (errors.EmbedderMismatch, 409, "embedder_mismatch"),
    (errors.EmbedderError, 503, "embedder_unavailable"),
    (errors.MissingDependency, 501, "missing_dependency"),
    (errors.StoreError, 500, "store_error"),
)


def error_code(exc: errors.TroveError) -> tuple[int, str]:
    """The HTTP status and stable error code for a library error."""
    for kind, status, code in ERROR_CODES:
        if isinstance(exc, kind):
            return status, code
    return 500, "trove_error"
