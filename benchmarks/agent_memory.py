"""Agent-memory recall: the primary retrieval benchmark (issue 13, item 4).

What agents store is short standalone facts with a source, saved over weeks, mostly undated;
what they ask later uses other words. The corpus (``benchmarks/agent_memory_data.py``,
generated from a seed; see there for what it models) is stored in a real vault in a
temporary directory with the real embedder, and every question is asked through the real
search. Two baselines rank the same live memories: BM25 alone and the product's model
alone (``benchmarks/baselines.py``).

    python benchmarks/agent_memory.py [--split heldout|tune|all] [--path store|import]
                                      [--seed N] [--set NAME=VALUE] [--save F] [--compare F]

- ``--split``: the questions are split by template family into a tuning half and a held-out
  half that no tuning round has ranked (``agent_memory_data.HELD_OUT``). Tune on
  ``tune``; report ``heldout`` (the default), which the table's title names.
- ``--path store`` (default): each fact goes through ``Memory.store`` in saving order, as an
  agent's ``memory_store`` calls do (validation, the duplicate rule, ``supersedes`` for a
  correction). A fact the store refuses (``duplicate``) is lost, and its question can only
  miss: the table counts them. Every memory is saved today.
  ``--path import``: the same facts as an export file (``saved_at`` on their synthetic
  days, corrections already marked) through ``embed_missing`` + ``Vault.import_items``,
  the path of ``affidavit import``: nothing is refused, and saved days are weeks apart.
- Metrics per question, top 10 of a fixed-size search: recall@1, recall@5 (one relevant
  memory each, so recall@k is hit@k), MRR (reciprocal rank within the top 10); for
  questions whose answer corrected an older fact, **superseded@5**: the corrected fact is
  in the top 5 (must be 0). Also, for affidavit's adaptive page (no ``top_k``, what an
  agent gets by default): the answer is on it, and its length.
- Intervals: 95% bootstrap of each mean, and paired bootstrap of each delta
  (``benchmarks/stats.py``); ``*`` marks a delta whose interval excludes zero.
- ``--save F`` writes the per-question values; ``--compare F`` adds a table of this run
  minus a saved one (e.g. saved on the base revision), paired by question.
- Repeatability: ranking breaks a tie between equal scores by memory id, and ``store``
  gives each memory a random id, so two ``--path store`` runs can differ in the rank of a
  question or two whose answer ties with a distractor; ``--path import`` names the memories
  (``m-f0001``...) and repeats exactly.

Runs in about a minute on a 2-core machine (embedding ~715 facts and ~410 questions).
Sweeps over ranking constants on the tuning half: ``benchmarks/agent_memory_sweep.py``.
"""

from __future__ import annotations

import argparse
import secrets
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import stats
import tuning
from agent_memory_data import SEED, Corpus, Fact, Question, generate
from baselines import Bm25, VectorOnly

REPO = Path(__file__).resolve().parents[1]
TOP = 10
RANKED = ("recall@1", "recall@5", "mrr")
SYSTEMS = ("affidavit", "bm25", "vector")
LABELS = {"affidavit": "affidavit", "bm25": "BM25", "vector": "vector-only"}


@dataclass
class Stored:
    """What the vault made of the corpus: fact id -> memory id (None: refused), statuses."""

    ids: dict[str, str | None]
    statuses: Counter[str]


def _fields(fact: Fact) -> dict[str, Any]:
    """A fact as ``memory_store`` arguments (without ``supersedes``: its id is the vault's)."""
    fields: dict[str, Any] = {"text": fact.text, "source": fact.source}
    if fact.discovered:
        fields["discovered"] = fact.discovered
    return fields


def _store(memory: Any, facts: Sequence[Fact], done: Callable[[int], None]) -> Stored:
    """Each fact through ``Memory.store`` in saving order; a correction names what it replaces."""
    ids: dict[str, str | None] = {}
    statuses: Counter[str] = Counter()
    for n, fact in enumerate(facts, start=1):
        fields = _fields(fact)
        old = ids.get(fact.supersedes) if fact.supersedes else None
        if old is not None:
            fields["supersedes"] = [old]
        result = memory.store(**fields)
        statuses[result["status"]] += 1
        ids[fact.id] = result["id"] if result["status"] == "stored" else None
        done(n)
    return Stored(ids, statuses)


