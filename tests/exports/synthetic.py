"""Small exports in the documented shapes of ChatGPT's and Claude's ``conversations.json``.

ChatGPT: a list of conversations with ``title``, ``create_time``, ``mapping`` (node id ->
``{"id", "message", "parent", "children"}``) and ``current_node``; a message has ``id``,
``author.role``, ``create_time`` and ``content`` (``content_type``, ``parts``). Claude: a list
of conversations with ``uuid``, ``name``, ``created_at`` and ``chat_messages`` (``uuid``,
``sender``, ``created_at``, ``text`` and ``content`` blocks).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

Turn = tuple[str, str]  # (role, text)
BASE = datetime(2026, 3, 2, 8, 20, tzinfo=UTC).timestamp()


def chatgpt_conversation(title: str, turns: Sequence[Turn], start: float = BASE) -> dict[str, Any]:
    """One ChatGPT conversation: a hidden system root, then ``turns`` one minute apart."""
    mapping: dict[str, Any] = {
        "root": {"id": "root", "message": None, "parent": None, "children": ["sys"]},
        "sys": {
            "id": "sys",
            "message": {
                "id": "sys",
                "author": {"role": "system", "name": None, "metadata": {}},
                "create_time": None,
                "content": {"content_type": "text", "parts": [""]},
                "metadata": {"is_visually_hidden_from_conversation": True},
            },
            "parent": "root",
            "children": [],
        },
    }
    parent = "sys"
    for number, (role, text) in enumerate(turns, start=1):
        node = f"{title[:8]}-n{number}"
        mapping[parent]["children"].append(node)
        mapping[node] = {
            "id": node,
            "message": {
                "id": f"m{number}-{title[:8]}",
                "author": {"role": role, "name": None, "metadata": {}},
                "create_time": start + 60 * number,
                "content": {"content_type": "text", "parts": [text]},
                "status": "finished_successfully",
                "metadata": {},
            },
            "parent": parent,
            "children": [],
        }
        parent = node
    return {
        "title": title,
        "create_time": start,
        "update_time": start + 60 * len(turns),
        "mapping": mapping,
        "current_node": parent,
        "conversation_id": f"conv-{title[:8]}",
    }


def claude_conversation(name: str, turns: Sequence[Turn], start: float = BASE) -> dict[str, Any]:
    """One Claude conversation with ``turns`` one minute apart (``user`` is sent as human)."""

    def iso(seconds: float) -> str:
        return datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")

    messages = []
    for number, (role, text) in enumerate(turns, start=1):
        messages.append(
            {
                "uuid": f"{name[:8]}-{number}",
                "text": text,
                "content": [{"type": "text", "text": text}],
                "sender": "human" if role == "user" else "assistant",
                "created_at": iso(start + 60 * number),
                "updated_at": iso(start + 60 * number),
                "attachments": [],
                "files": [],
            }
        )
    return {
        "uuid": f"uuid-{name[:8]}",
        "name": name,
        "created_at": iso(start),
        "updated_at": iso(start + 60 * len(turns)),
        "account": {"uuid": "account"},
        "chat_messages": messages,
    }


LIBRARY = [
    (
        "Tool library",
        [
            ("user", "I run the tool library on Larkspur Lane. Borrowing is free for members."),
            ("assistant", "Noted: you run the tool library, and members borrow for free."),
            ("user", "Drills go out for three days. Everything else goes out for a week."),
        ],
    ),
    (
        "Bike repair",
        [
            ("user", "The repair café opens on Saturday mornings at nine."),
            ("assistant", "Saturday at nine, got it."),
        ],
    ),
]


def write_chatgpt(
    path: Path, conversations: Sequence[tuple[str, Sequence[Turn]]] = LIBRARY
) -> Path:
    """A ChatGPT ``conversations.json`` at ``path`` (conversations an hour apart)."""
    data = [
        chatgpt_conversation(title, turns, BASE + 3600 * index)
        for index, (title, turns) in enumerate(conversations)
    ]
    path.write_text(json.dumps(data, indent=1), encoding="utf-8")
    return path


def write_claude(path: Path, conversations: Sequence[tuple[str, Sequence[Turn]]] = LIBRARY) -> Path:
    """A Claude ``conversations.json`` at ``path`` (conversations an hour apart)."""
    data = [
        claude_conversation(title, turns, BASE + 3600 * index)
        for index, (title, turns) in enumerate(conversations)
    ]
    path.write_text(json.dumps(data, indent=1), encoding="utf-8")
    return path
