"""Recall latency and memory: the measurement functions benchmarks/vault.py adds to its table.

Each ``measure_*`` function returns rows ``(metric, value, unit, target)``. Run alone:

    python benchmarks/recall_measures.py [--sizes 1000 10000 100000] [--queries 200]
                                         [--evidence-share 0.1]

- store with embedding: ``Memory.store`` end to end (validate, embed, near-duplicate check,
  seal, fsync'd SQLite transaction, audit entry), p50/p95 over distinct memories.
- hybrid search at N memories: ``Memory.search`` end to end (refresh, embed the question,
  both channels, fusion, views), p50/p95. The N memories are imported with real MiniLM
  vectors: 2,000 distinct synthetic sentences embedded once, reused with small noise and a
  unique token each, so embedding 100k texts does not dominate the run.
- RSS: a fresh process opens a 10k vault, loads the model and answers one search; VmRSS.
- ``--evidence-share F``: that share of the N memories carries a proxy receipt (evidence,
  docs/evidence.md), each its own verified call in one real audit log, so every hit that has
  one is judged on the read path; the search rows are then measured with evidence on, plus a
  ``proven_only`` search row. Without it (0) no memory has evidence: the rows as before.
"""

from __future__ import annotations

import argparse
import os
import random
import secrets
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

Row = tuple[str, float, str, str]
#: The passphrase of the benchmark's temporary vaults (random per run, never a secret).
THROWAWAY = secrets.token_urlsafe(12)
SYLLABLES = [
    "ka",
    "lo",
    "mi",
    "ne",
    "ru",
    "sa",
    "ti",
    "vo",
    "be",
    "da",
    "fe",
    "gi",
    "ho",
    "ju",
    "ke",
    "li",
    "mo",
    "nu",
    "pa",
    "qui",
    "re",
    "so",
    "tu",
]
TOPICS = [
    "deploy",
    "build",
    "cache",
    "server",
    "database",
    "backup",
    "token",
    "release",
    "ticket",
    "invoice",
    "meeting",
    "kettle",
    "garden",
    "printer",
    "router",
    "budget",
    "laptop",
    "ferry",
    "cello",
    "painting",
    "recipe",
]


def _word(rng: random.Random) -> str:
    return "".join(rng.choice(SYLLABLES) for _ in range(rng.randint(2, 3)))


def _sentence(rng: random.Random) -> str:
    words = [_word(rng) for _ in range(rng.randint(6, 14))]
    words[rng.randrange(len(words))] = rng.choice(TOPICS)
    return " ".join(words).capitalize()


def _percentiles(samples: list[float]) -> tuple[float, float]:
    ordered = sorted(samples)
    return statistics.median(ordered), ordered[max(0, int(len(ordered) * 0.95) - 1)]


def _new_vault(directory: Path):
    from affidavit.vault import KdfParams, Vault

    return Vault.create(directory, THROWAWAY, kdf=KdfParams.minimum())


def measure_store(count: int = 200) -> list[Row]:
    """Store with embedding, p50/p95 (ms)."""
    from affidavit.recall import Claim
    from affidavit.recall.memory import Memory

    rng = random.Random(11)
    with tempfile.TemporaryDirectory() as tmp:
        vault = _new_vault(Path(tmp) / "v")
        memory = Memory(vault)
        memory.store(Claim(text="warm-up memory about the kettle", source="bench"))
        samples = []
        for _ in range(count):
            text = _sentence(rng)
            t0 = time.perf_counter()
            memory.store(Claim(text=text, source="bench"))
            samples.append((time.perf_counter() - t0) * 1000)
        vault.close()
    p50, p95 = _percentiles(samples)
    return [
        ("store with embedding p50", p50, "ms", "<= 15"),
        ("store with embedding p95", p95, "ms", ""),
    ]


def _receipts(log: Path, count: int) -> list[dict[str, str]]:
    """A real proxy audit log of ``count`` verified calls, and a receipt for each."""
    import json

    from affidavit.proxy import AuditLog

    writer = AuditLog(log, session="bench")
    call = {"kind": "call", "tool": "git_commit", "verdict": "verified"}
    writer.write_many([writer.remember({**call, "claim": i}) for i in range(count)])
    writer.close()
    hashes = [json.loads(line)["hash"] for line in log.read_text().splitlines()]
    return [{"type": "receipt", "log": str(log), "entry": h} for h in hashes]


