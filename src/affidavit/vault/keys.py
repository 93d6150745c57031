"""The keys one unlocked vault holds in RAM, all derived from the master key.

Each purpose gets its own subkey (see :func:`affidavit.crypto.aead.subkey`), so a wrapped
record key, an audit entry and the anchor can never be confused for one another.
"""

from __future__ import annotations

import hashlib
import hmac
from dataclasses import dataclass

from affidavit.crypto import aead


@dataclass(frozen=True)
class VaultKeys:
    """Subkeys of one vault's master key."""

    master: bytes
    wrap: bytes  # wraps each record's own key and authenticates the record row
    audit: bytes  # seals audit entries
    anchor: bytes  # seals the header anchor
    names: bytes  # turns setting names into record ids (no name is readable on disk)

    @classmethod
    def derive(cls, master: bytes) -> VaultKeys:
        """All subkeys of ``master``."""
        return cls(
            master=master,
            wrap=aead.subkey(master, "record-wrap"),
            audit=aead.subkey(master, "audit"),
            anchor=aead.subkey(master, "anchor"),
            names=aead.subkey(master, "names"),
        )

    def name_id(self, namespace: str, name: str) -> str:
        """A stable, unguessable record id for a named internal record (a setting)."""
        mac = hmac.new(self.names, f"{namespace}\0{name}".encode(), hashlib.sha256).digest()
        return "s" + mac[:10].hex()
