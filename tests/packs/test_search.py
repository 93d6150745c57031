"""Search: every query word must match, forgiving case, accents and word endings; filters; why."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from affidavit.core.errors import InputError
from affidavit.packs import format as fmt
from affidavit.packs.search import MAX_MATCHES, Filters, PackIndex, normal_form
from affidavit.packs.verify import verify_pack
from tests.packs._build_fixtures import build_sample
from tests.packs.conftest import make_record


@pytest.fixture(scope="module")
def sample(tmp_path_factory: pytest.TempPathFactory) -> PackIndex:
    pack = build_sample(tmp_path_factory.mktemp("search") / "pack")
    return PackIndex(verify_pack(pack).records)


def _ids(index: PackIndex, query: str, **filters: Any) -> list[str]:
    return [m["record_id"] for m in index.search(query, Filters(**filters)).matches]


def _record(i: int, text: str, date: str, **fields: Any) -> dict[str, Any]:
    record = make_record(i, statement=text, topic=f"topic {i}", **fields)
    record["date_first_utc"] = record["date_last_utc"] = date
    record["evidence"][0]["date_utc"] = date
    fmt.check_record(record)  # only ever index records the verifier would accept
    return record


@pytest.mark.parametrize(
    ("written", "query"),
    [
        ("seedlings", "seedling"),
        ("seedling", "Seedlings"),
        ("ladders", "LADDER"),
        ("repairing", "repair"),
        ("repaired", "repairs"),
        ("hoped", "hoping"),
        ("running", "run"),
        ("cities", "city"),
        ("boxes", "box"),
        ("café", "cafe"),
        ("CAFÉ", "café"),
        ("ﬁne", "fine"),  # NFKC: the ligature is two letters
        ("quickly", "quick"),
    ],
)
def test_inflected_cased_and_accented_words_match(written: str, query: str) -> None:
    assert normal_form(written) == normal_form(query)


@pytest.mark.parametrize(("a", "b"), [("hope", "hop"), ("bring", "bred"), ("sing", "sign")])
def test_different_words_stay_different(a: str, b: str) -> None:
    assert normal_form(a) != normal_form(b)


def test_finds_inflected_words_in_the_sample(sample: PackIndex) -> None:
    assert set(_ids(sample, "ladders")) == {"M-loans-2", "M-joke-1", "M-library-2"}
    assert _ids(sample, "cafe") == ["M-repair-1"]
    assert _ids(sample, "Bikes REPAIRED") == ["M-repair-1"]


def test_every_word_must_match(sample: PackIndex) -> None:
    assert _ids(sample, "ladder Pell") == ["M-loans-2"]
    assert _ids(sample, "ladder submarine") == []
    assert sample.search("ladder submarine").matched == 0


def test_topic_statement_and_quotes_are_searched(sample: PackIndex) -> None:
    assert _ids(sample, "prank") == ["M-joke-1"]  # topic only
    assert _ids(sample, "undamaged") == ["M-loans-2"]  # statement only
    assert _ids(sample, "awning") == ["M-repair-1"]  # quote only
    assert _ids(sample, "Tamsin") == ["M-joke-1"]  # speaker name is not searched text


def test_why_says_which_words_matched_where(sample: PackIndex) -> None:
    (match,) = sample.search("ladders Pell").matches
    why = {reason["term"]: reason for reason in match["why"]}
    assert why["ladders"] == {
        "term": "ladders",
        "matched": ["Ladder", "ladder"],
        "fields": ["quote", "statement", "topic"],
        "occurrences": 4,
        "exact": False,
    }
    assert why["pell"]["exact"] is True
    assert why["pell"]["matched"] == ["Pell"]


def test_matches_keep_exact_quotes_ids_dates_and_speakers(sample: PackIndex) -> None:
    (match,) = sample.search("awning").matches
    record = sample.get("M-repair-1")
    assert record is not None
    for field in ("record_id", "role", "speaker", "category", "topic", "statement"):
        assert match[field] == record[field]
    assert match["evidence"] == record["evidence"]
    match["evidence"][0]["quote"] = "changed by the caller"
    assert sample.get("M-repair-1")["evidence"][0]["quote"] != "changed by the caller"


def test_order_is_occurrences_then_newest_then_id() -> None:
    records = [
        _record(1, "seed", "2026-03-01T00:00:00Z"),
        _record(2, "seed seed seeds", "2026-01-01T00:00:00Z"),
        _record(3, "seed", "2026-03-01T00:00:00+00:00"),
        _record(4, "seed", "2026-05-01T00:00:00Z"),
        _record(5, "seed", "2026-03-01T00:00:00.500Z"),
        _record(6, "nothing", "2026-06-01T00:00:00Z"),
    ]
    index = PackIndex(records)
    # M-garden-2: 3 occurrences (+ none in quotes' text); then newest; ties by record id.
    assert _ids(index, "seeds") == [
        "M-garden-2",
        "M-garden-4",
        "M-garden-5",
        "M-garden-1",
        "M-garden-3",
    ]


def test_at_most_ten_matches_and_the_total_count() -> None:
    records = [_record(i, "a common word", "2026-03-01T00:00:00Z") for i in range(1, 26)]
    found = PackIndex(records).search("common")
    assert len(found.matches) == MAX_MATCHES
    assert found.matched == 25


def test_filters(sample: PackIndex) -> None:
    assert _ids(sample, "key box code") == ["M-library-3", "M-library-4"]  # 3: more hits
    assert _ids(sample, "key box code", speaker="assistant") == ["M-library-4"]
    assert _ids(sample, "key box code", speaker="TAMSIN") == ["M-library-3"]
    assert _ids(sample, "ladder", category="People") == ["M-loans-2"]
    since = fmt.utc_key("2026-05-01T00:00:00Z")
    until = fmt.utc_key("2026-04-19T10:30:00Z")
    assert _ids(sample, "ladder", since=since) == ["M-loans-2", "M-joke-1"]
    assert _ids(sample, "key code", until=until) == ["M-library-3"]  # starts before, spans it
    assert _ids(sample, "ladder", speaker="nobody") == []


@pytest.mark.parametrize(
    ("query", "message"),
    [
        ("", "query has no words"),
        ("  ?!  ", "query has no words"),
        (" ".join(f"w{i}" for i in range(33)), "query has 33 different words, more than 32"),
        ("x" * 513, "more than 512"),
    ],
)
def test_bad_queries_are_refused(sample: PackIndex, query: str, message: str) -> None:
    with pytest.raises(InputError, match=message):
        sample.search(query)


def test_repeated_words_count_once_toward_the_limit(sample: PackIndex) -> None:
    assert sample.search(" ".join(["ladder"] * 40)).matched == 3


def test_get(sample: PackIndex, tmp_path: Path) -> None:
    assert sample.get("M-fees-1")["topic"] == "Membership fee"
    assert sample.get("M-missing") is None
