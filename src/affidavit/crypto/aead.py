"""Authenticated encryption for everything the vault puts on disk: XChaCha20-Poly1305.

Why XChaCha20: its 192-bit nonce can be drawn at random for every seal without a counter, so
many processes may write to one vault with no coordination and no risk of nonce reuse.
A sealed blob is ``nonce (24 bytes) || ciphertext || tag (16 bytes)``. The associated data
(``ad``) is authenticated but not stored: callers bind each blob to where it lives (vault id,
record id, row fields), so a blob moved or replayed elsewhere fails to open.
"""

from __future__ import annotations

import hashlib
import secrets

from nacl import bindings
from nacl._sodium import ffi, lib

from affidavit.core.errors import IntegrityError

KEY_BYTES = bindings.crypto_aead_xchacha20poly1305_ietf_KEYBYTES
NONCE_BYTES = bindings.crypto_aead_xchacha20poly1305_ietf_NPUBBYTES
TAG_BYTES = bindings.crypto_aead_xchacha20poly1305_ietf_ABYTES
OVERHEAD = NONCE_BYTES + TAG_BYTES

_encrypt = bindings.crypto_aead_xchacha20poly1305_ietf_encrypt
# Opening goes to libsodium through PyNaCl's own cffi module: the public binding re-checks
# every argument with eagerly formatted messages, which tripled the cost of unlocking a
# 100k-record vault (ADR 0042). Lengths are checked here instead.
_decrypt = lib.crypto_aead_xchacha20poly1305_ietf_decrypt


class SealError(IntegrityError):
    """A sealed blob failed authentication: wrong key, tampered bytes, or moved blob."""


def random_key() -> bytes:
    """A fresh 256-bit key from the OS CSPRNG."""
    return secrets.token_bytes(KEY_BYTES)


def seal(key: bytes, plaintext: bytes, ad: bytes = b"") -> bytes:
    """Encrypt and authenticate ``plaintext`` under ``key``, bound to ``ad``."""
    nonce = secrets.token_bytes(NONCE_BYTES)
    return nonce + _encrypt(plaintext, ad, nonce, key)


def unseal(key: bytes, blob: bytes, ad: bytes = b"", *, what: str = "a sealed blob") -> bytes:
    """Open a blob made by :func:`seal`; raise :class:`SealError` naming ``what`` on failure."""
    if len(blob) < OVERHEAD:
        raise SealError(f"{what} is truncated", "restore the vault from a backup")
    if len(key) != KEY_BYTES:
        raise ValueError("an XChaCha20-Poly1305 key is 32 bytes")
    clen = len(blob) - NONCE_BYTES
    out = bytearray(clen - TAG_BYTES)
    rc = _decrypt(
        ffi.from_buffer(out),
        ffi.NULL,
        ffi.NULL,
        blob[NONCE_BYTES:],
        clen,
        ad,
        len(ad),
        blob[:NONCE_BYTES],
        key,
    )
    if rc != 0:
        raise SealError(
            f"{what} failed authentication (tampered or corrupt)",
            "restore the vault from a backup",
        )
    return bytes(out)


def unseal_wrapped(
    wrap_key: bytes, wrapped: bytes, wrapped_ad: bytes, blob: bytes, blob_ad: bytes, *, what: str
) -> bytes:
    """Open ``blob`` with the key sealed in ``wrapped`` (both authenticated), in one call.

    The hot path of unlock: the record key goes from one libsodium call to the next in a
    C buffer, never becoming a Python object.
    """
    if len(wrapped) != OVERHEAD + KEY_BYTES or len(blob) < OVERHEAD:
        raise SealError(f"{what} is truncated", "restore the vault from a backup")
    record_key = ffi.new("unsigned char[]", KEY_BYTES)
    clen = len(blob) - NONCE_BYTES
    out = bytearray(clen - TAG_BYTES)
    if (
        _decrypt(
            record_key,
            ffi.NULL,
            ffi.NULL,
            wrapped[NONCE_BYTES:],
            KEY_BYTES + TAG_BYTES,
            wrapped_ad,
            len(wrapped_ad),
            wrapped[:NONCE_BYTES],
            wrap_key,
        )
        != 0
        or _decrypt(
            ffi.from_buffer(out),
            ffi.NULL,
            ffi.NULL,
            blob[NONCE_BYTES:],
            clen,
            blob_ad,
            len(blob_ad),
            blob[:NONCE_BYTES],
            record_key,
        )
        != 0
    ):
        raise SealError(
            f"{what} failed authentication (tampered or corrupt)",
            "restore the vault from a backup",
        )
    return bytes(out)


def subkey(master: bytes, label: str) -> bytes:
    """Derive an independent 256-bit key for one purpose from ``master`` (keyed BLAKE2b).

    One master key, many subkeys: a key used to wrap record keys is never also used to seal
    the audit log or the header, so no blob of one kind can be passed off as another.
    """
    return hashlib.blake2b(
        label.encode("ascii"), key=master, digest_size=KEY_BYTES, person=b"affidavit-v1"
    ).digest()
