"""Claude's export: ``conversations.json``, a list of conversations with their messages.

Each conversation has ``uuid``, ``name``, ``created_at`` (ISO 8601) and ``chat_messages``, in
order; a message has ``uuid``, ``sender`` (``human`` or ``assistant``), ``created_at``, and
its words in ``content`` (blocks; the ``text`` blocks are the words) or, in older exports,
only in ``text``. Tool calls, attachments and blank messages are left out.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from affidavit.exports.model import ASSISTANT, USER, Conversation, Message
from affidavit.exports.places import Place, checked_text, from_iso, text_or

FORMAT = "claude"
_SENDERS = {"human": USER, "assistant": ASSISTANT}


def _text(place: Place, message: dict[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, list):
        blocks = [
            place.mapping(block, f"content block {number}")
            for number, block in enumerate(content, start=1)
        ]
        texts = [
            b["text"] for b in blocks if b.get("type") == "text" and isinstance(b.get("text"), str)
        ]
        if texts:
            return "\n\n".join(texts)
    text = message.get("text", "")
    if not isinstance(text, str):
        raise place.error("text is not a string")
    return text


def _message(place: Place, message: dict[str, Any], fallback: datetime) -> Message | None:
    sender = message.get("sender")
    role = _SENDERS.get(sender) if isinstance(sender, str) else None
    if role is None:
        raise place.error(
            f"sender {str(sender)[:40]!r} is neither 'human' nor 'assistant'",
        )
    text = checked_text(place, _text(place, message))
    if not text.strip():
        return None
    created = from_iso(place, message.get("created_at"), "created_at") or fallback
    source_id = message.get("uuid")
    return Message(role, text, created, source_id if isinstance(source_id, str) else "")


def parse_claude(label: str, data: Any) -> tuple[Conversation, ...]:
    """The conversations of a parsed Claude ``conversations.json``; all of them or an error."""
    conversations = []
    for index, item in enumerate(Place(label).items(data, "the file"), start=1):
        conversation = Place(label).mapping(item, f"conversation {index}")
        title = text_or(conversation.get("name"), "(untitled)")
        place = Place(label, f"conversation {index} ({title[:40]!r})")
        created = from_iso(place, conversation.get("created_at"), "created_at")
        if created is None:
            raise place.error("created_at is missing")
        raw_messages = place.items(conversation.get("chat_messages"), "chat_messages")
        messages = [
            found
            for number, raw in enumerate(raw_messages, start=1)
            if (
                found := _message(
                    place.at(f"message {number}"),
                    place.at(f"message {number}").mapping(raw, "the message"),
                    created,
                )
            )
            is not None
        ]
        source_id = conversation.get("uuid")
        conversations.append(
            Conversation(
                source_id if isinstance(source_id, str) else str(index),
                title,
                created,
                tuple(messages),
            )
        )
    return tuple(conversations)
