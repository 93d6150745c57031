"""The tables, defect lines and target checks of ``benchmarks/agent_memory.py``.

Input: per-question values (question id -> system -> metric -> value, the shape
``benchmarks/stats.py`` saves) and the questions themselves (``memory_sets.Question``: kind,
overlap bucket, cluster). Output: three tables (overall by metric; recall@5 per kind; recall@5
per overlap bucket), each row with affidavit, vector-only and BM25 and the paired deltas
affidavit - vector-only and affidavit - BM25, every interval a cluster bootstrap over the
questions' clusters (``stats.interval`` / ``stats.paired_delta``); then one line per row
whose paired interval against vector-only lies wholly below zero (a defect by the project's
rules: the hybrid may never be detectably worse than its own semantic channel), and the
targets of issue 24 on the questions given.

Kept apart from the measuring so the table code can run on a hand-made result
(``tests/benchmarks/test_agent_memory_report.py``) without a vault or a model.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import stats
from memory_sets import BUCKETS, KINDS, Question

SYSTEMS = ("affidavit", "vector", "bm25")
LABELS = {"affidavit": "affidavit", "vector": "vector-only", "bm25": "BM25"}
#: Ranked metrics every system has, in table order, with how the table names them.
METRICS = {
    "recall@1": "recall@1",
    "recall@5": "recall@5",
    "all@5": "all-gold@5",
    "mrr@10": "MRR@10",
}
#: The metric the per-kind and per-bucket tables and the targets read.
TARGET_METRIC = "recall@5"
EXACT_TERM_TARGET = 0.98
#: The ``top_k`` every ranked search asks for.
TOP_K = 10
STRETCH_TARGET = 0.85

PerQuestion = stats.PerQuestion


@dataclass(frozen=True)
class Row:
    """One table row: the mean of each system, and affidavit minus each baseline."""

    label: str
    metric: str
    questions: int
    clusters: int
    means: dict[str, stats.Interval]
    deltas: dict[str, stats.Interval]

    @property
    def defect(self) -> bool:
        """affidavit is detectably below vector-only here (the paired interval is below 0)."""
        return self.deltas["vector"].high < 0


@dataclass(frozen=True)
class Target:
    """One of issue 24's targets: what it asks, whether it holds, what was measured."""

    text: str
    holds: bool | None  # None: not measurable on these questions
    measured: str


@dataclass
class Report:
    """Everything the benchmark prints about one run."""

    overall: list[Row]
    by_kind: list[Row]
    by_bucket: list[Row]
    counts: dict[str, tuple[int, int]]  # name -> (how many, out of)
    adaptive: dict[str, float] = field(default_factory=dict)
    targets: list[Target] = field(default_factory=list)

    @property
    def defects(self) -> list[Row]:
        return [r for r in (*self.overall, *self.by_kind, *self.by_bucket) if r.defect]


def _row(label: str, metric: str, per_question: PerQuestion, group: Sequence[Question]) -> Row:
    ids = [q.id for q in group]
    clusters = [q.cluster for q in group]
    values = {s: stats.column(per_question, ids, s, metric) for s in SYSTEMS}
    return Row(
        label=label,
        metric=metric,
        questions=len(ids),
        clusters=len(set(clusters)),
        means={s: stats.interval(values[s], clusters=clusters) for s in SYSTEMS},
        deltas={
            other: stats.paired_delta(values["affidavit"], values[other], clusters=clusters)
            for other in SYSTEMS[1:]
        },
    )


def _grouped(
    per_question: PerQuestion,
    questions: Sequence[Question],
    key: Callable[[Question], str],
    order: Sequence[str],
    name: Callable[[str], str],
) -> list[Row]:
    rows = []
    for value in order:
        group = [q for q in questions if key(q) == value]
        if group:
            rows.append(_row(name(value), TARGET_METRIC, per_question, group))
    return rows


def _bucket_name(bucket: str) -> str:
    return f"{bucket} shared word" + ("" if bucket == "1" else "s")


def _count(
    per_question: PerQuestion, questions: Sequence[Question], metric: str
) -> tuple[int, int]:
    """How many questions have ``metric`` = 1 for affidavit, out of those that have it."""
    held = [per_question[q.id]["affidavit"][metric] for q in questions]
    return int(sum(held)), len(held)


