"""What every export reader returns: conversations of dated messages, as frozen values."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

USER = "user"
ASSISTANT = "assistant"


@dataclass(frozen=True)
class Message:
    """One message of a conversation: who said it, the text, and when (aware, UTC).

    ``source_id`` is the export's own id for the message, so an importer can tell a message it
    has already stored from a new one.
    """

    role: str
    text: str
    created: datetime
    source_id: str


@dataclass(frozen=True)
class Conversation:
    """One conversation of an export, its messages in the order they were exchanged."""

    source_id: str
    title: str
    created: datetime
    messages: tuple[Message, ...]


@dataclass(frozen=True)
class Export:
    """A whole export: which format it was read as, and its conversations in file order."""

    format: str
    label: str
    conversations: tuple[Conversation, ...]

    @property
    def message_count(self) -> int:
        """How many messages the export holds in all."""
        return sum(len(conversation.messages) for conversation in self.conversations)
