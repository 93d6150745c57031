"""How long ``affidavit bench retrieval`` takes on a conversation-sized corpus (issue 13, item 7).

Writes a synthetic corpus of chat turns (seeded; nothing copied from any dataset) to a
temporary directory, then runs the real command in a subprocess and times it end to end:

    affidavit bench retrieval --corpus corpus.jsonl --queries queries.jsonl

    python benchmarks/bench_retrieval_speed.py [--turns short|long] [--rows N]
                                               [--collections N] [--queries-per N]
                                               [--timeout 3600]

``--turns short`` (the default): 12,000 turns in 24 collections (one fresh vault each, 500
turns in sessions of about 20 turns with a date each, about 28 tokens a turn as in LoCoMo),
160 queries per collection (LoCoMo's ratio of questions to turns). ``--turns long``: a chat
history of 11,800 turns of about 1 kB each (a statement followed by afterthoughts, about 230
tokens: most turns fill one model window) in one collection, 24 questions (issue 27's
corpus). Target either way: under 5 minutes on a 2-core machine. The table gives the
command's own output, then wall-clock seconds (the target)
and the CPU seconds it used (user + system: steadier than wall clock on a shared machine,
where other processes take turns on the cores).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import subprocess
import sys
import tempfile
import time
from datetime import date, timedelta
from pathlib import Path
from typing import Any

TARGET_SECONDS = 300
PEOPLE = ["Maya", "Tomas", "Ines", "Kofi", "Lena", "Ravi", "Sofia", "Jonah", "Aiko", "Bruno"]
OPENERS = ["Yesterday I", "Last weekend I", "This morning I", "A few days ago I", "Finally I"]
ACTIVITIES = [
    "went hiking near the {place} with my {relative}",
    "started a pottery class at the {place}",
    "adopted a puppy from the {place} and named it {pet}",
    "ran a half marathon along the {place}",
    "painted a mural for the {place}",
    "volunteered at the {place} for the whole afternoon",
    "lost my keys somewhere around the {place}",
    "had a long talk with my {relative} at the {place}",
    "signed up for a cooking course near the {place}",
    "found an old photo album of my {relative} in the {place}",
]
AFTERTHOUGHTS = [
    "It reminded me of the summer we spent by the sea when I was a kid.",
    "Honestly I had been putting it off for months, so it felt great to do it.",
    "My {relative} keeps asking when we are going to do it again.",
    "I think I will write about it in my journal tonight.",
    "The weather was terrible but we laughed the whole time.",
    "Next month I want to try something even more ambitious.",
]
PLACES = [
    "lake",
    "community centre",
    "old harbour",
    "animal shelter",
    "library",
    "farmers market",
    "river trail",
    "school gym",
    "botanical garden",
    "train station",
]
PETS = ["Biscuit", "Pepper", "Nova", "Mochi", "Rusty", "Juniper"]
RELATIVES = ["sister", "grandmother", "uncle", "cousin", "best friend", "neighbour", "dad"]
REPLIES = [
    "That sounds wonderful, how did it go?",
    "Wow, I did not expect that! What happened next?",
    "I remember you mentioned that last time. Was your {relative} there too?",
    "How is your {relative} doing these days? I have not heard from them in ages.",
    "That must have been exhausting, but I am proud of you for doing it.",
    "Did you take any pictures? I would love to see them.",
    "Honestly that is my favourite kind of weekend: no plans, just good company.",
]


def _fill(rng: random.Random, template: str) -> str:
    return template.format(
        place=rng.choice(PLACES), relative=rng.choice(RELATIVES), pet=rng.choice(PETS)
    )


#: Characters a long turn is filled to (``--turns long``).
LONG_TURN = 1000


def _turn(rng: random.Random, speaker: str, asks: bool, long: bool) -> tuple[str, str]:
    """One chat turn of roughly LoCoMo's length (10-110 tokens, about 30 on average), or
    with ``long`` of about :data:`LONG_TURN` characters, and what it reports doing (empty
    for a reply)."""
    if asks:
        parts, did = [_fill(rng, rng.choice(REPLIES))], ""
    else:
        did = _fill(rng, rng.choice(ACTIVITIES))
        extra = rng.sample(AFTERTHOUGHTS, rng.choice([0, 1, 1, 2, 2, 3]))
        parts = [f"{rng.choice(OPENERS)} {did}.", *(_fill(rng, a) for a in extra)]
    while long and sum(len(p) + 1 for p in parts) < LONG_TURN:
        more = _fill(rng, rng.choice(AFTERTHOUGHTS + REPLIES + ACTIVITIES))
        parts.append(more if more[-1] in ".?!" else f"I also {more}.")
    return f"{speaker}: {' '.join(parts)}", did


def make_corpus(
    rows: int, collections: int, queries_per: int, seed: int = 13, *, long: bool = False
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Synthetic chat collections in the generic format, with queries naming their turns."""
    rng = random.Random(seed)
    corpus: list[dict[str, Any]] = []
    queries: list[dict[str, Any]] = []
    per = rows // collections
    for c in range(collections):
        name = f"chat{c}"
        pair = rng.sample(PEOPLE, 2)
        day = date(2023, 1, 1) + timedelta(days=rng.randrange(300))
        turns: list[dict[str, Any]] = []
        statements: list[tuple[str, str, str]] = []
        for t in range(per):
            if t % 20 == 0:
                day += timedelta(days=rng.randint(3, 20))
            speaker = pair[t % 2]
            text, did = _turn(rng, speaker, asks=t % 2 == 1, long=long)
            row = {"collection": name, "id": f"{name}:t{t}", "text": text}
            turns.append(row | {"date": day.isoformat(), "group": f"{name}:s{t // 20}"})
            if did:
                statements.append((row["id"], speaker, did))
        corpus += turns
        for q, (rid, speaker, did) in enumerate(rng.sample(statements, queries_per)):
            queries.append(
                {
                    "collection": name,
                    "id": f"{name}:q{q}",
                    "text": f"When was it that {speaker} {did}?",
                    "relevant": [rid],
                    "category": str(1 + q % 4),
                }
            )
    return corpus, queries


