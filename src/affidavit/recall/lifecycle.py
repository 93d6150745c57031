"""Dates of a memory's life: discovered, expires (date or 14d/2w/3m/1y), and the sweep.

Why expiry is a date and inclusive: a door code valid "until the 3rd" is still the answer on
the 3rd. A memory with ``expires = D`` is live through day D (UTC) and gone from the 4th on.
Reads never write, so an expired memory is simply not returned by search; the sweep that
forgets it for good runs on the next write (store, link) and on ``affidavit expire``.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, date, datetime
from typing import Any

from affidavit.core import durations
from affidavit.core.errors import InputError


def today_utc() -> date:
    """Today's date in UTC (what ``expires`` is compared against)."""
    return datetime.now(UTC).date()


def parse_date(value: Any, name: str, where: str = "") -> str:
    """A calendar date as YYYY-MM-DD (a full ISO time is cut to its date)."""
    if isinstance(value, str):
        try:
            return date.fromisoformat(value[:10]).isoformat()
        except ValueError:
            pass
    raise InputError(f"{where}{name} {value!r} is not a date", "write it as YYYY-MM-DD")


def parse_expires(value: Any, today: date | None = None, where: str = "") -> str:
    """``expires`` as a date, or a duration from today: 14d, 2w, 3m, 1y; never in the past.

    A memory that expired before it was stored would be stored, swept at once and reported
    as stored: refused here instead, before anything is written. Today is allowed (the
    expiry day itself is live).
    """
    today = today or today_utc()
    end = durations.parse_day(value, f"{where}expires", today)
    if end < today:
        raise InputError(
            f"{where}expires {value!r} is in the past (today is {today.isoformat()} UTC)",
            "give the last day the memory holds, today or later, or leave expires out",
        )
    return end.isoformat()


def is_expired(data: Mapping[str, Any], today: date | None = None) -> bool:
    """True once the day after ``expires`` has begun (the expiry day itself is live)."""
    expires = data.get("expires")
    return bool(expires) and str(expires) < (today or today_utc()).isoformat()
