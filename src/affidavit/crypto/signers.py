"""OpenSSH public keys, fingerprints, allowed_signers and revoked-keys files.

Fingerprints are exactly what ``ssh-keygen -l`` prints (``SHA256:`` and unpadded base64 of the
SHA-256 of the key blob), so a user can compare them by eye. The trust files are parsed
strictly: a line we do not understand is an error naming the file and line, because silently
skipping a trust entry would change who is trusted.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from affidavit.core.errors import InputError
from affidavit.core.regular_file import MIB, NotRegularError, TooLargeError, read_regular
from affidavit.crypto.sshwire import WireFormatError, WireReader

TRUST_FILE_MAX_BYTES = 16 * MIB
"""The largest public key, trusted-keys or revoked-keys file read (thousands of keys fit)."""

ED25519 = "ssh-ed25519"
ED25519_KEY_LEN = 32
FINGERPRINT_RE = re.compile(r"SHA256:[A-Za-z0-9+/]{43}")
# A principal that ssh-keygen would not treat as a list or a pattern.
_NAME_RE = re.compile(r"[^\s,*?!\"#]+")
_COMMENT_NAME_RE = re.compile(r"[^A-Za-z0-9._@+-]+")


class KeyFormatError(InputError):
    """A public key, trust file or fingerprint is malformed."""


@dataclass(frozen=True)
class SshPublicKey:
    """An OpenSSH public key: its type, its wire blob and an optional comment."""

    key_type: str
    blob: bytes
    comment: str = ""

    @property
    def fingerprint(self) -> str:
        """``SHA256:...`` exactly as ``ssh-keygen -l`` prints it."""
        return fingerprint_of(self.blob)

    @property
    def is_ed25519(self) -> bool:
        """Whether this is the only key type packs accept."""
        return self.key_type == ED25519

    def ed25519_bytes(self) -> bytes:
        """The raw 32-byte Ed25519 public key (the blob was checked at parse time)."""
        if not self.is_ed25519:
            raise KeyFormatError(f"{self.key_type} key is not an Ed25519 key")
        return self.blob[-ED25519_KEY_LEN:]

    def openssh(self) -> str:
        """The ``ssh-ed25519 AAAA...`` form, without the comment."""
        return f"{self.key_type} {base64.b64encode(self.blob).decode('ascii')}"

    def principal_name(self) -> str:
        """A single-word allowed_signers name derived from the comment (for printed lines)."""
        name = _COMMENT_NAME_RE.sub("-", self.comment).strip("-")
        return name or "pack-signer"


def fingerprint_of(blob: bytes) -> str:
    """The SHA256 fingerprint of a key blob, as ``ssh-keygen -l`` prints it."""
    digest = hashlib.sha256(blob).digest()
    return "SHA256:" + base64.b64encode(digest).decode("ascii").rstrip("=")


def is_fingerprint(text: str) -> bool:
    """Whether ``text`` is a well-formed SHA256 fingerprint (43 base64 chars of 32 bytes)."""
    if not FINGERPRINT_RE.fullmatch(text):
        return False
    try:
        return len(base64.b64decode(text[7:] + "=", validate=True)) == ED25519_KEY_LEN
    except binascii.Error:
        return False


def parse_key_blob(blob: bytes) -> SshPublicKey:
    """Parse a wire-format public key; Ed25519 blobs are checked completely.

    Other key types are returned with their type name only, so the caller can refuse them with
    a message that names the type instead of a vague "malformed key".
    """
    reader = WireReader(blob)
    try:
        key_type = reader.text()
        if key_type == ED25519:
            raw = reader.string()
            if len(raw) != ED25519_KEY_LEN or reader.remaining():
                raise WireFormatError("bad Ed25519 key length")
    except WireFormatError as exc:
        raise KeyFormatError(f"malformed public key blob ({exc})") from exc
    if not key_type:
        raise KeyFormatError("malformed public key blob (empty key type)")
    return SshPublicKey(key_type=key_type, blob=blob)


def _key_from_fields(key_type: str, b64: str, comment: str, where: str) -> SshPublicKey:
    try:
        blob = base64.b64decode(b64, validate=True)
    except binascii.Error as exc:
        raise KeyFormatError(f"{where}: the key is not valid base64") from exc
    try:
        key = parse_key_blob(blob)
    except KeyFormatError as exc:
        raise KeyFormatError(f"{where}: {exc.message}") from exc
    if key.key_type != key_type:
        raise KeyFormatError(f"{where}: the line says {key_type} but the key is {key.key_type}")
    return SshPublicKey(key_type=key.key_type, blob=key.blob, comment=comment)


def parse_public_key(text: str, where: str = "public key") -> SshPublicKey:
    """Parse one OpenSSH public key line (``TYPE BASE64 [comment]``), as in a ``.pub`` file."""
    lines = [line for line in text.splitlines() if line.strip()]
    if len(lines) != 1:
        raise KeyFormatError(f"{where}: expected exactly one 'TYPE BASE64 [comment]' line")
    fields = lines[0].strip().split(None, 2)
    if len(fields) < 2:
        raise KeyFormatError(f"{where}: expected 'TYPE BASE64 [comment]'")
    comment = fields[2] if len(fields) == 3 else ""
    return _key_from_fields(fields[0], fields[1], comment, where)


def read_public_key(path: Path) -> SshPublicKey:
    """Read and parse a ``.pub`` file."""
    return parse_public_key(_read_text(path, "public key file"), str(path))


@dataclass(frozen=True)
class AllowedSigner:
    """One allowed_signers entry: the name the user gave a trusted Ed25519 key."""

    name: str
    key: SshPublicKey


def _entry_lines(text: str) -> Iterator[tuple[int, str]]:
    """``(line number, stripped line)`` of each entry in a trust file; blank lines and ``#``
    comments are skipped, as ssh-keygen does, while the numbers stay true for error messages."""
    for number, raw_line in enumerate(text.splitlines(), start=1):
        line = raw_line.strip()
        if line and not line.startswith("#"):
            yield number, line


def parse_allowed_signers(text: str, source: str) -> tuple[AllowedSigner, ...]:
    """Parse ``name ssh-ed25519 AAAA... [comment]`` lines; blanks and ``#`` comments allowed.

    Options, principal lists, patterns and non-Ed25519 keys are refused: a pack signer is one
    named Ed25519 key, and anything looser would widen trust beyond what the line says.
    """
    signers: list[AllowedSigner] = []
    for number, line in _entry_lines(text):
        where = f"{source} line {number}"
        fields = line.split(None, 3)
        if len(fields) < 3:
            raise KeyFormatError(
                f"{where}: expected 'name ssh-ed25519 AAAA... [comment]'",
                "write one signer per line: a name, the key type and the base64 key",
            )
        name, key_type, b64 = fields[0], fields[1], fields[2]
        if not _NAME_RE.fullmatch(name):
            raise KeyFormatError(
                f"{where}: signer name {name!r} must be one name (no lists, patterns or quotes)"
            )
        if key_type != ED25519:
            raise KeyFormatError(
                f"{where}: expected 'name ssh-ed25519 AAAA... [comment]', found {key_type!r}",
                "only single-name ssh-ed25519 entries are accepted (no options, no other types)",
            )
        comment = fields[3] if len(fields) == 4 else ""
        signers.append(AllowedSigner(name, _key_from_fields(key_type, b64, comment, where)))
    return tuple(signers)


def read_allowed_signers(path: Path) -> tuple[AllowedSigner, ...]:
    """Read and parse an allowed_signers (trusted keys) file."""
    return parse_allowed_signers(_read_text(path, "trusted keys file"), str(path))


def parse_revoked_keys(text: str, source: str) -> frozenset[str]:
    """Parse a revoked-keys file: one ``SHA256:...`` fingerprint per line, optional comment."""
    revoked: set[str] = set()
    for number, line in _entry_lines(text):
        token = line.split(None, 1)[0]
        if not is_fingerprint(token):
            raise KeyFormatError(
                f"{source} line {number}: {token[:60]!r} is not a SHA256 fingerprint",
                "list fingerprints as `ssh-keygen -l -f KEY.pub` prints them (SHA256:...)",
            )
        revoked.add(token)
    return frozenset(revoked)


def read_revoked_keys(path: Path) -> frozenset[str]:
    """Read and parse a revoked-keys file."""
    return parse_revoked_keys(_read_text(path, "revoked keys file"), str(path))


def _read_text(path: Path, what: str) -> str:
    """A key or trust file, through the bounded reader (no FIFO, device or huge file)."""
    try:
        data = read_regular(Path(path), TRUST_FILE_MAX_BYTES)
    except FileNotFoundError as exc:
        raise KeyFormatError(f"{what} {path} does not exist", "check the path") from exc
    except (NotRegularError, TooLargeError) as exc:
        raise KeyFormatError(f"{what} {path} is {exc}, not a key file", "name the file") from exc
    except OSError as exc:
        raise KeyFormatError(f"cannot read {what} {path}: {exc.strerror}") from exc
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise KeyFormatError(f"{what} {path} is not valid UTF-8") from exc
