"""What ``status`` says about a vault: JSON values, the same for ``status --json`` and any caller.

They are TypedDicts because JSON is the point: ``status --json`` prints one as it is, and the
memory server reads its fields. Nothing secret is in either: ids, counts, sizes and the
audit head (a hash), never a key or a record.
"""

from __future__ import annotations

from typing import Literal, TypedDict


class SessionState(TypedDict):
    """The unlock session as status shows it: open or not, one-time, where its secret is."""

    session: Literal["locked", "unlocked"]
    once: bool
    store: str | None


class AuditHead(TypedDict):
    """How long the audit chain is and the hash of its last entry."""

    entries: int
    head: str


class LockedStatus(SessionState):
    """What can be said about a vault without its key (``Vault`` could not be opened)."""

    path: str
    state: Literal["locked", "unlocked"]
    format: int
    vault_id: str
    size_bytes: int


class VaultStatus(LockedStatus):
    """An open vault's state: counts per namespace and kind, the audit head, the settings."""

    unlocked_by: Literal["session", "passphrase"]
    records: int
    namespaces: dict[str, int]
    kinds: dict[str, int]
    forgotten: int
    shredded: int
    seq: int
    audit: AuditHead
    auto_lock_minutes: int | None
