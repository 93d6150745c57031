"""ChatGPT's export: ``conversations.json``, a list of conversations, each a tree of nodes.

Each conversation has ``title``, ``create_time`` (Unix seconds), ``mapping`` (node id ->
``{"message", "parent", "children"}``) and ``current_node``, the last node of the branch the
user saw last. A node's ``message`` has ``author.role``, ``create_time`` and ``content``
(``content_type`` and ``parts``). Edits and regenerations make branches; the conversation
read here is the branch that ends at ``current_node``, root first (without one: the newest
child at every step). Only what the people in the chat wrote or were shown is kept: user and
assistant messages whose content is text, with at least one non-blank character; system,
tool and hidden messages are left out.
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
    from_epoch,
    source_id,
    text_or,
)

FORMAT = "chatgpt"
_ROLES = {"user": USER, "assistant": ASSISTANT}
_TEXT_CONTENT = frozenset(("text", "multimodal_text"))


def _branch(place: Place, mapping: dict[str, Any], current: Any) -> list[str]:
    """The node ids from the root to the conversation's current node."""
    if current is None:
        roots = [
            key for key, node in mapping.items() if _node(place, key, node).get("parent") is None
        ]
        if len(roots) != 1:
            raise place.error(f"has {len(roots)} root nodes and no current_node")
        path = [roots[0]]
        while children := mapping[path[-1]].get("children"):
            child = children[-1]
            if child not in mapping or len(path) > len(mapping):
                raise place.at(f"node {path[-1]!r}").error(f"child {str(child)[:40]!r} is unknown")
            path.append(child)
        return path
    if not isinstance(current, str) or current not in mapping:
        raise place.error(f"current_node {str(current)[:40]!r} is not a node of its mapping")
    path = []
    node_id: Any = current
    while node_id is not None:
        if not isinstance(node_id, str) or node_id not in mapping:
            raise place.at(f"node {path[-1]!r}").error(
                f"parent {str(node_id)[:40]!r} is not a node of its mapping"
            )
        if len(path) > len(mapping):
            raise place.error("its nodes' parents form a loop")
        path.append(node_id)
        node_id = _node(place, node_id, mapping[node_id]).get("parent")
    return path[::-1]


def _node(place: Place, node_id: str, node: Any) -> dict[str, Any]:
    return place.at(f"node {node_id!r}").mapping(node, "the node")


def _text(place: Place, message: dict[str, Any]) -> str | None:
    """The message's text, or ``None`` for content that is not conversation text."""
    content = place.mapping(message.get("content"), "content")
    if content.get("content_type") not in _TEXT_CONTENT:
        return None
    parts = place.items(content.get("parts"), "content.parts")
    text = "\n".join(part for part in parts if isinstance(part, str))
    return checked_text(place, text) if text.strip() else None


def _message(
    place: Place, node_id: str, node: dict[str, Any], fallback: datetime | None
) -> Message | None:
    raw = node.get("message")
    if raw is None:
        return None
    here = place.at(f"node {node_id!r}")
    message = here.mapping(raw, "message")
    author = here.mapping(message.get("author"), "message.author")
    role = _ROLES.get(author.get("role"))  # type: ignore[arg-type]
    metadata = message.get("metadata")
    hidden = isinstance(metadata, dict) and metadata.get("is_visually_hidden_from_conversation")
    if role is None or hidden:
        return None
    text = _text(here, message)
    if text is None:
        return None
    created = from_epoch(here, message.get("create_time"), "create_time") or fallback
    if created is None:
        raise here.error(
            "message has no create_time and neither has its conversation",
            "a pack cites dated messages; export again or date the conversation",
        )
    return Message(role, text, created, source_id(message.get("id"), node_id))


def _conversation(file: Place, conversation: dict[str, Any], index: int) -> Conversation | None:
    title = text_or(conversation.get("title"), "(untitled)")
    place = conversation_place(file, index, title)
    mapping = place.mapping(conversation.get("mapping"), "mapping")
    created = from_epoch(place, conversation.get("create_time"), "create_time")
    messages = tuple(
        found
        for node_id in _branch(place, mapping, conversation.get("current_node"))
        if (found := _message(place, node_id, mapping[node_id], created)) is not None
    )
    created = created or (messages[0].created if messages else None)
    if created is None:
        return None  # no date and nothing said: nothing to cite or import
    key = conversation.get("conversation_id") or conversation.get("id")
    return Conversation(source_id(key, str(index)), title, created, messages)


def parse_chatgpt(label: str, data: Any) -> tuple[Conversation, ...]:
    """The conversations of a parsed ChatGPT ``conversations.json``; all of them or an error."""
    return each_conversation(label, data, _conversation)
