"""The two kinds of memory: a fact, or an opinion (a preference or a view).

Why it matters and why here: a stored opinion replaces a similar live one, a fact accumulates
beside others (:mod:`.decide`); search can be narrowed to either. The CLI builds ``--kind``'s
choices from this enum when the command loads, so it sits in a module that imports nothing.
A StrEnum: the sealed records, ``--json`` and the MCP tools keep the plain strings.
"""

from __future__ import annotations

from enum import StrEnum


class MemoryKind(StrEnum):
    """What a memory states: ``fact`` (accumulates) or ``opinion`` (replaces)."""

    FACT = "fact"
    OPINION = "opinion"

    @classmethod
    def of(cls, value: object) -> MemoryKind:
        """The kind a stored record or an imported row names: anything but ``opinion`` is a
        fact (records written before kinds existed carry none)."""
        return cls.OPINION if value == cls.OPINION else cls.FACT
