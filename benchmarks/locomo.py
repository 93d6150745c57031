"""LoCoMo turn-level retrieval: affidavit's recall against BM25, with paired bootstrap intervals.

The secondary recall benchmark (the primary one is ``benchmarks/agent_memory.py``). Converts
``shared/data/locomo10.json`` beside the repo (or a folder above it; CC BY-NC 4.0, used for
evaluation only and never copied into the repo or the package) into the generic format of
``affidavit bench retrieval``: one corpus row per dialog turn (text "speaker: text", the
session's date, group and thread = the session, turn = its place in the session), one query
per QA item (relevant = its evidence turns). Categories 1-4 are scored; category 5
(adversarial, unanswerable) is reported separately.

    python benchmarks/locomo.py [--split all|tune|heldout] [--set NAME=VALUE]
                                [--save F] [--compare F] [--json OUT] [--write-jsonl DIR]

- ``--split``: conversations 0-4 are the tuning half, 5-9 the held-out half (``all``, the
  default, is the figure issue 13 bounds: 0.671 / 0.750 / 0.924).
- The first table gives recall@5, recall@10 and group_hit@5 with 95% bootstrap intervals,
  and affidavit - BM25 paired per question (``benchmarks/stats.py``); the second the
  runner's own table, per category.
- ``--save F`` writes per-question values; ``--compare F`` adds this run minus a saved run
  (e.g. saved on the base revision, or with other ``--set`` values), paired by question.

Embedding the 5,882 turns costs about a minute and a half of CPU on a 2-core machine.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import sys
from datetime import datetime
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import stats
import tuning

REPO = Path(__file__).resolve().parents[1]
#: ``shared/data/locomo10.json`` beside the repo, or beside a folder of worktrees holding it.
DEFAULT_DATA = next(
    (p / "shared/data/locomo10.json" for p in REPO.parents if (p / "shared/data").is_dir()),
    REPO.parent / "shared/data/locomo10.json",
)
SCORED = {"1", "2", "3", "4"}
#: Conversations (by position in the file) of each half.
SPLITS = {"tune": range(0, 5), "heldout": range(5, 10), "all": range(0, 10)}
METRICS = ("recall@5", "recall@10", "group_hit@5")


def _session_date(raw: str | None) -> str | None:
    if not raw:
        return None
    try:
        return datetime.strptime(raw.strip(), "%I:%M %p on %d %B, %Y").date().isoformat()
    except ValueError:
        return None


def session_rows(sid: str, session: str, turns: list[dict[str, Any]], date: str | None) -> list:
    """One LoCoMo session as corpus rows: the one place that decides how a turn is imported.

    Each row carries its conversation structure for the import: ``thread`` (the session)
    and ``turn`` (its place in it); the runner hands both to the product unchanged.
    """
    rows = []
    for n, turn in enumerate(turns):
        row = {
            "collection": sid,
            "id": f"{sid}:{turn['dia_id']}",
            "text": f"{turn['speaker']}: {turn['text']}",
            "group": f"{sid}:{session}",
            "thread": f"{sid}:{session}",
            "turn": n,
        }
        if date:
            row["date"] = date
        rows.append(row)
    return rows


def convert(
    data: list[dict[str, Any]], conversations: range | None = None
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """LoCoMo samples -> (corpus rows, query rows) in the generic benchmark format."""
    corpus: list[dict[str, Any]] = []
    queries: list[dict[str, Any]] = []
    picked = data if conversations is None else [data[i] for i in conversations if i < len(data)]
    for sample in picked:
        sid = sample["sample_id"]
        conv = sample["conversation"]
        for key, turns in conv.items():
            if re.fullmatch(r"session_\d+", key) and isinstance(turns, list):
                corpus += session_rows(sid, key, turns, _session_date(conv.get(f"{key}_date_time")))
        for n, qa in enumerate(sample["qa"]):
            queries.append(
                {
                    "collection": sid,
                    "id": f"{sid}:q{n}",
                    "text": qa["question"],
                    "relevant": [f"{sid}:{e.strip()}" for e in qa.get("evidence", [])],
                    "category": str(qa["category"]),
                }
            )
    return corpus, queries


def interval_table(title: str, values: dict[str, dict[str, dict[str, float]]]) -> Any:
    """Each metric for affidavit and BM25 with intervals, and their paired delta."""
    from rich.table import Table

    ids = sorted(values)
    table = Table(title=title, title_justify="left")
    for name in ("metric", "affidavit", "BM25", "affidavit - BM25"):
        table.add_column(name, justify="right")
    for metric in METRICS:
        ours = stats.column(values, ids, "affidavit", metric)
        theirs = stats.column(values, ids, "bm25", metric)
        table.add_row(
            metric,
            str(stats.interval(ours)),
            str(stats.interval(theirs)),
            stats.paired_delta(ours, theirs).signed(),
        )
    return table


def main() -> None:
    from rich.console import Console

    from affidavit.vault import bench

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--split", choices=tuple(SPLITS), default="all")
    parser.add_argument("--json", type=Path, default=None, help="write the report here")
    parser.add_argument("--save", type=Path, default=None, help="write per-question values")
    parser.add_argument("--compare", type=Path, default=None, help="a run saved with --save")
    parser.add_argument(
        "--write-jsonl",
        type=Path,
        default=None,
        help="also write corpus.jsonl/queries.jsonl here (outside the repo)",
    )
    tuning.add_argument(parser)
    args = parser.parse_args()
    overrides = tuning.apply(args.set)
    if not args.data.is_file():
        sys.exit(f"locomo: {args.data} not found; pass --data PATH to locomo10.json")
    raw = args.data.read_bytes()
    corpus, queries = convert(json.loads(raw), SPLITS[args.split])
    if args.write_jsonl:
        args.write_jsonl.mkdir(parents=True, exist_ok=True)
        for name, rows in (("corpus", corpus), ("queries", queries)):
            with (args.write_jsonl / f"{name}.jsonl").open("w") as fh:
                fh.writelines(json.dumps(r) + "\n" for r in rows)
    console = Console(width=160)
    with bench.progress_bars(console) as progress:
        report = bench.run(corpus, queries, ks=(5, 10), scored_categories=SCORED, progress=progress)
    per_query = report["_per_query"]
    values = {
        q: {"affidavit": v, "bm25": per_query["bm25"][q]} for q, v in per_query["system"].items()
    }
    half = {"all": "all 10 conversations", "tune": "tuning half (0-4)", "heldout": "held-out half"}
    title = (
        f"LoCoMo turn retrieval, {half[args.split]}: {len(values)} questions "
        f"of categories 1-4 (mean [95% CI]; delta paired, * = interval excludes 0)"
    )
    console.print(interval_table(title, values))
    console.print(bench.table(report, "per category (overall = categories 1-4)"))
    revision = stats.git_revision(REPO)
    console.print(
        f"revision {revision}" + (f"; overrides {overrides}" if overrides else ""),
        highlight=False,
    )
    meta = {
        "benchmark": "locomo",
        "split": args.split,
        "data": hashlib.sha256(raw).hexdigest()[:12],
        "revision": revision,
        "overrides": {k: str(v) for k, v in overrides.items()},
    }
    if args.compare:
        saved_meta, saved = stats.load_run(args.compare)
        if saved_meta.get("data") != meta["data"]:
            sys.exit(f"{args.compare} was measured on other LoCoMo data")
        label = (stats.run_label(meta), stats.run_label(saved_meta))
        console.print(stats.compare_table("LoCoMo", values, saved, "affidavit", METRICS, label))
    if args.save:
        stats.save_run(args.save, meta, values)
    if args.json:
        args.json.write_text(json.dumps(bench.public(report), indent=2) + "\n")


if __name__ == "__main__":
    main()
