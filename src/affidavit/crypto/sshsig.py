"""OpenSSH signatures (SSHSIG, as ``ssh-keygen -Y sign`` writes them): parse, verify, sign.

The format is OpenSSH's PROTOCOL.sshsig. Parsing is strict where OpenSSH is lenient (exact
armor lines, nothing after the footer, an empty reserved field), and the signed data is rebuilt
exactly as ``sshsig.c`` does: ``"SSHSIG" || string(namespace) || string("") ||
string(hash_algorithm) || string(H(message))``. Only Ed25519 signatures verify; other key
types parse far enough to be refused by name.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
from dataclasses import dataclass
from typing import TYPE_CHECKING

from affidavit.core.errors import IntegrityError
from affidavit.crypto.signers import ED25519, KeyFormatError, SshPublicKey, parse_key_blob
from affidavit.crypto.sshwire import WireFormatError, WireReader, put_string

if TYPE_CHECKING:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

MAGIC = b"SSHSIG"
VERSION = 1
BEGIN = "-----BEGIN SSH SIGNATURE-----"
END = "-----END SSH SIGNATURE-----"
HASHES = ("sha512", "sha256")
_ARMOR_WIDTH = 70  # what ssh-keygen writes
_ED25519_SIG_LEN = 64
_B64_CHARS = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=")


class SignatureError(IntegrityError):
    """A signature is malformed, of a refused kind, or does not match the data."""


@dataclass(frozen=True)
class SshSignature:
    """A parsed SSHSIG blob."""

    public_key: SshPublicKey
    namespace: str
    hash_algorithm: str
    signature_type: str
    signature: bytes


def dearmor(text: bytes | str) -> bytes:
    """Return the blob inside ``-----BEGIN SSH SIGNATURE-----`` armor, refusing any slack."""
    if isinstance(text, bytes):
        try:
            text = text.decode("ascii")
        except UnicodeDecodeError as exc:
            raise SignatureError("signature file is not ASCII armor") from exc
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    if len(lines) < 3 or lines[0] != BEGIN:
        raise SignatureError(f"signature file does not start with {BEGIN}")
    if lines[-1] != END:
        raise SignatureError(f"signature file does not end with {END}")
    body = lines[1:-1]
    if any(not line or not _B64_CHARS.issuperset(line.encode("ascii")) for line in body):
        raise SignatureError("signature armor contains a line that is not base64")
    try:
        return binascii.a2b_base64("".join(body).encode("ascii"), strict_mode=True)
    except binascii.Error as exc:
        raise SignatureError(f"signature armor is not valid base64 ({exc})") from exc


def parse_signature(blob: bytes) -> SshSignature:
    """Parse an SSHSIG blob: magic, version 1, key, namespace, reserved, hash, signature."""
    reader = WireReader(blob)
    try:
        if reader.take(len(MAGIC)) != MAGIC:
            raise SignatureError("signature does not start with the SSHSIG magic")
        version = reader.uint32()
        if version != VERSION:
            raise SignatureError(f"signature version {version} is not supported (expected 1)")
        key_blob = reader.string()
        namespace = reader.text()
        reserved = reader.string()
        hash_algorithm = reader.text()
        sig_blob = reader.string()
    except WireFormatError as exc:
        raise SignatureError(f"signature blob is malformed ({exc})") from exc
    if reader.remaining():
        raise SignatureError("signature blob has trailing bytes")
    if reserved:
        raise SignatureError("signature has a non-empty reserved field")
    try:
        key = parse_key_blob(key_blob)
    except KeyFormatError as exc:
        raise SignatureError(f"signature carries a {exc.message}") from exc
    sig_reader = WireReader(sig_blob)
    try:
        signature_type = sig_reader.text()
        signature = sig_reader.string()
    except WireFormatError as exc:
        raise SignatureError(f"signature value is malformed ({exc})") from exc
    if sig_reader.remaining():
        raise SignatureError("signature value has trailing bytes")
    return SshSignature(key, namespace, hash_algorithm, signature_type, signature)


def signed_data(message: bytes, namespace: str, hash_algorithm: str) -> bytes:
    """The exact bytes an SSHSIG signature covers (OpenSSH's ``sshsig_wrap_*``)."""
    if hash_algorithm not in HASHES:
        raise SignatureError(f"signature hash {hash_algorithm!r} is not sha512 or sha256")
    digest = hashlib.new(hash_algorithm, message).digest()
    return (
        MAGIC
        + put_string(namespace)
        + put_string(b"")
        + put_string(hash_algorithm)
        + put_string(digest)
    )


def verify(armored: bytes | str, message: bytes, namespace: str) -> SshSignature:
    """Verify an armored SSHSIG over ``message`` in ``namespace``; return it when valid.

    Raises :class:`SignatureError` with one specific reason otherwise: malformed, a key type
    other than Ed25519, another namespace, an unknown hash, or a signature that does not match.
    """
    sig = parse_signature(dearmor(armored))
    if not sig.public_key.is_ed25519:
        raise SignatureError(
            f"signature is made with a {sig.public_key.key_type} key "
            f"({sig.public_key.fingerprint}); only Ed25519 signers are accepted"
        )
    if sig.signature_type != ED25519 or len(sig.signature) != _ED25519_SIG_LEN:
        raise SignatureError(f"signature value is not an Ed25519 signature ({sig.signature_type})")
    if sig.namespace != namespace:
        raise SignatureError(
            f"signature namespace is {sig.namespace!r}, not {namespace!r}",
            "a signature made for another purpose cannot be reused here",
        )
    data = signed_data(message, namespace, sig.hash_algorithm)
    from cryptography.exceptions import InvalidSignature
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

    try:
        Ed25519PublicKey.from_public_bytes(sig.public_key.ed25519_bytes()).verify(
            sig.signature, data
        )
    except InvalidSignature as exc:
        raise SignatureError(
            f"signature by {sig.public_key.fingerprint} does not match the signed data"
        ) from exc
    return sig


def sign(
    message: bytes,
    private_key: Ed25519PrivateKey,
    namespace: str,
    *,
    hash_algorithm: str = "sha512",
) -> str:
    """Sign ``message`` as ``ssh-keygen -Y sign`` would, returning the armored text.

    Ed25519 is deterministic, so for the same key, namespace and message the output is byte
    for byte what ssh-keygen writes.
    """
    from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

    raw_public = private_key.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)
    key_blob = put_string(ED25519) + put_string(raw_public)
    value = private_key.sign(signed_data(message, namespace, hash_algorithm))
    blob = (
        MAGIC
        + VERSION.to_bytes(4, "big")
        + put_string(key_blob)
        + put_string(namespace)
        + put_string(b"")
        + put_string(hash_algorithm)
        + put_string(put_string(ED25519) + put_string(value))
    )
    encoded = base64.b64encode(blob).decode("ascii")
    lines = [encoded[i : i + _ARMOR_WIDTH] for i in range(0, len(encoded), _ARMOR_WIDTH)]
    return "\n".join([BEGIN, *lines, END]) + "\n"
