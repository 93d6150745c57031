"""When a memory was saved, in the value forms Compartment's results carry.

Why its own module: a user switching from Compartment reads ``created`` off a memory or a
store result as a unix time (seconds, fractional) and ``created_local`` as the local minute.
Those forms were recorded from Compartment 4.13.0 itself
(tests/servers/memory/compartment_recorded.json, ADR 0228); our own ``saved_at`` (ISO 8601,
UTC) stays on every memory as it was.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import TypedDict


class SavedMoment(TypedDict, total=False):
    """``saved_at`` as Compartment spells it (nothing for a pack's record, saved nowhere)."""

    created: float
    created_local: str


def saved_moment(saved_at: str) -> SavedMoment:
    """``saved_at`` as a unix time and as the minute on the server's local clock."""
    if not saved_at:
        return {}
    moment = datetime.fromisoformat(saved_at)
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return {
        "created": moment.timestamp(),
        "created_local": moment.astimezone().strftime("%Y-%m-%d %H:%M"),
    }
