"""The proxy's audit log as the console shows it: one row per call, kept up to date.

The log is read only through :class:`affidavit.proxy.audit.LogFollower`, which verifies every
link as it reads; each :meth:`CallFeed.refresh` reads what the proxies appended since the last.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

VERDICTS = ("verified", "contradicted", "unchecked", "denied", "waiting", "error")
KEPT_ROWS = 5000
SHOWN_ROWS = 500
_DENIED_OUTCOMES = frozenset(("denied", "refused"))


@dataclass(frozen=True)
class CallRow:
    """One call (or read, or refused request) of the log, as the table shows it."""

    index: int
    ts: str
    server: str
    tool: str
    verdict: str
    outcome: str
    policy: str
    receipt: str
    evidence: tuple[tuple[str, str], ...]
    total_ms: Any
    key: tuple[str, str, str]

    def matches(self, server: str, tool: str, verdict: str) -> bool:
        """Whether the row passes the filters (an empty filter passes everything)."""
        return (
            (not server or self.server == server)
            and (not tool or self.tool == tool)
            and (not verdict or self.verdict == verdict)
        )


def verdict_of(entry: Mapping[str, Any]) -> str:
    """What the table calls an entry: a verifier's verdict, denied, waiting or error."""
    outcome = entry.get("outcome")
    policy = entry.get("policy") or {}
    if entry.get("kind") in ("refused", "sampling") or outcome in _DENIED_OUTCOMES:
        return (
            "denied"
            if entry.get("kind") != "sampling" or policy.get("action") == "deny"
            else "error"
        )
    if outcome == "approval-asked":
        return "waiting"
    verdict = entry.get("verdict")
    return verdict if verdict in ("verified", "contradicted", "unchecked") else "error"


def row_of(index: int, entry: Mapping[str, Any]) -> CallRow:
    """The table row for the ``index``-th entry of the log (1-based)."""
    kind = str(entry.get("kind", ""))
    if kind == "read":
        tool = str(entry.get("uri", ""))
    elif kind == "sampling":
        tool = "sampling/createMessage"
    elif kind == "refused":
        tool = f"(a line from the {entry.get('from', '?')} was refused)"
    else:
        tool = str(entry.get("tool", ""))
    policy = entry.get("policy") or {}
    reason = policy.get("reason") or entry.get("reason") or ""
    action = str(policy.get("action", ""))
    evidence = tuple(
        (str(item.get("observed", "")), str(item.get("where", "")))
        for item in entry.get("evidence") or []
        if isinstance(item, Mapping)
    )
    receipt = f"{entry['verifier']}: {entry.get('claim', '')}" if entry.get("verifier") else ""
    return CallRow(
        index=index,
        ts=str(entry.get("ts", "")),
        server=str(entry.get("backend") or ""),
        tool=tool,
        verdict=verdict_of(entry),
        outcome=str(entry.get("outcome") or kind),
        policy=" · ".join(part for part in (action, str(reason)) if part and part != "no policy"),
        receipt=receipt,
        evidence=evidence,
        total_ms=(entry.get("timings_ms") or {}).get("total"),
        key=(str(entry.get("session", "")), tool, str(entry.get("arguments_sha256", ""))),
    )


class CallFeed:
    """The log as the page shows it: rows, tool-pin changes and approvals still waiting."""

    def __init__(self, path: Path) -> None:
        from affidavit.proxy import LogFollower

        self.path = path
        self.follower = LogFollower(path)
        self.rows: deque[CallRow] = deque(maxlen=KEPT_ROWS)
        self.pins: deque[Mapping[str, Any]] = deque(maxlen=200)
        self.waiting: dict[tuple[str, str, str], CallRow] = {}
        self.count = 0
        self.lock = threading.Lock()

    def refresh(self) -> None:
        """Read what the proxies appended since the last refresh."""
        with self.lock:
            update = self.follower.poll()
            if update.restarted:
                self.rows.clear()
                self.pins.clear()
                self.waiting.clear()
                self.count = 0
            for entry in update.entries:
                self.count += 1
                if entry.get("kind") == "pin-changed":
                    self.pins.append(entry)
                    continue
                row = row_of(self.count, entry)
                self.rows.append(row)
                self.waiting.pop(row.key, None)
                if row.verdict == "waiting":
                    self.waiting[row.key] = row

    def after(self, index: int, server: str, tool: str, verdict: str) -> list[CallRow]:
        """Rows after log entry ``index`` that pass the filters, oldest first."""
        with self.lock:
            rows = [r for r in self.rows if r.index > index and r.matches(server, tool, verdict)]
        return rows[-SHOWN_ROWS:]

    def choices(self) -> tuple[list[str], list[str]]:
        """Every server and tool seen, for the filters."""
        with self.lock:
            return sorted({r.server for r in self.rows if r.server}), sorted(
                {r.tool for r in self.rows}
            )
