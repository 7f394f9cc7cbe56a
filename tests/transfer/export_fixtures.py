"""Realistic exports, built from the documented formats (ChatGPT's and Claude's data
exports, the MCP memory server's memory.jsonl, a Slack workspace export)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


def _node(
    node_id: str, parent: str | None, children: list[str], role: str | None, text: str, t: float
) -> dict[str, Any]:
    message = None
    if role is not None:
        message = {
            "id": node_id,
            "author": {"role": role, "name": None, "metadata": {}},
            "create_time": t,
            "update_time": None,
            "content": {"content_type": "text", "parts": [text]},
            "status": "finished_successfully",
            "end_turn": role == "assistant",
            "weight": 1.0,
            "metadata": {"model_slug": "gpt-4o"} if role == "assistant" else {},
            "recipient": "all",
        }
    return {"id": node_id, "message": message, "parent": parent, "children": children}


def chatgpt(path: Path, *, extra_turn: bool = False) -> Path:
    """Two conversations; the first has an edited prompt (a fork) and a hidden system node."""
    mapping = {
        "root": _node("root", None, ["sys"], None, "", 0),
        "sys": _node("sys", "root", ["u1"], "system", "You are ChatGPT.", 1_700_000_000),
        "u1": _node("u1", "sys", ["a1"], "user", "Should we drop Redis?", 1_700_000_010),
        "a1": _node("a1", "u1", ["u2", "u2b"], "assistant", "Keep it in process.", 1_700_000_020),
        "u2": _node("u2", "a1", [], "user", "What about sessions? (old branch)", 1_700_000_030),
        "u2b": _node("u2b", "a1", ["a2"], "user", "And sessions?", 1_700_000_040),
        "a2": _node("a2", "u2b", [], "assistant", "Store them in SQLite.", 1_700_000_050),
    }
    mapping["sys"]["message"]["metadata"]["is_visually_hidden_from_conversation"] = True
    current = "a2"
    if extra_turn:
        mapping["a2"]["children"] = ["u3"]
        mapping["u3"] = _node("u3", "a2", [], "user", "Thanks, decided.", 1_700_000_060)
        current = "u3"
    first = {
        "title": "Cache decision",
        "create_time": 1_700_000_000.5,
        "update_time": 1_700_000_050.5,
        "mapping": mapping,
        "moderation_results": [],
        "current_node": current,
        "plugin_ids": None,
        "conversation_id": "c-1",
        "conversation_template_id": None,
        "gizmo_id": None,
        "is_archived": False,
        "default_model_slug": "gpt-4o",
        "id": "c-1",
    }
    image = {"content_type": "image_asset_pointer", "asset_pointer": "file-service://x"}
    second_map = {
        "r": _node("r", None, ["q"], None, "", 0),
        "q": _node("q", "r", [], "user", "", 1_700_100_000),
    }
    second_map["q"]["message"]["content"] = {
        "content_type": "multimodal_text",
        "parts": [image, "What is in this picture?"],
    }
    second = {
        "title": "Picture",
        "create_time": 1_700_100_000,
        "mapping": second_map,
        "current_node": "q",
        "conversation_id": "c-2",
        "id": "c-2",
    }
    path.write_text(json.dumps([first, second]), encoding="utf-8")
    return path


def claude(path: Path, *, edited: bool = False) -> Path:
    conversation = {
        "uuid": "9f1c-conv",
        "name": "Trip planning",
        "created_at": "2026-10-01T08:00:00.000000Z",
        "updated_at": "2026-10-01T08:05:00.000000Z",
        "account": {"uuid": "acct-1"},
        "chat_messages": [
            {
                "uuid": "m1",
                "text": "Plan three days in Lisbon."
                if not edited
                else "Plan four days in Lisbon.",
                "content": [{"type": "text", "text": "Plan three days in Lisbon."}],
                "sender": "human",
                "created_at": "2026-10-01T08:00:00.000000Z",
                "updated_at": "2026-10-01T08:00:00.000000Z",
                "attachments": [
                    {
                        "file_name": "budget.txt",
                        "file_size": 24,
                        "file_type": "txt",
                        "extracted_content": "Budget: 600 euros total.",
                    }
                ],
                "files": [],
            },
            {
                "uuid": "m2",
                "text": "",
                "content": [
                    {"type": "text", "text": "Day one: Alfama and the castle."},
                    {"type": "tool_use", "name": "web_search", "input": {"q": "Lisbon"}},
                ],
                "sender": "assistant",
                "created_at": "2026-10-01T08:01:00.000000Z",
                "updated_at": "2026-10-01T08:01:00.000000Z",
                "attachments": [],
                "files": [],
            },
        ],
    }
    path.write_text(json.dumps([conversation]), encoding="utf-8")
    return path


def mcp_memory(path: Path, *, later: bool = False) -> Path:
    lines = [
        {
            "type": "entity",
            "name": "John_Smith",
            "entityType": "person",
            "observations": ["Speaks fluent Spanish", "Graduated in 2019"]
            + (["Moved to Lisbon"] if later else []),
        },
        {"type": "entity", "name": "Anthropic", "entityType": "organization", "observations": []},
        {"type": "entity", "name": "Lisbon", "entityType": "city", "observations": ["Capital"]},
        {"type": "relation", "from": "John_Smith", "to": "Anthropic", "relationType": "works_at"},
    ]
    if later:
        lines.append(
            {"type": "relation", "from": "John_Smith", "to": "Lisbon", "relationType": "lives_in"}
        )
        lines.pop(3)  # he left
    path.write_text("\n".join(json.dumps(line) for line in lines) + "\n", encoding="utf-8")
    return path


def slack(root: Path, *, reply: bool = False) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    users = [
        {
            "id": "U01",
            "name": "ana",
            "real_name": "Ana Lima",
            "profile": {"real_name": "Ana Lima"},
        },
        {"id": "U02", "name": "bo", "profile": {"real_name": "Bo Chen", "display_name": "bo"}},
    ]
    channels = [
        {
            "id": "C01",
            "name": "general",
            "created": 1_700_000_000,
            "creator": "U01",
            "members": ["U01", "U02"],
            "topic": {"value": "", "creator": "", "last_set": 0},
            "purpose": {"value": "Company-wide", "creator": "", "last_set": 0},
        }
    ]
    (root / "users.json").write_text(json.dumps(users))
    (root / "channels.json").write_text(json.dumps(channels))
    day1 = [
        {
            "type": "message",
            "subtype": "channel_join",
            "user": "U02",
            "text": "<@U02> has joined",
            "ts": "1700000000.000100",
        },
        {
            "type": "message",
            "user": "U01",
            "text": "Deploy is at 5pm, <@U02> can you watch it?",
            "ts": "1700000100.000200",
            "thread_ts": "1700000100.000200",
            "reply_count": 1,
            "replies": [{"user": "U02", "ts": "1700000200.000300"}],
        },
        {
            "type": "message",
            "user": "U02",
            "text": "Yes, watching <#C01|general>.",
            "ts": "1700000200.000300",
            "thread_ts": "1700000100.000200",
            "parent_user_id": "U01",
        },
    ]
    day2 = [
        {"type": "message", "user": "U02", "text": "Deploy went fine.", "ts": "1700090000.000100"}
    ]
    if reply:
        day2.append(
            {
                "type": "message",
                "user": "U01",
                "text": "Thanks!",
                "ts": "1700090100.000200",
                "thread_ts": "1700000100.000200",
            }
        )
    (root / "general").mkdir(exist_ok=True)
    (root / "general" / "2023-11-14.json").write_text(json.dumps(day1))
    (root / "general" / "2023-11-15.json").write_text(json.dumps(day2))
    return root