def _import(memory: Any, facts: Sequence[Fact], done: Callable[[int], None]) -> Stored:
    """The facts as one export file holds them (saved on their days, corrections marked),
    through ``affidavit import``'s path: ``embed_missing``, then ``Vault.import_items``."""
    from affidavit.recall import claims as model
    from affidavit.recall.memory import MEMORY, embed_missing
    from affidavit.vault import NewItem

    ids = {f.id: f"m-{f.id}" for f in facts}  # an export names its records
    replaced_by = {f.supersedes: ids[f.id] for f in facts if f.supersedes}
    items = []
    for fact in facts:
        fields = _fields(fact)
        if fact.supersedes:
            fields["supersedes"] = [ids[fact.supersedes]]
        data = model.build_claim(fields).data(fact.saved_at)
        if fact.id in replaced_by:
            data["superseded_by"] = replaced_by[fact.id]
        items.append(NewItem(data, MEMORY, "default", id=ids[fact.id], saved_at=fact.saved_at))
    items = embed_missing(memory.vault, items, lambda n, _total: done(n))
    counts = memory.vault.import_items(items)
    return Stored(dict(ids), Counter({"imported": counts["imported"]}))


def _ranks(ranked: Sequence[str], answer: str | None) -> dict[str, float]:
    at = ranked.index(answer) if answer is not None and answer in ranked else None
    return {
        "recall@1": float(at is not None and at < 1),
        "recall@5": float(at is not None and at < 5),
        "mrr": 0.0 if at is None else 1.0 / (at + 1),
    }


def measure(
    corpus: Corpus, path: str, questions: Sequence[Question], workdir: Path | None = None
) -> tuple[dict[str, dict[str, dict[str, float]]], Stored]:
    """Store the corpus in a fresh vault, ask every question of all three systems."""
    from rich.progress import Progress

    from affidavit.recall import Memory
    from affidavit.vault import KdfParams, Vault

    per_question: dict[str, dict[str, dict[str, float]]] = {}
    with (
        tempfile.TemporaryDirectory(prefix="agent-memory-", dir=workdir) as tmp,
        Progress(transient=True) as progress,
    ):
        vault = Vault.create(Path(tmp) / "v", secrets.token_urlsafe(16), kdf=KdfParams.minimum())
        try:
            memory = Memory(vault)
            if memory.embedder is None:
                sys.exit("agent_memory: the embedding model is not installed")
            task = progress.add_task(f"{path} facts", total=len(corpus.facts))
            put = _store if path == "store" else _import
            stored = put(memory, corpus.facts, lambda n: progress.update(task, completed=n))
            live = [
                (it.id, str(it.data["text"]))
                for it in vault.items("memory")
                if not it.data.get("superseded_by")
            ]
            task = progress.add_task("baseline indexes", total=1)
            bm25, vector = Bm25(live, porter=True), VectorOnly(live, memory.embedder)
            progress.advance(task)
            task = progress.add_task("questions", total=len(questions))
            for q in questions:
                answer = stored.ids.get(q.answer)
                hits = [r["id"] for r in memory.search(q.text, top_k=TOP)["results"]]
                page = [r["id"] for r in memory.search(q.text)["results"]]
                mine = _ranks(hits, answer)
                mine["on_page"] = float(answer is not None and answer in page)
                mine["page_size"] = float(len(page))
                stale = stored.ids.get(q.stale) if q.stale else None
                if q.stale:
                    mine["superseded@5"] = float(stale is not None and stale in hits[:5])
                per_question[q.id] = {
                    "affidavit": mine,
                    "bm25": _ranks(bm25.rank(q.text, TOP), answer),
                    "vector": _ranks(vector.rank(q.text, TOP), answer),
                }
                progress.advance(task)
        finally:
            vault.close()
    return per_question, stored


