"""Claude's data export: ``conversations.json``, a list of conversations (``uuid``,
``name``, ``created_at``), each with its ``chat_messages`` in order (``sender`` ``human``
or ``assistant``, ``text`` or ``content`` blocks, ``created_at``, attachments).

One document per message; an attachment's extracted text is kept with the message that
carried it, under a heading naming the file.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from trove.errors import InvalidInput
from trove.transfer.importers.reading import Imported, load_json, texts


def read_claude(path: Path) -> Imported:
    data = load_json(path)
    if not isinstance(data, list):
        raise InvalidInput(f"{path}: Claude's conversations.json is a list of conversations")
    found = Imported("claude")
    for conversation in data:
        if not isinstance(conversation, dict) or not isinstance(
            conversation.get("chat_messages"), list
        ):
            raise InvalidInput(f"{path}: a conversation without chat_messages")
        found.items.extend(_conversation(conversation))
        found.conversations += 1
    return found


def _conversation(conversation: dict[str, Any]) -> list[dict[str, Any]]:
    conv_id = str(conversation.get("uuid") or "")
    title = str(conversation.get("name") or "")
    messages = [m for m in conversation["chat_messages"] if isinstance(m, dict)]
    senders = [s for s in dict.fromkeys(str(m.get("sender") or "") for m in messages) if s]
    items = []
    for turn, message in enumerate(messages):
        text = _text(message)
        if not text.strip():
            continue
        msg_id = str(message.get("uuid") or turn)
        items.append(
            {
                "text": text,
                "source_id": f"{conv_id}/{msg_id}",
                "doc_type": "chat",
                "title": title,
                "author": str(message.get("sender") or ""),
                "participants": senders,
                "timestamp": message.get("created_at") or conversation.get("created_at"),
                "thread_id": conv_id,
                "metadata": {
                    "conversation_id": conv_id,
                    "message_id": msg_id,
                    "turn": turn,
                    "role": str(message.get("sender") or ""),
                },
            }
        )
    return items


def _text(message: dict[str, Any]) -> str:
    text = message.get("text")
    if not isinstance(text, str) or not text.strip():
        blocks = message.get("content") or []
        text = texts(
            b.get("text") for b in blocks if isinstance(b, dict) and b.get("type") == "text"
        )
    for attachment in message.get("attachments") or []:
        extracted = attachment.get("extracted_content") if isinstance(attachment, dict) else None
        if isinstance(extracted, str) and extracted.strip():
            text += f"\n\n## {attachment.get('file_name') or 'attachment'}\n\n{extracted}"
    return text
