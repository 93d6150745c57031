"""Agent-memory recall: the primary retrieval benchmark (issue 24, item 4).

An agent saves short standalone memories over weeks and asks for them later in its own
words, often without the name it no longer remembers. This benchmark stores a question set's
memories the way an agent's ``memory_store`` calls do and asks every question the way its
``memory_search`` calls do, then ranks the same live memories with the product's model alone
and with BM25 alone (``benchmarks/baselines.py``), in the same process.

    python benchmarks/agent_memory.py [--corpus needs|dev|synthetic] [--split heldout|tune|all]
                                      [--via inprocess|mcp] [--seed N] [--set NAME=VALUE]
                                      [--save F] [--compare F] [--workdir DIR]

- ``--corpus`` (``benchmarks/memory_sets.py``): ``needs`` (default), the set written for this
  benchmark from what an agent needs (``benchmarks/needs/README.md``); ``dev``, the
  development set written outside the team, read in place from
  ``../shared/data/agent-memory-dev`` (``--split all`` only: it has no halves); ``synthetic``,
  the seeded corpus of ``benchmarks/agent_memory_data.py`` (``--seed``).
- ``--split``: ``heldout`` (default) is the report; tune on ``tune``; ``all`` is both.
  Every memory is stored whatever the split: the other half's memories are distractors.
- ``--via inprocess`` (default): ``Memory.store`` for each memory in saving order (a
  correction passes ``supersedes=[the vault id of what it corrects]``), then
  ``Memory.search(question, top_k=10)``, in a fresh vault in a temporary folder.
  ``--via mcp``: the same through a real ``affidavit serve`` child process (a host's minimal
  environment, ``benchmarks/_mcp_host.py``) driven by the official ``mcp`` SDK client,
  ``memory_store`` and ``memory_search`` with ``top_k`` 10: the way an outside evaluator
  measures the product. The baselines then read the live memories from the same vault once
  the server has exited.
- Per question: recall@1 and recall@5 (the share of its gold memories in the top 1 / 5;
  a multi-fact question has 2-3), all-gold@5 (every gold memory in the top 5), MRR@10 (the
  first gold memory's reciprocal rank), superseded@5 (any memory its answer corrected in the
  top 5, affidavit only: the baselines rank live memories), whether a gold memory was lost
  at store time (the store refused it, e.g. as a duplicate), whether the top_k=10 search
  returned fewer than 10, and (affidavit) whether the answer is on the adaptive page that a
  search without ``top_k`` returns.
- Tables (``benchmarks/agent_memory_report.py``): overall, per question kind, per overlap
  bucket (content words shared with the answer: 0 / 1 / 2+), each with affidavit,
  vector-only, BM25 and the paired deltas. Every interval is a cluster bootstrap
  (``benchmarks/stats.py``, 10,000 resamples, seeded) that resamples whole families
  (``dev``: questions joined by a shared gold memory), since the questions of one family are
  not independent. Then a DEFECT line for every row whose paired interval against
  vector-only lies wholly below zero, and issue 24's targets on the chosen split.
- ``--save F`` writes the per-question values; ``--compare F`` adds this run minus a saved
  one (same set), paired by question and resampled by cluster. ``--set NAME=VALUE``
  overrides a ranking constant for an in-process run (``benchmarks/tuning.py``).

The set is checked before anything is stored (schema, ids, kinds in both halves, the share
of questions that share no content word); a set that fails is refused with its problems.
A run over the needs set took about 30 s in process and 50 s through MCP on this 2-core
machine with other work on it (load 13-17).
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import agent_memory_report as report
import memory_sets
import stats
import tuning
from baselines import Bm25, VectorOnly
from memory_sets import Fact, Question, QuestionSet

REPO = Path(__file__).resolve().parents[1]
TOP = report.TOP_K
PASSPHRASE = "agent-memory benchmark passphrase, not a secret"  # noqa: S105 - a throwaway vault
Values = dict[str, dict[str, dict[str, float]]]


@dataclass
class Answers:
    """What the product did: set memory id -> vault id (None: refused), the store outcomes,
    and per question the ids of its ``top_k`` search and of its adaptive page."""

    ids: dict[str, str | None] = field(default_factory=dict)
    statuses: Counter[str] = field(default_factory=Counter)
    hits: dict[str, list[str]] = field(default_factory=dict)
    page: dict[str, list[str]] = field(default_factory=dict)

    def arguments(self, fact: Fact) -> dict[str, Any]:
        """The ``memory_store`` arguments for a memory; a correction names the vault id of
        the memory it corrects."""
        fields: dict[str, Any] = {"text": fact.text, "source": fact.source}
        if fact.discovered:
            fields["discovered"] = fact.discovered
        old = self.ids.get(fact.supersedes) if fact.supersedes else None
        if old is not None:
            fields["supersedes"] = [old]
        return fields

    def stored(self, fact: Fact, outcome: Mapping[str, Any]) -> None:
        """Record what the store did with a memory (anything but ``stored`` loses it)."""
        self.statuses[str(outcome["status"])] += 1
        self.ids[fact.id] = str(outcome["id"]) if outcome["status"] == "stored" else None

    def asked(self, question: Question, top: Mapping[str, Any], page: Mapping[str, Any]) -> None:
        """Record the results of a ``top_k`` search and of an adaptive one."""
        self.hits[question.id] = [str(r["id"]) for r in top["results"]]
        self.page[question.id] = [str(r["id"]) for r in page["results"]]


# -- measuring ---------------------------------------------------------------------------------


def _progress() -> Any:
    from rich.progress import Progress

    return Progress(transient=True)


def _in_process(qset: QuestionSet, questions: Sequence[Question], folder: Path) -> Answers:
    """Store and ask through ``Memory`` in this process, in a new vault in ``folder``."""
    from affidavit.recall import Claim, Memory
    from affidavit.vault import KdfParams, Vault

    answers = Answers()
    with Vault.create(folder, PASSPHRASE, kdf=KdfParams.minimum()) as vault:
        memory = Memory(vault)
        if memory.embedder is None:
            sys.exit("agent_memory: the embedding model is not installed")
        with _progress() as progress:
            task = progress.add_task("storing", total=len(qset.facts))
            for fact in qset.facts:
                answers.stored(fact, memory.store(Claim.from_json(answers.arguments(fact))))
                progress.advance(task)
            task = progress.add_task("asking", total=len(questions))
            for q in questions:
                answers.asked(q, memory.search(q.text, top_k=TOP), memory.search(q.text))
                progress.advance(task)
    return answers


async def _mcp_session(
    qset: QuestionSet, questions: Sequence[Question], env: dict[str, str]
) -> Answers:
    """Store and ask through an ``affidavit serve`` child and the official SDK client."""
    from mcp import StdioServerParameters

    from _mcp_host import checked, client

    server = StdioServerParameters(
        command=sys.executable, args=["-m", "affidavit", "serve", "--caller", "user"], env=env
    )
    answers = Answers()
    async with client(server) as session:

        async def call(tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
            result = checked(await session.call_tool(tool, arguments), tool)
            return dict(result.structured_content or {})

        with _progress() as progress:
            task = progress.add_task("memory_store", total=len(qset.facts))
            for fact in qset.facts:
                answers.stored(fact, await call("memory_store", answers.arguments(fact)))
                progress.advance(task)
            task = progress.add_task("memory_search", total=len(questions))
            for q in questions:
                top = await call("memory_search", {"query": q.text, "top_k": TOP})
                answers.asked(q, top, await call("memory_search", {"query": q.text}))
                progress.advance(task)
    return answers


def _through_mcp(qset: QuestionSet, questions: Sequence[Question], folder: Path) -> Answers:
    """A vault made by ``affidavit init`` and opened by ``affidavit unlock`` (the passphrase
    is in those two commands' environment only), then the server with a host's minimal
    environment; the vault is left in ``folder / "vault"`` for the baselines."""
    from _mcp_host import affidavit_env, run

    env = affidavit_env(folder)
    secret_env = {**env, "AFFIDAVIT_PASSPHRASE": PASSPHRASE}
    cli = [sys.executable, "-m", "affidavit"]
    run([*cli, "init", "--json"], secret_env)
    run([*cli, "unlock", "--json"], secret_env)
    return asyncio.run(_mcp_session(qset, questions, env))


def _baselines(vault_dir: Path) -> tuple[Bm25, VectorOnly]:
    """BM25 and the model alone over the live memories of the vault the product filled."""
    from affidavit.recall import Memory
    from affidavit.vault import Vault

    with Vault.open(vault_dir, passphrase=PASSPHRASE) as vault:
        live = [
            (it.id, str(it.data["text"]))
            for it in vault.items("memory")
            if not it.data.get("superseded_by")
        ]
        embedder = Memory(vault).embedder
        if embedder is None:
            sys.exit("agent_memory: the embedding model is not installed")
        return Bm25(live, porter=True), VectorOnly(live, embedder)


def score(
    ranked: Sequence[str], gold: Sequence[str | None], stale: Sequence[str | None]
) -> dict[str, float]:
    """One system's values for one question (a gold id of None was lost: it cannot be found)."""
    found = [g for g in gold if g is not None]
    top = {k: set(ranked[:k]) for k in (1, 5)}
    first = min((ranked.index(g) for g in found if g in ranked[:TOP]), default=None)
    values = {
        "recall@1": sum(g in top[1] for g in found) / len(gold),
        "recall@5": sum(g in top[5] for g in found) / len(gold),
        "all@5": float(len(found) == len(gold) and all(g in top[5] for g in found)),
        "mrr@10": 0.0 if first is None else 1.0 / (first + 1),
    }
    if stale:
        values["superseded@5"] = float(any(s is not None and s in top[5] for s in stale))
    return values


def measure(
    qset: QuestionSet, questions: Sequence[Question], via: str, workdir: Path | None
) -> tuple[Values, Answers]:
    """Store the set, ask the questions of all three systems; per-question values."""
    with tempfile.TemporaryDirectory(prefix="agent-memory-", dir=workdir) as tmp:
        folder = Path(tmp)
        if via == "mcp":
            answers = _through_mcp(qset, questions, folder)
            vault_dir = folder / "vault"
        else:
            vault_dir = folder / "vault"
            answers = _in_process(qset, questions, vault_dir)
        bm25, vector = _baselines(vault_dir)
        values: Values = {}
        for q in questions:
            gold = [answers.ids.get(g) for g in q.gold]
            stale = [answers.ids.get(s) for s in q.superseded]
            hits = answers.hits[q.id]
            mine = score(hits, gold, stale)
            mine["lost"] = float(any(g is None for g in gold))
            mine["short"] = float(len(hits) < TOP)
            mine["on_page"] = float(all(g is not None and g in answers.page[q.id] for g in gold))
            mine["page_size"] = float(len(answers.page[q.id]))
            values[q.id] = {
                "affidavit": mine,
                "vector": score(vector.rank(q.text, TOP), gold, []),
                "bm25": score(bm25.rank(q.text, TOP), gold, []),
            }
    return values, answers


# -- the command -------------------------------------------------------------------------------


def _load(args: argparse.Namespace) -> QuestionSet:
    """The chosen set, checked; a set that cannot be used exits with its problems."""
    try:
        if args.corpus == "dev":
            return memory_sets.load_dev()
        if args.corpus == "synthetic":
            return memory_sets.load_synthetic(args.seed)
        return memory_sets.load_needs()
    except memory_sets.SetError as exc:
        sys.exit(f"agent_memory: cannot use the {args.corpus} set.\n{exc}")


def main() -> None:
    from rich.console import Console

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", choices=("needs", "dev", "synthetic"), default="needs")
    parser.add_argument("--split", choices=("heldout", "tune", "all"), default="heldout")
    parser.add_argument("--via", choices=("inprocess", "mcp"), default="inprocess")
    parser.add_argument("--seed", type=int, default=None, help="synthetic only: another corpus")
    parser.add_argument("--save", type=Path, default=None, help="write per-question values")
    parser.add_argument("--compare", type=Path, default=None, help="a run saved with --save")
    parser.add_argument("--workdir", type=Path, default=None, help="for the temporary vault")
    tuning.add_argument(parser)
    args = parser.parse_args()
    if args.seed is not None and args.corpus != "synthetic":
        parser.error("--seed picks a synthetic corpus; use it with --corpus synthetic")
    if args.set and args.via == "mcp":
        parser.error("--set changes this process's ranking, not a server's: use --via inprocess")
    qset = _load(args)
    if not qset.has_halves and args.split != "all":
        parser.error(f"the {qset.name} set has no tune/heldout halves: use --split all")
    overrides = tuning.apply(args.set)
    questions = qset.split(args.split)
    t0 = time.perf_counter()
    values, answers = measure(qset, questions, args.via, args.workdir)
    seconds = time.perf_counter() - t0

    half = {"heldout": "held-out half", "tune": "tuning half", "all": "all questions"}
    where = f"the {qset.name} set, {half[args.split]}"
    title = (
        f"agent-memory recall, {where}: {len(questions)} questions "
        f"({len({q.cluster for q in questions})} clusters) via {args.via}"
    )
    resampled = "families" if qset.name != "dev" else "gold-memory clusters"
    console = Console(width=180)
    report.show(report.build(values, questions), title, where, resampled, console)
    statuses = ", ".join(f"{n} {s}" for s, n in sorted(answers.statuses.items()))
    console.print(
        f"set {qset.name} {qset.fingerprint}: {len(qset.facts)} memories stored in saving "
        f"order ({statuses}); revision {stats.git_revision(REPO)}; {seconds:.0f} s"
        + (f"; overrides {overrides}" if overrides else ""),
        highlight=False,
    )
    meta = {
        "benchmark": "agent_memory",
        "corpus": qset.name,
        "fingerprint": qset.fingerprint,
        "split": args.split,
        "via": args.via,
        "revision": stats.git_revision(REPO),
        "overrides": {k: str(v) for k, v in overrides.items()},
    }
    if args.compare:
        saved_meta, saved = stats.load_run(args.compare)
        if saved_meta.get("fingerprint") != qset.fingerprint:
            sys.exit(f"{args.compare} was measured on another set ({saved_meta.get('corpus')})")
        label = (stats.run_label(meta), stats.run_label(saved_meta))
        clusters = {q.id: q.cluster for q in questions}
        metrics = tuple(report.METRICS)
        console.print(
            stats.compare_table("affidavit", values, saved, "affidavit", metrics, label, clusters)
        )
    if args.save:
        stats.save_run(args.save, meta, values)


if __name__ == "__main__":
    main()
