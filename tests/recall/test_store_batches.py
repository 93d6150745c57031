"""Large batches (imports): repeats found by key give the answers the pairwise rule gave.

``store_many`` no longer compares each claim with every earlier one, and from
``WORDED_FROM`` claims it looks up word-for-word repeats of live memories before embedding.
These tests hold both shortcuts to the store rule of tests/recall/test_decide.py.
"""

from __future__ import annotations

from typing import Any

import pytest

from affidavit.recall import Claim
from affidavit.recall.decide import WORDED_FROM
from affidavit.recall.memory import Memory
from tests.recall import _recall_fixtures as fx
from tests.recall.test_decide import DIFFERENT, SAME

memory = fx.memory
keyword_memory = fx.keyword_memory


def _batch(*texts: str, kind: Any = "fact") -> list[Claim]:
    """``texts`` after enough distinct filler to take the large-batch path."""
    filler = [Claim(f"Shelf {i} holds {i + 7} boxes.", "s") for i in range(WORDED_FROM)]
    return filler + [Claim(t, "s", kind=kind) for t in texts]


@pytest.mark.parametrize(("first", "second"), SAME)
@pytest.mark.parametrize("which", ["memory", "keyword_memory"])
def test_a_large_batch_stores_a_repeat_once(
    request: pytest.FixtureRequest, which: str, first: str, second: str
) -> None:
    m: Memory = request.getfixturevalue(which)
    done = m.store_many(_batch(first, second))
    assert [d["status"] for d in done[-2:]] == ["stored", "duplicate"]
    assert done[-1]["id"] == done[-2]["id"]


@pytest.mark.parametrize(("first", "second"), DIFFERENT)
def test_a_large_batch_keeps_two_different_facts(memory: Memory, first: str, second: str) -> None:
    done = memory.store_many(_batch(first, second))
    assert [d["status"] for d in done[-2:]] == ["stored", "stored"]


def test_a_large_batch_finds_what_the_vault_holds_word_for_word(memory: Memory) -> None:
    first = memory.store_many(_batch("The VPN endpoint is vpn.example.net"))
    again = memory.store_many(_batch("the VPN endpoint is vpn.example.net!", "Alice owns billing"))
    assert [d["status"] for d in again] == ["duplicate"] * (WORDED_FROM + 1) + ["stored"]
    assert [d["id"] for d in again[:-1]] == [d["id"] for d in first]


def test_an_opinion_restated_in_a_large_batch_is_reaffirmed(memory: Memory) -> None:
    memory.store(Claim(text="Tabs are better than spaces", source="s", kind="opinion"))
    done = memory.store_many(_batch("tabs are better than spaces", kind="opinion"))
    assert done[-1]["status"] == "reaffirmed"
