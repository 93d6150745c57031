"""The input of ``pack build --from-vault``: a namespace's memories as messages and records.

A pack record must quote its evidence verbatim from a source message. A memory's only
evidence is its own text, so each memory becomes one message (its text, said by its source,
dated the day it was learned or saved) and one record that quotes that whole text. The
builder of the evidence plane then checks every quote as for any other pack.

Which memories may go into a pack: live ones (not superseded, not expired) the caller may
read, in the namespace asked for, that are not quarantined (their source was untrusted, and
signing a pack vouches for its content). A pack's own namespace is refused: an installed
pack is republished by its signer, not rebuilt from a copy.

A memory whose evidence is proven at build time carries it into its record as ``proof``
(docs/evidence.md): the format keeps fields beyond the required ones (``evidence`` is the
format's own: the verbatim citations), so the pack still verifies as any other and a host's
``verified_memory_get`` returns it. A pack citation goes as it is; a receipt names a local
audit log, so the record carries the entry's hash and what the proxy verified (tool,
verifier, claim, what it observed, when), not the log's path. A memory whose evidence is
stale goes in without it, and the builder says so.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from affidavit.core.clock import utc_iso
from affidavit.core.errors import InputError, UsageError
from affidavit.recall.installed_packs import is_pack_namespace
from affidavit.recall.kinds import MemoryKind

if TYPE_CHECKING:
    from affidavit.recall.memory import Memory

MAX_SPEAKER = 200
PROOF = "proof"
"""The record field that carries a memory's proven evidence."""


@dataclass(frozen=True)
class PackSource:
    """The builder's two inputs, the memories left out with the reason, each proven
    memory's ``proof`` by record_id, and the memories packed without their stale evidence."""

    messages: bytes
    records: bytes
    skipped: tuple[tuple[str, str], ...]
    proofs: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    unproven: tuple[tuple[str, str], ...] = ()


def _date(view: dict[str, object]) -> str:
    if view.get("discovered"):
        return f"{view['discovered']}T00:00:00Z"
    return f"{str(view['saved_at'])[:19]}Z"


def _proof_item(item: Mapping[str, Any]) -> dict[str, Any]:
    """One proven evidence item as a published record carries it."""
    if item.get("type") != "receipt":
        return dict(item)
    from affidavit.proxy import check_receipt

    entry = check_receipt(Path(item["log"]), item["entry"]).entry or {}
    return {
        "type": "receipt",
        "entry": item["entry"],
        "verdict": entry.get("verdict"),
        "tool": entry.get("tool"),
        "verifier": entry.get("verifier"),
        "claim": entry.get("claim"),
        "observed": [e.get("observed") for e in entry.get("evidence") or [] if isinstance(e, dict)],
        "verified_utc": entry.get("ts"),
    }


def _proof(evidence: Mapping[str, Any], now: str) -> dict[str, Any]:
    """A proven memory's evidence as its record's ``proof``."""
    items: Sequence[Mapping[str, Any]] = evidence["items"]
    return {"status": "proven", "checked_utc": now, "items": [_proof_item(i) for i in items]}


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
    proofs: dict[str, dict[str, Any]] = {}
    unproven: list[tuple[str, str]] = []
    now = utc_iso(timespec="seconds")
    for view in memory.recent(limit=10**9, namespace=namespace)[::-1]:  # oldest first
        if view.get("quarantined"):
            skipped.append((view["id"], "quarantined: its source is untrusted"))
            continue
        number = len(messages) + 1
        text = view["text"]
        source = str(view.get("source") or "memory")[:MAX_SPEAKER]
        message = {"id": number, "date": _date(dict(view)), "speaker": source, "text": text}
        record_id = f"M-{view['id']}"
        record = {
            "record_id": record_id,
            "role": "user",
            "topic": (view.get("tags") or [namespace])[0],
            "category": view.get("kind", MemoryKind.FACT),
            "statement": text,
            "quotes": [{"message_id": number, "quote": text}],
        }
        messages.append(json.dumps(message, ensure_ascii=False))
        records.append(json.dumps(record, ensure_ascii=False))
        evidence = view.get("evidence")
        if evidence and evidence["status"] == "proven":
            proofs[record_id] = {PROOF: _proof(evidence, now)}
        elif evidence:
            why = "; ".join(evidence.get("reasons") or [evidence["status"]])
            unproven.append((view["id"], f"its evidence no longer holds ({why})"))
    if not records:
        raise InputError(
            f"namespace {namespace} holds no memory that may go into a pack",
            "store memories there first (quarantined ones are left out)",
        )
    return PackSource(
        "\n".join(messages).encode() + b"\n",
        "\n".join(records).encode() + b"\n",
        tuple(skipped),
        proofs,
        tuple(unproven),
    )
