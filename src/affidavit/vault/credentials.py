"""The vault's credentials: the key slots, and how a passphrase (+ keyfile) or the unlock
session becomes the master key.

Why a module of its own: the sealed log (:mod:`.vault`) needs the master key and nothing
else about how it was obtained. Which secret opens which slot, where a two-factor vault's
keyfile is looked for, how a failure is worded without ever naming the secret, and what a
new slot is made from are one job, and were 150 lines of ``Vault`` before issue 25. The bytes
on disk (``crypto/keyslots.py``) are unchanged.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from affidavit.core.errors import AuthError, IntegrityError, LockedError
from affidavit.crypto import keyslots
from affidavit.crypto.keyslots import KdfParams, KeySlot
from affidavit.crypto.passphrases import from_env
from affidavit.vault import session

PASSPHRASE_ENV = "AFFIDAVIT_PASSPHRASE"  # noqa: S105 - a variable name
KEYFILE_ENV = "AFFIDAVIT_KEYFILE"


@dataclass(frozen=True)
class Unlocked:
    """What opening the key slots (or the session) yields: the master key, the keyfile that
    helped (None without one), the live session it came from (None: a passphrase), and the
    KDF cost new slots keep."""

    master: bytes
    keyfile: Path | None
    session: session.Session | None
    kdf: KdfParams


def new_slot(
    master: bytes, vault_id: bytes, passphrase: str, *, keyfile: Path | None, kdf: KdfParams
) -> KeySlot:
    """A key slot wrapping ``master`` under ``passphrase`` (+ the keyfile's bytes, whose
    resolved path is kept as the hint where to look for it next time)."""
    return keyslots.make_slot(
        master,
        vault_id,
        passphrase,
        keyfile=keyslots.read_keyfile(keyfile) if keyfile is not None else None,
        keyfile_hint=str(Path(keyfile).resolve()) if keyfile is not None else None,
        kdf=kdf,
    )


def parse_slots(directory: Path, bodies: Sequence[bytes]) -> list[KeySlot]:
    """The stored slots; IntegrityError when there is none (nothing could ever open it)."""
    slots = [KeySlot.from_bytes(body) for body in bodies]
    if not slots:
        raise IntegrityError(f"the vault at {directory} has no key slots", "restore a backup")
    return slots


def unlock(
    directory: Path,
    vault_id: bytes,
    slots: list[KeySlot],
    *,
    passphrase: str | None,
    keyfile: Path | None,
    consume_once: bool,
) -> Unlocked:
    """The master key from ``passphrase`` (else ``AFFIDAVIT_PASSPHRASE``), or else from the
    live unlock session (``consume_once=False`` leaves a one-time session for the command it
    is meant for). LockedError with no secret and no session, AuthError for a wrong one."""
    secret = passphrase if passphrase is not None else from_env(PASSPHRASE_ENV)
    if secret is not None:
        master, used = _open_slots(slots, vault_id, secret, keyfile)
        return Unlocked(master, used, None, slots[0].kdf)
    live = session.load(directory, vault_id, consume=consume_once)
    if live is None:
        raise LockedError(
            f"the vault at {directory} is locked",
            "run `affidavit unlock` (or set AFFIDAVIT_PASSPHRASE for one process)",
        )
    return Unlocked(live.master, None, live, slots[0].kdf)


def _open_slots(
    slots: list[KeySlot], vault_id: bytes, passphrase: str, keyfile: Path | None
) -> tuple[bytes, Path | None]:
    """Try each slot with the secrets at hand; word the failure precisely, never the secret."""
    needs_keyfile = any(s.kind == keyslots.PASSPHRASE_KEYFILE for s in slots)
    keyfile_bytes = None
    chosen = None
    if needs_keyfile:
        chosen = _keyfile_to_try(slots, keyfile)
        if chosen is not None:
            keyfile_bytes = keyslots.read_keyfile(chosen)
    for slot in slots:
        use = keyfile_bytes if slot.kind == keyslots.PASSPHRASE_KEYFILE else None
        if slot.kind == keyslots.PASSPHRASE_KEYFILE and use is None:
            continue
        master = keyslots.open_slot(slot, vault_id, passphrase, use)
        if master is not None:
            return master, chosen if use is not None else None
    if (
        needs_keyfile
        and keyfile_bytes is None
        and all(s.kind == keyslots.PASSPHRASE_KEYFILE for s in slots)
    ):
        raise AuthError(
            "this vault needs its keyfile as well as the passphrase",
            "pass --keyfile FILE or set AFFIDAVIT_KEYFILE",
        )
    if needs_keyfile:
        raise AuthError("wrong passphrase or keyfile", "try again with the right ones")
    raise AuthError("wrong passphrase", "try again")


def _keyfile_to_try(slots: list[KeySlot], given: Path | None) -> Path | None:
    """The keyfile named (``--keyfile``), else ``AFFIDAVIT_KEYFILE``, else the one a slot
    remembers (its hint), else None."""
    if given is not None:
        return given
    if os.environ.get(KEYFILE_ENV):
        return Path(os.environ[KEYFILE_ENV])
    return next((Path(s.keyfile_hint) for s in slots if s.keyfile_hint), None)
