"""A correction is found by what it corrected, on a real vault with the real model (ADR 0235).

The live index (kept in step with every store, forget and shred) and an index built again
from the vault must agree, and a forgotten or shredded memory's meaning must leave the
correction that inherited it at once, not at the next unlock.
"""

from __future__ import annotations

import pytest

from affidavit.recall import index_build
from affidavit.recall.embedder import shared_embedder
from affidavit.recall.memory import Memory
from affidavit.vault import Vault
from tests.recall import _recall_fixtures as fx
from tests.recall._recall_fixtures import store
from tests.vault.conftest import TEST_PASSPHRASE

memory = fx.memory

OLD = "Home energy is with Octopus on the Flexible tariff"
NEW = "Switched to Ecotricity from 1 March"
OTHERS = [
    "The boiler is serviced every October by Forth Heating",
    "Send the meter readings on the first of each month",
    "The recycling bin goes out on Tuesday nights",
]


#: The question is the corrected memory's own sentence: its cosine to those windows is ~1, so
#: less INHERITED_DISCOUNT it stays above this, and no unrelated sentence comes near it.
NEAR = 0.9


def _corrected(m: Memory) -> tuple[str, str]:
    old = store(m, OLD)
    for text in OTHERS:
        store(m, text)
    return old, store(m, NEW, supersedes=[old])


def _page(m: Memory, question: str) -> list[tuple[str, float, float]]:
    hits = m.search(question, top_k=4)["results"]
    return [(h["id"], h["score"], round(h["parts"].cosine, 6)) for h in hits]


def _cosine(m: Memory, question: str, item_id: str) -> float:
    return next(c for i, _, c in _page(m, question) if i == item_id)


def test_a_correction_is_found_by_the_words_of_what_it_corrected(memory: Memory) -> None:
    old, new = _corrected(memory)
    page = _page(memory, OLD)
    assert page[0][0] == new
    assert page[0][2] > NEAR
    assert old not in {i for i, _, _ in page}  # the corrected memory itself never comes back


def test_an_index_built_from_the_vault_answers_as_the_live_one(memory: Memory) -> None:
    _corrected(memory)
    questions = [OLD, NEW, "who supplies our gas and electricity", OTHERS[0]]
    live = [_page(memory, q) for q in questions]
    memory.rebuild_index()
    assert [_page(memory, q) for q in questions] == live


def test_an_index_restored_from_a_snapshot_answers_as_the_live_one(
    memory: Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    _, middle = _corrected(memory)
    assert memory.save_snapshot()  # the image holds the first correction ...
    store(memory, "Back on Octopus Agile since June", supersedes=[middle])  # ... not this one
    questions = [OLD, NEW, "who supplies our gas and electricity"]
    live = [_page(memory, q) for q in questions]
    path = memory.vault.path
    memory.vault.close()

    def refuse(*_: object) -> None:
        raise AssertionError("the index was built, not restored")

    monkeypatch.setattr(index_build, "build", refuse)
    restored = Memory(Vault.open(path, passphrase=TEST_PASSPHRASE), embedder=shared_embedder())
    try:
        assert [_page(restored, q) for q in questions] == live
    finally:
        restored.vault.close()


def test_a_shredded_memory_leaves_nothing_of_its_meaning_in_its_correction(
    memory: Memory,
) -> None:
    old, new = _corrected(memory)
    assert _cosine(memory, OLD, new) > NEAR
    memory.forget(old, shred=True)
    after = _cosine(memory, OLD, new)
    assert after < 0.7  # only its own words now
    memory.rebuild_index()
    assert _cosine(memory, OLD, new) == after


def test_a_correction_of_a_correction_inherits_the_whole_chain(memory: Memory) -> None:
    old, middle = _corrected(memory)
    last = store(memory, "Back on Octopus Agile since June", supersedes=[middle])
    assert _page(memory, OLD)[0][0] == last
    assert _cosine(memory, OLD, last) > NEAR
    assert {old, middle} & {i for i, _, _ in _page(memory, OLD)} == set()
