"""Where affidavit keeps things on this machine.

Every location can be overridden by an environment variable so tests and scripts never touch
the real home directory.
"""

from __future__ import annotations

import os
from pathlib import Path

VAULT_ENV = "AFFIDAVIT_VAULT"
HOME_ENV = "AFFIDAVIT_HOME"


def affidavit_home() -> Path:
    """The per-user state directory: ``AFFIDAVIT_HOME``, else ``~/.affidavit``."""
    override = os.environ.get(HOME_ENV)
    if override:
        return Path(override).expanduser()
    return Path.home() / ".affidavit"


def vault_dir() -> Path:
    """The vault directory: ``AFFIDAVIT_VAULT``, else ``<affidavit home>/vault``."""
    override = os.environ.get(VAULT_ENV)
    if override:
        return Path(override).expanduser()
    return affidavit_home() / "vault"
