"""How a command gets at the vault: open it, asking a person at a terminal for the passphrase.

Every command that reads or writes memories opens the vault here, so the unlock rules are the
same everywhere: an unlock session or ``AFFIDAVIT_PASSPHRASE`` opens it; otherwise, on a
terminal, the user is asked; otherwise the command fails with the advice to unlock.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from affidavit.cli import passphrase
from affidavit.core.errors import LockedError

if TYPE_CHECKING:
    from affidavit.recall import Memory
    from affidavit.vault import Vault

_log = logging.getLogger(__name__)


def open_vault(*, keyfile: Path | None = None) -> Vault:
    """Open the selected vault; on a terminal, a locked vault asks for its passphrase."""
    from affidavit.vault import Vault

    try:
        vault = Vault.open(keyfile=keyfile)
    except LockedError:
        if not passphrase.may_prompt():
            raise
        vault = Vault.open(passphrase=passphrase.current(), keyfile=keyfile)
    _log.info("opened the vault at %s", vault.path)  # AFFIDAVIT_VAULT or AFFIDAVIT_HOME chose it
    return vault


def open_memory_unasked(caller: str = "user") -> Memory:
    """The memories of the vault an unlock session (or ``AFFIDAVIT_PASSPHRASE``) opens, for a
    process whose stdin is no person (the proxy's is the MCP stream): LockedError, never a
    prompt. The caller closes its vault."""
    from affidavit.recall import Memory
    from affidavit.vault import Vault

    return Memory(Vault.open(), caller=caller)


@contextmanager
def open_memory(caller: str = "user", *, shared_model: bool = False) -> Iterator[Memory]:
    """The memories of the opened vault as ``caller`` sees them (its grants, its default
    namespace: the terminal is a caller like any MCP client), closed when the block ends.

    ``shared_model``: embed one text (``store``'s claim, ``search``'s question) through the
    per-user model service the MCP servers share, starting it when none runs, instead of
    loading the model here (~220 MB and most of the command's CPU; ADR 0167).
    ``AFFIDAVIT_EMBEDDER`` still decides when set; any failure loads the model here.
    """
    from affidavit.recall import Memory, prefer_shared

    if shared_model:
        prefer_shared()
    vault = open_vault()
    try:
        yield Memory(vault, caller=caller)
    finally:
        vault.close()
