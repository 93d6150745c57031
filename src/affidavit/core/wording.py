"""Small pieces of English that messages share, so every count reads right ("1 minute")."""

from __future__ import annotations


def counted(n: int, noun: str, plural: str | None = None) -> str:
    """``n`` and the noun in agreement: ``1 character``, ``2 characters``, ``0 entries``
    (``plural`` for nouns that do not just take an s)."""
    return f"{n} {noun if n == 1 else plural or noun + 's'}"
