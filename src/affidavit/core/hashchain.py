"""Hash chains: the tamper-evident spine shared by the vault audit log and the proxy audit log.

Each link stores ``prev`` (the previous link's hash, or :data:`GENESIS`) and its ``hash`` is
SHA-256 over ``prev`` and the canonical JSON of the entry body. Changing, removing or
reordering any entry breaks every later link; truncating the tail is caught only by comparing
the last hash with a head anchored elsewhere (the vault keeps it in its key-protected header).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from affidavit.core.canonical import canonical_json

GENESIS = "0" * 64


def link_hash(prev: str, body: Mapping[str, Any]) -> str:
    """The hash of a link whose predecessor hashed to ``prev``."""
    return link_hash_encoded(prev, canonical_json(dict(body)))


def link_hash_encoded(prev: str, encoded_body: bytes) -> str:
    """:func:`link_hash` for a body already in canonical JSON (a writer encodes it once)."""
    h = hashlib.sha256()
    h.update(prev.encode("ascii"))
    h.update(b"\n")
    h.update(encoded_body)
    return h.hexdigest()


@dataclass(frozen=True)
class ChainBreak:
    """Where a chain stopped verifying, and why."""

    index: int
    reason: str


def link_problem(
    expected_prev: str, prev: str, stored_hash: str, body: Mapping[str, Any]
) -> str | None:
    """Why one link does not verify after a link that hashed to ``expected_prev``, or None."""
    if prev != expected_prev:
        return "does not point at the previous entry"
    if link_hash(prev, body) != stored_hash:
        return "content does not match its hash"
    return None


def first_break(links: Iterable[tuple[str, str, Mapping[str, Any]]]) -> ChainBreak | None:
    """Walk ``(prev, hash, body)`` triples in order; return the first broken link, if any."""
    expected_prev = GENESIS
    for index, (prev, stored_hash, body) in enumerate(links):
        problem = link_problem(expected_prev, prev, stored_hash, body)
        if problem is not None:
            return ChainBreak(index, problem)
        expected_prev = stored_hash
    return None