def main() -> None:
    from rich.console import Console
    from rich.table import Table

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", choices=("short", "long"), default="short")
    parser.add_argument("--rows", type=int, help="turns (short: 12,000; long: 11,800)")
    parser.add_argument("--collections", type=int, help="short: 24; long: 1")
    parser.add_argument("--queries-per", type=int, help="per collection (short: 160; long: 24)")
    parser.add_argument("--timeout", type=float, default=3600, help="give up after (s)")
    args = parser.parse_args()
    long = args.turns == "long"
    rows = args.rows or (11_800 if long else 12_000)
    args.collections = args.collections or (1 if long else 24)
    args.queries_per = args.queries_per or (24 if long else 160)
    corpus, queries = make_corpus(rows, args.collections, args.queries_per, long=long)
    with tempfile.TemporaryDirectory(prefix="bench-speed-") as tmp:
        home = Path(tmp)
        paths = {}
        for name, rows in (("corpus", corpus), ("queries", queries)):
            paths[name] = home / f"{name}.jsonl"
            paths[name].write_text("".join(json.dumps(r) + "\n" for r in rows))
        env = {**os.environ, "HOME": str(home), "AFFIDAVIT_HOME": str(home / ".affidavit")}
        command = [sys.executable, "-m", "affidavit", "bench", "retrieval"]
        command += ["--corpus", str(paths["corpus"]), "--queries", str(paths["queries"])]
        t0 = time.perf_counter()
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        try:
            done = subprocess.run(
                command, env=env, capture_output=True, text=True, timeout=args.timeout
            )
        except subprocess.TimeoutExpired:
            sys.exit(f"bench retrieval did not finish within {args.timeout:.0f} s")
        seconds = time.perf_counter() - t0
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    if done.returncode:
        sys.exit(f"bench retrieval failed ({done.returncode}): {done.stderr.strip()}")
    table = Table(title="affidavit bench retrieval, wall clock")
    columns = ("rows", "kB of text", "collections", "queries", "seconds", "cpu seconds")
    for column in (*columns, "target", "ok", "load average"):
        table.add_column(column, justify="right")
    ok = "yes" if seconds <= TARGET_SECONDS else "no"
    table.add_row(
        f"{len(corpus):,}",
        f"{sum(len(r['text'].encode()) for r in corpus) / 1000:,.0f}",
        str(args.collections),
        str(len(queries)),
        f"{seconds:.1f}",
        f"{cpu:.1f}",
        f"<= {TARGET_SECONDS}",
        ok,
        " / ".join(f"{x:.1f}" for x in os.getloadavg()),
    )
    console = Console(width=160)
    console.print(done.stdout)
    console.print(table)


if __name__ == "__main__":
    main()
