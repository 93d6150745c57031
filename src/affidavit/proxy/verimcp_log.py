"""Reading an audit log that verimcp wrote, so its users keep their history when they switch.

verimcp (``--audit-log``) writes one plain JSON object per line — ``session_id``, ``seq``,
``timestamp``, ``method``, ``target``, ``arguments``, ``outcome`` (``forwarded``,
``verified_ok``, ``verified_failed``, ``denied``, ``idempotent_replay``), ``gate`` (the policy
action and reason, when a rule matched), ``verification`` and ``approval`` — with no hash
chain. :func:`read_verimcp_log` turns each line into an :class:`~affidavit.proxy.audit.AuditEntry`
so ``affidavit proxy replay`` back-tests a policy on it as on our own log, and
:func:`count_verimcp_entries` lets ``affidavit audit verify`` report it as well-formed but *not
hash-chained*: nothing in such a file can show that a line was changed or removed.

Only the reading side exists: the proxy always writes its own chained format.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, cast

from affidavit.core.errors import IntegrityError
from affidavit.proxy.policy import ALLOW, action_named

FORMAT = "verimcp"
KEYS = frozenset({"session_id", "seq", "timestamp", "method", "target", "outcome"})
"""The fields every verimcp audit line has (and no line of ours has)."""
_OUTCOMES = {
    "forwarded": "forwarded",
    "verified_ok": "result",
    "verified_failed": "result",
    "denied": "denied",
    "idempotent_replay": "replayed",
}
_KINDS = {"tools/call": "call", "resources/read": "read"}


def is_verimcp_line(raw: bytes) -> bool:
    """Whether one log line is a verimcp audit entry."""
    try:
        record = json.loads(raw)
    except ValueError:
        return False
    return isinstance(record, dict) and record.keys() >= KEYS


def _records(path: Path) -> Iterator[tuple[int, Mapping[str, Any]]]:
    """``(line number, record)`` for every non-empty line; a line that is not a verimcp
    entry is refused with its number."""
    with path.open("rb") as handle:
        for number, raw in enumerate(handle, start=1):
            if not raw.strip():
                continue
            if not is_verimcp_line(raw):
                raise IntegrityError(
                    f"audit log {path}: line {number} is not a verimcp audit entry",
                    "a verimcp log holds only verimcp entries; keep the file as it is and "
                    "split it, or pass an intact log",
                )
            yield number, json.loads(raw)


def _entry(record: Mapping[str, Any]) -> dict[str, Any]:
    """One verimcp line as our audit entry (the fields ``proxy replay`` and readers use)."""
    method = str(record["method"])
    target = str(record["target"])
    outcome = str(record["outcome"])
    gate = record.get("gate") if isinstance(record.get("gate"), Mapping) else None
    verification = record.get("verification")
    verifiers = verification.get("verifiers") if isinstance(verification, Mapping) else None
    entry: dict[str, Any] = {
        "session": str(record["session_id"]),
        "ts": str(record["timestamp"]),
        "kind": _KINDS.get(method, method),
        "method": method,
        "arguments": record.get("arguments") or {},
        "outcome": _OUTCOMES.get(outcome, outcome),
        "policy": {
            "action": action_named(gate.get("action", ALLOW)) if gate else ALLOW,
            "allowed": outcome != "denied",
            "reason": str(gate.get("reason", "")) if gate else "",
        },
        # verimcp's verified_failed also covers a backend's own error: only a pass is a verdict
        "verdict": "verified" if outcome == "verified_ok" else None,
        "verifier": ",".join(map(str, verifiers)) if isinstance(verifiers, list) else "",
        "reason": f"verimcp outcome {outcome}",
    }
    entry["uri" if method == "resources/read" else "tool"] = target
    return entry


def read_verimcp_log(path: Path) -> list[Any]:
    """Every entry of a verimcp log, oldest first, as :class:`AuditEntry` values."""
    return [cast("Any", _entry(record)) for _, record in _records(Path(path))]


def count_verimcp_entries(path: Path) -> int:
    """How many well-formed entries a verimcp log holds (refusing a malformed line)."""
    return sum(1 for _ in _records(Path(path)))
