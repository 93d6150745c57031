"""The contract between the relay and a claim verifier.

The relay (``affidavit.proxy``) owns the wire; a verifier owns one kind of truth. For every
``tools/call`` or ``resources/read`` the relay asks each loaded verifier whether it
:meth:`~Verifier.applies`; the first that does is used:

1. before forwarding, :meth:`~Verifier.snapshot` records the state it will judge (file hashes,
   git HEAD, refs, index) so it can tell "this call did it" from "it was already so";
2. after the backend's reply, :meth:`~Verifier.verify` re-derives the outcome and returns a
   :class:`Receipt` with a :class:`Verdict` and evidence;
3. for ``--idempotent-replay``, :meth:`~Verifier.still_holds` re-checks, before a retry is
   answered from a verified result, that the state the receipt vouched for is still true.

Verifiers are synchronous and may block (git, file hashing, HTTP to a configured API); the
relay runs them off the event loop with a timeout. A verifier that raises or times out yields
``unchecked`` and the original reply: it can never leave a request unanswered. A verifier must
never claim ``verified`` when it could not look (no root known, API unreachable): that is
``unchecked``.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from affidavit.core.clock import utc_iso

ENTRY_POINT_GROUP = "affidavit.verifiers"


class Verdict(enum.StrEnum):
    """What re-deriving the claim showed."""

    VERIFIED = "verified"
    CONTRADICTED = "contradicted"
    UNCHECKED = "unchecked"


def utc_now() -> str:
    """The current instant as UTC ISO 8601 with a ``Z`` (evidence timestamps)."""
    return utc_iso()


@dataclass(frozen=True)
class Evidence:
    """One observation: what was seen, where it was looked up, and when."""

    observed: str
    where: str
    when: str = field(default_factory=utc_now)
    details: Mapping[str, Any] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return {
            "observed": self.observed,
            "where": self.where,
            "when": self.when,
            "details": dict(self.details),
        }


@dataclass(frozen=True)
class Receipt:
    """A verifier's verdict on one call, with the evidence it rests on.

    ``vouched`` is verifier-private state describing what a VERIFIED receipt vouches for
    (e.g. ``{"path": ..., "sha256": ...}``); :meth:`Verifier.still_holds` reads it back.
    ``change`` says in plain words what a VERIFIED call changed that is worth remembering
    ("commit 138ce5c on main adds 'add notes'"): ``proxy run --remember`` turns it into a
    memory with this call's receipt. Empty when the call changed nothing durable (a read, a
    staged file) or the verifier does not say.
    """

    verdict: Verdict
    verifier: str
    claim: str
    evidence: tuple[Evidence, ...] = ()
    vouched: Mapping[str, Any] = field(default_factory=dict)
    change: str = ""

    def as_dict(self) -> dict[str, Any]:
        return {
            "verdict": self.verdict.value,
            "verifier": self.verifier,
            "claim": self.claim,
            "evidence": [e.as_dict() for e in self.evidence],
        }


@dataclass(frozen=True)
class CallContext:
    """What the relay knows about one call when it asks a verifier.

    ``method`` is ``"tools/call"`` or ``"resources/read"``; ``name`` is the tool name or the
    resource URI; ``arguments`` the call's arguments (empty for resources); ``backend`` the
    backend's ``serverInfo.name`` from the handshake (``""`` if unknown) and ``backend_command``
    the argv the proxy started (empty for HTTP backends); ``roots`` the filesystem roots known
    from ``--root`` and the host (may be empty: then path-based claims are unchecked).
    ``settings`` carries user configuration a verifier may need (e.g. a GitHub API base URL
    and token read from the environment), never secrets in plain logs.
    """

    method: str
    name: str
    arguments: Mapping[str, Any]
    backend: str = ""
    backend_command: tuple[str, ...] = ()
    roots: tuple[Path, ...] = ()
    settings: Mapping[str, Any] = field(default_factory=dict)


@runtime_checkable
class Verifier(Protocol):
    """A plugin that checks one family of claims. See the module docstring for the lifecycle."""

    name: str

    def applies(self, ctx: CallContext) -> bool:
        """Whether this verifier judges this call (by method, tool name and backend)."""
        ...

    def snapshot(self, ctx: CallContext) -> Any:
        """Record the pre-call state this verifier will judge against. Must be fast."""
        ...

    def verify(self, ctx: CallContext, before: Any, result: Mapping[str, Any]) -> Receipt:
        """Judge the backend's JSON-RPC ``result`` object (a parsed copy) against reality."""
        ...

    def still_holds(self, ctx: CallContext, receipt: Receipt) -> bool:
        """Whether the state a VERIFIED ``receipt`` vouched for is still true right now."""
        ...
