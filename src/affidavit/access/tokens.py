"""Bearer tokens for the memory server over HTTP: one per caller, shown once, stored as a hash.

``affidavit grant token CALLER`` makes 32 random bytes, prints them once and seals only their
SHA-256 in the vault's settings (next to the grants, so only someone who can unlock the vault
can issue or revoke one). The token names its caller, and the caller's grants decide the
namespaces, exactly as ``affidavit serve --caller`` does over stdio. A plain hash is enough:
the token has 256 bits of entropy, so there is nothing to guess and no need for a slow hash.
Issuing a new token for a caller replaces the old one; ``--revoke`` removes it, and a running
server refuses it at the next request (it reads the sealed table each time).
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from affidavit.access.grants import Settings, check_name
from affidavit.core.errors import NotFoundError

TOKENS_SETTING = "http.tokens"
PREFIX = "afv_"


@dataclass(frozen=True)
class TokenInfo:
    """What ``--list`` shows about one caller's token (never the token or its hash)."""

    caller: str
    created: str

    def to_json(self) -> dict[str, str]:
        """The one wire shape, for ``--json``."""
        return {"caller": self.caller, "created": self.created}


def digest(token: str) -> str:
    """The SHA-256 (hex) that is sealed for ``token``."""
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def _table(vault: Settings) -> dict[str, dict[str, str]]:
    raw: Any = vault.get_setting(TOKENS_SETTING, {})
    if not isinstance(raw, dict):
        return {}
    return {
        str(caller): {"sha256": str(entry["sha256"]), "created": str(entry.get("created", ""))}
        for caller, entry in raw.items()
        if isinstance(entry, dict) and isinstance(entry.get("sha256"), str)
    }


def issue(vault: Settings, caller: str) -> str:
    """A new token for ``caller`` (replacing any old one); only its hash is stored."""
    check_name(caller, "caller")
    token = PREFIX + secrets.token_urlsafe(32)
    table = _table(vault)
    created = datetime.now(UTC).replace(microsecond=0).isoformat().replace("+00:00", "Z")
    table[caller] = {"sha256": digest(token), "created": created}
    vault.set_setting(TOKENS_SETTING, table)
    return token


def revoke(vault: Settings, caller: str) -> None:
    """Remove ``caller``'s token; NotFoundError when it has none."""
    check_name(caller, "caller")
    table = _table(vault)
    if table.pop(caller, None) is None:
        raise NotFoundError(f"caller {caller!r} has no token", "see `affidavit grant token --list`")
    vault.set_setting(TOKENS_SETTING, table)


def listing(vault: Settings) -> list[TokenInfo]:
    """Every caller that holds a token, by name."""
    return [TokenInfo(caller, entry["created"]) for caller, entry in sorted(_table(vault).items())]


def caller_for(vault: Settings, token: str) -> str | None:
    """The caller ``token`` was issued to, or None (unknown, replaced or revoked).

    Every stored hash is compared in constant time, so the answer's timing says nothing about
    which caller or how much of a hash matched.
    """
    presented = digest(token)
    found = None
    for caller, entry in _table(vault).items():
        if hmac.compare_digest(presented, entry["sha256"]):
            found = caller
    return found
