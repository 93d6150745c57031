"""The dates a question names, so recall can favour memories from that day, month or year.

"What did Maria donate in December 2023?" or "Who did she have dinner with on May 3, 2023?"
name a time; a memory's ``discovered`` date says when it was learned. Ranking
(:mod:`affidavit.vault.ranking`, ``W_DATE``) lets a candidate whose date falls inside a named
span count its evidence more. A date is never evidence on its own: it only reorders memories
that already match the question.

Recognised forms: ISO ``2023-05-03`` and ``2023-05``; ``May 3, 2023``, ``3 May 2023``,
``May 3`` and ``3 May`` (any year); ``May 2023``; a month name alone; a year (1900-2099)
alone. Month names count only capitalised (``May``, ``Aug.``), so the verb "may" or
"march" names no month. Relative expressions ("last week") are not resolved: the question's
own time is unknown to the vault.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_MONTHS = {
    name: number
    for number, names in enumerate(
        (
            ("January", "Jan"),
            ("February", "Feb"),
            ("March", "Mar"),
            ("April", "Apr"),
            ("May",),
            ("June", "Jun"),
            ("July", "Jul"),
            ("August", "Aug"),
            ("September", "Sep", "Sept"),
            ("October", "Oct"),
            ("November", "Nov"),
            ("December", "Dec"),
        ),
        start=1,
    )
    for name in names
}
_MONTH = r"(?P<month>" + "|".join(sorted(_MONTHS, key=len, reverse=True)) + r")\.?"
_DAY = r"(?P<day>[0-3]?\d)(?:st|nd|rd|th)?"
_YEAR = r"(?P<year>(?:19|20)\d\d)"
_PATTERNS = [
    re.compile(p)
    for p in (
        r"\b(?P<year>(?:19|20)\d\d)-(?P<mnum>[01]\d)(?:-(?P<day>[0-3]\d))?\b",
        rf"\b{_MONTH}\s+{_DAY}(?:,?\s+{_YEAR})?\b",
        rf"\b{_DAY}\s+(?:of\s+)?{_MONTH}(?:,?\s+{_YEAR})?\b",
        rf"\b{_MONTH},?\s+{_YEAR}\b",
        rf"\b{_MONTH}(?![\w-])",
        rf"\b{_YEAR}\b",
    )
]


@dataclass(frozen=True)
class Span:
    """A day, month or year named by a question; ``None`` parts match any value."""

    year: int | None
    month: int | None
    day: int | None

    def contains(self, date: str | None) -> bool:
        """Whether an ISO ``YYYY-MM-DD`` date (a memory's ``discovered``) falls inside."""
        if not date or len(date) < 10:
            return False
        try:
            year, month, day = int(date[:4]), int(date[5:7]), int(date[8:10])
        except ValueError:
            return False
        return (
            (self.year is None or self.year == year)
            and (self.month is None or self.month == month)
            and (self.day is None or self.day == day)
        )


def spans(question: str) -> tuple[Span, ...]:
    """Every span the question names, the most specific reading of each phrase first.

    Patterns run from most to least specific; the text a match consumed is blanked, so
    "May 3, 2023" yields one day, not also a month and a year.
    """
    found: list[Span] = []
    text = question
    for pattern in _PATTERNS:
        for match in pattern.finditer(text):
            span = _span(match.groupdict())
            if span is not None:
                found.append(span)
        text = pattern.sub(lambda m: " " * len(m.group(0)), text)
    return tuple(dict.fromkeys(found))


def _span(parts: dict[str, str | None]) -> Span | None:
    month_name, month_number = parts.get("month"), parts.get("mnum")
    day_text, year_text = parts.get("day"), parts.get("year")
    month = _MONTHS[month_name] if month_name else int(month_number) if month_number else None
    day = int(day_text) if day_text else None
    year = int(year_text) if year_text else None
    if (month is not None and not 1 <= month <= 12) or (day is not None and not 1 <= day <= 31):
        return None
    return Span(year, month, day)
