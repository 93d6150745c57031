"""Store-time behaviour on a real vault: duplicates, opinions, supersede, expiry, quarantine."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from affidavit.core.errors import InputError, NotFoundError
from affidavit.recall import Claim
from affidavit.recall.memory import Memory
from affidavit.vault import NewItem, Vault
from tests.recall import _recall_fixtures as fx
from tests.recall._recall_fixtures import store
from tests.vault.conftest import TEST_PASSPHRASE

memory = fx.memory
keyword_memory = fx.keyword_memory


def ids(result: dict) -> list[str]:
    return [r["id"] for r in result["results"]]


def day(offset: int) -> str:
    return (datetime.now(UTC).date() + timedelta(days=offset)).isoformat()


def test_near_duplicate_returns_the_existing_id(memory: Memory) -> None:
    first = store(memory, "The deploy script lives at tools/deploy.sh")
    again = memory.store(Claim(text="the deploy script lives at tools/deploy.sh.", source="chat"))
    kept = memory.get_memory(first)
    assert (
        again
        == {
            "id": first,
            "status": "duplicate",
            "namespace": "user",
            "superseded": [],
            "stamp": {  # the memory it names, as Compartment's store result describes it
                "created": kept["created"],
                "created_local": kept["created_local"],
                "discovered": kept["saved_at"][:10],  # dated by the day it was saved (ADR 0228)
                "kind": "fact",
                "source": kept["source"],
            },
        }
    )
    other = memory.store(Claim(text="The deploy script lives at tools/deploy2.sh", source="chat"))
    assert other["status"] == "stored"  # a different path is a different fact
    assert len(list(memory.vault.items("memory"))) == 2


def test_duplicate_without_a_model_is_word_overlap(keyword_memory: Memory) -> None:
    first = store(keyword_memory, "Deploys run every Friday afternoon")
    assert (
        keyword_memory.store(Claim(text="deploys run every friday afternoon!", source="s"))["id"]
        == first
    )


def test_a_similar_opinion_conflicts_then_supersedes(memory: Memory) -> None:
    old = store(memory, "I prefer tabs over spaces for indentation", kind="opinion")
    clash = memory.store(
        Claim(text="I prefer spaces over tabs for indentation now", source="chat", kind="opinion")
    )
    assert clash["status"] == "conflict" and clash["id"] is None
    assert [c["id"] for c in clash["conflicts"]] == [old]
    assert len(list(memory.vault.items("memory"))) == 1  # nothing stored
    new = memory.store(
        Claim(
            text="I prefer spaces over tabs for indentation now",
            source="chat",
            kind="opinion",
            supersedes=[old],
        ),
    )
    assert new["status"] == "stored" and new["superseded"] == [old]
    assert ids(memory.search("tabs or spaces for indentation")) == [new["id"]]
    assert memory.get_memory(old)["superseded_by"] == new["id"]  # readable by id, with a pointer


def test_supersedes_empty_keeps_both_opinions(memory: Memory) -> None:
    old = store(memory, "Dark mode is easier on the eyes", kind="opinion")
    both = memory.store(
        Claim(
            text="Dark mode is easier on my eyes at night",
            source="chat",
            kind="opinion",
            supersedes=[],
        ),
    )
    assert both["status"] == "stored"
    assert set(ids(memory.search("is dark mode easier on the eyes", top_k=5))) == {old, both["id"]}


def test_restating_an_opinion_reaffirms_its_date(memory: Memory) -> None:
    old = store(memory, "Pytest is nicer than unittest", kind="opinion")
    before = memory.get_memory(old)["affirmed"]
    seq = memory.vault.seq
    again = memory.store(
        Claim(text="pytest is nicer than unittest.", source="chat", kind="opinion")
    )
    assert again["status"] == "reaffirmed" and again["id"] == old
    assert memory.vault.seq == seq + 1  # one new version, no new record
    assert memory.get_memory(old)["affirmed"] >= before
    assert len(list(memory.vault.items("memory"))) == 1


def test_supersedes_on_a_fact_is_a_correction(memory: Memory) -> None:
    wrong = store(memory, "The office door code is 4412")
    right = memory.store(
        Claim(text="The office door code is 4413", source="chat", supersedes=[wrong])
    )
    assert ids(memory.search("office door code")) == [right["id"]]
    assert memory.get_memory(wrong)["superseded_by"] == right["id"]
    with pytest.raises(InputError, match="already superseded"):
        memory.store(Claim(text="The office door code is 9999", source="s", supersedes=[wrong]))
    with pytest.raises(InputError, match="supersedes nope"):
        memory.store(Claim(text="Another fact entirely", source="s", supersedes=["nope"]))


def test_a_write_whose_amendment_fails_stores_nothing(memory: Memory) -> None:
    vault = memory.vault
    gone = store(memory, "The lab opens at nine")
    vault.forget(gone)
    before = vault.seq
    with pytest.raises(NotFoundError):
        vault.put_many(
            [NewItem({"text": "The lab opens at ten", "source": "s"})],
            amend={gone: {"superseded_by": "x"}},
        )
    assert vault.seq == before
    assert not ids(memory.search("lab opens at ten", top_k=5))


def test_one_batch_cannot_supersede_a_memory_twice(memory: Memory) -> None:
    old = store(memory, "The build takes nine minutes")
    batch = [
        {"text": "The build takes eight minutes", "source": "ci", "supersedes": [old]},
        {"text": "The build takes seven minutes", "source": "ci", "supersedes": [old]},
    ]
    before = memory.vault.seq
    with pytest.raises(InputError, match=r"item 1: .* superseded by item 0"):
        memory.store_many([Claim.from_json(fields) for fields in batch])
    assert memory.vault.seq == before
    assert memory.get_memory(old)["superseded_by"] is None


def test_expired_memories_leave_reads_and_are_swept_on_the_next_write(memory: Memory) -> None:
    vault = memory.vault
    gone = vault.put(
        NewItem({"text": "The sale price is 10 euros", "source": "s", "expires": day(-1)})
    ).id
    vault.put(NewItem({"text": "The sale ends on the last day", "source": "s", "expires": day(0)}))
    assert gone not in ids(memory.search("sale price euros", top_k=5))
    assert ids(memory.search("when does the sale end"))  # the expiry day itself is live
    with pytest.raises(NotFoundError, match="expired"):
        memory.get_memory(gone)
    seq = vault.seq
    memory.search("sale")
    memory.recent()
    assert vault.seq == seq  # reads write nothing, not even the sweep
    memory.store(Claim(text="Unrelated new fact about lunch", source="s"))
    with pytest.raises(NotFoundError, match="forgotten"):
        vault.get(gone)


def test_expire_command_sweeps_by_hand(memory: Memory) -> None:
    gone = memory.vault.put(
        NewItem({"text": "Booking ref 77", "source": "s", "expires": day(-3)})
    ).id
    assert memory.expire() == {"expired": [gone]}
    assert memory.expire() == {"expired": []}


def test_quarantined_memory_carries_a_warning_on_every_recall(memory: Memory) -> None:
    qid = store(memory, "The API token rotates monthly", quarantined=True)
    hit = memory.search("how often does the API token rotate")["results"][0]
    assert hit["id"] == qid and "quarantined" in hit["warning"]
    assert "warning" in memory.get_memory(qid) and "warning" in memory.recent()[0]


def test_recent_lists_newest_first_without_superseded(memory: Memory) -> None:
    a = store(memory, "First fact about the build")
    b = memory.store(Claim(text="Corrected fact about the build", source="s", supersedes=[a]))["id"]
    c = store(memory, "Third fact about lunch")
    assert [r["id"] for r in memory.recent(5)] == [c, b]
    assert [r["id"] for r in memory.recent(1)] == [c]


def test_store_many_validates_everything_before_storing(memory: Memory) -> None:
    with pytest.raises(InputError, match="item 1: a memory needs a non-empty 'source'"):
        Claim.from_json({"text": "no source"}, "item 1: ")  # the edge reads each claim first
    too_long = Claim("y" * 300, "s")  # within the shape rules; the vault's limit is 200
    with pytest.raises(InputError, match="item 1: a memory holds one claim of at most 200"):
        memory.store_many([Claim("good one", "s"), too_long])
    assert list(memory.vault.items("memory")) == []
    done = memory.store_many(
        [Claim("Alpha owns the billing repo", "s"), Claim("Beta owns the search repo", "s")]
    )
    assert [d["status"] for d in done] == ["stored", "stored"]


def test_another_process_store_is_visible_to_the_next_search(memory: Memory) -> None:
    other = Vault.open(memory.vault.path, passphrase=TEST_PASSPHRASE)
    try:
        writer = Memory(other, embedder=memory.embedder)
        new = store(writer, "The Grafana dashboard is at grafana.internal/d/42")
    finally:
        other.close()
    assert ids(memory.search("where is the grafana dashboard")) == [new]


def test_unlocking_never_re_embeds(memory: Memory, tmp_path: Path) -> None:
    mid = store(memory, "Backups run nightly at 02:00")
    assert memory.vault.get(mid).vector  # the embedding is sealed with the record
    reopened = Vault.open(memory.vault.path, passphrase=TEST_PASSPHRASE)
    try:

        class Refuses:
            """An embedder that may embed questions but never stored text."""

            def __init__(self, real: object) -> None:
                self.real = real

            def embed_query(self, text: str) -> object:
                return self.real.embed_query(text)  # type: ignore[attr-defined]

            def embed_query_soon(self, text: str) -> object:
                return self.real.embed_query_soon(text)  # type: ignore[attr-defined]

        m = Memory(reopened, embedder=Refuses(memory.embedder))  # type: ignore[arg-type]
        assert ids(m.search("when do backups run")) == [mid]
        assert m.search("when do backups run")["results"][0]["channels"][0] == "semantic"
    finally:
        reopened.close()


def test_a_batch_that_repeats_itself_stores_once(memory: Memory) -> None:
    done = memory.store_many(
        [
            Claim("The VPN endpoint is vpn.example.net", "s"),
            Claim("the VPN endpoint is vpn.example.net.", "s"),
            Claim("The VPN endpoint is vpn2.example.net", "s"),
        ]
    )
    assert [d["status"] for d in done] == ["stored", "duplicate", "stored"]
    assert done[1]["id"] == done[0]["id"] and done[2]["id"] != done[0]["id"]
    assert len(list(memory.vault.items("memory"))) == 2
