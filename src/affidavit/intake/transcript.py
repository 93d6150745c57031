"""Reading a Claude Code session transcript (JSONL) from where the last run stopped.

Claude Code appends one JSON object per line to the session's transcript. The lines that
matter have ``"type": "user"`` or ``"assistant"`` and a ``message`` whose ``content`` is a
string or a list of content blocks; only ``{"type": "text", "text": ...}`` blocks are what a
person or the model said (``tool_use`` / ``tool_result`` blocks are tool traffic, and lines
marked ``isMeta`` are the client's own). Other line types (summaries, system notes) are skipped.

Reading starts at a byte offset and stops after the last complete line: the client may be
writing the next line as we read, and a half line is read whole on the next run. One run reads
at most :data:`MAX_CHUNK` bytes (a long backlog is taken over several runs), and the path is
opened by the bounded reader, so a FIFO or a device named as the transcript is refused, never
waited on. A line that is not JSON (or nests too deeply to read) is counted and skipped, never
fatal: the hook must not break the agent.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from affidavit.core.regular_file import MIB, open_named

ROLES = ("user", "assistant")
MAX_CHUNK = 64 * MIB
"""The most one run reads: a backlog larger than this is taken over the next runs."""


@dataclass(frozen=True)
class Said:
    """One message's text, who said it and when (the line's ``timestamp``, if any)."""

    role: str
    text: str
    timestamp: str | None


@dataclass(frozen=True)
class Chunk:
    """What a read found: the messages, the offset to start from next time, bad lines."""

    messages: tuple[Said, ...]
    offset: int
    unreadable_lines: int


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    parts = [
        block["text"]
        for block in content
        if isinstance(block, dict)
        and block.get("type") == "text"
        and isinstance(block.get("text"), str)
    ]
    return "\n".join(parts)


def _said(line: Any) -> Said | None:
    if not isinstance(line, dict) or line.get("type") not in ROLES or line.get("isMeta"):
        return None
    message = line.get("message")
    if not isinstance(message, dict):
        return None
    text = _text(message.get("content")).strip()
    if not text:
        return None
    stamp = line.get("timestamp")
    return Said(str(line["type"]), text, stamp if isinstance(stamp, str) else None)


def read_from(path: Path, offset: int) -> Chunk:
    """The messages appended to ``path`` since byte ``offset`` (from 0 if the file shrank)."""
    with open_named(path, None, what="a session transcript (.jsonl)") as handle:
        size = handle.seek(0, 2)
        if offset > size:
            offset = 0  # a new file under the same name
        handle.seek(offset)
        data = handle.read(MAX_CHUNK)
    end = data.rfind(b"\n") + 1
    messages: list[Said] = []
    bad = 0
    if end == 0 and len(data) == MAX_CHUNK:  # one line longer than a whole chunk: skipped
        return Chunk((), offset + len(data), 1)
    for raw in data[:end].splitlines():
        if not raw.strip():
            continue
        try:
            said = _said(json.loads(raw))
        except (ValueError, RecursionError):
            bad += 1
            continue
        if said is not None:
            messages.append(said)
    return Chunk(tuple(messages), offset + end, bad)
