"""The dates a question names, so recall can favour memories from that day, month or year.

"What did Maria donate in December 2023?" or "Who came to dinner on May 3rd?" name a time; a
memory's ``discovered`` date says when it was learned. Ranking (``W_DATE``) lets a candidate
whose date falls inside a named span score a little more. A date is never evidence on its
own: it only reorders memories that already match the question.

Only real date expressions count (ADR 57):

- ISO ``2023-05-04`` and ``2023-05``, not inside a longer token (``PROJ-2023-05`` is an id);
- a month and a day with a year, an ordinal or a cue word: ``May 4, 2023``, ``May 4th``,
  ``the 4th of May``, ``on May 4``, ``4 May 2023``;
- a month and a year: ``May 2023``;
- a month after a cue word: ``in May``, ``last May``, ``since March``, ``mid-June``;
- a year after a cue word: ``in 2023``, ``since 2020``, ``summer of 2023``.

A bare month word ("May I deploy?", "March the branch") and a bare four-digit number
("error 2003", "port 2020") name nothing. Month names count only capitalised, so "may" and
"march" never do. Relative expressions ("last week") are not resolved: the question's own
time is unknown to the vault; "last May" reads as May of any year.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
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
_DAY = r"(?P<day>3[01]|[12]\d|0?[1-9])(?P<ordinal>st|nd|rd|th)?"
_YEAR = r"(?P<year>(?:19|20)\d\d)"
#: Words that make what follows a time: "on May 4", "in May", "since 2020".
_DAY_CUE = r"(?P<cue>on|by|since|until|till|before|after|from|through)"
_SPAN_CUE = r"(?:in|during|since|until|till|by|before|after|from|through|of|last|this|next)"
_YEAR_CUE = rf"(?:{_SPAN_CUE}|year|spring|summer|autumn|fall|winter)"
_PART = r"(?:(?:early|late|mid)[\s-]+)"
_END = r"(?![\w-])"


def _accept_all(parts: Mapping[str, str | None]) -> bool:
    return True


def _pinned_day(parts: Mapping[str, str | None]) -> bool:
    """A month and a day count with a year, an ordinal, "of" or a cue ("May 3 servers" not)."""
    return any(parts.get(name) for name in ("cue", "ordinal", "of", "year"))


#: Each pattern, from the most specific to the least, with the test a match must pass.
_PATTERNS: list[tuple[re.Pattern[str], Callable[[Mapping[str, str | None]], bool]]] = [
    (
        re.compile(rf"(?<![\w-]){_YEAR}-(?P<mnum>0[1-9]|1[0-2])(?:-(?P<day>[0-3]\d))?{_END}"),
        _accept_all,
    ),
    (
        re.compile(
            rf"(?:\b{_DAY_CUE}\s+(?:the\s+)?)?\b{_MONTH}\s+{_DAY}(?:,?\s+{_YEAR})?"
            r"(?![\w-]|[:.,]\d)"
        ),
        _pinned_day,
    ),
    (
        re.compile(
            rf"(?:\b{_DAY_CUE}\s+(?:the\s+)?)?\b{_DAY}\s+(?P<of>of\s+)?{_MONTH}"
            rf"(?:,?\s+{_YEAR})?{_END}"
        ),
        _pinned_day,
    ),
    (re.compile(rf"\b{_MONTH},?\s+{_YEAR}{_END}"), _accept_all),
    (re.compile(rf"(?:\b{_SPAN_CUE}\s+{_PART}?|\b{_PART}){_MONTH}{_END}"), _accept_all),
    (re.compile(rf"(?:\b{_YEAR_CUE}\s+{_PART}?|\b{_PART}){_YEAR}{_END}"), _accept_all),
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

    Patterns run from most to least specific; the text an accepted match consumed is
    blanked, so "May 3, 2023" yields one day, not also a month and a year.
    """
    found: list[Span] = []
    text = question
    for pattern, accepts in _PATTERNS:
        for match in pattern.finditer(text):
            parts = match.groupdict()
            if not accepts(parts):
                continue
            span = _span(parts)
            if span is not None:
                found.append(span)
            start, end = match.span()
            text = text[:start] + " " * (end - start) + text[end:]
    return tuple(dict.fromkeys(found))


def _span(parts: Mapping[str, str | None]) -> Span | None:
    month_name, month_number = parts.get("month"), parts.get("mnum")
    day_text, year_text = parts.get("day"), parts.get("year")
    month = _MONTHS[month_name] if month_name else int(month_number) if month_number else None
    day = int(day_text) if day_text else None
    year = int(year_text) if year_text else None
    if day is not None and not 1 <= day <= 31:
        return None
    return Span(year, month, day)
