"""The messages a pack's records cite, read from a ``messages.jsonl`` or made from a chat export.

A pack is built from source messages (``{"id", "date", "speaker", "text"}``, one per line) and
records that quote them. A ChatGPT or Claude export becomes such a file here: its messages are
numbered 1, 2, 3, ... in the order the export lists conversations and, within each, messages;
dates are whole UTC seconds and the speaker is ``user`` or ``assistant``. Either way the
messages are then read by :func:`affidavit.packs.inputs.parse_messages`, so an export is held to
exactly the rules a hand-written file is. ``affidavit pack messages`` prints the numbered file
for a user who writes records by hand.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from affidavit.exports import Export
from affidavit.packs import format as fmt
from affidavit.packs.inputs import Message, parse_messages, read_input


@dataclass(frozen=True)
class Thread:
    """A conversation as the messages file numbers it: its title and its message ids."""

    title: str
    message_ids: tuple[int, ...]


@dataclass(frozen=True)
class Sources:
    """Source messages as the builder reads them (``raw`` is the JSONL it hashes)."""

    label: str
    raw: bytes
    messages: Mapping[int, Message]
    threads: tuple[Thread, ...]


def sources_from_jsonl(label: str, raw: bytes) -> Sources:
    """A ``messages.jsonl`` as given: one thread holding every message."""
    messages = parse_messages(label, raw)
    return Sources(label, raw, messages, (Thread(label, tuple(messages)),))


def read_sources(path: Path) -> Sources:
    """The ``messages.jsonl`` at ``path``."""
    return sources_from_jsonl(path.name, read_input(path))


def messages_jsonl(export: Export) -> bytes:
    """The messages file made from an export (ids in export order, see the module doc)."""
    lines = []
    for message_id, message in enumerate(
        (m for conversation in export.conversations for m in conversation.messages), start=1
    ):
        line = {
            "id": message_id,
            "date": fmt.format_utc(message.created),
            "speaker": message.role,
            "text": message.text,
        }
        lines.append(json.dumps(line, ensure_ascii=False) + "\n")
    return "".join(lines).encode("utf-8")


def sources_from_export(export: Export) -> Sources:
    """An export's messages, numbered, one thread per conversation that has any."""
    raw = messages_jsonl(export)
    messages = parse_messages(export.label, raw)
    threads, next_id = [], 1
    for conversation in export.conversations:
        count = len(conversation.messages)
        if count:
            threads.append(Thread(conversation.title, tuple(range(next_id, next_id + count))))
        next_id += count
    return Sources(export.label, raw, messages, tuple(threads))