def _table(title: str, per_question: dict[str, dict[str, dict[str, float]]], ids: list[str]) -> Any:
    from rich.table import Table

    table = Table(title=title, title_justify="left")
    table.add_column("metric")
    for system in SYSTEMS:
        table.add_column(LABELS[system], justify="right")
    for other in SYSTEMS[1:]:
        table.add_column(f"affidavit - {LABELS[other]}", justify="right")
    for metric in RANKED:
        cells = [str(stats.interval(stats.column(per_question, ids, s, metric))) for s in SYSTEMS]
        ours = stats.column(per_question, ids, "affidavit", metric)
        for other in SYSTEMS[1:]:
            theirs = stats.column(per_question, ids, other, metric)
            cells.append(stats.paired_delta(ours, theirs).signed())
        table.add_row(metric, *cells)
    fixed = [q for q in ids if "superseded@5" in per_question[q]["affidavit"]]
    if fixed:
        rate = stats.interval(stats.column(per_question, fixed, "affidavit", "superseded@5"))
        table.add_row(f"superseded@5 ({len(fixed)} corrections)", str(rate), "n/a", "n/a")
    for metric, label in (
        ("on_page", "answer on adaptive page"),
        ("page_size", "adaptive page size"),
    ):
        table.add_row(
            label, str(stats.interval(stats.column(per_question, ids, "affidavit", metric)))
        )
    return table


def main() -> None:
    from rich.console import Console

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--split", choices=("heldout", "tune", "all"), default="heldout")
    parser.add_argument("--path", choices=("store", "import"), default="store")
    parser.add_argument("--seed", type=int, default=SEED, help="another corpus of the same kind")
    parser.add_argument("--save", type=Path, default=None, help="write per-question values")
    parser.add_argument("--compare", type=Path, default=None, help="a run saved with --save")
    parser.add_argument("--workdir", type=Path, default=None, help="for the temporary vault")
    tuning.add_argument(parser)
    args = parser.parse_args()
    overrides = tuning.apply(args.set)
    corpus = generate(args.seed)
    questions = [q for q in corpus.questions if args.split in ("all", q.split)]
    t0 = time.perf_counter()
    per_question, stored = measure(corpus, args.path, questions, args.workdir)
    seconds = time.perf_counter() - t0
    ids = [q.id for q in questions]
    half = {"heldout": "held-out half", "tune": "tuning half", "all": "both halves"}[args.split]
    title = (
        f"agent-memory recall, {half}: {len(ids)} of {len(corpus.questions)} questions "
        f"(mean [95% CI]; deltas paired, * = interval excludes 0)"
    )
    console = Console(width=170)
    console.print(_table(title, per_question, ids))
    lost = sum(1 for q in questions if stored.ids.get(q.answer) is None)
    statuses = ", ".join(f"{n} {s}" for s, n in sorted(stored.statuses.items()))
    console.print(
        f"corpus {corpus.fingerprint()} (seed {corpus.seed}): {len(corpus.facts)} facts via "
        f"--path {args.path} ({statuses}); answers lost at store time: {lost} of {len(ids)}; "
        f"revision {stats.git_revision(REPO)}; {seconds:.0f} s"
        + (f"; overrides {overrides}" if overrides else ""),
        highlight=False,
    )
    meta = {
        "benchmark": "agent_memory",
        "split": args.split,
        "path": args.path,
        "corpus": corpus.fingerprint(),
        "revision": stats.git_revision(REPO),
        "overrides": {k: str(v) for k, v in overrides.items()},
    }
    if args.compare:
        saved_meta, saved = stats.load_run(args.compare)
        if saved_meta.get("corpus") != meta["corpus"]:
            sys.exit(f"{args.compare} was measured on another corpus ({saved_meta.get('corpus')})")
        mine = {q: per_question[q] for q in ids}
        label = (stats.run_label(meta), stats.run_label(saved_meta))
        console.print(stats.compare_table("affidavit", mine, saved, "affidavit", RANKED, label))
    if args.save:
        stats.save_run(args.save, meta, per_question)


if __name__ == "__main__":
    main()
