"""The memory model: one claim, a source, dates, importance, kinds (no model needed)."""

from __future__ import annotations

from datetime import date

import pytest

from affidavit.core.errors import InputError
from affidavit.recall.claims import Claim, check_claim
from affidavit.recall.lifecycle import is_expired, parse_expires


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("- first thing\n- second thing", "list"),
        ("1. step one\n2. step two", "list"),
        ("# Notes\nthe deploy runs on Fridays", "heading"),
        ("Deploys run on Fridays.\n\nThe cache lives in /var/cache.", "paragraphs"),
        ("x" * 201, "at most 200 characters"),
    ],
)
def test_more_than_one_claim_is_refused_with_advice_to_split(text: str, why: str) -> None:
    with pytest.raises(InputError, match=why) as caught:
        check_claim(text)
    assert "split it into single claims" in str(caught.value) and "\n" not in str(caught.value)


def test_the_claim_limit_is_configurable_and_whitespace_is_folded() -> None:
    check_claim("y" * 300, max_chars=300)
    with pytest.raises(InputError, match="at most 50"):
        check_claim("y" * 51, max_chars=50)
    assert check_claim("  one   claim\nwrapped  ") == "one claim wrapped"


def test_source_is_required_and_fields_are_checked() -> None:
    with pytest.raises(InputError, match="needs a non-empty 'source'"):
        Claim.from_json({"text": "a fact"})
    with pytest.raises(InputError, match="unknown field 'colour'"):
        Claim.from_json({"text": "a fact", "source": "s", "colour": "red"})
    with pytest.raises(InputError, match="kind must be"):
        Claim.from_json({"text": "a fact", "source": "s", "kind": "rumour"})
    with pytest.raises(InputError, match="importance"):
        Claim.from_json({"text": "a fact", "source": "s", "importance": "high"})
    with pytest.raises(InputError, match="discovered"):
        Claim.from_json({"text": "a fact", "source": "s", "discovered": "last tuesday"})
    with pytest.raises(InputError, match="supersedes"):
        Claim.from_json({"text": "a fact", "source": "s", "supersedes": "abc"})


def test_a_claim_is_checked_when_made_and_names_where_it_came_from() -> None:
    with pytest.raises(InputError, match=r"^facts\[2\]: a memory cannot contain a list"):
        Claim.from_json({"text": "- a\n- b", "source": "s"}, "facts[2]: ")
    with pytest.raises(InputError, match="namespace"):
        Claim("a fact", "s", namespace="no spaces")
    claim = Claim("  a   fact  ", " chat ", tags=["Ops"], supersedes=[])
    assert (claim.text, claim.source, claim.tags, claim.supersedes) == (
        "a fact",
        "chat",
        ("ops",),
        (),
    )
    assert claim.namespace is None  # the caller's own, decided by Memory
    with pytest.raises(AttributeError):
        claim.text = "changed"  # type: ignore[misc]


def test_importance_is_clamped_and_tags_normalised() -> None:
    assert Claim.from_json({"text": "t", "source": "s", "importance": 7}).importance == 1.0
    assert Claim.from_json({"text": "t", "source": "s", "importance": -1}).importance == 0.0
    claim = Claim.from_json({"text": "t", "source": "s", "tags": ["Ops", "ops", " infra "]})
    assert claim.tags == ("ops", "infra")


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        ("14d", "2026-01-15"),
        ("2w", "2026-01-15"),
        ("3m", "2026-04-01"),
        ("1y", "2027-01-01"),
        ("2026-09-03", "2026-09-03"),
    ],
)
def test_expires_takes_a_date_or_a_duration(given: str, expected: str) -> None:
    assert parse_expires(given, today=date(2026, 1, 1)) == expected


def test_month_durations_land_on_real_days() -> None:
    assert parse_expires("1m", today=date(2026, 1, 31)) == "2026-02-28"


def test_expiry_day_itself_is_still_live() -> None:
    data = {"expires": "2026-09-03"}
    assert not is_expired(data, date(2026, 9, 3))
    assert is_expired(data, date(2026, 9, 4))
    assert not is_expired({}, date(2030, 1, 1))
    with pytest.raises(InputError, match="neither a date nor a duration"):
        parse_expires("soon")
