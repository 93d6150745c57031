"""What can be said and done about a vault without its key: its locked status (where it
is, its format and size, whether an unlock session runs) and folding its write-ahead log.

Why apart from :mod:`.vault`: ``status`` on a locked vault, ``lock`` and ``forget --shred``'s
clean-up run before or without an unlock, so they need the store and the session files but
never a key slot or a record; keeping them here keeps that visible.
"""

from __future__ import annotations

from pathlib import Path

from affidavit.core import paths
from affidavit.vault import session
from affidavit.vault import store as stores
from affidavit.vault.header import FORMAT_VERSION
from affidavit.vault.status import LockedStatus, SessionState


def locked_status(path: Path | None = None) -> LockedStatus:
    """What can be said about a vault without its key: where, format, size, session state."""
    directory = Path(path) if path is not None else paths.vault_dir()
    store = stores.open_store(directory)
    try:
        with store.read():
            vault_id = store.header().vault_id
        pending = session.peek(directory, vault_id)
        return {
            "path": str(directory),
            "state": "locked" if pending is None else "unlocked",
            **session_fields(pending),
            "format": FORMAT_VERSION,
            "vault_id": vault_id.hex(),
            "size_bytes": store.size_on_disk(),
        }
    finally:
        store.close()


def session_fields(pending: session.Pending | None) -> SessionState:
    """The unlock session as status reports show it (nothing secret)."""
    return {
        "session": "locked" if pending is None else "unlocked",
        "once": pending is not None and pending.once,
        "store": None if pending is None else pending.store,
    }


def fold_wal(path: Path | None = None) -> bool:
    """Checkpoint and truncate the vault's write-ahead log; needs no key. True when done."""
    store = stores.open_store(Path(path) if path is not None else paths.vault_dir())
    try:
        return store.checkpoint()
    finally:
        store.close()