def _populate(
    directory: Path, size: int, pool: list[tuple[str, np.ndarray]], evidence: float = 0.0
) -> None:
    """Import ``size`` memories with real vectors (noised pool vectors) into a new vault;
    the ``evidence`` share of them with a receipt of a log beside the vault."""
    from affidavit.recall.embedder import vector_to_bytes
    from affidavit.vault import NewItem

    rng = np.random.default_rng(size)
    vault = _new_vault(directory)
    every = max(1, round(1 / evidence)) if evidence > 0 else 0
    log = directory.parent / "audit.jsonl"
    receipts = _receipts(log, -(-size // every)) if every else []  # one call per memory
    batch: list[NewItem] = []
    for i in range(size):
        text, vec = pool[i % len(pool)]
        noisy = vec + rng.normal(0, 0.02, vec.shape).astype(np.float32)
        noisy /= np.linalg.norm(noisy, axis=1, keepdims=True)
        data = {"text": f"{text} n{i}", "source": "bench", "kind": "fact", "imported": True}
        if every and i % every == 0:
            data["evidence"] = [receipts[i // every]]
        batch.append(NewItem(data, "memory", "default", vector_to_bytes(noisy), id=f"m{i}"))
        if len(batch) == 2000:
            vault.put_many(batch)
            batch = []
    if batch:
        vault.put_many(batch)
    vault.close()


def _pool(n: int = 2000) -> list[tuple[str, np.ndarray]]:
    from affidavit.recall.embedder import shared_embedder

    embedder = shared_embedder()
    if embedder is None:
        sys.exit("recall_measures: the embedding model is not installed")
    rng = random.Random(5)
    texts = [_sentence(rng) for _ in range(n)]
    return list(zip(texts, embedder.embed_windows(texts), strict=True))


def _timed_searches(memory: Any, questions: list[str], **options: Any) -> tuple[float, float]:
    memory.search(questions[0], **options)
    samples = []
    for q in questions:
        t1 = time.perf_counter()
        memory.search(q, **options)
        samples.append((time.perf_counter() - t1) * 1000)
    return _percentiles(samples)


def measure_search(
    sizes: tuple[int, ...] = (1000, 10_000, 100_000), queries: int = 200, evidence: float = 0.0
) -> list[Row]:
    """Hybrid search p50/p95 (ms) at each vault size, end to end through ``Memory.search``.

    Above the HNSW threshold the graph builds in the background: searches are measured
    first while it builds (exact matrix, one core taken by the builder), then on HNSW.
    With ``evidence``, that share of the memories carries a receipt (judged on every hit).
    """
    from affidavit.recall import Memory
    from affidavit.vault import Vault

    pool = _pool()
    rng = random.Random(3)
    rows: list[Row] = []
    targets = {10_000: ("<= 10", "<= 20"), 100_000: ("", "<= 30")}
    for size in sizes:
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "v"
            _populate(path, size, pool, evidence)
            vault = Vault.open(path, passphrase=THROWAWAY)
            memory = Memory(vault)
            t0 = time.perf_counter()
            vectors = memory.index.vector  # RAM index from the sealed vectors, no re-embedding
            rows.append((f"recall index build @ {size:,}", time.perf_counter() - t0, "s", ""))
            questions = [" ".join(rng.choice(pool)[0].split()[:4]) for _ in range(queries)]
            t50, t95 = targets.get(size, ("", ""))
            building = vectors.mode == "exact (hnsw building)"
            label = " (exact, HNSW building)" if building else ""
            label += f" (evidence on {evidence:.0%})" if evidence else ""
            p50, p95 = _timed_searches(memory, questions)
            rows += [
                (f"hybrid search p50 @ {size:,}{label}", p50, "ms", t50),
                (f"hybrid search p95 @ {size:,}{label}", p95, "ms", t95),
            ]
            if building:
                vectors.wait_ready()
                rows.append((f"HNSW ready after @ {size:,}", time.perf_counter() - t0, "s", ""))
                p50, p95 = _timed_searches(memory, questions)
                rows += [
                    (f"hybrid search p50 @ {size:,} (HNSW)", p50, "ms", t50),
                    (f"hybrid search p95 @ {size:,} (HNSW)", p95, "ms", t95),
                ]
            if evidence:
                p50, p95 = _timed_searches(memory, questions, proven_only=True)
                rows += [
                    (f"proven_only search p50 @ {size:,}{label}", p50, "ms", ""),
                    (f"proven_only search p95 @ {size:,}{label}", p95, "ms", ""),
                ]
            vault.close()
    return rows


_RSS_CHILD = """
import sys
from pathlib import Path
from affidavit.recall import Memory
from affidavit.vault import Vault
m = Memory(Vault.open(Path(sys.argv[1])))  # AFFIDAVIT_PASSPHRASE from the environment
m.search("where is the deploy server")
rss = [l for l in open("/proc/self/status") if l.startswith("VmRSS")][0].split()[1]
print(int(rss) / 1024)
"""


def measure_rss(size: int = 10_000) -> list[Row]:
    """Resident memory of a fresh process with the model and ``size`` memories loaded."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "v"
        _populate(path, size, _pool(500))
        out = subprocess.run(
            [sys.executable, "-c", _RSS_CHILD, str(path)],
            env={**os.environ, "AFFIDAVIT_PASSPHRASE": THROWAWAY},
            capture_output=True,
            text=True,
            check=True,
        )
    return [(f"RSS, model + {size:,} memories", float(out.stdout.strip()), "MB", "<= 250")]


def measure_all(
    sizes: tuple[int, ...] = (1000, 10_000, 100_000), queries: int = 200, evidence: float = 0.0
) -> list[Row]:
    """Every recall row, in table order."""
    return measure_store() + measure_search(sizes, queries, evidence) + measure_rss()


def _within(value: float, target: str) -> bool | None:
    """``"<= 15"`` -> value <= 15; no target -> None."""
    return value <= float(target.split()[1]) if target.startswith("<=") else None


def bench_measurements(row: Callable[..., Any]) -> list[Callable[[Any], list[Any]]]:
    """The recall rows as benchmarks/vault.py measurements: ``fn(bench) -> [row(...)]``.

    ``row`` is that table's row type (metric, value, unit, target, ok); ``bench.sizes`` gives
    the vault sizes to search at.
    """

    def convert(rows: list[Row]) -> list[Any]:
        return [row(m, v, u, t, _within(v, t)) for m, v, u, t in rows]

    def recall_store(bench: Any) -> list[Any]:
        return convert(measure_store())

    def recall_search(bench: Any) -> list[Any]:
        return convert(measure_search(tuple(bench.sizes)))

    def recall_rss(bench: Any) -> list[Any]:
        return convert(measure_rss())

    return [recall_store, recall_search, recall_rss]


def main() -> None:
    from rich.console import Console
    from rich.table import Table

    parser = argparse.ArgumentParser(description="recall latency and memory")
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10_000, 100_000])
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument(
        "--evidence-share", type=float, default=0.0, help="share of memories with a receipt"
    )
    parser.add_argument(
        "--search-only", action="store_true", help="only the search rows (no store, no RSS)"
    )
    args = parser.parse_args()
    if not 0 <= args.evidence_share <= 1:
        parser.error("--evidence-share is a share between 0 and 1")
    table = Table(title=f"recall (run {secrets.token_hex(2)})")
    for name in ("metric", "value", "unit", "target"):
        table.add_column(name)
    sizes, share = tuple(args.sizes), args.evidence_share
    if args.search_only:
        measured = measure_search(sizes, args.queries, share)
    else:
        measured = measure_all(sizes, args.queries, share)
    for metric, value, unit, target in measured:
        table.add_row(metric, f"{value:.2f}", unit, target)
    Console(width=120).print(table)


if __name__ == "__main__":
    main()
