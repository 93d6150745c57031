"""Honest figures for the retrieval benchmarks: bootstrap intervals, paired deltas, saved runs.

Every retrieval figure is a mean of per-question values (recall@5 of one question is 0, 0.5
or 1, ...). Two systems answer the same questions, so their difference is measured per
question and resampled as pairs: the paired bootstrap keeps the correlation between the two
systems (both find the easy questions), which makes its interval far narrower than
comparing two independent intervals, and honest about what a difference of 0.004 means.

Questions are not always independent: the questions of one family ask about the same few
memories, so a family that a system gets wrong is wrong several times over. Given
``clusters`` (one label per question), the bootstrap resamples whole clusters (a cluster
bootstrap: each resample draws as many clusters as there are, with replacement, and takes
the mean over all their questions), which widens the interval to what the number of
families really supports. Without ``clusters`` each question is its own cluster, the plain
percentile bootstrap.

- :func:`interval`: the mean of one system's values with a percentile bootstrap interval.
- :func:`paired_delta`: mean(a - b) over the same questions, with its interval; a delta
  whose interval excludes zero is a measured difference, anything else is noise.
- :func:`save_run` / :func:`load_run`: per-question values in a JSON file, so a run on one
  git revision can be compared with a run on another (``--save`` / ``--compare`` of
  ``benchmarks/agent_memory.py`` and ``benchmarks/locomo.py``).

Resampling is seeded: the same values give the same interval on every run.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

#: Bootstrap resamples: the interval's ends move by < 0.002 between seeds at 10,000.
RESAMPLES = 10_000
SEED = 13
LEVEL = 0.95
RUN_FORMAT = "affidavit-benchmark-run/1"

#: Per question: system -> metric -> value.
PerQuestion = Mapping[str, Mapping[str, Mapping[str, float]]]


@dataclass(frozen=True)
class Interval:
    """A mean and its bootstrap interval (``LEVEL``, percentile method)."""

    mean: float
    low: float
    high: float

    def excludes_zero(self) -> bool:
        """Whether the interval lies wholly on one side of zero (a measured difference)."""
        return self.low > 0 or self.high < 0

    def __str__(self) -> str:
        return f"{self.mean:.3f} [{self.low:.3f}, {self.high:.3f}]"

    def signed(self) -> str:
        """The interval as a delta: signs shown, and a star when it excludes zero."""
        star = " *" if self.excludes_zero() else ""
        return f"{self.mean:+.3f} [{self.low:+.3f}, {self.high:+.3f}]{star}"


#: One label per question; questions with the same label are resampled together.
Clusters = Sequence[str]


def _bootstrap(
    values: Sequence[float], clusters: Clusters | None, resamples: int, seed: int
) -> Interval:
    import numpy as np

    data = np.asarray(values, dtype=np.float64)
    if data.size == 0:
        raise ValueError("no values to resample")
    if clusters is None:
        groups = np.arange(data.size)
    else:
        if len(clusters) != data.size:
            raise ValueError(f"{len(clusters)} cluster labels for {data.size} values")
        _, groups = np.unique(np.asarray(clusters, dtype=object).astype(str), return_inverse=True)
    sums = np.bincount(groups, weights=data)
    sizes = np.bincount(groups).astype(np.float64)
    rng = np.random.default_rng(seed)
    means = np.empty(resamples)
    for start in range(0, resamples, 1000):  # bounded memory for large question sets
        stop = min(resamples, start + 1000)
        picks = rng.integers(0, sums.size, size=(stop - start, sums.size))
        means[start:stop] = sums[picks].sum(axis=1) / sizes[picks].sum(axis=1)
    tail = (1 - LEVEL) / 2 * 100
    low, high = np.percentile(means, [tail, 100 - tail])
    return Interval(float(data.mean()), float(low), float(high))


def interval(
    values: Sequence[float],
    *,
    clusters: Clusters | None = None,
    resamples: int = RESAMPLES,
    seed: int = SEED,
) -> Interval:
    """The mean of ``values`` with its bootstrap interval (resampling ``clusters`` whole)."""
    return _bootstrap(values, clusters, resamples, seed)


def paired_delta(
    a: Sequence[float],
    b: Sequence[float],
    *,
    clusters: Clusters | None = None,
    resamples: int = RESAMPLES,
    seed: int = SEED,
) -> Interval:
    """mean(a - b) over paired values (the same questions, in the same order)."""
    if len(a) != len(b):
        raise ValueError(f"paired values differ in length ({len(a)} vs {len(b)})")
    return _bootstrap([x - y for x, y in zip(a, b, strict=True)], clusters, resamples, seed)


def column(per_question: PerQuestion, ids: Sequence[str], system: str, metric: str) -> list[float]:
    """One system's values of one metric, for ``ids`` in that order."""
    return [per_question[q][system][metric] for q in ids]


