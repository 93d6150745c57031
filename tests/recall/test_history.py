"""Why a memory matched (a hit's score parts) and a memory's history, on a real vault."""

from __future__ import annotations

import pytest

from affidavit.core.errors import NotFoundError
from affidavit.recall import Claim
from affidavit.recall.memory import Memory
from tests.recall import _recall_fixtures as fx
from tests.recall._recall_fixtures import store

memory = fx.memory
keyword_memory = fx.keyword_memory


def test_each_hit_carries_the_parts_its_score_is_made_of(memory: Memory) -> None:
    store(memory, "The staging database listens on port 6543", importance=0.9)
    store(memory, "Mira prefers green tea over coffee")
    found = memory.search("which port does the staging database listen on")["results"]
    hit = found[0]
    parts = hit["parts"]
    assert "literal" in hit["channels"] and parts.literal > 0 and parts.cosine > 0
    assert parts.prior > 1  # importance 0.9 lifts it
    assert hit["score"] == pytest.approx(parts.ranked * parts.page, abs=1e-4)
    assert (parts.semantic > 0) == ("semantic" in hit["channels"])


def test_parts_without_a_model_have_no_semantic_share(keyword_memory: Memory) -> None:
    store(keyword_memory, "The staging database listens on port 6543")
    hit = keyword_memory.search("staging database port")["results"][0]
    assert hit["channels"] == ["literal"] and hit["parts"].semantic == 0
    assert hit["score"] == pytest.approx(hit["parts"].ranked, abs=1e-4)


def test_history_walks_corrections_both_ways_and_names_the_writes(memory: Memory) -> None:
    first = store(memory, "Deploys happen on Tuesday mornings")
    second = store(memory, "Deploys happen on Thursday mornings", supersedes=[first])
    third = store(memory, "Deploys happen on Friday afternoons", supersedes=[second])
    middle = memory.history(second)
    assert [m["id"] for m in middle["supersedes"]] == [first]
    assert [m["id"] for m in middle["superseded_by"]] == [third]
    assert [e["what"] for e in middle["events"]] == ["stored", "marked superseded"]
    newest = memory.history(third)
    assert [m["id"] for m in newest["supersedes"]] == [second, first]
    assert newest["superseded_by"] == [] and newest["conflicts"] == []


def test_history_lists_re_affirmations_and_live_conflicts(memory: Memory) -> None:
    tabs = store(memory, "I prefer tabs over spaces for indentation", kind="opinion")
    again = memory.store(
        Claim(text="I prefer tabs over spaces for indentation", source="chat", kind="opinion")
    )
    assert again["status"] == "reaffirmed"
    rival = memory.store(
        Claim(
            text="I prefer spaces over tabs for indentation",
            source="chat",
            kind="opinion",
            supersedes=[],
        ),
    )
    assert rival["status"] == "stored"
    history = memory.history(tabs)
    assert [e["what"] for e in history["events"]] == ["stored", "re-affirmed"]
    assert [m["id"] for m in history["conflicts"]] == [rival["id"]]


def test_history_of_an_unknown_or_forgotten_id_is_not_found(memory: Memory) -> None:
    gone = store(memory, "A note to forget")
    memory.forget(gone)
    with pytest.raises(NotFoundError):
        memory.history(gone)
    with pytest.raises(NotFoundError):
        memory.history("nosuchid")


def test_the_audit_log_reads_the_last_entries_and_those_of_some_ids(memory: Memory) -> None:
    a = store(memory, "First note about the garden")
    b = store(memory, "Second note about the bikes")
    vault = memory.vault
    last = vault.audit_log(limit=1)
    assert len(last) == 1 and last[0].body["id"] == b and last[0].body["op"] == "create"
    mine = vault.audit_log(ids={a})
    assert [e.body["op"] for e in mine] == ["create"] and mine[0].n < last[0].n
    assert vault.audit_log(limit=0) == []
