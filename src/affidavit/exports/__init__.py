"""Chat exports read into typed conversations: ChatGPT's and Claude's ``conversations.json``.

Used by ``affidavit pack build --from-chatgpt/--from-claude`` and the console's pack maker (the
messages a pack cites), and meant for the vault's importers. Each reader returns every
conversation or raises one :class:`~affidavit.core.errors.InputError` naming the file and the
place that is wrong; nothing is ever returned half-read.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from affidavit.core.errors import InputError
from affidavit.exports.chatgpt import FORMAT as CHATGPT
from affidavit.exports.chatgpt import parse_chatgpt
from affidavit.exports.claude import FORMAT as CLAUDE
from affidavit.exports.claude import parse_claude
from affidavit.exports.model import ASSISTANT, USER, Conversation, Export, Message
from affidavit.exports.places import load_json, read_file

FORMATS = (CHATGPT, CLAUDE)
_PARSERS = {CHATGPT: parse_chatgpt, CLAUDE: parse_claude}

__all__ = [
    "ASSISTANT",
    "CHATGPT",
    "CLAUDE",
    "FORMATS",
    "USER",
    "Conversation",
    "Export",
    "Message",
    "detect_format",
    "parse_export",
    "read_export",
    "read_file",
]


def detect_format(label: str, data: Any) -> str:
    """Which export ``data`` (a parsed ``conversations.json``) is, from its first entry."""
    first = data[0] if isinstance(data, list) and data else None
    if isinstance(first, dict) and "mapping" in first:
        return CHATGPT
    if isinstance(first, dict) and "chat_messages" in first:
        return CLAUDE
    raise InputError(
        f"{label} is neither a ChatGPT nor a Claude export "
        "(a list of conversations with 'mapping' or 'chat_messages')",
        "pick the conversations.json (or the .zip) the service sent you",
    )


def parse_export(label: str, raw: bytes, format: str | None = None) -> Export:
    """An export from its bytes (``conversations.json`` or the zip); ``format`` None: detect."""
    if format is not None and format not in _PARSERS:
        raise InputError(f"unknown export format {format!r}", f"use one of {', '.join(FORMATS)}")
    data = load_json(label, raw)
    found = format if format is not None and data == [] else detect_format(label, data)
    if format is not None and found != format:
        raise InputError(
            f"{label} is a {found} export, not a {format} one", f"read it as a {found} export"
        )
    return Export(found, label, _PARSERS[found](label, data))


def read_export(path: Path, format: str | None = None) -> Export:
    """The export in the file at ``path`` (see :func:`parse_export`)."""
    path = Path(path)
    return parse_export(path.name, read_file(path), format)
