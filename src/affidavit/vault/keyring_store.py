"""The OS keyring as the home of an unlock session's secret (``affidavit unlock --store keyring``).

Optional: it needs the ``keyring`` package (``pip install 'affidavit[keyring]'``) and a backend
keyring itself recommends (priority 1 or more: the macOS Keychain, the Secret Service of GNOME
Keyring or KWallet, the Windows Credential Locker). A lesser backend, such as keyrings.alt's
plain-text file, would put the secret in a file beside the credential in every backup of the
home folder, so it is refused unless the user chose it explicitly (``PYTHON_KEYRING_BACKEND``
or ``keyringrc.cfg``). One entry per vault: service ``affidavit-unlock``, user the vault id.

MCP clients start servers without ``DBUS_SESSION_BUS_ADDRESS``; on Linux the Secret Service is
then reached at the per-user bus socket systemd places at ``/run/user/<uid>/bus``, found
(like the session directory) from the uid.
"""

from __future__ import annotations

import base64
import binascii
import os
import stat
from pathlib import Path
from typing import Any

from affidavit.core.errors import UnsupportedError

SERVICE = "affidavit-unlock"
BUS_ENV = "DBUS_SESSION_BUS_ADDRESS"
_NO_KEYRING_HINT = "unlock without --store keyring (the default needs no keyring)"


def put(vault_id: bytes, value: bytes) -> None:
    """Store ``value`` as this vault's entry, replacing any previous one."""
    backend = _backend()
    try:
        backend.set_password(SERVICE, vault_id.hex(), base64.b64encode(value).decode("ascii"))
    except Exception as exc:  # backends raise their own types; the message may hold details
        raise _refused("store the unlock secret", backend, exc) from None


def get(vault_id: bytes) -> bytes | None:
    """This vault's entry, or None when there is none (or it is not ours)."""
    backend = _backend()
    try:
        text = backend.get_password(SERVICE, vault_id.hex())
    except Exception as exc:
        raise _refused("read the unlock secret", backend, exc) from None
    if text is None:
        return None
    try:
        return base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        return None


def delete(vault_id: bytes) -> None:
    """Remove this vault's entry (nothing to do when there is none)."""
    backend = _backend()
    try:
        if backend.get_password(SERVICE, vault_id.hex()) is not None:
            backend.delete_password(SERVICE, vault_id.hex())
    except Exception as exc:
        raise _refused("remove the unlock secret", backend, exc) from None


def _backend() -> Any:
    """The keyring backend to use; UnsupportedError naming what is missing otherwise."""
    try:
        import keyring
        from keyring import core
        from keyring.backends import chainer, fail
    except ImportError:
        raise UnsupportedError(
            "the keyring store needs the optional keyring package",
            f"pip install 'affidavit[keyring]', or {_NO_KEYRING_HINT}",
        ) from None
    default_session_bus()
    chosen = core.load_env() or core.load_config()
    backend = chosen if chosen is not None else keyring.get_keyring()
    writer = backend
    if isinstance(backend, chainer.ChainerBackend) and backend.backends:
        writer = backend.backends[0]  # the one a chain writes to
    if isinstance(writer, fail.Keyring) or isinstance(backend, fail.Keyring):
        raise UnsupportedError(
            "no OS keyring is available to this process (the keyring package found no backend)",
            f"{_NO_KEYRING_HINT}; `python -m keyring diagnose` shows what keyring looked for",
        )
    if chosen is None and float(getattr(writer, "priority", 0)) < 1:
        raise UnsupportedError(
            f"the only keyring backend here, {_name(writer)}, is not one keyring recommends "
            "(it may keep the secret in a plain file)",
            f"{_NO_KEYRING_HINT}; to accept it, choose it in PYTHON_KEYRING_BACKEND or "
            "keyringrc.cfg",
        )
    return backend


def default_session_bus(uid: int | None = None, run_user: Path = Path("/run/user")) -> None:
    """Point D-Bus clients at this user's session bus when the environment does not say.

    Only a socket owned by this user counts, so nothing else can pose as the keyring.
    """
    if os.environ.get(BUS_ENV):
        return
    uid = os.getuid() if uid is None else uid
    socket = run_user / str(uid) / "bus"
    try:
        info = os.lstat(socket)
    except OSError:
        return
    if stat.S_ISSOCK(info.st_mode) and info.st_uid == uid:
        os.environ[BUS_ENV] = f"unix:path={socket}"


def _name(backend: Any) -> str:
    kind = type(backend)
    return f"{kind.__module__}.{kind.__qualname__}"


def _refused(action: str, backend: Any, exc: Exception) -> UnsupportedError:
    return UnsupportedError(
        f"the OS keyring ({_name(backend)}) failed to {action} ({type(exc).__name__})",
        "unlock the keyring (log in to the desktop session), or " + _NO_KEYRING_HINT,
    )