def build(per_question: PerQuestion, questions: Sequence[Question]) -> Report:
    """The rows, counts and targets of a run over ``questions``."""
    overall = [_row("all", m, per_question, questions) for m in METRICS]
    by_kind = _grouped(per_question, questions, lambda q: q.kind, KINDS, lambda k: k)
    by_bucket = _grouped(per_question, questions, lambda q: q.bucket, BUCKETS, _bucket_name)
    corrected = [q for q in questions if q.superseded]
    report = Report(
        overall=overall,
        by_kind=by_kind,
        by_bucket=by_bucket,
        counts={
            "superseded@5": _count(per_question, corrected, "superseded@5"),
            "lost": _count(per_question, questions, "lost"),
            "short": _count(per_question, questions, "short"),
        },
    )
    for metric in ("on_page", "page_size"):
        mine = [per_question[q.id]["affidavit"].get(metric) for q in questions]
        if mine and all(v is not None for v in mine):
            report.adaptive[metric] = sum(float(v) for v in mine if v is not None) / len(mine)
    report.targets = _targets(report)
    return report


def _targets(report: Report) -> list[Target]:
    top = next(r for r in report.overall if r.metric == TARGET_METRIC)
    delta = top.deltas["vector"]
    below = [r.label for r in (*report.by_kind, *report.by_bucket) if r.defect]
    exact = next((r for r in report.by_kind if r.label == "exact-term"), None)
    stale, corrected = report.counts["superseded@5"]
    return [
        Target(
            "affidavit - vector-only recall@5 overall, lower bound >= 0",
            delta.low >= 0,
            delta.signed(),
        ),
        Target(
            "no kind and no overlap bucket wholly below vector-only (recall@5)",
            not below,
            "below: " + ", ".join(below) if below else "none below",
        ),
        Target(
            f"exact-term recall@5 >= {EXACT_TERM_TARGET}",
            None if exact is None else exact.means["affidavit"].mean >= EXACT_TERM_TARGET,
            "no exact-term questions" if exact is None else str(exact.means["affidavit"]),
        ),
        Target("superseded@5 = 0", stale == 0, f"{stale} of {corrected} corrected answers"),
        Target(
            f"stretch: recall@5 >= {STRETCH_TARGET} overall",
            top.means["affidavit"].mean >= STRETCH_TARGET,
            str(top.means["affidavit"]),
        ),
    ]


# -- printing ----------------------------------------------------------------------------------


def _table(title: str, first: str, rows: Sequence[Row], by_metric: bool) -> Any:
    from rich.table import Table

    table = Table(title=title, title_justify="left")
    table.add_column(first)
    table.add_column("n (clusters)", justify="right")
    for system in SYSTEMS:
        table.add_column(LABELS[system], justify="right")
    for other in SYSTEMS[1:]:
        table.add_column(f"affidavit - {LABELS[other]}", justify="right")
    for row in rows:
        table.add_row(
            METRICS[row.metric] if by_metric else row.label,
            f"{row.questions} ({row.clusters})",
            *(str(row.means[s]) for s in SYSTEMS),
            *(row.deltas[o].signed() for o in SYSTEMS[1:]),
        )
    return table


def _verdict(target: Target) -> str:
    return {True: "HOLDS", False: "MISSED", None: "n/a"}[target.holds]


def lines(report: Report, where: str) -> list[str]:
    """The plain-text lines under the tables: counts, defects, targets."""
    stale, corrected = report.counts["superseded@5"]
    lost, asked = report.counts["lost"]
    short, _ = report.counts["short"]
    out = [
        f"superseded@5 (affidavit): {stale} of {corrected} questions whose answer corrected "
        f"an older memory had a superseded one in the top 5",
        f"answers lost at store time: {lost} of {asked} questions (a gold memory the store "
        f"refused); top_k={TOP_K} searches that returned fewer than {TOP_K}: {short} of {asked}",
    ]
    if report.adaptive:
        out.append(
            f"adaptive page (no top_k): answer on it {report.adaptive.get('on_page', 0):.3f}, "
            f"mean length {report.adaptive.get('page_size', 0):.1f}"
        )
    for row in report.defects:
        name = row.label if row.label != "all" else "all questions"
        out.append(
            f"DEFECT: affidavit is below vector-only on {name}, {METRICS[row.metric]} "
            f"{row.deltas['vector'].signed()}"
        )
    if not report.defects:
        out.append("no row is detectably below vector-only")
    out.append(f"issue 24 targets on {where}:")
    out += [f"  {_verdict(t):6} {t.text}: {t.measured}" for t in report.targets]
    return out


def show(report: Report, title: str, where: str, resampled: str, console: Any) -> None:
    """Print the three tables and the lines under them; ``resampled`` names the clusters."""
    console.print(title, highlight=False)
    console.print(
        f"mean [95% CI, {resampled} resampled, 10,000 times]; deltas paired per question; "
        "* = the interval excludes 0",
        highlight=False,
    )
    console.print(_table("overall", "metric", report.overall, by_metric=True))
    console.print(_table("recall@5 by question kind", "kind", report.by_kind, by_metric=False))
    console.print(
        _table(
            "recall@5 by content words shared with the answer",
            "overlap",
            report.by_bucket,
            by_metric=False,
        )
    )
    for line in lines(report, where):
        console.print(line, highlight=False)
