"""Agent-memory ranking sweep on the TUNING half: embed once, score many settings in seconds.

``benchmarks/agent_memory.py --corpus synthetic`` measures the product end to end on this
corpus (a fresh vault, every fact through ``Memory.store``), about a minute a run and one
corpus. Tuning needs many runs and more questions than one corpus has, so this script
generates the corpus for each seed (other seeds draw other entities into the same
templates), embeds the live facts and the tuning questions once, then for each setting
builds the in-RAM ``RecallIndex`` that storing leaves behind (saved in order today, so they
age; corrections replaced) and ranks every question with the product's ranking code (seed
2026: the questions of ``agent_memory.py --corpus synthetic --split tune``). Its intervals
resample questions, not families.

    python benchmarks/agent_memory_sweep.py [--seeds 2026 1 2 3] [--save F] [--compare F]
                                            [--label NAME] "" "W_LEX=0.2,W_EXACT=1" ...

Each argument is one setting: comma-separated NAME=VALUE overrides of
``affidavit.recall.ranking.params`` constants ("" = the shipped values). Prints recall@1,
recall@5 and MRR per setting, each setting minus the first and minus vector-only, paired
per question (``benchmarks/stats.py``). ``--save F`` writes the first setting's
per-question values; ``--compare F`` adds it minus a saved run (another revision).

Only the tuning half is ever scored: the held-out families are the benchmark's report
(docs/recall-tuning.md, "The split and its provenance"), and their facts stay in the corpus
as distractors.
"""

from __future__ import annotations

import argparse
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import stats
import tuning
from agent_memory_data import SEED, Corpus, generate

REPO = Path(__file__).resolve().parents[1]
METRICS = ("recall@1", "recall@5", "mrr")
NOW = datetime(2026, 12, 4, 12, tzinfo=UTC)
TOP = 10


def embed(corpus: Corpus, embedder: Any) -> tuple[list, list, list, list]:
    """The live facts (corrected ones left out) with their windows; the tuning questions with
    their vectors."""
    replaced = {f.supersedes for f in corpus.facts if f.supersedes}
    live = [f for f in corpus.facts if f.id not in replaced]
    questions = [q for q in corpus.questions if q.split == "tune"]
    windows = embedder.embed_windows([f.text for f in live])
    vectors = [embedder.embed_query(q.text) for q in questions]
    return live, windows, questions, vectors


def _values(ranked: list[str], answer: str) -> dict[str, float]:
    at = ranked.index(answer) if answer in ranked else None
    return {
        "recall@1": float(at == 0),
        "recall@5": float(at is not None and at < 5),
        "mrr": 0.0 if at is None else 1.0 / (at + 1),
    }


def score(seed: int, data: tuple[list, list, list, list]) -> dict[str, dict[str, dict[str, float]]]:
    """Every tuning question ranked with the current constants (and by the model alone)."""
    import numpy as np

    from affidavit.recall.ranking import Entry, RecallIndex

    live, windows, questions, vectors = data
    index = RecallIndex()
    stamp = NOW.isoformat().replace("+00:00", "Z")
    index.add_many(
        [
            (Entry(f.id, f.text, seq=n, saved_at=stamp, discovered=f.discovered), w)
            for n, (f, w) in enumerate(zip(live, windows, strict=True), start=1)
        ]
    )
    matrix = np.concatenate(windows)
    owner = np.concatenate([np.full(len(w), n) for n, w in enumerate(windows)])
    out: dict[str, dict[str, dict[str, float]]] = {}
    for q, vector in zip(questions, vectors, strict=True):
        ranked = [h.id for h in index.search(q.text, vector, top_k=TOP, now=NOW)]
        best = np.full(len(live), -np.inf)
        np.maximum.at(best, owner, matrix @ vector)
        alone = [live[i].id for i in np.argsort(-best, kind="stable")[:TOP].tolist()]
        mine = _values(ranked, q.answer)
        if q.stale:
            mine["superseded@5"] = float(q.stale in ranked[:5])
        out[f"{seed}:{q.id}"] = {"affidavit": mine, "vector": _values(alone, q.answer)}
    return out


def main() -> None:
    from affidavit.recall.embedder import shared_embedder

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    tuning.add_sweep_arguments(parser)
    parser.add_argument("--seeds", type=int, nargs="+", default=[SEED])
    args = parser.parse_args()
    specs = args.settings or [""]
    overrides = tuning.settings(specs)
    embedder = shared_embedder()
    if embedder is None:
        sys.exit("agent_memory_sweep: the embedding model is not available")
    corpora = {seed: generate(seed) for seed in args.seeds}
    data = {seed: embed(corpus, embedder) for seed, corpus in corpora.items()}
    sweep = tuning.Sweep(METRICS)
    for spec, override in zip(specs, overrides, strict=True):
        sweep.use(override)
        values: dict[str, dict[str, dict[str, float]]] = {}
        for seed in args.seeds:
            values |= score(seed, data[seed])
        stale = sum(v["affidavit"].get("superseded@5", 0.0) for v in values.values())
        print(f"{spec or 'shipped values'} [{len(values)} questions, seeds {args.seeds}]")
        print(f"  {sweep.line(values, 'vector')} | superseded@5 {stale:.0f}", flush=True)
    meta = {
        "benchmark": "agent_memory_sweep",
        "seeds": args.seeds,
        "corpus": ",".join(corpora[s].fingerprint() for s in args.seeds),
        "revision": stats.git_revision(REPO),
        "overrides": {name: str(value) for name, value in overrides[0].items()},
    }
    sweep.finish(args, meta, "corpus", "agent-memory tuning half")


if __name__ == "__main__":
    main()
