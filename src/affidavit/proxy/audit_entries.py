"""The proxy's audit entries: one frozen type per kind, each with the one JSON it is written as.

The log is kept for good and served to the model as ``affidavit://audit``, so nothing secret
may enter it. Rather than a dict that holds a call's raw arguments under a sentinel key until
someone remembers to redact them, every value that came from outside is a :class:`Redacted`,
which redacts in its constructor: an entry has no field that could hold raw arguments, so
its :meth:`to_json` cannot write them. The JSON is the body of one chain link (canonical JSON
sorts the keys), the same bytes the proxy wrote before these types existed (ADR 0164), and
what :data:`~affidavit.proxy.audit.AuditEntry` describes for readers.

Kinds: ``call`` (a ``tools/call``), ``read`` (a ``resources/read``), ``refused`` (a line the
relay refused), ``sampling`` (a backend sampling request over the limit), ``pin-changed``
(a tool definition that changed since it was pinned).
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from affidavit.core.canonical import digest_json
from affidavit.proxy.audit import redact
from affidavit.proxy.policy import DENY, Decision
from affidavit.proxy.verifiers.base import Receipt, Verdict

NO_VERIFIER_WHY = "no verifier for this tool"
"""What the proxy observed about a call that no verifier judges."""


@dataclass(frozen=True, init=False)
class Redacted:
    """A value from outside (arguments, a URI, a verifier's claim and evidence) as the log may
    hold it: the constructor redacts (:func:`~affidavit.proxy.audit.redact`), so there is no
    way to make one that holds the raw value."""

    value: Any

    def __init__(self, raw: Any) -> None:
        object.__setattr__(self, "value", redact(raw))


@dataclass(frozen=True)
class PolicyRecord:
    """What the policy decided about a call or read, and whether it went ahead (``None``: the
    host was asked to approve it and retry). ``rule`` is ``None`` for a refusal no rule made
    (a changed tool pin)."""

    action: str
    allowed: bool | None
    reason: str
    rule: int | None = None

    @classmethod
    def of(cls, decision: Decision, allowed: bool | None, reason: str) -> PolicyRecord:
        return cls(decision.action, allowed, reason, decision.rule)

    def to_json(self) -> dict[str, Any]:
        rule = {} if self.rule is None else {"rule": self.rule}
        return {"action": self.action, **rule, "reason": self.reason, "allowed": self.allowed}


@dataclass(frozen=True)
class Judged:
    """A verifier's verdict as recorded: its claim and evidence redacted."""

    verdict: str
    verifier: str
    claim: Redacted
    evidence: Redacted

    @classmethod
    def of(cls, receipt: Receipt) -> Judged:
        evidence = Redacted([e.as_dict() for e in receipt.evidence])
        return cls(receipt.verdict.value, receipt.verifier, Redacted(receipt.claim), evidence)

    def to_json(self) -> dict[str, Any]:
        return {
            "verdict": self.verdict,
            "verifier": self.verifier,
            "claim": self.claim.value,
            "evidence": self.evidence.value,
        }


@dataclass(frozen=True)
class NotJudged:
    """A call no verifier judges: recorded as the ``unchecked`` receipt the proxy would have
    made at ``when``. Only the tool name comes from outside, so only it is redacted (the
    proxy's own words are not scanned again: the quick lane writes many of these)."""

    tool: Redacted
    when: str

    def to_json(self) -> dict[str, Any]:
        evidence = {"observed": NO_VERIFIER_WHY, "where": "affidavit proxy", "when": self.when}
        return {
            "verdict": Verdict.UNCHECKED.value,
            "verifier": "none",
            "claim": self.tool.value,
            "evidence": [{**evidence, "details": {}}],
        }


class NoVerdict(enum.Enum):
    """A reply that was an error: there was nothing to judge (``"verdict": null``)."""

    ERROR = "error"

    def to_json(self) -> dict[str, Any]:
        return {"verdict": None}


Judgement = Judged | NotJudged | NoVerdict


@dataclass(frozen=True)
class Ending:
    """How a call or read ended: its outcome (result, forwarded, replayed, denied, refused,
    approval-asked, error, or how it was cut short), the policy's say, its timings and, for a
    call cut short, whether it had reached the backend."""

    outcome: str
    policy: PolicyRecord | None = None
    timings_ms: Mapping[str, float] | None = None
    forwarded: bool | None = None

    def to_json(self) -> dict[str, Any]:
        body: dict[str, Any] = {"outcome": self.outcome}
        if self.policy is not None:
            body["policy"] = self.policy.to_json()
        if self.timings_ms is not None:
            body["timings_ms"] = dict(self.timings_ms)
        if self.forwarded is not None:
            body["forwarded"] = self.forwarded
        return body


def _handled_json(
    kind: str, method: str, about: dict[str, Any], handled: CallEntry | ReadEntry
) -> dict[str, Any]:
    """The JSON of a call or read: what it is ``about``, then how it ended and its verdict."""
    verdict = {} if handled.judgement is None else handled.judgement.to_json()
    head = {"kind": kind, "method": method, **about, "backend": handled.backend}
    return {**head, **handled.ending.to_json(), **verdict}


@dataclass(frozen=True)
class CallEntry:
    """A ``tools/call``: the tool, its redacted arguments (and the digest of that redacted
    form, never of the secrets), how it ended and the verdict."""

    tool: str
    backend: str
    arguments: Redacted
    ending: Ending
    judgement: Judgement | None = None

    def to_json(self) -> dict[str, Any]:
        arguments = self.arguments.value
        about = {
            "tool": self.tool,
            "arguments": arguments,
            "arguments_sha256": digest_json(arguments),
        }
        return _handled_json("call", "tools/call", about, self)


@dataclass(frozen=True)
class ReadEntry:
    """A ``resources/read``: the redacted URI, how it ended and the verdict."""

    uri: Redacted
    backend: str
    ending: Ending
    judgement: Judgement | None = None

    def to_json(self) -> dict[str, Any]:
        return _handled_json("read", "resources/read", {"uri": self.uri.value}, self)


@dataclass(frozen=True)
class RefusedLine:
    """A line the relay refused (a repeated key, a reply for no request): kept only as the
    side it came from, why, its JSON-RPC id(s) and its digest."""

    side: str
    reason: str
    ids: tuple[Any, ...]
    line_sha256: str

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": "refused",
            "from": self.side,
            "reason": self.reason,
            "id": self.ids[0] if len(self.ids) == 1 else list(self.ids),
            "line_sha256": self.line_sha256,
        }


