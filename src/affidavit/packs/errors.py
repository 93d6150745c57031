"""Why a pack is refused, as exceptions of the one core hierarchy.

:class:`PackRefused` is what every caller catches: the CLI prints its one line, the pack server
refuses to start (or returns ``isError``). ``check`` names the step of the ordered verification
that failed, so reports and tests can tell "tampered" from "untrusted" without parsing text.
"""

from __future__ import annotations

from enum import StrEnum

from affidavit.core.errors import AuthError, InputError, IntegrityError


class Check(StrEnum):
    """The ordered checks of verification, in the order they run: a refusal names the one
    that failed (``refusal.check``, ``"check"`` in ``pack verify --json``), so reports and
    tests tell "tampered" from "untrusted" without parsing text."""

    FILES = "files"
    CHECKSUMS = "checksums"
    RECORDS = "records"
    PACK_JSON = "pack_json"
    SIGNATURE = "signature"
    TRUST = "trust"
    SEQUENCE = "sequence"
    EXPIRY = "expiry"


class PackFormatError(InputError):
    """A record, citation, manifest line, date or PACK.json breaks a format rule.

    Raised by :mod:`affidavit.packs.format`; the verifier wraps it in :class:`PackRefused`
    with the file and line, the builder reports it against the user's input line.
    """


class PackRefused(IntegrityError):
    """The pack must not be served: its files, records or signature failed a check."""

    def __init__(self, check: Check, message: str, hint: str | None = None) -> None:
        super().__init__(f"pack refused: {message}", hint)
        self.check = check
        self.reason = message


class PackTrustRefused(PackRefused, AuthError):
    """The pack is intact but its signer is revoked, not pinned, untrusted or missing."""

    exit_code = AuthError.exit_code
