"""The unlock session: keeps a vault open for this user's other processes until lock or reboot.

Two halves, neither useful alone. The *credential* (``unlock.cred`` in the vault directory,
0600) holds the master key sealed under a random *session secret*. The secret lives only in
RAM-backed storage (``core.paths.runtime_dir()``: ``$XDG_RUNTIME_DIR`` or ``/dev/shm``, in a
0700 directory, 0600), which the kernel clears at reboot. A copied credential, or a backup
of the vault directory, therefore opens nothing. The secret's mtime is the idle clock: with
an auto-lock set, a session unused for that long is destroyed by the next process to look.
``once`` sessions are consumed by the first process that opens the vault with them.
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import secrets
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from affidavit.core.atomic import SECRET_FILE_MODE, ensure_private_dir, write_atomic
from affidavit.core.canonical import canonical_json
from affidavit.core.errors import IntegrityError, UnsupportedError
from affidavit.core.paths import runtime_dir
from affidavit.crypto import aead

CREDENTIAL_NAME = "unlock.cred"
TOUCH_INTERVAL_S = 30.0


@dataclass
class Session:
    """A loaded session: the master key and how to tell whether the session still stands."""

    master: bytes
    secret_path: Path
    idle_minutes: int | None
    last_touch: float

    def alive(self) -> bool:
        """True while the session exists and is not idle-expired; keeps the idle clock running."""
        try:
            mtime = self.secret_path.stat().st_mtime
        except FileNotFoundError:
            return False
        now = time.time()
        if self.idle_minutes and now - mtime > self.idle_minutes * 60:
            _wipe(self.secret_path)
            return False
        if now - self.last_touch > TOUCH_INTERVAL_S:
            with contextlib.suppress(OSError):
                os.utime(self.secret_path)
            self.last_touch = now
        return True


def secret_dir() -> Path:
    """This user's private directory in RAM-backed storage."""
    return runtime_dir() / f"affidavit-{os.getuid()}"


def start(
    vault_dir: Path,
    vault_id: bytes,
    master: bytes,
    *,
    once: bool = False,
    idle_minutes: int | None = None,
) -> Path:
    """Write a new session (replacing any previous one); return the credential's path."""
    if not runtime_dir().is_dir():
        raise UnsupportedError(
            f"no RAM-backed storage for the unlock secret ({runtime_dir()} does not exist)",
            "set XDG_RUNTIME_DIR to a tmpfs directory, or AFFIDAVIT_PASSPHRASE per process",
        )
    clear(vault_dir)
    session_id = secrets.token_hex(16)
    secret = aead.random_key()
    directory = ensure_private_dir(secret_dir())
    secret_path = directory / f"{session_id}.key"
    write_atomic(secret_path, secret, SECRET_FILE_MODE)
    meta: dict[str, Any] = {
        "v": 1,
        "vault_id": vault_id.hex(),
        "session": session_id,
        "created": int(time.time()),
        "once": once,
        "idle_minutes": idle_minutes or None,
    }
    sealed = aead.seal(secret, master, canonical_json(meta))
    credential = Path(vault_dir) / CREDENTIAL_NAME
    body = {"meta": meta, "sealed": base64.b64encode(sealed).decode("ascii")}
    write_atomic(credential, canonical_json(body), SECRET_FILE_MODE)
    return credential


def _read_credential(vault_dir: Path) -> dict[str, Any] | None:
    path = Path(vault_dir) / CREDENTIAL_NAME
    try:
        value = json.loads(path.read_bytes())
        meta = value["meta"]
        if (
            not isinstance(meta, dict)
            or not isinstance(value["sealed"], str)
            or not isinstance(meta.get("session"), str)
            or not meta["session"].isalnum()
            or not isinstance(meta.get("idle_minutes"), int | None)
        ):
            raise ValueError
        return dict(value)
    except FileNotFoundError:
        return None
    except (ValueError, KeyError, TypeError):
        raise IntegrityError(
            f"the unlock credential {path} is corrupt", "run `affidavit lock`, then unlock"
        ) from None


def _secret_path(meta: dict[str, Any]) -> Path:
    return secret_dir() / f"{meta['session']}.key"


def load(vault_dir: Path, vault_id: bytes, *, consume: bool = True) -> Session | None:
    """The master key of a live session for this vault, or None when the vault is locked.

    ``consume=False`` leaves a ``once`` session for the process it was meant for (used when a
    running handle adopts a session that replaced its own).
    """
    value = _read_credential(vault_dir)
    if value is None:
        return None
    meta = value["meta"]
    if meta.get("vault_id") != vault_id.hex():
        return None
    secret_path = _secret_path(meta)
    try:
        secret = secret_path.read_bytes()
        mtime = secret_path.stat().st_mtime
    except FileNotFoundError:
        return None  # rebooted, locked elsewhere, or a credential copied from another machine
    idle = meta.get("idle_minutes")
    if idle and time.time() - mtime > int(idle) * 60:
        clear(vault_dir)
        return None
    try:
        master = aead.unseal(
            secret,
            base64.b64decode(value["sealed"], validate=True),
            canonical_json(meta),
            what="the unlock credential",
        )
    except ValueError:
        raise IntegrityError("the unlock credential is corrupt", "run `affidavit lock`") from None
    if meta.get("once"):
        if not consume:
            return None
        clear(vault_dir)
    else:
        with contextlib.suppress(OSError):
            os.utime(secret_path)
    return Session(master, secret_path, int(idle) if idle else None, time.time())


def state(vault_dir: Path, vault_id: bytes | None = None) -> str:
    """``unlocked`` when a live session exists, else ``locked`` (reads only, no key use)."""
    try:
        value = _read_credential(vault_dir)
    except IntegrityError:
        return "locked"
    if value is None:
        return "locked"
    meta = value["meta"]
    if vault_id is not None and meta.get("vault_id") != vault_id.hex():
        return "locked"
    try:
        mtime = _secret_path(meta).stat().st_mtime
    except FileNotFoundError:
        return "locked"
    idle = meta.get("idle_minutes")
    if idle and time.time() - mtime > int(idle) * 60:
        return "locked"
    return "unlocked"


def clear(vault_dir: Path) -> bool:
    """Destroy the session: the RAM secret first (that alone locks), then the credential."""
    credential = Path(vault_dir) / CREDENTIAL_NAME
    try:
        value = _read_credential(vault_dir)
    except IntegrityError:
        value = None
    found = False
    if value is not None:
        found = _wipe(_secret_path(value["meta"]))
    return _wipe(credential) or found


def _wipe(path: Path) -> bool:
    """Overwrite a small secret file with zeros, then remove it; True if it existed."""
    try:
        size = path.stat().st_size
        with path.open("r+b") as handle:
            handle.write(b"\0" * size)
            handle.flush()
            os.fsync(handle.fileno())
        path.unlink()
        return True
    except FileNotFoundError:
        return False
