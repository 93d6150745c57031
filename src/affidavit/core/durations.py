"""The one duration grammar every flag and field reads: a whole number and a unit.

``14d`` (days), ``2w`` (weeks), ``3m`` (calendar months: the same day of the month, or the
month's last day when it has no such day) and ``1y`` (twelve months). A memory's
``expires`` and ``pack sign --expires`` both read it, so ``2w`` means the same everywhere.
"""

from __future__ import annotations

import calendar
import re
from datetime import date, timedelta
from typing import Any, TypeVar

from affidavit.core.errors import InputError

WHEN = TypeVar("WHEN", bound=date)  # a date or a datetime (a datetime is a date)

EXAMPLES = "14d, 2w, 3m, 1y"
"""What a help text or an error shows as the grammar's examples."""

_DURATION = re.compile(r"([0-9]{1,5})([dwmy])")


def add_duration(start: WHEN, text: str, name: str) -> WHEN | None:
    """``start`` plus the duration ``text``, or None when ``text`` is not a duration.

    ``name`` is what the user typed it as (``--expires``, ``facts[2].expires``): a duration
    that runs past the calendar's end is an InputError that names it.
    """
    match = _DURATION.fullmatch(text.strip().lower())
    if match is None:
        return None
    n, unit = int(match.group(1)), match.group(2)
    try:
        if unit == "d":
            return start + timedelta(days=n)
        if unit == "w":
            return start + timedelta(weeks=n)
        return _add_months(start, n if unit == "m" else 12 * n)
    except (OverflowError, ValueError):
        raise InputError(
            f"{name} {text!r} is too far ahead", "give a shorter duration or a date"
        ) from None


def parse_day(value: Any, name: str, today: date) -> date:
    """The day ``value`` names: a date (YYYY-MM-DD; a full ISO time is cut to its date) or a
    duration from ``today``; ``name`` is what the user typed it as, for the error."""
    if isinstance(value, str):
        later = add_duration(today, value, name)
        if later is not None:
            return later
        try:
            return date.fromisoformat(value.strip()[:10])
        except ValueError:
            pass
    raise InputError(
        f"{name} {value!r} is neither a date nor a duration",
        f"write a date (2026-09-03) or a duration ({EXAMPLES})",
    )


def _add_months(start: WHEN, months: int) -> WHEN:
    month0 = start.month - 1 + months
    year, month = start.year + month0 // 12, month0 % 12 + 1
    last = calendar.monthrange(year, month)[1]  # ValueError past year 9999
    return start.replace(year=year, month=month, day=min(start.day, last))
