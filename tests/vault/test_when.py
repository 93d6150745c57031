"""The dates a question names (vault/when.py): forms, specificity, and what is not a date."""

from __future__ import annotations

import pytest

from affidavit.vault.when import Span, spans


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        ("Who came to dinner on May 3, 2023?", [Span(2023, 5, 3)]),
        ("What happened on 1 February, 2023?", [Span(2023, 2, 1)]),
        ("the 3rd of Aug. 2024", [Span(2024, 8, 3)]),
        ("What did she start in December 2023?", [Span(2023, 12, None)]),
        ("When did Melanie go camping in June?", [Span(None, 6, None)]),
        ("What changed on Sept 5?", [Span(None, 9, 5)]),
        ("How often did he swim in 2023?", [Span(2023, None, None)]),
        ("between 2023-05-23 and 2023-06", [Span(2023, 5, 23), Span(2023, 6, None)]),
        ("in May 2023 and again in May 2023", [Span(2023, 5, None)]),
        ("what shipped last May?", [Span(None, 5, None)]),
        ("what did we decide on May 4th?", [Span(None, 5, 4)]),
        ("what broke on 2023-05-04?", [Span(2023, 5, 4)]),
        ("who joined the team since March?", [Span(None, 3, None)]),
        ("what happened in mid-June", [Span(None, 6, None)]),
        ("the summer of 2022", [Span(2022, None, None)]),
        ("the week before 9 June 2023", [Span(2023, 6, 9)]),
        ("the 4th of July", [Span(None, 7, 4)]),
    ],
)
def test_named_dates(question: str, expected: list[Span]) -> None:
    assert list(spans(question)) == expected


@pytest.mark.parametrize(
    "question",
    [
        "What may she do if they march on?",  # lower-case verbs are not months
        "Maybe on Mayday",
        "ticket 12345 and port 8080",  # numbers that are not years
        "on 2023-13-01",  # no month 13
        "",
        # issue 13: a bare capitalised month word, or any four-digit number, named a date
        "May I deploy the hotfix today?",
        "March the release branch forward",
        "what does error 2003 mean",
        "is port 2020 open on the gateway",
        "who owns PROJ-2026",
        "status of ABC-2023-05",
        "the June release notes",
        "March 3 servers to the new rack",
        "at 2020 rpm the fan is loud",
    ],
)
def test_no_date(question: str) -> None:
    assert spans(question) == ()


def test_a_span_contains_iso_dates_only_when_every_named_part_agrees() -> None:
    assert Span(2023, 5, None).contains("2023-05-31")
    assert not Span(2023, 5, None).contains("2024-05-31")
    assert Span(None, 5, 3).contains("1999-05-03")
    assert not Span(2023, None, None).contains(None)
    assert not Span(2023, None, None).contains("garbage!!")
