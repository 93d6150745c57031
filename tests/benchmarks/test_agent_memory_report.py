"""The agent-memory benchmark's tables, defect lines and targets, on a hand-made result.

No vault and no model: per-question values are written here, as ``measure`` would return
them, and the report code (``benchmarks/agent_memory_report.py``) turns them into tables.
"""

from __future__ import annotations

from rich.console import Console

import agent_memory
import agent_memory_report as report
from memory_sets import Question


def _question(qid: str, kind: str, family: str, shared: int, stale: bool = False) -> Question:
    stale_ids = ("s",) if stale else ()
    return Question(qid, f"question {qid}", kind, ("g",), stale_ids, family, "tune", shared)


def _values(mine: float, model: float, words: float, **extra: float) -> dict:
    def system(hit: float) -> dict[str, float]:
        return {"recall@1": hit, "recall@5": hit, "all@5": hit, "mrr@10": hit}

    return {"affidavit": {**system(mine), **extra}, "vector": system(model), "bm25": system(words)}


def _fake() -> tuple[dict, list[Question]]:
    """Paraphrases over six families that affidavit misses and the model finds; exact terms
    that all three find; one correction whose old memory affidavit still returns."""
    questions, values = [], {}
    for n in range(12):
        q = _question(f"p{n}", "paraphrase", f"fam{n % 6}", shared=0)
        questions.append(q)
        values[q.id] = _values(0.0, 1.0, 0.0, lost=0.0, short=1.0)
    for n in range(6):
        q = _question(f"e{n}", "exact-term", f"fam{n}", shared=2)
        questions.append(q)
        values[q.id] = _values(1.0, 0.0 if n == 0 else 1.0, 1.0, lost=0.0, short=0.0)
    q = _question("c0", "current-after-correction", "fam0", shared=1, stale=True)
    questions.append(q)
    values[q.id] = _values(1.0, 1.0, 0.0, lost=1.0, short=0.0, **{"superseded@5": 1.0})
    return values, questions


def test_rows_hold_every_system_and_both_paired_deltas() -> None:
    values, questions = _fake()
    built = report.build(values, questions)
    assert [r.metric for r in built.overall] == list(report.METRICS)
    assert [r.label for r in built.by_kind] == [
        "exact-term",
        "paraphrase",
        "current-after-correction",
    ]
    assert [r.label for r in built.by_bucket] == [
        "0 shared words",
        "1 shared word",
        "2+ shared words",
    ]
    paraphrase = next(r for r in built.by_kind if r.label == "paraphrase")
    assert (paraphrase.questions, paraphrase.clusters) == (12, 6)
    assert paraphrase.means["vector"].mean == 1.0
    assert paraphrase.deltas["vector"].mean == -1.0
    assert paraphrase.deltas["bm25"].mean == 0.0
    assert built.counts == {"superseded@5": (1, 1), "lost": (1, 19), "short": (12, 19)}


def test_a_row_wholly_below_the_model_is_a_defect_and_the_targets_say_so() -> None:
    values, questions = _fake()
    built = report.build(values, questions)
    assert {r.label for r in built.defects if r.metric == "recall@5"} == {
        "all",
        "paraphrase",
        "0 shared words",
    }
    verdicts = {t.text: t.holds for t in built.targets}
    assert verdicts["affidavit - vector-only recall@5 overall, lower bound >= 0"] is False
    assert verdicts["no kind and no overlap bucket wholly below vector-only (recall@5)"] is False
    assert verdicts["exact-term recall@5 >= 0.98"] is True
    assert verdicts["superseded@5 = 0"] is False


def test_the_printed_report_names_defects_counts_and_targets() -> None:
    values, questions = _fake()
    console = Console(record=True, width=200)
    report.show(report.build(values, questions), "a fake run", "the fake set", "families", console)
    text = console.export_text()
    assert "recall@5 by question kind" in text
    assert "recall@5 by content words shared with the answer" in text
    assert "DEFECT: affidavit is below vector-only on paraphrase, recall@5 -1.000" in text
    assert "answers lost at store time: 1 of 19" in text
    assert "fewer than 10: 12 of 19" in text
    assert "MISSED superseded@5 = 0: 1 of 1" in text
    assert "HOLDS  exact-term recall@5 >= 0.98" in text


def test_a_run_with_no_defect_says_so() -> None:
    values, questions = _fake()
    even = {q: {**v, "affidavit": {**v["affidavit"], **v["vector"]}} for q, v in values.items()}
    lines = report.lines(report.build(even, questions), "the fake set")
    assert "no row is detectably below vector-only" in lines
    assert not any(line.startswith("DEFECT") for line in lines)


def test_scores_count_shares_of_gold_and_lost_answers() -> None:
    ranked = ["a", "x", "b", "y", "z", "c", "w"]
    multi = agent_memory.score(ranked, ["a", "c"], [])
    assert multi == {"recall@1": 0.5, "recall@5": 0.5, "all@5": 0.0, "mrr@10": 1.0}
    late = agent_memory.score(ranked, ["c"], ["z"])
    assert late == {
        "recall@1": 0.0,
        "recall@5": 0.0,
        "all@5": 0.0,
        "mrr@10": 1 / 6,
        "superseded@5": 1.0,
    }
    lost = agent_memory.score(ranked, ["a", None], [None])
    assert lost["recall@5"] == 0.5 and lost["all@5"] == 0.0 and lost["superseded@5"] == 0.0
