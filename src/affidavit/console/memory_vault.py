"""The memory vault as the console holds it: open when it can be, locked otherwise.

The console opens the vault the way every command does (``AFFIDAVIT_VAULT`` or the default
path; the live unlock session, or ``AFFIDAVIT_PASSPHRASE``), but never consumes a one-time
session meant for another command. When none of those unlocks it, the pages show what can be
said without the key (:func:`affidavit.vault.locked_status`) and offer the passphrase field:
the passphrase travels only in a POST body, is handed to ``Vault.open`` and dropped; it is
never in an address, a log line or an error. If the vault is locked elsewhere meanwhile
(``affidavit lock``), the next read sees it and the console forgets its handle.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import TYPE_CHECKING

from affidavit.core.errors import LockedError, NotFoundError, UsageError

if TYPE_CHECKING:
    from affidavit.recall import Memory
    from affidavit.vault import LockedStatus


class VaultHolder:
    """One console's handle on the memory vault (thread-safe: handlers run in a pool)."""

    def __init__(self, path: Path | None = None) -> None:
        self.path = path
        self._memory: Memory | None = None
        self._automatic = True  # False once locked from the page: only the passphrase opens it
        self._lock = threading.Lock()

    def memory(self) -> Memory:
        """The open vault's recall facade; LockedError (or NotFoundError: no vault) if none."""
        with self._lock:
            if self._memory is None and self._automatic:
                # no secret asked: a session started since (`affidavit unlock`) is picked up
                self._memory = self._open(None)
            if self._memory is None:
                raise LockedError("the memory vault is locked", "unlock it on this page")
            memory = self._memory
        try:
            memory.vault.refresh()
        except LockedError:
            self.drop()
            raise
        return memory

    def unlock(self, passphrase: str) -> None:
        """Open the vault with ``passphrase`` (AuthError when it is wrong)."""
        if not passphrase:
            raise UsageError("type the vault's passphrase", "then press Unlock")
        with self._lock:
            if self._memory is None:
                self._memory = self._open(passphrase)

    def drop(self, *, by_user: bool = False) -> None:
        """Close the handle (keys and plaintext dropped); the next page shows it locked.

        ``by_user``: locked from the page, so the session or environment that opened it is not
        used again; only the passphrase typed into the page reopens it.
        """
        with self._lock:
            memory, self._memory = self._memory, None
            self._automatic = self._automatic and not by_user
        if memory is not None:
            memory.vault.close()

    def locked_status(self) -> LockedStatus:
        """What can be said of the vault without its key (NotFoundError: there is none)."""
        from affidavit.vault import locked_status

        return locked_status(self.path)

    def _open(self, passphrase: str | None) -> Memory | None:
        from affidavit.recall import Memory
        from affidavit.vault import Vault

        try:
            vault = Vault.open(self.path, passphrase=passphrase, consume_once=False)
        except (LockedError, NotFoundError):
            if passphrase is not None:
                raise
            return None
        return Memory(vault)
