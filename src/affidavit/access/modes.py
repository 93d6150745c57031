"""The access modes a grant gives (``affidavit grant CALLER NAMESPACE MODE``).

Why a module of its own: the CLI builds ``grant``'s choices from this enum when the command
loads, which must not load the vault (``cli/memory_server.py`` imports click and nothing else
at load time). A StrEnum, so the grants sealed in the vault stay the same strings.
"""

from __future__ import annotations

from enum import StrEnum


class Mode(StrEnum):
    """What a grant lets a caller do in a namespace: read and write, read only, nothing."""

    RW = "rw"
    RO = "ro"
    NONE = "none"
