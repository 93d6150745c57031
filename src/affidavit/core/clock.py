"""UTC timestamps as every plane writes them: ISO 8601 with a ``Z``, never a local offset."""

from __future__ import annotations

from datetime import UTC, datetime


def utc_iso(moment: datetime | None = None, timespec: str = "milliseconds") -> str:
    """``moment`` (default: now) in UTC as ISO 8601 ending in ``Z``, to ``timespec`` precision."""
    when = datetime.now(UTC) if moment is None else moment.astimezone(UTC)
    return when.isoformat(timespec=timespec).replace("+00:00", "Z")
