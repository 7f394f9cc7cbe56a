"""ChatGPT's data export: ``conversations.json``, a list of conversations, each a tree of
messages (``mapping``: node id -> {message, parent, children}).

Editing a prompt or regenerating an answer forks the tree; the conversation as the user
last saw it is the path from the root to ``current_node``, and that path is what is
imported (one document per visible message). System and tool messages and hidden
scaffolding are left out.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from trove.errors import InvalidInput
from trove.transfer.importers.reading import Imported, load_json, texts

ROLES = ("user", "assistant")


def read_chatgpt(path: Path) -> Imported:
    data = load_json(path)
    if not isinstance(data, list):
        raise InvalidInput(f"{path}: ChatGPT's conversations.json is a list of conversations")
    found = Imported("chatgpt")
    for conversation in data:
        if not isinstance(conversation, dict) or not isinstance(conversation.get("mapping"), dict):
            raise InvalidInput(f"{path}: a conversation without a mapping")
        found.items.extend(_conversation(conversation))
        found.conversations += 1
    return found


def _branch(conversation: dict[str, Any]) -> list[dict[str, Any]]:
    """The nodes from the root to the current node (or the last leaf), in order."""
    mapping: dict[str, Any] = conversation["mapping"]
    node_id = conversation.get("current_node")
    if node_id not in mapping:
        # No current node: follow the newest child from the root.
        roots = [n for n, node in mapping.items() if node.get("parent") not in mapping]
        node_id = roots[0] if roots else None
        walked: set[str] = set()  # a cycle of children ends before it comes back
        while node_id in mapping and mapping[node_id].get("children"):
            walked.add(node_id)
            child = mapping[node_id]["children"][-1]
            if child in walked:
                break
            node_id = child
    path: list[dict[str, Any]] = []
    seen: set[str] = set()
    while node_id in mapping and node_id not in seen:
        seen.add(node_id)
        path.append(mapping[node_id])
        node_id = mapping[node_id].get("parent")
    return path[::-1]


def _conversation(conversation: dict[str, Any]) -> list[dict[str, Any]]:
    conv_id = str(conversation.get("conversation_id") or conversation.get("id") or "")
    title = str(conversation.get("title") or "")
    messages = [m for node in _branch(conversation) if (m := _message(node)) is not None]
    roles = list(dict.fromkeys(m["role"] for m in messages))
    items = []
    for turn, message in enumerate(messages):
        items.append(
            {
                "text": message["text"],
                "source_id": f"{conv_id}/{message['id']}",
                "doc_type": "chat",
                "title": title,
                "author": message["role"],
                "participants": roles,
                "timestamp": message["time"] or conversation.get("create_time"),
                "thread_id": conv_id,
                "metadata": {
                    "conversation_id": conv_id,
                    "message_id": message["id"],
                    "turn": turn,
                    "role": message["role"],
                    **({"model": message["model"]} if message["model"] else {}),
                },
            }
        )
    return items


def _message(node: dict[str, Any]) -> dict[str, Any] | None:
    message = node.get("message")
    if not isinstance(message, dict):
        return None
    role = (message.get("author") or {}).get("role")
    meta = message.get("metadata") or {}
    if role not in ROLES or meta.get("is_visually_hidden_from_conversation"):
        return None
    content = message.get("content") or {}
    text = texts(content.get("parts") or [])
    if not text and isinstance(content.get("text"), str):
        text = content["text"]
    if not text.strip():
        return None
    return {
        "id": str(message.get("id") or node.get("id")),
        "role": role,
        "text": text,
        "time": message.get("create_time"),
        "model": meta.get("model_slug"),
    }
