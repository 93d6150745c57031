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
from affidavit.exports.places import (
    Place,
    checked_text,
    conversation_place,
    each_conversation,
    from_iso,
    source_id,
    text_or,
)

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
    return Message(role, text, created, source_id(message.get("uuid"), ""))


def _conversation(file: Place, conversation: dict[str, Any], index: int) -> Conversation:
    title = text_or(conversation.get("name"), "(untitled)")
    place = conversation_place(file, index, title)
    created = from_iso(place, conversation.get("created_at"), "created_at")
    if created is None:
        raise place.error("created_at is missing")
    messages = []
    for number, raw in enumerate(
        place.items(conversation.get("chat_messages"), "chat_messages"), 1
    ):
        here = place.at(f"message {number}")
        found = _message(here, here.mapping(raw, "the message"), created)
        if found is not None:
            messages.append(found)
    return Conversation(
        source_id(conversation.get("uuid"), str(index)), title, created, tuple(messages)
    )


def parse_claude(label: str, data: Any) -> tuple[Conversation, ...]:
    """The conversations of a parsed Claude ``conversations.json``; all of them or an error."""
    return each_conversation(label, data, _conversation)
