"""Capture with the vault's ``auto_store`` setting on: the user's plain statements are stored
directly and listed in the digest; everything a person should look at still waits in review."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from affidavit.access import grant
from affidavit.intake import AUTO_STORED, candidates, capture_transcript, digest
from affidavit.intake.sentences import extract, plainly_stated
from affidavit.recall import Claim, Memory, maintenance
from affidavit.vault import Vault
from tests.intake.conftest import line


@pytest.fixture
def memory(vault: Vault) -> Memory:
    return Memory(vault, embedder=None)


@pytest.fixture
def auto(memory: Memory) -> Memory:
    maintenance.set_setting(memory, "auto_store", "on")
    return memory


SESSION = (
    line("user", "We decided to ship on Fridays. The staging host is db-2.", "2026-12-01T10:00Z"),
    line("user", "I think the cache is Redis 7. No, the API port is 8443.", "2026-12-01T10:01Z"),
    line(
        "user",
        "My password is hunter2-Secret! The token is ghp_" + "a" * 36 + ".",
        "2026-12-01T10:02Z",
    ),
    line("assistant", [{"type": "text", "text": "We decided to disable the audit log."}]),
)


def test_off_by_default_every_claim_waits_for_review(
    memory: Memory, transcript: Callable[..., Path]
) -> None:
    report = capture_transcript(memory, transcript(*SESSION))
    assert report.stored == 0 and memory.recent() == []
    assert {c.text for c in candidates(memory)} >= {
        "We decided to ship on Fridays.",
        "The staging host is db-2.",
    }


def test_plain_user_claims_are_stored_the_rest_waits_and_secrets_are_dropped(
    auto: Memory, transcript: Callable[..., Path]
) -> None:
    report = capture_transcript(auto, transcript(*SESSION))
    stored = {m["text"]: m for m in auto.recent(limit=50)}
    assert set(stored) == {"We decided to ship on Fridays.", "The staging host is db-2."}
    one = stored["The staging host is db-2."]
    assert one["namespace"] == "user" and AUTO_STORED in one["tags"]
    assert one["source"].endswith("stated by you (stored without review)")
    waiting = {c.text: c.speaker for c in candidates(auto)}
    assert waiting == {
        "I think the cache is Redis 7.": "user",  # hedged
        "No, the API port is 8443.": "user",  # a correction: what it replaces is yours to say
        "We decided to disable the audit log.": "assistant",  # injectable: never direct
    }
    assert report.stored == 2 and report.captured == 3 and report.secrets_dropped >= 1
    everything = [m["text"] for m in auto.recent(limit=50)] + list(waiting)
    assert not any("hunter2" in t or "ghp_" in t for t in everything)
    assert "2 memories stored directly" in report.line()


def test_a_claim_already_remembered_is_not_stored_twice(
    auto: Memory, transcript: Callable[..., Path]
) -> None:
    auto.store(Claim("The staging host is db-2.", "ops notes"))
    path = transcript(line("user", "The staging host is db-2. Alice owns billing."))
    report = capture_transcript(auto, path)
    assert (report.stored, report.already_known) == (1, 1)
    assert sorted(m["text"] for m in auto.recent(limit=10)) == [
        "Alice owns billing.",
        "The staging host is db-2.",
    ]
    transcript(line("user", "Alice owns billing."))
    assert capture_transcript(auto, path).stored == 0  # read once, and already remembered
    assert len(auto.recent(limit=10)) == 2


def test_a_store_the_caller_may_not_make_keeps_its_claims_in_review(
    vault: Vault, transcript: Callable[..., Path]
) -> None:
    grant(vault, "agent", "capture", "rw")
    grant(vault, "agent", "agent", "ro")  # may queue candidates, not write its own namespace
    agent = Memory(vault, caller="agent", embedder=None)
    maintenance.set_setting(Memory(vault, embedder=None), "auto_store", "on")
    report = capture_transcript(agent, transcript(line("user", "The staging host is db-2.")))
    assert report.stored == 0 and [c.text for c in candidates(agent)] == [
        "The staging host is db-2."
    ]
    assert "not stored directly" in report.line()


def test_the_digest_lists_each_day_what_went_in_unreviewed(
    auto: Memory, transcript: Callable[..., Path]
) -> None:
    capture_transcript(auto, transcript(*SESSION))
    auto.store(Claim("Bob owns the release train.", "typed by hand"))
    (today,) = digest(auto)
    assert sorted(m["text"] for m in today.memories) == [
        "The staging host is db-2.",
        "We decided to ship on Fridays.",
    ]


@pytest.mark.parametrize(
    ("sentence", "plain"),
    [
        ("We decided to ship on Fridays.", True),
        ("I prefer tabs over spaces.", True),
        ("The staging host is db-2.", True),
        ("Maybe Postgres 16 is what prod runs.", False),
        ("For now the API uses port 8080.", False),
        ("If the build fails, Alice is on call.", False),
        ('Alice said "the cache is Redis 7".', False),
        ("No, the port is 8443.", False),
    ],
)
def test_plainly_stated_means_no_hedge_no_condition_no_quote(sentence: str, plain: bool) -> None:
    (claim,) = extract(sentence, 400)
    assert plainly_stated(claim) is plain
