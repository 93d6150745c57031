"""Why a pack is refused, as exceptions of the one core hierarchy.

:class:`PackRefused` is what every caller catches: the CLI prints its one line, the pack server
refuses to start (or returns ``isError``). ``check`` names the step of the ordered verification
that failed, so reports and tests can tell "tampered" from "untrusted" without parsing text.
"""

from __future__ import annotations

from affidavit.core.errors import AuthError, InputError, IntegrityError

# The ordered checks of verification, in the order they run.
CHECK_FILES = "files"
CHECK_CHECKSUMS = "checksums"
CHECK_RECORDS = "records"
CHECK_PACK_JSON = "pack_json"
CHECK_SIGNATURE = "signature"
CHECK_TRUST = "trust"
CHECK_SEQUENCE = "sequence"
CHECK_EXPIRY = "expiry"
CHECKS = (
    CHECK_FILES,
    CHECK_CHECKSUMS,
    CHECK_RECORDS,
    CHECK_PACK_JSON,
    CHECK_SIGNATURE,
    CHECK_TRUST,
    CHECK_SEQUENCE,
    CHECK_EXPIRY,
)


class PackFormatError(InputError):
    """A record, citation, manifest line, date or PACK.json breaks a format rule.

    Raised by :mod:`affidavit.packs.format`; the verifier wraps it in :class:`PackRefused`
    with the file and line, the builder reports it against the user's input line.
    """


class PackRefused(IntegrityError):
    """The pack must not be served: its files, records or signature failed a check."""

    def __init__(self, check: str, message: str, hint: str | None = None) -> None:
        super().__init__(f"pack refused: {message}", hint)
        self.check = check
        self.reason = message


class PackTrustRefused(PackRefused, AuthError):
    """The pack is intact but its signer is revoked, not pinned, untrusted or missing."""

    exit_code = AuthError.exit_code
