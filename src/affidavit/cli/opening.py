"""How a command gets at the vault: open it, asking a person at a terminal for the passphrase.

Every command that reads or writes memories opens the vault here, so the unlock rules are the
same everywhere: an unlock session or ``AFFIDAVIT_PASSPHRASE`` opens it; otherwise, on a
terminal, the user is asked; otherwise the command fails with the advice to unlock.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from affidavit.cli import passphrase
from affidavit.core.errors import LockedError

if TYPE_CHECKING:
    from affidavit.vault import Vault
    from affidavit.vault.recall import Memory


def open_vault(*, keyfile: Path | None = None) -> Vault:
    """Open the selected vault; on a terminal, a locked vault asks for its passphrase."""
    from affidavit.vault import Vault

    try:
        return Vault.open(keyfile=keyfile)
    except LockedError:
        if not passphrase.may_prompt():
            raise
        return Vault.open(passphrase=passphrase.current(), keyfile=keyfile)


@contextmanager
def open_memory() -> Iterator[Memory]:
    """The memories of the opened vault, closed again when the block ends."""
    from affidavit.vault.recall import Memory

    vault = open_vault()
    try:
        yield Memory(vault)
    finally:
        vault.close()