def git_revision(repo: Path) -> str:
    """The checked-out commit (with ``-dirty`` for uncommitted changes), for saved runs."""

    def git(*args: str) -> str:
        done = subprocess.run(
            ["git", "-C", str(repo), *args], capture_output=True, text=True, check=True
        )
        return done.stdout.strip()

    try:
        head = git("rev-parse", "--short=12", "HEAD")
        dirty = git("status", "--porcelain", "--untracked-files=no")
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return head + ("-dirty" if dirty else "")


def run_label(meta: Mapping[str, Any]) -> str:
    """How a run is named in a comparison: its revision, and its overrides if any."""
    overrides = " ".join(f"{k}={v}" for k, v in sorted(meta.get("overrides", {}).items()))
    return " ".join(filter(None, [str(meta.get("revision", "?")), overrides]))


def save_run(path: Path, meta: Mapping[str, Any], per_question: PerQuestion) -> None:
    """Write one run's per-question values (and what produced them) as JSON."""
    body = {"format": RUN_FORMAT, "meta": dict(meta), "questions": per_question}
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(body, indent=1, sort_keys=True) + "\n")
    tmp.replace(path)


def load_run(path: Path) -> tuple[dict[str, Any], dict[str, dict[str, dict[str, float]]]]:
    """Read a file :func:`save_run` wrote: (meta, per-question values)."""
    try:
        body = json.loads(path.read_text())
    except (OSError, json.JSONDecodeError) as exc:
        raise SystemExit(f"cannot read the saved run {path}: {exc}") from None
    if not isinstance(body, dict) or body.get("format") != RUN_FORMAT:
        raise SystemExit(f"{path} is not a saved benchmark run (format {RUN_FORMAT})")
    return body["meta"], body["questions"]


def compare_table(
    title: str,
    current: PerQuestion,
    saved: PerQuestion,
    system: str,
    metrics: Sequence[str],
    label: tuple[str, str],
    clusters: Mapping[str, str] | None = None,
) -> Any:
    """A rich table of current - saved for one system, paired on the questions both hold
    (resampling each question's cluster whole when ``clusters`` maps question -> cluster)."""
    from rich.table import Table

    ids = sorted(set(current) & set(saved))
    if not ids:
        raise SystemExit("the saved run shares no question with this one (another split?)")
    groups = [clusters[q] for q in ids] if clusters is not None else None
    table = Table(title=f"{title}: {label[0]} - {label[1]}, {len(ids)} paired questions")
    for name in ("metric", label[1], label[0], "delta [95% CI]"):
        table.add_column(name, justify="right")
    for metric in metrics:
        now = column(current, ids, system, metric)
        before = column(saved, ids, system, metric)
        table.add_row(
            metric,
            f"{sum(before) / len(ids):.3f}",
            f"{sum(now) / len(ids):.3f}",
            paired_delta(now, before, clusters=groups).signed(),
        )
    return table
