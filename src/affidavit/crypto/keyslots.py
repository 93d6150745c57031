"""Argon2id key slots: the only place a passphrase (and a keyfile) turns into the master key.

A slot stores a salt, the KDF parameters it was made with, and the vault's master key sealed
under the key Argon2id derives from the secret. Parameters live in each slot, so a vault made
with cheap parameters (tests, via an explicit argument) never weakens another vault, and a
later release can raise the defaults for new slots without breaking old ones.

Two-factor slots feed both factors to Argon2id in one unambiguous string, so the requirement
is enforced by the cryptography: the passphrase alone derives a different (useless) key.
"""

from __future__ import annotations

import base64
import hashlib
import json
import secrets
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from nacl.pwhash import argon2id

from affidavit.core.errors import (
    AuthError,
    InputError,
    IntegrityError,
    NotFoundError,
    UnsupportedError,
)
from affidavit.core.regular_file import NotRegularError, TooLargeError, read_regular
from affidavit.crypto import aead

PASSPHRASE = "passphrase"  # noqa: S105 - a slot kind, not a secret
PASSPHRASE_KEYFILE = "passphrase+keyfile"  # noqa: S105 - a slot kind
KINDS = (PASSPHRASE, PASSPHRASE_KEYFILE)
KEYFILE_MIN_BYTES = 32
KEYFILE_MAX_BYTES = 16 * 2**20  # far above any real keyfile; /dev/zero-style input is refused
SLOT_VERSION = 1


@dataclass(frozen=True)
class KdfParams:
    """Argon2id cost parameters; :meth:`default` for real vaults."""

    opslimit: int
    memlimit: int

    @classmethod
    def default(cls) -> KdfParams:
        """libsodium's MODERATE level: about 0.6 s and 256 MiB here (see ADR 0041)."""
        return cls(argon2id.OPSLIMIT_MODERATE, argon2id.MEMLIMIT_MODERATE)

    @classmethod
    def minimum(cls) -> KdfParams:
        """The cheapest legal parameters. For test vaults only: trivial to brute-force."""
        return cls(argon2id.OPSLIMIT_MIN, argon2id.MEMLIMIT_MIN)

    def check(self) -> None:
        """Refuse parameters libsodium would reject, with a clear message."""
        if not argon2id.OPSLIMIT_MIN <= self.opslimit <= argon2id.OPSLIMIT_MAX:
            raise UnsupportedError(f"Argon2id opslimit {self.opslimit} is out of range")
        if not argon2id.MEMLIMIT_MIN <= self.memlimit <= argon2id.MEMLIMIT_MAX:
            raise UnsupportedError(f"Argon2id memlimit {self.memlimit} is out of range")


@dataclass(frozen=True)
class KeySlot:
    """One way to open the vault: a KDF salt and parameters plus the sealed master key."""

    kind: str
    kdf: KdfParams
    salt: bytes
    sealed_master: bytes
    keyfile_hint: str | None = None

    def to_bytes(self) -> bytes:
        """The slot as stored: JSON with a SHA-256 over its own body (catches corruption)."""
        body: dict[str, Any] = {
            "v": SLOT_VERSION,
            "kind": self.kind,
            "kdf": "argon2id13",
            "opslimit": self.kdf.opslimit,
            "memlimit": self.kdf.memlimit,
            "salt": base64.b64encode(self.salt).decode("ascii"),
            "sealed_master": base64.b64encode(self.sealed_master).decode("ascii"),
            "keyfile_hint": self.keyfile_hint,
        }
        raw = json.dumps(body, sort_keys=True, separators=(",", ":"))
        return json.dumps(
            {"body": body, "sha256": hashlib.sha256(raw.encode()).hexdigest()}, sort_keys=True
        ).encode("utf-8")

    @classmethod
    def from_bytes(cls, data: bytes) -> KeySlot:
        """Parse a stored slot; corruption is an :class:`IntegrityError`, not a wrong passphrase."""
        try:
            outer = json.loads(data)
            body = outer["body"]
            raw = json.dumps(body, sort_keys=True, separators=(",", ":"))
            if hashlib.sha256(raw.encode()).hexdigest() != outer["sha256"]:
                raise ValueError("checksum")
            if body["v"] > SLOT_VERSION:
                raise UnsupportedError(
                    "a key slot was written by a newer affidavit", "upgrade affidavit"
                )
            if body["kind"] not in KINDS or body["kdf"] != "argon2id13":
                raise ValueError("kind")
            return cls(
                kind=body["kind"],
                kdf=KdfParams(int(body["opslimit"]), int(body["memlimit"])),
                salt=base64.b64decode(body["salt"], validate=True),
                sealed_master=base64.b64decode(body["sealed_master"], validate=True),
                keyfile_hint=body.get("keyfile_hint"),
            )
        except UnsupportedError:
            raise
        except (ValueError, KeyError, TypeError, UnicodeDecodeError):
            raise IntegrityError(
                "a key slot of the vault is corrupt", "restore the vault from a backup"
            ) from None


