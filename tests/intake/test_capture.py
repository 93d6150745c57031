"""Capture on a real vault: candidates are quarantined until accepted, each message read once."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from affidavit.core.errors import InputError, NotFoundError
from affidavit.intake import (
    ASSISTANT_SAID,
    CANDIDATE,
    accept,
    candidate,
    candidates,
    capture_transcript,
    drop,
)
from affidavit.recall import Claim, Memory, StoreStatus
from affidavit.vault import Vault
from tests.intake.conftest import line


@pytest.fixture
def memory(vault: Vault) -> Memory:
    return Memory(vault, embedder=None)


def test_new_claims_become_candidates_with_their_transcript_and_time(
    memory: Memory, transcript: Callable[..., Path]
) -> None:
    path = transcript(
        line("user", "No, the staging database is db-2. What time is it?", "2026-12-01T10:00:00Z"),
        line("assistant", [{"type": "text", "text": "Let me look. Port 8080 is the API's."}]),
    )
    report = capture_transcript(memory, path)
    assert (report.messages, report.captured) == (2, 2)
    found = candidates(memory)
    assert [(c.text, c.category, c.speaker) for c in found] == [
        ("No, the staging database is db-2.", "correction", "user"),
        ("Port 8080 is the API's.", ASSISTANT_SAID, "assistant"),  # its words, not your facts
    ]
    assert found[0].source == f"{path.resolve()} at 2026-12-01T10:00:00Z"
    assert found[1].source.endswith("said by the assistant (not you)")
    assert "`affidavit review`" in report.line()


def test_each_run_reads_only_what_was_appended_since(
    memory: Memory, transcript: Callable[..., Path]
) -> None:
    path = transcript(line("user", "We decided to ship on Fridays."))
    assert capture_transcript(memory, path).captured == 1
    again = capture_transcript(memory, path)
    assert (again.messages, again.captured) == (0, 0)
    transcript(line("user", "Alice owns billing. We decided to ship on Fridays."))
    third = capture_transcript(memory, path)
    assert (third.messages, third.captured, third.already_known) == (1, 1, 1)
    assert len(candidates(memory)) == 2


def test_a_candidate_is_not_recalled_until_accepted(
    memory: Memory, transcript: Callable[..., Path]
) -> None:
    capture_transcript(memory, transcript(line("user", "The staging database is db-2.")))
    (candidate,) = candidates(memory)
    assert memory.search("staging database")["results"] == []
    assert memory.recent() == []
    with pytest.raises(NotFoundError):
        memory.get_memory(candidate.id)
    outcome = accept(memory, candidate.id)
    assert outcome["status"] is StoreStatus.STORED
    (hit,) = memory.search("staging database")["results"]
    assert hit["id"] == outcome["id"] and hit["namespace"] == "user"
    assert hit["source"] == candidate.source and "correction" not in hit["tags"]
    assert candidates(memory) == []


def test_accept_with_an_edit_stores_the_new_wording(
    memory: Memory, transcript: Callable[..., Path]
) -> None:
    capture_transcript(memory, transcript(line("user", "The staging database is db-2.")))
    (candidate,) = candidates(memory)
    outcome = accept(memory, candidate.id, text="Staging runs on db-2 since December.")
    assert memory.get_memory(str(outcome["id"]))["text"] == "Staging runs on db-2 since December."


def test_an_edit_the_claim_rules_refuse_leaves_the_candidate_waiting(
    memory: Memory, transcript: Callable[..., Path]
) -> None:
    capture_transcript(memory, transcript(line("user", "The staging database is db-2.")))
    (candidate,) = candidates(memory)
    with pytest.raises(InputError, match="list"):
        accept(memory, candidate.id, text="- one\n- two")
    assert [c.id for c in candidates(memory)] == [candidate.id]


def test_drop_forgets_a_candidate_and_ids_of_memories_are_not_candidates(
    memory: Memory, transcript: Callable[..., Path]
) -> None:
    capture_transcript(memory, transcript(line("user", "The staging database is db-2.")))
    (candidate,) = candidates(memory)
    drop(memory, candidate.id)
    assert candidates(memory) == []
    assert list(memory.vault.items(CANDIDATE)) == []
    stored = memory.store(Claim(text="Alice owns billing.", source="test"))
    with pytest.raises(NotFoundError, match="no candidate"):
        drop(memory, str(stored["id"]))
    with pytest.raises(NotFoundError, match="no candidate"):
        accept(memory, candidate.id)


def test_one_candidate_is_read_by_its_id_and_a_memory_id_is_not_one(
    memory: Memory, transcript: Callable[..., Path]
) -> None:
    capture_transcript(memory, transcript(line("user", "The staging database is db-2.")))
    (waiting,) = candidates(memory)
    assert candidate(memory, waiting.id) == waiting
    stored = memory.store(Claim(text="Alice owns billing.", source="test"))
    for wrong in (str(stored["id"]), "nosuchid"):
        with pytest.raises(NotFoundError, match=f"no candidate memory {wrong}"):
            candidate(memory, wrong)


def test_a_sentence_already_remembered_is_not_captured_again(
    memory: Memory, transcript: Callable[..., Path]
) -> None:
    memory.store(Claim(text="Alice owns billing.", source="earlier"))
    report = capture_transcript(
        memory, transcript(line("user", "Alice  owns BILLING. Bob owns QA."))
    )
    assert (report.captured, report.already_known) == (1, 1)
    assert [c.text for c in candidates(memory)] == ["Bob owns QA."]
