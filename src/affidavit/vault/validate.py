"""What a record must look like before the vault will seal it.

The vault checks structure (kind, namespace, JSON-ness, size, the two fields every memory
needs); authoring rules such as one claim per memory belong to the recall layer. Errors name
the item's index in its batch, so a caller can fix the one bad entry and resend the batch.
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any

from affidavit.core.canonical import canonical_json
from affidavit.core.errors import InputError

MEMORY = "memory"
MAX_PAYLOAD_BYTES = 1 << 20
MAX_VECTOR_BYTES = 1 << 16
KIND_RE = re.compile(r"[a-z][a-z0-9_-]{0,31}")
INTERNAL_KIND_RE = re.compile(r"_[a-z][a-z0-9_]{0,31}")
NAMESPACE_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.:-]{0,63}")
ID_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.:-]{0,63}")


def check_namespace(namespace: Any, where: str = "") -> str:
    """A namespace is 1-64 letters, digits and ``_.:-``, starting with a letter or digit."""
    if not isinstance(namespace, str) or not NAMESPACE_RE.fullmatch(namespace):
        raise InputError(
            f"{where}namespace {namespace!r} is not valid",
            "use 1-64 letters, digits, '_', '.', ':' or '-', starting with a letter or digit",
        )
    return namespace


def check_id(rid: Any, where: str = "") -> str:
    """An imported id: 1-64 letters, digits and ``_.:-``."""
    if not isinstance(rid, str) or not ID_RE.fullmatch(rid):
        raise InputError(f"{where}id {rid!r} is not valid", "use 1-64 letters, digits, '_.:-'")
    return rid


def check_timestamp(value: Any, where: str = "") -> str:
    """An ISO 8601 timestamp with a time zone (as ``saved_at`` is written)."""
    try:
        parsed = datetime.fromisoformat(value)
    except (TypeError, ValueError):
        parsed = None
    if parsed is None or parsed.tzinfo is None:
        raise InputError(
            f"{where}saved_at {value!r} is not an ISO 8601 time with a zone",
            "write it like 2026-01-31T12:00:00Z",
        )
    return str(value)


#: The optional fields that make a memory a turn of a conversation (vault/conversation.py).
STRUCTURE_FIELDS = ("thread", "turn", "reply_to")
MAX_TURN = 10**9


def check_structure(fields: dict[str, Any], where: str = "") -> dict[str, Any]:
    """The conversation fields of one memory, checked; absent (or null) ones left out.

    ``thread`` names the conversation a memory is a turn of; ``turn`` orders it there and
    ``reply_to`` names the memory it answers. Both need a thread: a standalone memory has
    no conversation structure (ADR 55).
    """
    out = {name: fields[name] for name in STRUCTURE_FIELDS if fields.get(name) is not None}
    if not out:
        return out
    thread = out.get("thread")
    if thread is None:
        raise InputError(
            f"{where}{' and '.join(out)} need a thread",
            "give the conversation a 'thread' name, or leave turn and reply_to out",
        )
    if not isinstance(thread, str) or not ID_RE.fullmatch(thread):
        raise InputError(
            f"{where}thread {thread!r} is not valid",
            "use 1-64 letters, digits, '_', '.', ':' or '-', starting with a letter or digit",
        )
    turn = out.get("turn")
    if turn is not None and (
        isinstance(turn, bool) or not isinstance(turn, int) or not 0 <= turn <= MAX_TURN
    ):
        raise InputError(f"{where}turn must be a whole number from 0 to {MAX_TURN}")
    if "reply_to" in out:
        try:
            check_id(out["reply_to"], where)
        except InputError:
            raise InputError(
                f"{where}reply_to {out['reply_to']!r} is not a memory id",
                "pass the id of the memory this one answers",
            ) from None
    return out


def check_item(
    kind: Any, namespace: Any, data: Any, vector: Any, where: str = "", *, internal: bool = False
) -> int:
    """Validate one record's parts; return the size of its JSON (for the payload limit)."""
    pattern = INTERNAL_KIND_RE if internal else KIND_RE
    if not isinstance(kind, str) or not pattern.fullmatch(kind):
        raise InputError(f"{where}kind {kind!r} is not valid", "use a lowercase word like 'memory'")
    check_namespace(namespace, where)
    if not isinstance(data, dict):
        raise InputError(f"{where}data must be a JSON object")
    if kind == MEMORY:
        for name in ("text", "source"):
            value = data.get(name)
            if not isinstance(value, str) or not value.strip():
                raise InputError(
                    f"{where}a memory needs a non-empty '{name}'",
                    "say what the memory is"
                    if name == "text"
                    else "say where it came from, e.g. 'from chat' or 'read from README.md'",
                )
        tags = data.get("tags", [])
        if not isinstance(tags, list) or not all(isinstance(t, str) and t for t in tags):
            raise InputError(f"{where}tags must be a list of non-empty strings")
        check_structure(data, where)
    try:
        size = len(canonical_json(data))
    except (TypeError, ValueError) as exc:
        raise InputError(f"{where}data is not plain JSON ({exc})") from None
    if size > MAX_PAYLOAD_BYTES:
        raise InputError(
            f"{where}the record is {size} bytes; the limit is {MAX_PAYLOAD_BYTES}",
            "split it into smaller records",
        )
    if vector is not None and (
        not isinstance(vector, bytes | bytearray) or len(vector) > MAX_VECTOR_BYTES
    ):
        raise InputError(f"{where}vector must be bytes of at most {MAX_VECTOR_BYTES}")
    return size
