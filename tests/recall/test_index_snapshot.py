"""Recall's index restored from the image in the vault's sealed snapshot (ADR 0210): the same
answers as an index built from the records, however stale the image.

A restored index is never trusted to match the vault: each test changes the vault after the
snapshot (forget, update, supersede, new memories) and compares every search's ranked ids
and scores with those of an index built from scratch over the same vault.
"""

from __future__ import annotations

import struct
from dataclasses import replace
from pathlib import Path

import orjson
import pytest

from affidavit.recall import index_build
from affidavit.recall.embedder import shared_embedder
from affidavit.recall.kinds import MemoryKind
from affidavit.recall.memory import Memory
from affidavit.vault import NewItem, Vault
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


VARIED = [
    # (text, fields): importance, kinds, tags, namespaces, days and a recorded conversation
    ("The kettle lives on the top shelf of the pantry", {"importance": 0.9, "tags": ("home",)}),
    ("I planted tomatoes and basil in the garden in May", {"discovered": "2025-05-10"}),
    ("The 8:15 train from platform 4 goes to the coast", {"namespace": "travel"}),
    ("Port 8086 serves the metrics API on ch-earshot.pbc.internal", {"importance": 0.2}),
    ("I think the new office chairs are uncomfortable", {"kind": MemoryKind.OPINION}),
    ("I prefer tabs over spaces for indentation", {"kind": MemoryKind.OPINION, "importance": 1.0}),
    ("Backups of the wiki run nightly at 02:00 UTC", {"tags": ("ops", "wiki")}),
    ("The wifi password is on a sticker under the router", {"tags": ("home",)}),
    ("We moved the team standup to 9:30 on Mondays", {"discovered": "2025-03-03"}),
    ("FEED_CACHE_TTL is 300 seconds in production", {"namespace": "travel", "importance": 0.7}),
]
THREAD = [
    "Where should we hold the offsite this year?",
    "How about the lake house near Annecy, it sleeps twenty",
    "Is the lake house free in the first week of June?",
    "Yes, the first week of June is free, I booked it",
]
VARIED_QUESTIONS = [
    "where is the kettle",
    "what did I plant in May",
    "port 8086",
    "what do I think about the chairs",
    "where is the offsite",
    "is the lake house free in June",
    "FEED_CACHE_TTL",
    "when is the standup",
    "wiki backups",
    "something nobody ever wrote down",
]


def _every_answer(memory: Memory) -> list[object]:
    """Every hit's id, score, channels and parts for many searches, filters and lengths."""
    out: list[object] = []
    searches: list[dict[str, object]] = [
        {},
        {"top_k": 3},
        {"top_k": 40},  # more than any channel reaches: filled out by the documented order
        {"kind": "opinion"},
        {"namespaces": ["travel"], "top_k": 5},
        {"tags": ["home"]},
        {"discovered_since": "2025-04-01", "top_k": 10},
    ]
    for question in VARIED_QUESTIONS:
        for options in searches:
            hits = memory.search(question, **options)["results"]  # type: ignore[arg-type]
            # an opinion's prior decays with the clock: equal to a millionth between runs
            out.append(
                [
                    (h["id"], h["score"], h["channels"], replace(h["parts"], prior=0.0), h["text"])
                    for h in hits
                ]
                + [round(h["parts"].prior, 6) for h in hits]
            )
    return out


@pytest.mark.parametrize("model", [True, False], ids=["vectors", "keywords"])
def test_a_restored_index_answers_result_for_result_on_a_varied_vault(
    vault: Vault, model: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Restored entries are made from their records only when ranking reads them: every
    field ranking and the page read (importance, kind, tags, namespace, days, the turns of a
    thread) must come out as a built index has them, for every search shape."""
    path = vault.path
    first = Memory(vault, embedder=shared_embedder() if model else None)
    first.vault.put(
        NewItem(data={"text": "a note that is not a memory", "source": "t"}, kind="note")
    )
    ids = [store(first, text, **fields) for text, fields in VARIED]
    previous: str | None = None
    for turn, text in enumerate(THREAD, start=1):
        previous = store(first, text, thread="offsite", turn=turn, reply_to=previous)
    store(first, "The kettle moved to the second shelf", supersedes=[ids[0]])
    assert first.save_snapshot()
    first.forget(ids[7])  # after the snapshot: the image is stale for these
    store(first, "The standup is now at 10:00 on Mondays", supersedes=[ids[8]])
    store(first, "Is the lake house heated?", thread="offsite", turn=5, reply_to=previous)
    first.vault.close()

    built = _open(path, model=model)
    built.vault.take_section(index_build.SECTION)
    want = _every_answer(built)
    built.vault.close()

    restored = _open(path, model=model)
    with monkeypatch.context() as patched:
        patched.setattr(index_build, "build", _refuse_build)
        assert _every_answer(restored) == want
    assert any(want), "the searches found something to compare"
    restored.vault.close()


def _refuse_build(*_: object) -> None:
    raise AssertionError("the index was built, not restored")


def test_an_image_in_the_layout_before_columns_is_built_not_misread(vault: Vault) -> None:
    """A snapshot whose index section has the layout release 1 wrote (a JSON slot list, ADR
    0210) is sealed and opens, but the index is built from the records, never read from it."""
    path = vault.path
    first = Memory(vault, embedder=None)
    for text in FACTS:
        store(first, text)
    keyword = first.index.keyword.image()
    slots = [[entry.slot, entry.id, entry.seq] for entry in map(first.index.entry, _ids(first))]
    head = orjson.dumps({"version": 1, "vectors": False, "count": len(FACTS), "slots": slots})
    old = struct.pack(">I", len(head)) + head + keyword
    assert first.vault.save_snapshot({index_build.SECTION: old})
    want = _answers(first)
    vault.close()

    reopened = _open(path, model=False)
    assert reopened.vault.snapshot_lag == 0  # the vault's own view came from the snapshot
    section = reopened.vault.take_section(index_build.SECTION)
    assert section == old
    assert index_build.restore(section, list(reopened.vault.items("memory")), False) is None
    assert _answers(reopened) == want  # built from the records
    reopened.vault.close()


def test_an_image_cut_short_is_built_not_misread(vault: Vault) -> None:
    """An image of this version whose columns stop early is not read past its end."""
    first = Memory(vault, embedder=None)
    for text in FACTS:
        store(first, text)
    image = index_build.image(first.index, False)
    (size,) = struct.unpack_from(">I", image)
    cut = image[: 4 + size + 8 * len(FACTS)]  # the header and the slots only
    assert index_build.restore(cut, list(vault.items("memory")), False) is None
    assert index_build.restore(image, list(vault.items("memory")), False) is not None


def _ids(memory: Memory) -> list[str]:
    return [it.id for it in memory.vault.items("memory")]
