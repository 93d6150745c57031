"""The input of ``pack build --from-vault``: a namespace's memories as messages and records.

A pack record must quote its evidence verbatim from a source message. A memory's only
evidence is its own text, so each memory becomes one message (its text, said by its source,
dated the day it was learned or saved) and one record that quotes that whole text. The
builder of the evidence plane then checks every quote as for any other pack.

Which memories may go into a pack: live ones (not superseded, not expired) the caller may
read, in the namespace asked for, that are not quarantined (their source was untrusted, and
signing a pack vouches for its content). A pack's own namespace is refused: an installed
pack is republished by its signer, not rebuilt from a copy.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING

from affidavit.core.errors import InputError, UsageError
from affidavit.recall.installed_packs import is_pack_namespace

if TYPE_CHECKING:
    from affidavit.recall.memory import Memory

MAX_SPEAKER = 200


@dataclass(frozen=True)
class PackSource:
    """The builder's two inputs, and the memories left out with the reason."""

    messages: bytes
    records: bytes
    skipped: tuple[tuple[str, str], ...]


def _date(view: dict[str, object]) -> str:
    if view.get("discovered"):
        return f"{view['discovered']}T00:00:00Z"
    return f"{str(view['saved_at'])[:19]}Z"


def pack_source(memory: Memory, namespace: str) -> PackSource:
    """Messages and records for the memories of ``namespace`` that may go into a pack."""
    if is_pack_namespace(namespace):
        raise UsageError(
            f"{namespace} is an installed pack", "a pack is republished by its own signer"
        )
    memory.access.grants().require_read(memory.access.caller, namespace)
    messages: list[str] = []
    records: list[str] = []
    skipped: list[tuple[str, str]] = []
    for view in memory.recent(limit=10**9, namespace=namespace)[::-1]:  # oldest first
        if view.get("quarantined"):
            skipped.append((view["id"], "quarantined: its source is untrusted"))
            continue
        number = len(messages) + 1
        text = view["text"]
        source = str(view.get("source") or "memory")[:MAX_SPEAKER]
        message = {"id": number, "date": _date(dict(view)), "speaker": source, "text": text}
        record = {
            "record_id": f"M-{view['id']}",
            "role": "user",
            "topic": (view.get("tags") or [namespace])[0],
            "category": view.get("kind", "fact"),
            "statement": text,
            "quotes": [{"message_id": number, "quote": text}],
        }
        messages.append(json.dumps(message, ensure_ascii=False))
        records.append(json.dumps(record, ensure_ascii=False))
    if not records:
        raise InputError(
            f"namespace {namespace} holds no memory that may go into a pack",
            "store memories there first (quarantined ones are left out)",
        )
    return PackSource(
        "\n".join(messages).encode() + b"\n",
        "\n".join(records).encode() + b"\n",
        tuple(skipped),
    )
