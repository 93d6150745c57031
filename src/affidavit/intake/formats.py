"""What ``affidavit import --from`` reads: one name per format.

Why a module of its own: the CLI builds its ``--from`` choices from this enum when the command
tree loads, and must not load the importers (recall, the sentence rules) to do so. A StrEnum,
so the flag's value, a plan's ``format`` in ``--json`` and the importers' dispatch are the
same strings.
"""

from __future__ import annotations

from enum import StrEnum


class Format(StrEnum):
    """A file ``import`` reads (``docs/capture.md`` shows each shape)."""

    #: The vault's own export (``affidavit export``): every record as it was, imported by the
    #: vault itself, not split into claims.
    AFFIDAVIT = "affidavit"
    CLAUDE_MEMORY = "claude-memory"
    CHATGPT = "chatgpt"
    CLAUDE = "claude"
    MARKDOWN = "markdown"
    COMPARTMENT = "compartment"
