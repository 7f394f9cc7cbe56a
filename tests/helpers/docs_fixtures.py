"""The hidden setup a documentation block names (``<!-- run with: NAME, ... -->``), for
tests/test_docs.py: each fixture prepares the page's folder, the environment and the
block's text (a placeholder a reader fills in, such as a server's address, becomes this
test's), and may check afterwards that the block really used what it set up.
"""

from __future__ import annotations

import contextlib
import importlib.util
import json
import re
import shutil
import socket
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from helpers.ingest_samples import message, write_mbox, write_pdf

ROOT = Path(__file__).resolve().parents[2]


@dataclass
class Setup:
    """What a block runs with: its text, environment, a hidden shell preamble, checks."""

    folder: Path
    code: str
    env: dict[str, str]
    preamble: list[str] = field(default_factory=list)
    checks: list[Callable[[], None]] = field(default_factory=list)

    def replace(self, pattern: str, value: str) -> None:
        self.code = re.sub(pattern, lambda _: value, self.code)


@dataclass
class Resources:
    """What the test session lends: pytest fixtures by name, contexts kept for the page."""

    fixture: Callable[[str], Any]
    stack: contextlib.ExitStack
    cache: dict[str, Any] = field(default_factory=dict)

    def once(self, name: str, make: Callable[[], Any]) -> Any:
        if name not in self.cache:
            self.cache[name] = make()
        return self.cache[name]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _port(setup: Setup, res: Resources) -> None:
    port = res.once("port", free_port)
    setup.env["DOCS_PORT"] = str(port)
    setup.replace(r"\b8765\b", str(port))


def http(setup: Setup, res: Resources) -> None:
    """``trove serve`` binds a free loopback port (8765 in the text becomes it)."""
    _port(setup, res)


def servers(setup: Setup, res: Resources) -> None:
    """Each server the block starts in the foreground is started, asked (``serve``:
    ``/health``; ``mcp``: an MCP ``initialize`` over stdio) and stopped."""
    _port(setup, res)
    setup.env["DOCS_SERVE"] = "check"


def server(setup: Setup, res: Resources) -> None:
    """A ``trove serve`` of the page's store, started before the block with a token, as an
    earlier block of the page shows; ``$TOKEN``, ``$TROVE_TOKEN``, ``$AUTH`` name it."""
    _port(setup, res)
    setup.preamble += [
        "export TROVE_TOKEN=docs-token-0123456789abcdef TOKEN=docs-token-0123456789abcdef",
        'AUTH="Authorization: Bearer $TROVE_TOKEN"; JSON="Content-Type: application/json"',
        'command trove --db "$TROVE_DB" serve --port "$DOCS_PORT" >/dev/null 2>&1 &',
        "_docs_wait_http",
    ]


def home(setup: Setup, res: Resources) -> None:
    """The reader's files under ``~`` (the page's folder): ``~/notes`` from samples/notes,
    a mail export with a PDF attachment, a JSONL chat, and ChatGPT, Claude, MCP memory and
    Slack exports as tests/transfer writes them."""
    root = setup.folder
    if (root / "notes").exists():
        return
    shutil.copytree(ROOT / "samples" / "notes", root / "notes")
    (root / "mail").mkdir()
    pdf = write_pdf(root / "contract.pdf", ["The contract: Redis is dropped by December."])
    mails = [
        message("Contract", "The signed contract.", message_id="<c1@example.com>",
                attachments=[("contract.pdf", pdf.read_bytes())]),
        message("Re: Contract", "Thanks, filed.", message_id="<c2@example.com>",
                in_reply_to="<c1@example.com>"),
    ]  # fmt: skip
    write_mbox(root / "mail" / "export.mbox", mails)
    pdf.unlink()
    (root / "exports").mkdir()
    records = [
        {"ts": "1762160400.000100", "user": "ana", "text": "we dropped redis"},
        {"ts": "1762160460.000200", "user": "bob", "text": "one process is enough"},
    ]
    (root / "exports" / "slack.jsonl").write_text(
        "".join(json.dumps(r) + "\n" for r in records), encoding="utf-8"
    )
    fx = _export_fixtures()
    downloads = root / "Downloads"
    fx.chatgpt(_mkdir(downloads / "chatgpt") / "conversations.json")
    fx.claude(_mkdir(downloads / "claude") / "conversations.json")
    fx.mcp_memory(_mkdir(root / ".mcp") / "memory.jsonl")
    fx.slack(downloads / "slack-export")


