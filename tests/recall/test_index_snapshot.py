"""Recall's index restored from the image in the vault's sealed snapshot (ADR 0210): the same
answers as an index built from the records, however stale the image.

A restored index is never trusted to match the vault: each test changes the vault after the
snapshot (forget, update, supersede, new memories) and compares every search's ranked ids
and scores with those of an index built from scratch over the same vault.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from affidavit.recall import index_build
from affidavit.recall.embedder import shared_embedder
from affidavit.recall.memory import Memory
from affidavit.vault import Vault
from tests.recall._recall_fixtures import store
from tests.vault.conftest import TEST_PASSPHRASE

QUESTIONS = [
    "where is the kettle",
    "what did I plant in the garden",
    "which train goes to the coast",
    "the deploy script",
    "tabs or spaces",
]
FACTS = [
    "The kettle lives on the top shelf of the pantry",
    "I planted tomatoes and basil in the garden in May",
    "The 8:15 train from platform 4 goes to the coast",
    "The deploy script lives at tools/deploy.sh",
    "I prefer tabs over spaces for indentation",
    "My sister's birthday is on the third of March",
    "The wifi password is on a sticker under the router",
    "We moved the team standup to 9:30 on Mondays",
]


def _open(path: Path, *, model: bool) -> Memory:
    return Memory(
        Vault.open(path, passphrase=TEST_PASSPHRASE),
        embedder=shared_embedder() if model else None,
    )


def _answers(memory: Memory) -> list[list[tuple[str, float]]]:
    out = []
    for question in QUESTIONS:
        hits = memory.search(question, top_k=8)["results"]
        out.append([(h["id"], round(float(h["score"]), 9)) for h in hits])
    return out


@pytest.mark.parametrize("model", [True, False], ids=["vectors", "keywords"])
def test_a_restored_index_answers_as_a_built_one_after_changes(
    vault: Vault, model: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = vault.path
    first = Memory(vault, embedder=shared_embedder() if model else None)
    ids = [store(first, text) for text in FACTS[:6]]
    assert first.save_snapshot()
    assert not first.save_snapshot()  # nothing new since
    first.forget(ids[0])
    data = dict(first.vault.get(ids[1]).data)
    first.vault.update(ids[1], {**data, "text": "I planted basil and chard in the garden"})
    store(first, "The deploy script moved to bin/deploy", supersedes=[ids[3]])
    for text in FACTS[6:]:
        store(first, text)
    first.vault.close()

    built = _open(path, model=model)
    built.vault.take_section(index_build.SECTION)  # ignore the image: build from records
    want = _answers(built)
    built.vault.close()

    def refuse(*_: object) -> None:
        raise AssertionError("the index was built, not restored")

    restored = _open(path, model=model)
    assert restored.vault.snapshot_lag is not None and restored.vault.snapshot_lag > 0
    with monkeypatch.context() as patched:
        patched.setattr(index_build, "build", refuse)
        assert _answers(restored) == want
    assert ids[0] not in {h for answer in want for h, _ in answer}
    assert len(restored.index) == len(FACTS) - 1  # one forgotten, one superseded, one new
    restored.vault.close()


def test_an_image_made_without_vectors_is_not_used_with_them(vault: Vault) -> None:
    path = vault.path
    keywords = Memory(vault, embedder=None)
    for text in FACTS:
        store(keywords, text)
    keywords.save_snapshot()
    vault.close()
    image = Vault.open(path, passphrase=TEST_PASSPHRASE)
    try:
        section = image.take_section(index_build.SECTION)
        assert section is not None
        assert index_build.restore(section, list(image.items("memory")), True) is None
        assert index_build.restore(b"\0\0\0\1{", [], False) is None  # unreadable: built
    finally:
        image.close()
