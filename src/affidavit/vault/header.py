"""The vault's identity on disk: file names, format version, schema, and the sealed anchor.

The SQLite file carries ``application_id`` (``AFDV``) and ``user_version`` (the format
version) in its own 100-byte header, so a foreign file or a vault from a newer release is
refused before any table is read. The ``header`` row holds the random vault id and the
*anchor*: a blob sealed under a master-derived key with the audit head, the audit length, the
last sequence number and the number of record rows. Every write transaction rewrites it, so
truncating the audit log or dropping a record row is caught by comparison with the anchor.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from typing import Any

from affidavit.core.errors import IntegrityError
from affidavit.core.hashchain import GENESIS
from affidavit.crypto import aead

DB_NAME = "vault.db"
APPLICATION_ID = 0x41464456  # "AFDV"
FORMAT_VERSION = 1
MAGIC = "affidavit-vault"

SCHEMA = """
CREATE TABLE header (
  id INTEGER PRIMARY KEY CHECK (id = 1),
  magic TEXT NOT NULL,
  format INTEGER NOT NULL,
  vault_id BLOB NOT NULL,
  anchor BLOB NOT NULL
);
CREATE TABLE slots (
  slot INTEGER PRIMARY KEY,
  body BLOB NOT NULL
);
CREATE TABLE records (
  rid TEXT PRIMARY KEY,
  seq INTEGER NOT NULL UNIQUE,
  state INTEGER NOT NULL,
  wkey BLOB NOT NULL,
  blob BLOB
) WITHOUT ROWID;
CREATE TABLE audit (
  n INTEGER PRIMARY KEY,
  blob BLOB NOT NULL
);
"""


@dataclass(frozen=True)
class Anchor:
    """What the header vouches for; compared with the tables on open and by audit verify."""

    seq: int = 0
    audit_n: int = 0
    audit_head: str = GENESIS
    rows: int = 0

    def seal(self, key: bytes, vault_id: bytes) -> bytes:
        """The anchor as stored in the header row."""
        return aead.seal(key, json.dumps(asdict(self), sort_keys=True).encode(), _ad(vault_id))

    @classmethod
    def unseal(cls, key: bytes, vault_id: bytes, blob: bytes) -> Anchor:
        """Open the stored anchor; any tampering is an :class:`IntegrityError`."""
        raw = aead.unseal(key, blob, _ad(vault_id), what="the vault header anchor")
        try:
            fields: dict[str, Any] = json.loads(raw)
            return cls(**fields)
        except (ValueError, TypeError):
            raise IntegrityError("the vault header anchor is unreadable") from None


def _ad(vault_id: bytes) -> bytes:
    return b"affidavit-anchor-v1|" + vault_id + b"|" + str(FORMAT_VERSION).encode()
