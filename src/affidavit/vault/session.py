"""The unlock session: keeps a vault open for this user's other processes until lock or reboot.

Two halves, neither useful alone. The *credential* (``unlock.cred`` in the vault directory,
0600) holds the master key sealed under a random *session secret*. The *token*
(``<vault id>.session`` in this user's private runtime directory, see :mod:`.session_dir`:
found from the uid, so a server started with a bare environment finds it too, and emptied at
boot) holds the session id and, with the default ``runtime`` store, the secret; with the
``keyring`` store the secret is in the OS keyring instead (:mod:`.keyring_store`). A copied
credential, or a backup of the vault directory, therefore opens nothing.

The token is also the session's pulse, whichever store holds the secret: a process that
opened the vault through the session stays open while the token exists (``lock`` removes it),
and the token's mtime is the idle clock (with an auto-lock set, a session unused for that long
is destroyed by the next process to look).

A ``once`` session belongs to the next process that opens the vault with it: that process
removes the credential (nobody else can open it any more), keeps the token as its own pulse
(so ``lock`` still reaches it) and removes the token when it closes. Looking at a session
(:func:`peek`, ``affidavit status``) never consumes it.
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import json
import os
import secrets
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from affidavit.core.atomic import SECRET_FILE_MODE, write_atomic
from affidavit.core.canonical import canonical_json
from affidavit.core.errors import AffidavitError, IntegrityError, NotFoundError, UsageError
from affidavit.crypto import aead
from affidavit.vault import keyring_store, session_dir

CREDENTIAL_NAME = "unlock.cred"
CREDENTIAL_VERSION = 2
TOUCH_INTERVAL_S = 30.0
RUNTIME = "runtime"
KEYRING = "keyring"
STORES = (RUNTIME, KEYRING)
_TAGS = {RUNTIME: b"R", KEYRING: b"K"}
_SESSION_ID_BYTES = 16
_TOKEN_LIMIT = 1 + _SESSION_ID_BYTES + aead.KEY_BYTES


@dataclass(frozen=True)
class Pending:
    """What can be said about a live session without using it."""

    once: bool
    store: str
    idle_minutes: int | None


@dataclass(frozen=True)
class _Token:
    """The runtime half: which store holds the secret, the session id, the secret if here."""

    store: str
    session_id: bytes
    secret: bytes | None

    def to_bytes(self) -> bytes:
        return _TAGS[self.store] + self.session_id + (self.secret or b"")

    @classmethod
    def parse(cls, data: bytes) -> _Token | None:
        store = next((name for name, tag in _TAGS.items() if data[:1] == tag), None)
        session_id = data[1 : 1 + _SESSION_ID_BYTES]
        secret = data[1 + _SESSION_ID_BYTES :]
        expected = aead.KEY_BYTES if store == RUNTIME else 0
        if store is None or len(session_id) != _SESSION_ID_BYTES or len(secret) != expected:
            return None
        return cls(store, session_id, secret or None)


@dataclass
class Session:
    """A loaded session: the master key and how to tell whether the session still stands."""

    master: bytes
    vault_dir: Path
    vault_id: bytes
    token_path: Path
    token: _Token
    idle_minutes: int | None
    last_touch: float
    consumed: bool = False  # a ``once`` session this process took; it ends when we close

    def alive(self) -> bool:
        """True while the token exists and is not idle-expired; keeps the idle clock running."""
        try:
            mtime = os.lstat(self.token_path).st_mtime
        except FileNotFoundError:
            return False
        now = time.time()
        expired = self.idle_minutes and now - mtime > self.idle_minutes * 60
        if expired and not self._adopt_newer():
            with contextlib.suppress(OSError, AffidavitError):  # locked either way
                clear(self.vault_dir, self.vault_id)
            return False
        if now - self.last_touch > TOUCH_INTERVAL_S:
            _touch(self.token_path)
            self.last_touch = now
        return True

    def _adopt_newer(self) -> bool:
        """A newer ``unlock`` (same vault, same key) replaced our token: take on its rules
        (idle limit included). False when the token is still ours, or nothing stands."""
        with contextlib.suppress(IntegrityError):
            found = _live(self.vault_dir, self.vault_id)
            if found is not None and found[3] != self.token:
                self.token, self.idle_minutes = found[3], found[0]["idle_minutes"]
                self.consumed = False  # the token is not ours to remove any more
                return True
        return False

    def release(self) -> None:
        """The handle is closing: a consumed ``once`` session ends with it (if still ours)."""
        if not self.consumed:
            return
        with contextlib.suppress(OSError, AffidavitError):
            if _read_token(self.token_path) == self.token and _wipe_token(self.token_path)[1]:
                keyring_store.delete(self.vault_id)


def start(
    vault_dir: Path,
    vault_id: bytes,
    master: bytes,
    *,
    once: bool = False,
    idle_minutes: int | None = None,
    store: str = RUNTIME,
) -> Path:
    """Write a new session (replacing any previous one at once); return the credential's path.

    Nothing is written when the runtime directory is unsafe or the keyring is unavailable.
    """
    if store not in STORES:
        raise UsageError(f"unknown session store {store!r}", f"use {' or '.join(STORES)}")
    directory = session_dir.private_dir(create=True)
    assert directory is not None  # made above
    token_path = directory / _token_name(vault_id)
    try:
        previous = _read_token(token_path)
    except IntegrityError:  # whatever is there is replaced by the rename, never followed
        previous = None
    secret = aead.random_key()
    session_id = secrets.token_bytes(_SESSION_ID_BYTES)
    if store == KEYRING:
        keyring_store.put(vault_id, session_id + secret)
    token = _Token(store, session_id, secret if store == RUNTIME else None)
    meta: dict[str, Any] = {
        "v": CREDENTIAL_VERSION,
        "vault_id": vault_id.hex(),
        "session": session_id.hex(),
        "created": int(time.time()),
        "once": once,
        "idle_minutes": idle_minutes or None,
        "store": store,
    }
    sealed = aead.seal(secret, master, canonical_json(meta))
    credential = Path(vault_dir) / CREDENTIAL_NAME
    body = {"meta": meta, "sealed": base64.b64encode(sealed).decode("ascii")}
    try:
        session_dir.write_file(directory, token_path.name, token.to_bytes())
        write_atomic(credential, canonical_json(body), SECRET_FILE_MODE)
    except BaseException:
        if store == KEYRING:
            keyring_store.delete(vault_id)
        clear(vault_dir, vault_id)
        raise
    if previous is not None and previous.store == KEYRING and store != KEYRING:
        keyring_store.delete(vault_id)
    return credential


def load(vault_dir: Path, vault_id: bytes, *, consume: bool = True) -> Session | None:
    """The master key of a live session for this vault, or None when the vault is locked.

    ``consume=False`` leaves a ``once`` session for the process it is meant for (and returns
    None for it): ``status`` looks without taking.
    """
    found = _live(vault_dir, vault_id)
    if found is None:
        return None
    meta, sealed, token_path, token = found
    secret = token.secret if token.store == RUNTIME else _keyring_secret(vault_id, token)
    if secret is None:
        return None
    try:
        master = aead.unseal(secret, sealed, canonical_json(meta), what="the unlock credential")
    except ValueError:
        raise IntegrityError("the unlock credential is corrupt", "run `affidavit lock`") from None
    idle = meta["idle_minutes"]
    session = Session(master, Path(vault_dir), vault_id, token_path, token, idle, time.time())
    if meta["once"]:
        if not consume:
            return None
        session_dir.wipe_file(Path(vault_dir) / CREDENTIAL_NAME)  # nobody else can open now
        session.consumed = True
    else:
        _touch(token_path)
    return session


def peek(vault_dir: Path, vault_id: bytes | None = None) -> Pending | None:
    """The live session of this vault without using it (no key, no keyring), or None."""
    try:
        found = _live(vault_dir, vault_id)
    except IntegrityError:
        return None
    if found is None:
        return None
    meta = found[0]
    return Pending(bool(meta["once"]), found[3].store, meta["idle_minutes"])


def clear(vault_dir: Path, vault_id: bytes | None = None) -> bool:
    """Lock: destroy this vault's token, then the credential, then any keyring entry.

    Reaches a ``once`` session a process already took (its token is named by the vault id).
    The vault id is read from the credential or the vault when not given. A runtime directory
    that fails the safety checks is left untouched; the credential goes regardless, which
    alone locks. A keyring that fails to remove its entry is reported after both files are
    gone. True if a session was there.
    """
    credential = Path(vault_dir) / CREDENTIAL_NAME
    vault_id = vault_id or _credential_vault_id(vault_dir) or _stored_vault_id(vault_dir)
    found = in_keyring = False
    if vault_id is not None:
        with contextlib.suppress(IntegrityError):
            directory = session_dir.private_dir(create=False)
            if directory is not None:
                found, in_keyring = _wipe_token(directory / _token_name(vault_id))
    found = session_dir.wipe_file(credential) or found
    if in_keyring and vault_id is not None:
        keyring_store.delete(vault_id)
    return found


def _live(
    vault_dir: Path, vault_id: bytes | None
) -> tuple[dict[str, Any], bytes, Path, _Token] | None:
    """The credential and token of a session that stands (matching, not idle-expired)."""
    value = _read_credential(vault_dir)
    if value is None:
        return None
    meta = value["meta"]
    if vault_id is not None and meta["vault_id"] != vault_id.hex():
        return None
    directory = session_dir.private_dir(create=False)
    if directory is None:
        return None  # rebooted, or never unlocked on this machine
    token_path = directory / _token_name(bytes.fromhex(meta["vault_id"]))
    token = _read_token(token_path)
    if token is None or token.session_id.hex() != meta["session"] or token.store != meta["store"]:
        return None  # locked, replaced, or a credential copied from elsewhere
    idle = meta["idle_minutes"]
    try:
        idle_s = time.time() - os.lstat(token_path).st_mtime
    except FileNotFoundError:
        return None  # locked just now
    if idle and idle_s > idle * 60:
        clear(vault_dir, bytes.fromhex(meta["vault_id"]))
        return None
    return meta, value["sealed"], token_path, token


def _read_credential(vault_dir: Path) -> dict[str, Any] | None:
    """The credential, checked for shape; None when there is none (or from an older release)."""
    path = Path(vault_dir) / CREDENTIAL_NAME
    try:
        value = json.loads(path.read_bytes())
        meta = value["meta"]
        if meta.get("v") != CREDENTIAL_VERSION:
            return None  # an older release's session: locked, unlock again
        bytes.fromhex(meta["vault_id"])
        if (
            not isinstance(meta["session"], str)
            or len(meta["session"]) != 2 * _SESSION_ID_BYTES
            or not isinstance(meta["once"], bool)
            or not isinstance(meta["idle_minutes"], int | None)
            or meta["store"] not in STORES
        ):
            raise ValueError
        sealed = base64.b64decode(value["sealed"], validate=True)
        return {"meta": meta, "sealed": sealed}
    except FileNotFoundError:
        return None
    except (ValueError, KeyError, TypeError, AttributeError, binascii.Error):
        raise IntegrityError(
            f"the unlock credential {path} is corrupt", "run `affidavit lock`, then unlock"
        ) from None


def _credential_vault_id(vault_dir: Path) -> bytes | None:
    with contextlib.suppress(IntegrityError):
        value = _read_credential(vault_dir)
        if value is not None:
            return bytes.fromhex(value["meta"]["vault_id"])
    return None


def _stored_vault_id(vault_dir: Path) -> bytes | None:
    """The vault's id from its header (no key needed); None when there is no vault."""
    from affidavit.vault.store import open_store

    try:
        store = open_store(Path(vault_dir))
    except NotFoundError:
        return None
    try:
        with store.read():
            return store.header().vault_id
    finally:
        store.close()


def _token_name(vault_id: bytes) -> str:
    return f"{vault_id.hex()}.session"


def _read_token(path: Path) -> _Token | None:
    data = session_dir.read_file(path, _TOKEN_LIMIT)
    return None if data is None else _Token.parse(data)


def _keyring_secret(vault_id: bytes, token: _Token) -> bytes | None:
    value = keyring_store.get(vault_id)
    if value is None or value[:_SESSION_ID_BYTES] != token.session_id:
        return None  # locked, or replaced by a newer unlock
    secret = value[_SESSION_ID_BYTES:]
    return secret if len(secret) == aead.KEY_BYTES else None


def _wipe_token(path: Path) -> tuple[bool, bool]:
    """Remove a token without following it: (was one there, did it point to the keyring)."""
    try:
        token = _read_token(path)
    except IntegrityError:
        token = None  # not ours: removed below without being followed
    return session_dir.wipe_file(path), token is not None and token.store == KEYRING


def _touch(path: Path) -> None:
    with contextlib.suppress(OSError):
        os.utime(path, follow_symlinks=False)