def read_keyfile(path: Path) -> bytes:
    """Read a keyfile; refused before any KDF work when it is missing, too short, too large,
    or not a regular file (a FIFO would hang the read, ``/dev/zero`` would never end)."""
    try:
        data = read_regular(Path(path), KEYFILE_MAX_BYTES)
    except FileNotFoundError:
        raise NotFoundError(
            f"keyfile {path} does not exist", "insert the medium that holds it or fix the path"
        ) from None
    except NotRegularError as exc:
        raise AuthError(
            f"keyfile {path} is {exc}, not a regular file", "name the keyfile itself"
        ) from None
    except TooLargeError:
        raise AuthError(
            f"keyfile {path} is larger than {KEYFILE_MAX_BYTES // 2**20} MiB, too large "
            "for a keyfile",
            "name the keyfile the vault was set up with (`affidavit 2fa enable` makes 64 bytes)",
        ) from None
    except OSError as exc:
        raise AuthError(f"cannot read keyfile {path} ({exc.strerror})") from None
    if len(data) < KEYFILE_MIN_BYTES:
        raise AuthError(
            f"keyfile {path} is shorter than {KEYFILE_MIN_BYTES} bytes",
            "use the keyfile the vault was set up with",
        )
    return data


def not_utf8() -> InputError:
    """The error for a passphrase that is not UTF-8 text; it never repeats the passphrase."""
    return InputError(
        "the passphrase is not valid UTF-8 text (typed in a terminal, or set in an "
        "environment variable, in another encoding)",
        "type it in a UTF-8 terminal, or give AFFIDAVIT_PASSPHRASE (AFFIDAVIT_NEW_PASSPHRASE "
        "for a new one) as UTF-8 text",
    )


def _passphrase_bytes(passphrase: str) -> bytes:
    """The passphrase as Argon2id sees it: UTF-8, or one clear error (undecodable bytes reach
    Python as lone surrogates, which have no UTF-8 form and would otherwise crash)."""
    try:
        return passphrase.encode("utf-8")
    except UnicodeEncodeError:
        raise not_utf8() from None


def _kdf_input(passphrase: str, keyfile: bytes | None) -> bytes:
    secret = _passphrase_bytes(passphrase)
    if keyfile is None:
        return b"affidavit-pass-v1\0" + secret
    return (
        b"affidavit-2fa-v1\0"
        + len(secret).to_bytes(4, "big")
        + secret
        + hashlib.sha512(keyfile).digest()
    )


def _slot_ad(vault_id: bytes, kind: str, kdf: KdfParams, salt: bytes) -> bytes:
    return b"|".join(
        [
            b"affidavit-slot-v1",
            vault_id,
            kind.encode(),
            str(kdf.opslimit).encode(),
            str(kdf.memlimit).encode(),
            salt,
        ]
    )


def _derive(passphrase: str, keyfile: bytes | None, kdf: KdfParams, salt: bytes) -> bytes:
    return argon2id.kdf(
        aead.KEY_BYTES,
        _kdf_input(passphrase, keyfile),
        salt,
        opslimit=kdf.opslimit,
        memlimit=kdf.memlimit,
    )


def make_slot(
    master: bytes,
    vault_id: bytes,
    passphrase: str,
    *,
    keyfile: bytes | None = None,
    keyfile_hint: str | None = None,
    kdf: KdfParams | None = None,
) -> KeySlot:
    """Seal ``master`` under a new slot for ``passphrase`` (and ``keyfile`` when given)."""
    if not passphrase:
        raise AuthError("the passphrase is empty", "choose a passphrase")
    params = kdf or KdfParams.default()
    params.check()
    kind = PASSPHRASE if keyfile is None else PASSPHRASE_KEYFILE
    salt = secrets.token_bytes(argon2id.SALTBYTES)
    wrapping = _derive(passphrase, keyfile, params, salt)
    sealed = aead.seal(wrapping, master, _slot_ad(vault_id, kind, params, salt))
    return KeySlot(kind, params, salt, sealed, keyfile_hint if keyfile is not None else None)


def open_slot(
    slot: KeySlot, vault_id: bytes, passphrase: str, keyfile: bytes | None
) -> bytes | None:
    """The master key if the secrets fit ``slot``, else None (the caller words the error)."""
    if (slot.kind == PASSPHRASE_KEYFILE) != (keyfile is not None):
        return None
    slot.kdf.check()
    wrapping = _derive(passphrase, keyfile, slot.kdf, slot.salt)
    try:
        return aead.unseal(
            wrapping, slot.sealed_master, _slot_ad(vault_id, slot.kind, slot.kdf, slot.salt)
        )
    except aead.SealError:
        return None
