"""Back-testing a policy (``affidavit proxy replay``): which recorded calls it would decide
differently.

Every ``call`` entry of an audit log is decided again by the new policy from its recorded tool
name and (redacted) arguments; a call refused because its tool's pin changed is left out, since
no policy decided it. Used by the CLI and the console, so both report the same changes.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from affidavit.proxy.policy import ALLOW, Policy


@dataclass(frozen=True)
class ChangedDecision:
    """One recorded call the new policy decides differently (``rule`` 1-based, None: default)."""

    call: int
    ts: str | None
    tool: str | None
    was: str
    would_be: str
    rule: int | None

    def as_dict(self) -> dict[str, Any]:
        """The JSON row ``proxy replay --json`` prints."""
        return {
            "call": self.call,
            "ts": self.ts,
            "tool": self.tool,
            "was": self.was,
            "would_be": self.would_be,
            "rule": self.rule,
        }


@dataclass(frozen=True)
class Backtest:
    """How many calls were replayed, and the ones whose decision would change."""

    calls: int
    changed: tuple[ChangedDecision, ...]

    def as_dict(self) -> dict[str, Any]:
        """The JSON document ``proxy replay --json`` prints."""
        return {"calls": self.calls, "changed": [row.as_dict() for row in self.changed]}


def backtest(entries: Iterable[Mapping[str, Any]], policy: Policy) -> Backtest:
    """Decide every recorded call again with ``policy``; report the decisions that change."""
    calls = [entry for entry in entries if entry.get("kind") == "call"]
    changed = []
    for index, entry in enumerate(calls, start=1):
        old = (entry.get("policy") or {}).get("action", ALLOW)
        if old == "refused":  # refused by a changed tool pin, not by policy
            continue
        decision = policy.decide(str(entry.get("tool")), entry.get("arguments") or {})
        if decision.action != old:
            changed.append(
                ChangedDecision(
                    call=index,
                    ts=entry.get("ts"),
                    tool=entry.get("tool"),
                    was=old,
                    would_be=decision.action,
                    rule=decision.rule + 1 if decision.rule >= 0 else None,
                )
            )
    return Backtest(len(calls), tuple(changed))
