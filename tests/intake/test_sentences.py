"""Deterministic extraction: the four kinds of claim are kept, questions and narration are not."""

from __future__ import annotations

import pytest

from affidavit.intake import Category, extract


@pytest.mark.parametrize(
    ("text", "category"),
    [
        ("No, the staging database is db-2, not db-1.", Category.CORRECTION),
        ("Actually we deploy with uv now.", Category.CORRECTION),
        ("We decided to ship releases on Fridays.", Category.DECISION),
        ("Let's use PostgreSQL 16 for the team vault.", Category.DECISION),
        ("I prefer tabs over spaces in Makefiles.", Category.PREFERENCE),
        ("Always run ruff before committing.", Category.PREFERENCE),
        ("Never force-push to main.", Category.PREFERENCE),
        ("The API server listens on port 8080.", Category.FACT),
        ("Alice owns the billing service.", Category.FACT),
        ("The deploy script lives in scripts/deploy.sh.", Category.FACT),
    ],
)
def test_each_kind_of_claim_is_kept_with_its_category(text: str, category: Category) -> None:
    assert [(e.text, e.category) for e in extract(text, 200)] == [(text, category)]


@pytest.mark.parametrize(
    "text",
    [
        "What port does the API server use?",
        "Let me check the config at port 8080 first.",
        "I'll run the 42 tests now.",
        "The build is green.",  # no number, name or identifier: not a durable fact
        "Run the tests.",
        "ok",
    ],
)
def test_questions_narration_and_vague_sentences_are_left_out(text: str) -> None:
    assert extract(text, 200) == []


def test_a_message_is_cut_into_sentences_bullets_apart_code_dropped() -> None:
    message = (
        "## Notes\n"
        "We decided to ship on Fridays. The API listens on port 8080.\n"
        "- Alice owns billing.\n"
        "```\nserver.port is 9090\n```\n"
    )
    assert [e.text for e in extract(message, 200)] == [
        "We decided to ship on Fridays.",
        "The API listens on port 8080.",
        "Alice owns billing.",
    ]


def test_too_long_and_repeated_sentences_are_kept_once_or_not_at_all() -> None:
    long = "We decided to use " + "very " * 60 + "long names."
    text = f"{long} We decided to ship on Fridays. We decided to ship on Fridays."
    assert [e.text for e in extract(text, 200)] == ["We decided to ship on Fridays."]


def test_extraction_is_deterministic() -> None:
    text = "No, it is db-2. We decided on Fridays. I prefer tabs. Port 8080 is the API's."
    assert extract(text, 200) == extract(text, 200)
