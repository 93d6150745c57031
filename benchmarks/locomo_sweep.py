"""LoCoMo ranking sweep: embed once, then score many ranking settings in seconds each.

``benchmarks/locomo.py`` measures the product end to end (a fresh vault per conversation,
every turn embedded on import), about 100 s a run. Tuning a constant needs dozens of runs,
so this script embeds the turns and questions once, then for each setting builds the same
in-RAM ``RecallIndex`` that an unlocked vault holds (imported rows: no age, saved in turn
order, discovered on the session's day) and ranks every question with the product's ranking
code. With no override its figures equal locomo.py's (the check before trusting a sweep).

    python benchmarks/locomo_sweep.py [--split all|tune|heldout] [--save F] [--compare F]
                                      [--label NAME] "" "W_ANSWER=0.4" "W_DATE=0,W_NEIGHBOR=0.1"

Each argument is one setting: comma-separated NAME=VALUE overrides of
``affidavit.recall.ranking.params`` constants ("" = the shipped values). Prints recall@5,
recall@10 and group_hit@5 over categories 1-4, and each setting minus the first, paired per
question (``benchmarks/stats.py``). Tune on ``--split tune`` (conversations 0-4).
``--save F`` writes the first setting's per-question values; ``--compare F`` prints it
minus a saved run (another revision).
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import stats
import tuning
from locomo import DEFAULT_DATA, METRICS, REPO, SCORED, SPLITS, convert


def embed(corpus: list[dict[str, Any]], queries: list[dict[str, Any]]) -> tuple[list, list]:
    """Window matrices for every turn and one vector per question, with a progress bar."""
    from rich.progress import Progress

    from affidavit.recall.embedder import shared_embedder

    embedder = shared_embedder()
    if embedder is None:
        sys.exit("locomo_sweep: the embedding model is not available")
    turns: list = []
    questions: list = []
    with Progress(transient=True) as progress:
        task = progress.add_task("embedding turns", total=len(corpus))
        for start in range(0, len(corpus), 256):
            part = corpus[start : start + 256]
            turns += embedder.embed_windows([r["text"] for r in part])
            progress.advance(task, len(part))
        task = progress.add_task("embedding questions", total=len(queries))
        for q in queries:
            questions.append(embedder.embed_query(q["text"]))
            progress.advance(task)
    return turns, questions


def score(
    corpus: list, queries: list, turns: list, questions: list
) -> dict[str, dict[str, dict[str, float]]]:
    """Rank every scored question with the current ranking constants; values per question."""
    from affidavit.recall.bench import Tally
    from affidavit.recall.ranking import Entry, RecallIndex

    indexes: dict[str, RecallIndex] = {}
    groups: dict[str, str] = {}
    rows: dict[str, list] = {}
    for seq, (row, windows) in enumerate(zip(corpus, turns, strict=True)):
        entry = Entry(
            row["id"],
            row["text"],
            seq=seq,
            discovered=row.get("date"),
            authored=False,
            thread=row.get("thread"),
            turn=row.get("turn"),
        )
        rows.setdefault(row["collection"], []).append((entry, windows))
        groups[row["id"]] = row["group"]
    for name, items in rows.items():
        indexes[name] = RecallIndex()
        indexes[name].add_many(items)
    tally = Tally((5, 10))
    for q, vector in zip(queries, questions, strict=True):
        relevant = {r for r in q["relevant"] if r in groups}
        if q["category"] not in SCORED or not relevant:
            continue
        ranked = [h.id for h in indexes[q["collection"]].search(q["text"], vector, top_k=10)]
        tally.add(q["id"], ranked, relevant, groups, 0.0)
    return {q: {"affidavit": v} for q, v in tally.per_query().items()}


def main() -> None:
    import argparse

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    tuning.add_sweep_arguments(parser)
    parser.add_argument("--split", choices=tuple(SPLITS), default="all")
    args = parser.parse_args()
    specs = args.settings or [""]
    overrides = tuning.settings(specs)
    if not DEFAULT_DATA.is_file():
        sys.exit(f"locomo_sweep: {DEFAULT_DATA} not found")
    raw = DEFAULT_DATA.read_bytes()
    corpus, queries = convert(json.loads(raw), SPLITS[args.split])
    turns, questions = embed(corpus, queries)
    sweep = tuning.Sweep(METRICS)
    for spec, override in zip(specs, overrides, strict=True):
        sweep.use(override)
        values = score(corpus, queries, turns, questions)
        print(spec or "shipped values", sweep.line(values, None), flush=True)
    meta = {
        "benchmark": "locomo",
        "split": args.split,
        "data": hashlib.sha256(raw).hexdigest()[:12],
        "revision": stats.git_revision(REPO),
        "overrides": {name: str(value) for name, value in overrides[0].items()},
    }
    sweep.finish(args, meta, "data", "LoCoMo")


if __name__ == "__main__":
    main()
