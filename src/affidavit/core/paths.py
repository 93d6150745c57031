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


def runtime_dir() -> Path:
    """RAM-backed, per-user storage cleared at boot (for unlock secrets).

    ``XDG_RUNTIME_DIR`` when it is set (a tmpfs on systemd machines), else ``/dev/shm``.
    Callers create their own 0700 subdirectory inside it.
    """
    xdg = os.environ.get("XDG_RUNTIME_DIR")
    if xdg and Path(xdg).is_dir():
        return Path(xdg)
    return Path("/dev/shm")  # noqa: S108 - RAM-backed by design, see docstring
