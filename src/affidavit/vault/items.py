"""The value types of the vault API: what goes in, what comes out, what changed."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from affidavit.core.errors import NotFoundError


@dataclass(frozen=True, slots=True)
class VaultItem:
    """One live record as held in RAM after unlock.

    ``id`` is random (never derived from content); ``seq`` is the vault-wide sequence number
    of this version; ``saved_at`` is when the record was first stored (UTC, ISO 8601);
    ``data`` is the JSON the caller stored (a memory has at least ``text`` and ``source``);
    ``vector`` is the embedding, sealed together with ``data``.
    """

    id: str
    kind: str
    namespace: str
    seq: int
    saved_at: str
    data: dict[str, Any]
    vector: bytes | None = None

    def as_dict(self) -> dict[str, Any]:
        """The item as JSON (vector left out; export adds it encoded)."""
        return {
            "id": self.id,
            "kind": self.kind,
            "namespace": self.namespace,
            "seq": self.seq,
            "saved_at": self.saved_at,
            "data": self.data,
        }


@dataclass(frozen=True, slots=True)
class NewItem:
    """A record to store. ``saved_at`` is set only by import; ``id`` by import, or by a
    caller that must name the record in the same write (a correction), else generated."""

    data: dict[str, Any]
    kind: str = "memory"
    namespace: str = "default"
    vector: bytes | None = None
    id: str | None = None
    saved_at: str | None = None


@dataclass(frozen=True, slots=True)
class Change:
    """One change picked up from the log: ``put`` (new or new version), ``forget``, ``shred``.

    ``item`` is the new version for ``put`` and None otherwise.
    """

    op: str
    id: str
    seq: int
    item: VaultItem | None


def unknown_record(item_id: str) -> NotFoundError:
    """The one answer for an id the vault does not hold.

    Also the answer for a record a caller may not see (:class:`affidavit.access.Access`), so
    the two cannot be told apart: the same words, byte for byte.
    """
    return NotFoundError(
        f"no record {item_id} in this vault", "check the id: search and recent list memory ids"
    )
