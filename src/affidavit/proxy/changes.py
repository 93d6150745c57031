"""What a VERIFIED call changed, handed on so it can be remembered (``proxy run --remember``).

The tool plane never imports the memory plane: the proxy hands each verified change to the
callable its options name, once the call's audit entry is on disk (the receipt must name a
hash that exists), from the audit thread, never from the path of a reply. The words are the
verifier's (:attr:`~affidavit.proxy.verifiers.base.Receipt.change`), scrubbed by the one secret
detector the audit log uses, so a token in a commit message or a path never reaches a memory.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from affidavit.core.secret_text import scrub
from affidavit.proxy.verifiers.base import Receipt, Verdict


@dataclass(frozen=True)
class VerifiedChange:
    """One verified state change, in plain words, and the audit entry that proves it."""

    text: str  # "commit 138ce5c on main adds 'add notes'" (secrets scrubbed)
    tool: str
    verifier: str
    log: str  # the audit log's absolute path
    entry: str  # the entry's link hash
    when: str  # the entry's UTC time


Remember = Callable[[VerifiedChange], None]


def verified_change(
    receipt: Any, entry: Mapping[str, Any], log: str, link: str
) -> VerifiedChange | None:
    """The change a written audit ``entry`` proves, or ``None``: only a call answered by its
    backend (not replayed, not refused) that the proxy judged VERIFIED and whose verifier
    named a durable change."""
    if not isinstance(receipt, Receipt) or receipt.verdict is not Verdict.VERIFIED:
        return None
    if entry.get("kind") != "call" or entry.get("outcome") != "result" or not receipt.change:
        return None
    if entry.get("verdict") != Verdict.VERIFIED.value:
        return None
    return VerifiedChange(
        scrub(receipt.change),
        str(entry.get("tool", "")),
        receipt.verifier,
        log,
        link,
        str(entry.get("ts", "")),
    )
