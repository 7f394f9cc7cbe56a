"""A Slack workspace export (the folder of the ZIP Slack makes): ``users.json``,
``channels.json`` (and ``groups.json``, ``mpims.json``, ``dms.json`` where present), and a
folder per channel with one JSON file per day, each a list of messages (``user``,
``text``, ``ts``, ``thread_ts`` for threads).

One document per message: the author's real name, the channel, the thread
(``channel/thread_ts``; a message that starts none is its own thread), the time from
``ts``. ``<@U123>`` mentions read as ``@name``. A reply gets a ``replies_to`` edge to the
message that started its thread. Join/leave notices are left out.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from trove.errors import InvalidInput
from trove.transfer.importers.reading import Imported, load_json

_MENTION = re.compile(r"<@([UW][A-Z0-9]+)(?:\|[^>]*)?>")
_CHANNEL = re.compile(r"<#[CG][A-Z0-9]+\|([^>]+)>")
_NOTICES = {"channel_join", "channel_leave", "group_join", "group_leave", "bot_add"}
_LISTS = ("channels.json", "groups.json", "mpims.json", "dms.json")


def read_slack(path: Path) -> Imported:
    if not path.is_dir():
        raise InvalidInput(f"{path}: a Slack export is a folder (unzip the export first)")
    users = _users(path)
    found = Imported("slack")
    for listing in _LISTS:
        if not (path / listing).is_file():
            continue
        for channel in load_json(path / listing):
            name = str(channel.get("name") or channel.get("id") or "")
            folder = _inside(path, name)
            if not name or not folder.is_dir():
                continue
            found.conversations += 1
            for day in sorted(folder.glob("*.json")):
                for message in load_json(_inside(path, f"{name}/{day.name}")):
                    _message(found, users, channel, message)
    return found


def _inside(export: Path, rel: str) -> Path:
    """``export / rel``, refused when the export's lists name a place outside it
    (``../x``, an absolute path, a link that leads elsewhere)."""
    target = export / rel
    parts = Path(rel).parts
    if (
        Path(rel).is_absolute()
        or ".." in parts
        or not target.resolve().is_relative_to(export.resolve())
    ):
        raise InvalidInput(f"{export}: {rel!r} is not a channel folder inside the export")
    return target


def _users(path: Path) -> dict[str, str]:
    if not (path / "users.json").is_file():
        return {}
    names = {}
    for user in load_json(path / "users.json"):
        profile = user.get("profile") or {}
        names[str(user.get("id"))] = str(
            user.get("real_name")
            or profile.get("real_name")
            or profile.get("display_name")
            or user.get("name")
            or user.get("id")
        )
    return names


def _message(
    found: Imported, users: dict[str, str], channel: dict[str, Any], message: Any
) -> None:
    if not isinstance(message, dict) or message.get("subtype") in _NOTICES:
        return
    ts = str(message.get("ts") or "")
    text = str(message.get("text") or "")
    if not ts or not text.strip():
        return
    name = str(channel.get("name") or channel.get("id"))
    user = str(message.get("user") or message.get("bot_id") or "")
    author = users.get(user) or str(
        (message.get("user_profile") or {}).get("real_name") or message.get("username") or user
    )
    text = _MENTION.sub(lambda m: "@" + users.get(m.group(1), m.group(1)), text)
    text = _CHANNEL.sub(lambda m: "#" + m.group(1), text)
    thread = str(message.get("thread_ts") or ts)
    key = f"{name}/{ts}"
    found.items.append(
        {
            "text": text,
            "source_id": key,
            "doc_type": "chat",
            "title": f"#{name}",
            "author": author,
            "participants": [users.get(str(m), str(m)) for m in channel.get("members") or []],
            "timestamp": float(ts),
            "thread_id": f"{name}/{thread}",
            "channel": name,
            "metadata": {
                "user_id": user,
                "ts": ts,
                "channel_id": str(channel.get("id") or ""),
                **({"thread_ts": thread} if message.get("thread_ts") else {}),
                **({"reply_count": message["reply_count"]} if "reply_count" in message else {}),
            },
        }
    )
    if thread != ts:
        found.edges.append((key, f"{name}/{thread}", "replies_to"))
