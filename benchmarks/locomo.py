"""LoCoMo turn-level retrieval: affidavit's recall against BM25, side by side in one run.

Converts ``../shared/data/locomo10.json`` (relative to the repo root; CC BY-NC 4.0, used for
evaluation only and never copied into the repo or the package) into the generic format of
``affidavit bench retrieval``: one corpus row per dialog turn (text "speaker: text", the
session's date, group and thread = the session, turn = its place in it), one query per QA
item (relevant = its evidence turns).
Categories 1-4 are scored; category 5 (adversarial, unanswerable) is reported separately.

    python benchmarks/locomo.py [--data PATH] [--conversations N] [--json OUT]
                                [--set W_VEC=0.75 --set W_LEX=0.25] [--write-jsonl DIR]

Embedding the 5,882 turns costs about a minute of CPU on a 2-core machine; nothing is cached.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from datetime import datetime
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
DEFAULT_DATA = REPO.parent / "shared" / "data" / "locomo10.json"
SCORED = {"1", "2", "3", "4"}


def _session_date(raw: str | None) -> str | None:
    if not raw:
        return None
    try:
        return datetime.strptime(raw.strip(), "%I:%M %p on %d %B, %Y").date().isoformat()
    except ValueError:
        return None


def convert(
    data: list[dict[str, Any]], conversations: int | None = None
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """LoCoMo samples -> (corpus rows, query rows) in the generic benchmark format."""
    corpus: list[dict[str, Any]] = []
    queries: list[dict[str, Any]] = []
    for sample in data[:conversations]:
        sid = sample["sample_id"]
        conv = sample["conversation"]
        for key, turns in conv.items():
            match = re.fullmatch(r"session_(\d+)", key)
            if not match or not isinstance(turns, list):
                continue
            date = _session_date(conv.get(f"{key}_date_time"))
            for number, turn in enumerate(turns):
                row = {
                    "collection": sid,
                    "id": f"{sid}:{turn['dia_id']}",
                    "text": f"{turn['speaker']}: {turn['text']}",
                    "group": f"{sid}:session_{match.group(1)}",
                    "thread": f"session_{match.group(1)}",
                    "turn": number,
                }
                if date:
                    row["date"] = date
                corpus.append(row)
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


def main() -> None:
    from rich.console import Console
    from rich.progress import Progress

    from affidavit.vault import bench, ranking

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--conversations", type=int, default=None, help="only the first N")
    parser.add_argument("--json", type=Path, default=None, help="write the report here")
    parser.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="override a ranking constant for this run (the tuning sweep in docs/recall.md)",
    )
    parser.add_argument(
        "--write-jsonl",
        type=Path,
        default=None,
        help="also write corpus.jsonl/queries.jsonl here (outside the repo)",
    )
    args = parser.parse_args()
    for assignment in args.set:
        name, _, value = assignment.partition("=")
        if not hasattr(ranking, name) or not name.isupper():
            sys.exit(f"locomo: {name!r} is not a constant of affidavit.vault.ranking")
        setattr(ranking, name, type(getattr(ranking, name))(value))
    if not args.data.is_file():
        sys.exit(f"locomo: {args.data} not found; pass --data PATH to locomo10.json")
    corpus, queries = convert(json.loads(args.data.read_text()), args.conversations)
    if args.write_jsonl:
        args.write_jsonl.mkdir(parents=True, exist_ok=True)
        for name, rows in (("corpus", corpus), ("queries", queries)):
            with (args.write_jsonl / f"{name}.jsonl").open("w") as fh:
                fh.writelines(json.dumps(r) + "\n" for r in rows)
    console = Console(width=160)
    with Progress(console=console, transient=True) as progress:
        task = progress.add_task("importing turns", total=len(corpus))
        report = bench.run(
            corpus,
            queries,
            ks=(5, 10),
            scored_categories=SCORED,
            progress=lambda n: progress.advance(task, n),
        )
    console.print(bench.table(report, "LoCoMo turn retrieval (overall = categories 1-4)"))
    if args.json:
        args.json.write_text(json.dumps(bench.public(report), indent=2) + "\n")


if __name__ == "__main__":
    main()
