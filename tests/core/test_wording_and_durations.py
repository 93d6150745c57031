"""The pieces of English and the one duration grammar every message and flag shares
(core/wording.py, core/durations.py; issue 25 item 8)."""

from __future__ import annotations

from datetime import UTC, date, datetime

import pytest

from affidavit.core.durations import add_duration, parse_day
from affidavit.core.errors import InputError
from affidavit.core.wording import counted
from affidavit.servers.toolkit import _MESSAGES


def test_counts_agree_with_their_nouns() -> None:
    assert counted(1, "character") == "1 character"
    assert counted(0, "character") == "0 characters"
    assert counted(2, "entry", "entries") == "2 entries"
    assert counted(1, "entry", "entries") == "1 entry"
    assert _MESSAGES["minItems"]("facts", 1)[0] == "facts needs at least 1 item"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("14d", date(2026, 2, 14)),
        ("2W", date(2026, 2, 14)),
        ("1m", date(2026, 2, 28)),  # the month's last day when it has no 31st
        ("13m", date(2027, 2, 28)),
        ("1y", date(2027, 1, 31)),
    ],
)
def test_one_grammar_for_dates_and_times(text: str, expected: date) -> None:
    assert add_duration(date(2026, 1, 31), text, "--expires") == expected
    moment = datetime(2026, 1, 31, 12, 30, tzinfo=UTC)
    assert add_duration(moment, text, "--expires") == datetime.combine(expected, moment.timetz())


def test_what_is_not_a_duration_and_what_runs_off_the_calendar() -> None:
    assert add_duration(date(2026, 1, 1), "2026-03-01", "x") is None
    assert add_duration(date(2026, 1, 1), "90days", "x") is None
    with pytest.raises(InputError, match="--expires '99999y' is too far ahead"):
        add_duration(date(2026, 1, 1), "99999y", "--expires")
    with pytest.raises(InputError, match="--expires 'soon' is neither a date nor a duration"):
        parse_day("soon", "--expires", date(2026, 1, 1))
    assert parse_day("2026-03-01T10:00:00Z", "x", date(2026, 1, 1)) == date(2026, 3, 1)