def _mkdir(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    return path


def _export_fixtures() -> Any:
    path = ROOT / "tests" / "transfer" / "export_fixtures.py"
    spec = importlib.util.spec_from_file_location("docs_export_fixtures", path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def kb_file(setup: Setup, res: Resources) -> None:
    """The reader's existing store file ``kb.db``: samples/notes ingested into it."""
    if not (setup.folder / "kb.db").exists():
        trove = [sys.executable, "-m", "trove", "--db", "kb.db", "ingest", "samples/notes"]
        subprocess.run(trove, cwd=setup.folder, env=setup.env, check=True, capture_output=True)


_QUESTIONS = {
    "why did we drop redis": "2026-10-14-cache-decision.md",
    "what went wrong in the september incident": "incident-2026-09-21.md",
    "how do I bake bread": "sourdough.txt",
}


def beir(setup: Setup, res: Resources) -> None:
    """A BEIR-layout set made of samples/notes stands for SciFact (``../shared/data/scifact``
    in the text becomes it), and ``questions.jsonl`` asks for three of the notes."""
    root, notes = setup.folder / "scifact", sorted((ROOT / "samples" / "notes").iterdir())
    _mkdir(root / "qrels")
    corpus = [{"_id": n.name, "title": n.stem, "text": n.read_text("utf-8")} for n in notes]
    queries = [{"_id": f"q{i}", "text": q} for i, q in enumerate(_QUESTIONS)]
    qrels = [f"q{i}\t{doc}\t1" for i, doc in enumerate(_QUESTIONS.values())]
    for name, rows in (("corpus.jsonl", corpus), ("queries.jsonl", queries)):
        (root / name).write_text("".join(json.dumps(r) + "\n" for r in rows), "utf-8")
    (root / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\n" + "\n".join(qrels))
    pairs = [{"query": q, "expected_doc": d} for q, d in _QUESTIONS.items()]
    (setup.folder / "questions.jsonl").write_text(
        "".join(json.dumps(r) + "\n" for r in pairs), "utf-8"
    )
    setup.replace(r"\.\./shared/data/scifact", "scifact")


def chat_clients(setup: Setup, res: Resources) -> None:
    """The chat-model packages the adapter examples import (the ``dev`` extra has them)."""

    missing = [m for m in ("langchain_openai", "llama_index.llms.openai") if not _found(m)]
    if missing:
        pytest.fail(f"the adapter examples need {missing}: pip install -e '.[dev]'")


def _found(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except ModuleNotFoundError:
        return False


def attachment(setup: Setup, res: Resources) -> None:
    """``3f2a...`` is the id of the mail attachment the block's ingest stored."""
    setup.replace(
        r"3f2a\.\.\.",
        "$(command trove list --format tsv | awk -F'\\t' '$4 ~ /attachment-/ {print $1}')",
    )


def llm(setup: Setup, res: Resources) -> None:
    """An OpenAI-compatible chat server on loopback (tests/helpers/llm_server.py) stands
    in for the model: the Ollama address in the text becomes it, and the block must have
    asked it something."""
    fake = res.fixture("fake_llm")
    before = len(fake.requests)
    setup.replace(r"http://127\.0\.0\.1:11434/v1", fake.url)
    setup.env.update(TROVE_LLM_BASE_URL=fake.url, OPENAI_BASE_URL=fake.url)
    setup.env["OPENAI_API_BASE"] = fake.url  # LlamaIndex's OpenAI reads this one
    setup.env.update(OPENAI_API_KEY="docs-key", TROVE_LLM_API_KEY="docs-key")

    def asked() -> None:
        assert len(fake.requests) > before, "the block never asked the model"

    setup.checks.append(asked)


_EXAMPLE_PG = r"postgresql://ana@db\d?\.internal/knowledge(\?schema=team)?"


def postgres(setup: Setup, res: Resources) -> None:
    """The session's PostgreSQL server (tests/conftest.py) stands for ``db.internal``:
    every example URL becomes one schema of it, kept for the page."""
    url = res.once("pg", lambda: f"{res.fixture('pg_url')}&schema=docs_{free_port()}")
    setup.replace(_EXAMPLE_PG, url)


def replicas(setup: Setup, res: Resources) -> None:
    """A primary and a hot standby on loopback (tests/helpers/pg_standby.py) stand for
    ``db1`` and ``db2``/``db3``.internal; ``$TROVE_DB`` is a schema on the primary."""
    from helpers.pg_standby import primary_and_standby

    pair = res.once("pair", lambda: res.stack.enter_context(primary_and_standby()))
    primary = f"{pair.primary_url}&schema=docs"
    setup.replace(r"postgresql://ana@db1\.internal/knowledge\?schema=team", primary)
    setup.replace(r"postgresql://ana@db[23]\.internal/knowledge", pair.standby_url)
    setup.env["TROVE_DB"] = primary


FIXTURES: dict[str, Callable[[Setup, Resources], None]] = {
    "http": http,
    "servers": servers,
    "server": server,
    "home": home,
    "attachment": attachment,
    "chat-clients": chat_clients,
    "beir": beir,
    "kb-file": kb_file,
    "llm": llm,
    "postgres": postgres,
    "replicas": replicas,
}


@contextlib.contextmanager
def page_resources(fixture: Callable[[str], Any]) -> Iterator[Resources]:
    with contextlib.ExitStack() as stack:
        yield Resources(fixture, stack)
