"""Importers: ChatGPT, Claude, MCP memory, Slack exports, with provenance, incremental."""

from __future__ import annotations

import json
from pathlib import Path

import export_fixtures as fx
import pytest
from click.testing import CliRunner

import trove
from trove import InvalidInput
from trove.interfaces.cli import cli
from trove.transfer.importers import detect, run_importer


def chats(kb: trove.Store, source: str) -> list[trove.Document]:
    docs = [d for d in kb.list(limit=100).items if d.source == source]
    return sorted(docs, key=lambda d: (d.thread_id, d.timestamp or ""))


def test_chatgpt_follows_the_current_branch(tmp_path: Path) -> None:
    path = fx.chatgpt(tmp_path / "conversations.json")
    with trove.open(tmp_path / "kb.db", embedder=None) as kb:
        report = run_importer(kb, "chatgpt", path)
        assert report.conversations == 2 and report.added == 5
        docs = chats(kb, "chatgpt")
        assert [d.text for d in docs] == [
            "Should we drop Redis?",
            "Keep it in process.",
            "And sessions?",
            "Store them in SQLite.",
            "What is in this picture?",
        ]
        first = docs[1]
        assert (first.author, first.title, first.thread_id, first.doc_type) == (
            "assistant",
            "Cache decision",
            "c-1",
            "chat",
        )
        assert first.participants == ("user", "assistant")
        assert first.timestamp == "2023-11-14T22:13:40Z"
        assert first.metadata == {
            "conversation_id": "c-1",
            "message_id": "a1",
            "turn": 1,
            "role": "assistant",
            "model": "gpt-4o",
        }
        again = fx.chatgpt(path, extra_turn=True)
        report = run_importer(kb, "chatgpt", again)
        assert (report.added, report.unchanged, report.updated) == (1, 5, 0)
        assert kb.search("decided", mode="keyword")[0].thread_id == "c-1"


def test_claude_messages_with_attachments(tmp_path: Path) -> None:
    path = fx.claude(tmp_path / "conversations.json")
    with trove.open(tmp_path / "kb.db", embedder=None) as kb:
        assert run_importer(kb, "claude", path).added == 2
        human, assistant = chats(kb, "claude")
        assert human.text == (
            "Plan three days in Lisbon.\n\n## budget.txt\n\nBudget: 600 euros total."
        )
        assert (human.author, human.title, human.thread_id) == (
            "human",
            "Trip planning",
            "9f1c-conv",
        )
        assert human.participants == ("human", "assistant")
        assert assistant.text == "Day one: Alfama and the castle."
        assert assistant.timestamp == "2026-10-01T08:01:00Z"
        report = run_importer(kb, "claude", fx.claude(path, edited=True))
        assert (report.updated, report.unchanged) == (1, 1)
        assert kb.search("budget euros", mode="keyword")[0].doc_id == human.id


def test_mcp_memory_entities_and_relations(tmp_path: Path, kb: trove.Store) -> None:
    path = fx.mcp_memory(tmp_path / "memory.jsonl")
    report = run_importer(kb, "mcp-memory", path)
    assert (report.added, report.edges) == (3, 1)
    docs = {d.title: d for d in kb.list(limit=10).items}
    john = docs["John_Smith"]
    assert john.text == "Speaks fluent Spanish\nGraduated in 2019"
    assert john.doc_type == "person" and docs["Anthropic"].text == "Anthropic"
    assert [(e.dst, e.type) for e in kb.neighbors(john.id)] == [(docs["Anthropic"].id, "works_at")]
    report = run_importer(kb, "mcp-memory", fx.mcp_memory(path, later=True))
    assert (report.updated, report.unchanged, report.edges) == (1, 2, 1)
    assert [(e.dst, e.type) for e in kb.neighbors(john.id)] == [(docs["Lisbon"].id, "lives_in")]


def test_slack_channels_users_threads(tmp_path: Path, kb: trove.Store) -> None:
    root = fx.slack(tmp_path / "export")
    report = run_importer(kb, "slack", root)
    assert (report.conversations, report.added, report.edges) == (1, 3, 1)
    start, reply, later = chats(kb, "slack")
    assert start.text == "Deploy is at 5pm, @Bo Chen can you watch it?"
    assert reply.text == "Yes, watching #general."
    assert (start.author, start.channel, start.title) == ("Ana Lima", "general", "#general")
    assert start.thread_id == reply.thread_id == "general/1700000100.000200"
    assert later.thread_id == "general/1700090000.000100"
    assert start.participants == ("Ana Lima", "Bo Chen")
    assert reply.timestamp == "2023-11-14T22:16:40.000300Z"
    assert [(e.dst, e.type) for e in kb.neighbors(reply.id) if e.src == reply.id] == [
        (start.id, "replies_to")
    ]
    report = run_importer(kb, "slack", fx.slack(root, reply=True))
    assert (report.added, report.unchanged, report.edges) == (1, 3, 1)


def test_detect_and_cli(tmp_path: Path) -> None:
    paths = {
        "chatgpt": fx.chatgpt(tmp_path / "gpt.json"),
        "claude": fx.claude(tmp_path / "claude.json"),
        "mcp-memory": fx.mcp_memory(tmp_path / "memory.jsonl"),
        "slack": fx.slack(tmp_path / "slack"),
    }
    for kind, path in paths.items():
        assert detect(path) == kind
    runner = CliRunner()
    db = ["--db", str(tmp_path / "kb.db"), "--embedder", "none"]
    result = runner.invoke(cli, [*db, "import", str(paths["slack"]), "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["added"] == 3
    result = runner.invoke(cli, [*db, "import", str(paths["claude"]), "--namespace", "chats"])
    assert result.exit_code == 0 and "(claude): 1 conversations, 2 added" in result.output
    (tmp_path / "odd.json").write_text('{"hello": 1}')
    result = runner.invoke(cli, [*db, "import", str(tmp_path / "odd.json")])
    assert result.exit_code == 1 and "name it with --from" in result.output
    result = runner.invoke(cli, [*db, "import", str(tmp_path / "odd.json"), "--from", "chatgpt"])
    assert result.exit_code == 1 and "is a list of conversations" in result.output


def test_a_broken_memory_file_stores_nothing(tmp_path: Path) -> None:
    path = tmp_path / "memory.jsonl"
    path.write_text('{"type": "entity", "name": "a", "observations": []}\n{"type": "x"}\n')
    with trove.open(tmp_path / "kb.db", embedder=None) as kb:
        with pytest.raises(InvalidInput, match="line 2"):
            run_importer(kb, "mcp-memory", path)
        assert kb.stats().documents == 0


def test_a_malformed_export_is_an_invalid_input(tmp_path: Path) -> None:
    root = fx.slack(tmp_path / "export")
    day = root / "general" / "2023-11-15.json"
    day.write_text(json.dumps([{"type": "message", "user": "U01", "text": "hi", "ts": "soon"}]))
    gpt = tmp_path / "gpt.json"
    gpt.write_text(json.dumps([{"mapping": {"a": "not a node"}, "current_node": "a"}]))
    with trove.open(tmp_path / "kb.db", embedder=None) as kb:
        with pytest.raises(InvalidInput, match="not a valid slack export"):
            run_importer(kb, "slack", root)
        with pytest.raises(InvalidInput, match="not a valid chatgpt export"):
            run_importer(kb, "chatgpt", gpt)
        assert kb.stats().documents == 0
