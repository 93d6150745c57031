"""The needs question set (benchmarks/needs/) is usable, and its check catches a broken one.

No model and no vault: this reads the JSONL files and runs the same check the benchmark runs
before it stores anything (``memory_sets.check_needs``).
"""

from __future__ import annotations

import json
import shutil
from collections import Counter
from pathlib import Path

import pytest

import memory_sets
from memory_sets import HALVES, KINDS, NEEDS, SetError, check_needs, content_words, shared_words


def _rows(name: str) -> list[dict]:
    return [json.loads(line) for line in (NEEDS / name).read_text().splitlines() if line]


def test_the_needs_set_passes_its_own_check() -> None:
    qset = memory_sets.load_needs()
    assert len(qset.facts) >= 300
    assert len(qset.questions) >= 280
    assert len({q.cluster for q in qset.questions}) >= 55


def test_at_least_half_of_every_half_shares_no_content_word() -> None:
    qset = memory_sets.load_needs()
    for half in (*HALVES, "all"):
        questions = qset.split(half)
        zero = sum(1 for q in questions if q.shared == 0)
        assert zero >= 0.5 * len(questions), half


def test_halves_split_whole_families_about_evenly_with_every_kind_in_each() -> None:
    halves = json.loads((NEEDS / "families.json").read_text())["halves"]
    questions = _rows("questions.jsonl")
    assert {q["family"] for q in questions} == set(halves)
    per_half = Counter(halves.values())
    assert abs(per_half["tune"] - per_half["heldout"]) <= 2
    kinds = {h: Counter(q["kind"] for q in questions if halves[q["family"]] == h) for h in HALVES}
    for half in HALVES:
        assert set(kinds[half]) == set(KINDS), half
    exact = sum(1 for q in questions if q["kind"] == "exact-term")
    assert 0.10 <= exact / len(questions) <= 0.20


def test_memories_are_short_single_claims_in_saving_order() -> None:
    memories = _rows("memories.jsonl")
    assert all(len(m["text"]) <= 200 for m in memories)
    assert sum(len(m["text"]) < 130 for m in memories) > 0.8 * len(memories)
    position = {m["id"]: n for n, m in enumerate(memories)}
    for m in memories:
        if m["supersedes"]:
            assert position[m["supersedes"]] < position[m["id"]]
    assert sum(m["family"] == "noise" for m in memories) >= 30


def test_content_words_stem_lightly_and_drop_function_words() -> None:
    assert content_words("Who deployed the releases?") == {"deploy", "releas"}
    assert content_words("deploys, deploying, deployed") == {"deploy"}
    assert content_words("I don't need a 5 min fix") == {"min", "fix"}  # 1-char tokens go
    assert content_words("Which port does 8421 use?") == {"port", "8421", "use"}
    assert shared_words("What's on 7071?", ["health checks on 7071", "gRPC on 7070"]) == {"7071"}


def _broken_copy(tmp_path: Path) -> Path:
    folder = tmp_path / "needs"
    shutil.copytree(NEEDS, folder)
    return folder


def test_a_gold_id_that_does_not_exist_is_refused_with_its_question(tmp_path: Path) -> None:
    folder = _broken_copy(tmp_path)
    questions = _rows("questions.jsonl")
    questions[0]["gold"] = ["m999"]
    (folder / "questions.jsonl").write_text("".join(json.dumps(q) + "\n" for q in questions))
    with pytest.raises(SetError) as caught:
        memory_sets.load_needs(folder)
    assert any(questions[0]["id"] in p and "m999" in p for p in caught.value.problems)


def test_check_names_each_broken_rule() -> None:
    memories = _rows("memories.jsonl")
    questions = _rows("questions.jsonl")
    families = json.loads((NEEDS / "families.json").read_text())
    assert check_needs(memories, questions, families) == []
    by_text = {m["id"]: m["text"] for m in memories}

    # every question copies its answer: nothing shares zero content words any more
    echoed = [{**q, "text": q["text"] + " " + by_text[q["gold"][0]]} for q in questions]
    assert any("share no content word" in p for p in check_needs(memories, echoed, families))

    # no preference question in the held-out half
    held = families["halves"]
    no_pref = [q for q in questions if q["kind"] != "preference" or held[q["family"]] != "heldout"]
    problems = check_needs(memories, no_pref, families)
    assert any("heldout half has no preference" in p for p in problems)

    # a correction question that forgets what its answer superseded
    fixed = next(q for q in questions if q["kind"] == "current-after-correction")
    forgot = [{**q, "superseded": []} if q is fixed else q for q in questions]
    assert any(fixed["id"] in p for p in check_needs(memories, forgot, families))

    # a correction saved before the memory it corrects
    late = next(i for i, m in enumerate(memories) if m["supersedes"])
    early = [memories[late], *memories[:late], *memories[late + 1 :]]
    assert any("not saved before it" in p for p in check_needs(early, questions, families))

    # a family without a half
    halves = {k: v for k, v in held.items() if k != questions[0]["family"]}
    problems = check_needs(memories, questions, {**families, "halves": halves})
    assert any("has no half" in p for p in problems)


def test_the_development_set_loads_in_place_with_gold_memory_clusters() -> None:
    if not memory_sets.DEV.is_dir():
        pytest.skip(f"the development set is not at {memory_sets.DEV}")
    qset = memory_sets.load_dev()
    assert not qset.has_halves
    assert {q.kind for q in qset.questions} == set(KINDS)
    by_cluster: dict[str, set[str]] = {}
    for q in qset.questions:
        by_cluster.setdefault(q.cluster, set()).update(q.gold)
    owners = Counter(g for gold in by_cluster.values() for g in gold)
    assert max(owners.values()) == 1  # a gold memory belongs to exactly one cluster
