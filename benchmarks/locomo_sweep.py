"""LoCoMo ranking sweep: embed once, then score many ranking settings in seconds each.

``benchmarks/locomo.py`` measures the product end to end (a fresh vault per conversation,
every turn embedded on import), about 100 s a run. Tuning a constant needs dozens of runs,
so this script embeds the turns and questions once, then for each setting builds the same
in-RAM ``RecallIndex`` that an unlocked vault holds (imported rows: no age, saved in turn
order, discovered on the session's day) and ranks every question with the product's ranking
code. With no override its figures equal locomo.py's (the check before trusting a sweep).

    python benchmarks/locomo_sweep.py "" "W_ANSWER=0.4" "W_DATE=0,W_NEIGHBOR=0.1"

Each argument is one setting: comma-separated NAME=VALUE overrides of
``affidavit.vault.ranking`` constants ("" = the shipped values). Prints recall@5,
recall@10 and group_hit@5 over categories 1-4. Nothing is written to disk.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from locomo import DEFAULT_DATA, SCORED, convert


def embed(corpus: list[dict[str, Any]], queries: list[dict[str, Any]]) -> tuple[list, list]:
    """Window matrices for every turn and one vector per question, with a progress bar."""
    from rich.progress import Progress

    from affidavit.vault.embedder import shared_embedder

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


def score(corpus: list, queries: list, turns: list, questions: list) -> dict[str, float]:
    """Rank every scored question with the current ranking constants."""
    from affidavit.vault.bench import Tally
    from affidavit.vault.ranking import Entry, RecallIndex

    indexes: dict[str, RecallIndex] = {}
    groups: dict[str, str] = {}
    rows: dict[str, list] = {}
    for seq, (row, windows) in enumerate(zip(corpus, turns, strict=True)):
        entry = Entry(
            row["id"],
            row["text"],
            seq=seq,
            discovered=row.get("date"),
            ages=False,
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
    summary = tally.summary()
    return {k: summary[k] for k in ("recall@5", "recall@10", "group_hit@5")}


def main() -> None:
    from affidavit.vault import ranking

    settings = sys.argv[1:] or [""]
    shipped = {k: getattr(ranking, k) for k in dir(ranking) if k.isupper()}
    overrides = []
    for setting in settings:
        pairs = [p.partition("=") for p in setting.split(",") if p]
        for name, _, _ in pairs:
            if name not in shipped:
                sys.exit(f"locomo_sweep: {name!r} is not a constant of affidavit.vault.ranking")
        overrides.append([(name, type(shipped[name])(value)) for name, _, value in pairs])
    if not DEFAULT_DATA.is_file():
        sys.exit(f"locomo_sweep: {DEFAULT_DATA} not found")
    corpus, queries = convert(json.loads(DEFAULT_DATA.read_text()))
    turns, questions = embed(corpus, queries)
    for setting, pairs in zip(settings, overrides, strict=True):
        for name, value in shipped.items():
            setattr(ranking, name, value)
        for name, value in pairs:
            setattr(ranking, name, value)
        figures = score(corpus, queries, turns, questions)
        label = setting or "shipped values"
        print(label, " ".join(f"{k} {v:.4f}" for k, v in figures.items()), flush=True)


if __name__ == "__main__":
    main()
