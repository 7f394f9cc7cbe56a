"""Property-based fuzz of the MCP tools over streamable HTTP: any arguments, to any tool,
are answered with a result or a tool error that starts with a trove code (a client can
act on it), never an unexplained failure, and within a time bound."""

from __future__ import annotations

import math
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

pytest.importorskip("mcp", reason="needs the mcp extra")
pytest.importorskip("fastapi", reason="needs the server extra")

import trove
from helpers.loopback import serving
from helpers.mcp_http import McpClient, ToolFailed, mcp_client
from trove.interfaces.config import ServerConfig
from trove.interfaces.mcp import RequireToken, create_server

TOKEN = "mcp-fuzz-token-0123456789"
BOUND_S = 10.0
# The codes a tool error may start with: the library's (trove.interfaces.codes) and the
# argument check's.
CODES = (
    "not_found",
    "forbidden",
    "invalid_query",
    "content_too_large",
    "invalid_input",
    "invalid_request",
    "embedder_mismatch",
    "Unknown tool",
)
TOOLS = [
    "knowledge_write",
    "knowledge_search",
    "knowledge_get",
    "knowledge_update",
    "knowledge_list",
    "knowledge_delete",
    "knowledge_link",
    "knowledge_cluster",
    "knowledge_get_many",
    "knowledge_neighbors",
    "knowledge_write_many",
    "knowledge_unlink",
    "knowledge_restore",
    "knowledge_original",
    "knowledge_attach_original",
    "knowledge_canonicalize",
]
NAMES = [
    "id",
    "ids",
    "text",
    "query",
    "limit",
    "scope",
    "tags",
    "metadata",
    "vector",
    "dedupe_key",
    "source",
    "source_id",
    "with_vectors",
    "compression_level",
    "min_confidence",
    "expand",
    "items",
    "links",
    "src",
    "dst",
    "type",
    "action",
    "data_base64",
    "name",
    "media_type",
    "threshold",
    "text_threshold",
    "rule",
    "dry_run",
    "cursor",
    "chunks",
    "index",
]
scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=30),
    st.sampled_from(["", "\x00", "#0", "a" * 5000, "中" * 500, "bmV2ZXI=", "newest", "list"]),
    st.sampled_from([math.inf, 1e30, 2**63]),
)
values = st.recursive(
    scalars,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from(NAMES), inner, max_size=3)
    ),
    max_leaves=6,
)


@pytest.fixture(scope="module")
def call(tmp_path_factory: pytest.TempPathFactory) -> Iterator[McpClient]:
    path: Path = tmp_path_factory.mktemp("mcpfuzz") / "kb.db"
    config = ServerConfig.from_dict({"tokens": [{"name": "f", "token": TOKEN}]})
    with trove.open(path, embedder="hash:64") as kb:
        kb.add("a first note about caches", dedupe_key="first", original=b"first")
        app = RequireToken(create_server(kb, config).streamable_http_app(), config)
        with serving(app) as url, mcp_client(url + "/mcp", TOKEN) as client:
            yield client


@settings(
    max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(tool=st.sampled_from(TOOLS), arguments=st.dictionaries(st.sampled_from(NAMES), values))
@example(tool="knowledge_attach_original", arguments={"id": "x" * 20, "data_base64": "=="})
@example(tool="knowledge_canonicalize", arguments={"threshold": 1e-300, "text_threshold": None})
@example(tool="knowledge_write", arguments={"text": "v", "vector": [1e30] * 64})
@example(tool="knowledge_write", arguments={"text": "ab", "chunks": [[0, 2**63]]})
@example(tool="knowledge_write", arguments={"text": "", "index": "none", "chunks": [[0, 1]]})
def test_any_arguments_get_a_result_or_a_coded_error(
    call: McpClient, tool: str, arguments: dict[str, Any]
) -> None:
    start = time.monotonic()
    try:
        call(tool, **arguments)
    except ToolFailed as failed:
        assert str(failed).startswith(CODES), (tool, arguments, str(failed))
    assert time.monotonic() - start < BOUND_S, (tool, arguments)
