"""The one exception hierarchy.

Every failure a user can act on is an :class:`AffidavitError`. Its ``str()`` is a single
line: what went wrong, then what to do about it. The CLI prints that line to stderr and
exits with the class's ``exit_code``; MCP servers put it in an ``isError`` result. Messages
must never contain a secret (passphrase, key material, token, header value).
"""

from __future__ import annotations


class AffidavitError(Exception):
    """A failure the user can understand and act on."""

    exit_code = 1

    def __init__(self, message: str, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint

    def __str__(self) -> str:
        if self.hint:
            return f"{self.message}; {self.hint}"
        return self.message


class UsageError(AffidavitError):
    """The command line or a tool call was malformed (unknown flag, bad value)."""

    exit_code = 2


class InputError(AffidavitError):
    """Input data broke a rule (a bad record, a quote not found, an invalid policy file)."""

    exit_code = 2


class NotFoundError(AffidavitError):
    """Something named does not exist (a vault, a record id, a pack directory)."""

    exit_code = 3


class ConflictError(AffidavitError):
    """The operation would overwrite or contradict something that exists."""

    exit_code = 4


class IntegrityError(AffidavitError):
    """Bytes on disk or on the wire failed a check: tampered, corrupt, truncated, refused."""

    exit_code = 5


class AuthError(AffidavitError):
    """A secret was wrong or missing: passphrase, keyfile, unlock credential, signature trust."""

    exit_code = 6


class LockedError(AuthError):
    """The vault is locked; the user must unlock it first."""


class PolicyError(AffidavitError):
    """A policy refused the operation (denied tool call, read-only namespace, sandbox)."""

    exit_code = 7


class ExternalError(AffidavitError):
    """A program or service we depend on failed (ssh-keygen, git, a backend server)."""

    exit_code = 8


class UnsupportedError(AffidavitError):
    """The data was written by a newer version, or needs a feature this build lacks."""

    exit_code = 9


class Interrupted(AffidavitError):
    """Work stopped early because whoever asked for it cancelled it or went away."""

    exit_code = 130
