"""Pack benchmark: a 10,000-record pack built, verified, searched and guarded.

Run: ``python benchmarks/packs.py [--records N] [--runs N]``. Builds a synthetic pack with the
real builder in a temporary directory, then prints one table:

- cold start to verified: ``affidavit pack verify DIR`` as a new process (median of --runs);
- in-process verify (``verify_pack``) and index build (``PackIndex``);
- search p50/p95 for a common word (in every record) and for rare words, measured through
  the server's own tool function (stop-on-change guard, filters, result shaping, verification
  object included; MCP framing excluded);
- get p50/p95; the per-call stop-on-change check (``PackSnapshot.unchanged``);
- the same common-word search as a full MCP round trip (official client, real server process).

Targets on the 2-core reference machine: cold start <= 0.35 s, common-word search p50 <= 5 ms,
stop-on-change <= 0.2 ms.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from rich.console import Console

from _table import print_table  # benchmarks/ is on sys.path
from affidavit.packs.build import build_pack
from affidavit.packs.search import PackIndex
from affidavit.packs.verify import verify_pack
from affidavit.servers.packs import PackTools

COMMON = "garden"
RARE = ("zircon", "quokka")


def _write_inputs(directory: Path, count: int) -> tuple[Path, Path]:
    """Synthetic messages (about 30 words each) and one record per message quoting it."""
    rng = random.Random(7)
    vocabulary = [f"w{n}ord" for n in range(3000)]
    messages, records = [], []
    for i in range(1, count + 1):
        words = rng.choices(vocabulary, k=24)
        if i % 997 == 0:
            words[1:3] = RARE
        sentence = " ".join([COMMON, *words[:12]]) + "."
        text = f"{sentence} Then {' '.join(words[12:])} happened at the {COMMON} shed."
        day = 1 + i % 28
        messages.append(
            {
                "id": i,
                "date": f"2026-03-{day:02d}T08:{i % 60:02d}:00Z",
                "speaker": "Rowan",
                "text": text,
            }
        )
        records.append(
            {
                "record_id": f"M-bench-{i}",
                "role": "user",
                "topic": f"topic {words[0]}",
                "category": ("places", "people", "rules")[i % 3],
                "quotes": [{"message_id": i, "quote": sentence}],
            }
        )
    paths = directory / "messages.jsonl", directory / "records.jsonl"
    for path, rows in zip(paths, (messages, records), strict=True):
        path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return paths


def _timings(action: Callable[[], object], runs: int) -> list[float]:
    out = []
    for _ in range(runs):
        start = time.perf_counter()
        action()
        out.append(time.perf_counter() - start)
    return out


def _mcp_round_trips(pack: Path, arguments: dict[str, str], calls: int) -> list[float]:
    """Full tool calls through the official MCP client and a real ``pack serve`` process."""
    import anyio
    from mcp import Client, StdioServerParameters

    params = StdioServerParameters(
        command=sys.executable, args=["-m", "affidavit", "pack", "serve", f"--pack={pack}"]
    )

    async def run() -> list[float]:
        async with Client(params) as client:
            await client.call_tool("verified_memory_search", arguments)  # warm up
            out = []
            for _ in range(calls):
                start = time.perf_counter()
                await client.call_tool("verified_memory_search", arguments)
                out.append(time.perf_counter() - start)
            return out

    return anyio.run(run)


def _p(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def main() -> None:
    """Build the pack, measure everything, print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=11, help="cold-start runs (median)")
    args = parser.parse_args()
    console = Console()
    rows: list[tuple[str, str, str]] = []
    with tempfile.TemporaryDirectory(prefix="affidavit-bench-") as tmp:
        messages, records = _write_inputs(Path(tmp), args.records)
        start = time.perf_counter()
        pack = build_pack(messages, records, Path(tmp) / "pack", "Benchmark").path
        rows.append(("build (one run)", f"{time.perf_counter() - start:.2f} s", ""))

        command = [sys.executable, "-m", "affidavit", "pack", "verify", str(pack)]
        subprocess.run(command, check=True, capture_output=True)  # warm the page cache
        cold = _timings(lambda: subprocess.run(command, check=True, capture_output=True), args.runs)
        rows.append(
            (
                f"cold start to verified (median of {args.runs})",
                f"{statistics.median(cold):.3f} s",
                "<= 0.35 s",
            )
        )

        verify = _timings(lambda: verify_pack(pack), 5)
        rows.append(
            ("in-process verify (median of 5)", f"{statistics.median(verify) * 1e3:.0f} ms", "")
        )
        verified = verify_pack(pack)
        index_build = _timings(lambda: PackIndex(verified.records), 3)
        rows.append(
            (
                "search index build (median of 3)",
                f"{statistics.median(index_build) * 1e3:.0f} ms",
                "",
            )
        )

        tools = PackTools(verified)
        queries = {
            f"search, common word '{COMMON}'": ({"query": COMMON}, "p50 <= 5 ms"),
            f"search, rare words '{' '.join(RARE)}'": ({"query": " ".join(RARE)}, ""),
            f"search, two words '{COMMON} {RARE[0]}'": ({"query": f"{COMMON} {RARE[0]}"}, ""),
            "search, common word + category filter": ({"query": COMMON, "category": "rules"}, ""),
        }
        for label, (arguments, target) in queries.items():
            times = _timings(lambda a=arguments: tools.search(a), 200)
            rows.append(
                (
                    label,
                    f"p50 {_p(times, 0.5) * 1e3:.2f} ms, p95 {_p(times, 0.95) * 1e3:.2f} ms",
                    target,
                )
            )
        ids = [f"M-bench-{n}" for n in random.Random(3).sample(range(1, args.records + 1), 200)]
        gets = iter(ids)
        times = _timings(lambda: tools.get({"id": next(gets)}), len(ids))
        rows.append(
            ("get", f"p50 {_p(times, 0.5) * 1e3:.3f} ms, p95 {_p(times, 0.95) * 1e3:.3f} ms", "")
        )
        times = _timings(verified.snapshot.unchanged, 2000)
        rows.append(
            ("stop-on-change check per call", f"p50 {_p(times, 0.5) * 1e3:.3f} ms", "<= 0.2 ms")
        )
        matched = tools.search({"query": COMMON})["matched"]
        times = _mcp_round_trips(pack, {"query": COMMON}, 100)
        rows.append(
            (
                f"search '{COMMON}' through MCP over stdio",
                f"p50 {_p(times, 0.5) * 1e3:.2f} ms, p95 {_p(times, 0.95) * 1e3:.2f} ms",
                "",
            )
        )

    print_table(
        f"affidavit packs: {args.records:,} records ('{COMMON}' in {matched:,})",
        ("measure", "result", "target"),
        rows,
        console,
    )


if __name__ == "__main__":
    main()