@dataclass(frozen=True)
class SamplingRefused:
    """A backend ``sampling/createMessage`` refused for going over ``limit`` per window."""

    limit: int

    def to_json(self) -> dict[str, Any]:
        return {"kind": "sampling", "policy": {"action": DENY, "limit": self.limit}}


@dataclass(frozen=True)
class PinChanged:
    """A tool whose definition hash is no longer the pinned one (refused until trusted)."""

    tool: str
    pinned: str
    seen: str

    def to_json(self) -> dict[str, Any]:
        return {"kind": "pin-changed", "tool": self.tool, "pinned": self.pinned, "seen": self.seen}


Entry = CallEntry | ReadEntry | RefusedLine | SamplingRefused | PinChanged
"""Every kind of entry the proxy writes."""


@dataclass(frozen=True)
class CallSubject:
    """What a ``tools/call`` entry is about: the tool and its raw arguments, which exist here
    only until the audit thread redacts them into a :class:`CallEntry`."""

    tool: str
    arguments: Mapping[str, Any] = field(repr=False)

    def entry(self, backend: str, ending: Ending, judgement: Judgement | None) -> CallEntry:
        return CallEntry(self.tool, backend, Redacted(self.arguments), ending, judgement)

    @property
    def claim(self) -> str:
        return self.tool


@dataclass(frozen=True)
class ReadSubject:
    """What a ``resources/read`` entry is about: its URI, redacted when the read began (the
    denial text quotes it)."""

    uri: Redacted

    def entry(self, backend: str, ending: Ending, judgement: Judgement | None) -> ReadEntry:
        return ReadEntry(self.uri, backend, ending, judgement)

    @property
    def claim(self) -> str:
        return str(self.uri.value)


class Unjudged(enum.Enum):
    """Why a call that got its reply has no receipt of its own."""

    NO_VERIFIER = "no verifier"
    ERROR = "error reply"


@dataclass(frozen=True)
class Pending:
    """A call or read as it ended, handed to the audit thread, which makes its entry
    (:meth:`entry`): redaction happens there, off the path of any reply. It has no
    ``to_json``: only the entry it makes is ever written."""

    subject: CallSubject | ReadSubject
    backend: str
    ending: Ending
    receipt: Receipt | Unjudged | None = None

    def entry(self, ts: str) -> CallEntry | ReadEntry:
        """The entry, recorded at ``ts``."""
        judgement: Judgement | None
        if isinstance(self.receipt, Receipt):
            judgement = Judged.of(self.receipt)
        elif self.receipt is Unjudged.NO_VERIFIER:
            judgement = NotJudged(Redacted(self.subject.claim), ts)
        elif self.receipt is Unjudged.ERROR:
            judgement = NoVerdict.ERROR
        else:
            judgement = None
        return self.subject.entry(self.backend, self.ending, judgement)
