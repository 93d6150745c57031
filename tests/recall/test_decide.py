"""A duplicate is a memory that says the same thing; anything else is stored (issue 13, 3).

The near-duplicate rule used to drop a new fact whose embedding was close to a stored one
and whose digit-bearing tokens were the same set, so swapped roles, swapped directions and
swapped numbers were all lost at store time with "duplicate".
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from affidavit.recall import Claim
from affidavit.recall.decide import says_the_same
from affidavit.recall.memory import Memory
from tests.recall import _recall_fixtures as fx
from tests.support import run_cli

memory = fx.memory
keyword_memory = fx.keyword_memory

DIFFERENT = [
    ("Alice reports to Bob", "Bob reports to Alice"),
    ("Move the cache from disk to memory", "Move the cache from memory to disk"),
    ("writer 1 note 2", "writer 2 note 1"),
    ("The API listens on port 8080", "The API listens on port 8081"),
    ("The staging database is encrypted", "The staging database is not encrypted"),
    ("Alice is Bob's manager", "Bob is Alice's manager"),
    ("Alice prefers tabs over spaces", "Carol prefers tabs over spaces"),
    ("Copy the backups to the NAS", "Copy the backups from the NAS"),
    ("Deploys never run on Fridays", "Deploys run on Fridays"),
]
SAME = [
    ("The deploy script lives at tools/deploy.sh", "the deploy script lives at tools/deploy.sh."),
    ("Deploys run every Friday afternoon", "deploys run every friday afternoon!"),
    ("The VPN endpoint is vpn.example.net", "VPN endpoint is vpn.example.net"),
]


@pytest.mark.parametrize(("first", "second"), DIFFERENT)
def test_a_different_fact_is_stored_with_the_model(memory: Memory, first: str, second: str) -> None:
    assert memory.store(Claim(text=first, source="chat"))["status"] == "stored"
    assert memory.store(Claim(text=second, source="chat"))["status"] == "stored"
    assert len(list(memory.vault.items("memory"))) == 2


@pytest.mark.parametrize(("first", "second"), DIFFERENT)
def test_a_different_fact_is_stored_without_the_model(
    keyword_memory: Memory, first: str, second: str
) -> None:
    assert keyword_memory.store(Claim(text=first, source="chat"))["status"] == "stored"
    assert keyword_memory.store(Claim(text=second, source="chat"))["status"] == "stored"


@pytest.mark.parametrize(("first", "second"), DIFFERENT)
def test_a_batch_keeps_two_different_facts(memory: Memory, first: str, second: str) -> None:
    done = memory.store_many([Claim(first, "s"), Claim(second, "s")])
    assert [d["status"] for d in done] == ["stored", "stored"]


@pytest.mark.parametrize(("first", "second"), SAME)
def test_the_same_fact_said_again_is_a_duplicate(memory: Memory, first: str, second: str) -> None:
    kept = memory.store(Claim(text=first, source="chat"))["id"]
    again = memory.store(Claim(text=second, source="chat"))
    assert {k: v for k, v in again.items() if k != "stamp"} == {
        "id": kept,
        "status": "duplicate",
        "namespace": "user",
        "superseded": [],
    }
    assert again["stamp"]["created"] == memory.get_memory(kept)["created"]  # the kept one's


@pytest.mark.parametrize(("first", "second"), DIFFERENT)
def test_the_rule_tells_different_facts_apart_however_close_their_embeddings(
    first: str, second: str
) -> None:
    assert not says_the_same(first, second, close=True)
    assert says_the_same(first, first.upper() + ".", close=False)


def test_beyond_the_same_wording_a_duplicate_needs_a_close_embedding() -> None:
    a, b = "The VPN endpoint is vpn.example.net", "VPN endpoint is vpn.example.net"
    assert says_the_same(a, b, close=True)
    assert not says_the_same(a, b, close=False)
    assert not says_the_same("Deploys run on Fridays", "Deploys run on Fridays now", close=True)


def test_the_cli_stores_both_sides_of_a_swapped_fact(home: Path, cli_vault: dict[str, str]) -> None:
    # The issue's reproduction: the second store said "duplicate: an equivalent memory was
    # already stored" and stored nothing.
    made = []
    for text in ("Alice reports to Bob", "Bob reports to Alice"):
        done = run_cli(["store", text, "--source", "chat", "--json"], home, env=cli_vault)
        assert done.returncode == 0, done.stderr
        assert "duplicate" not in done.stderr
        made.append(json.loads(done.stdout))
    assert [m["status"] for m in made] == ["stored", "stored"]
    assert made[0]["id"] != made[1]["id"]
    found = run_cli(["search", "who reports to whom", "--json"], home, env=cli_vault)
    texts = {r["text"] for r in json.loads(found.stdout)["results"]}
    assert texts == {"Alice reports to Bob", "Bob reports to Alice"}


def test_two_turns_that_say_the_same_are_two_turns(memory: Memory) -> None:
    def status(**fields: object) -> str:
        return str(memory.store(Claim(text="Yes, that works.", source="chat", **fields))["status"])

    assert status(thread="c1", turn=1) == "stored"
    assert status(thread="c1", turn=3) == "stored"  # a later turn of the same chat
    assert status(thread="c2", turn=1) == "stored"  # another chat
    assert status() == "stored"  # a standalone memory is no turn
    assert status(thread="c1", turn=1) == "duplicate"  # the same turn sent again
    assert status() == "duplicate"
