"""Start to first search answered, by CPU: code trees alternating on one filled vault (issue 27).

    python benchmarks/first_answer_cpu.py WORKDIR [--rounds 5] NAME=SRC [NAME=SRC ...]

WORKDIR is a ``mcp_side_by_side.py --workdir`` whose affidavit vault is filled; each NAME=SRC
runs ``affidavit serve`` with ``PYTHONPATH=SRC`` (another checkout's ``src``), one start of
each tree per round, so trees meet the same load. For each start: the wall time from spawn to
the first ``memory_search`` answered (through the SDK client, as the side-by-side rows), and
the server process's CPU (user + system, from ``/proc``) by then: steadier than wall time on
a shared machine. The shared model service's CPU (the question's embedding) is not counted.
The same vault serves every tree, so a snapshot sealed by a newer tree is simply not read by
an older one; with ``--copies`` each tree starts on its own copy of WORKDIR instead (made
once, ``WORKDIR.NAME``), for trees that each read a snapshot the other's format would
replace, and one unmeasured start per tree first seals that tree's own snapshot.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

import mcp_side_by_side as sbs  # benchmarks/ is on sys.path
from _mcp_host import client, run

QUESTION = "where did I put the kettle"
TICK = os.sysconf("SC_CLK_TCK")


def servers_cpu() -> float:
    """CPU seconds of this process's ``serve`` children (the server under test)."""
    total = 0.0
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            stat = (proc / "stat").read_text()
            command = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[1].split()
        if int(fields[1]) == os.getpid() and " serve " in f"{command} ":
            total += (int(fields[11]) + int(fields[12])) / TICK
    return total


async def one_start(tool: sbs.MemoryTool, linger: float = 0.0) -> tuple[float, float]:
    """Wall and server CPU milliseconds from spawn to the first search's answer (the server
    kept ``linger`` seconds longer, for its warm-up to seal a snapshot)."""
    began = time.perf_counter()
    async with client(tool.server()) as session:
        await session.list_tools()
        await session.call_tool("memory_search", {"query": QUESTION})
        wall = time.perf_counter() - began
        cpu = servers_cpu()
        await asyncio.sleep(linger)
    return wall * 1000, cpu * 1000


def own_copy(work: Path, name: str) -> Path:
    """WORKDIR.NAME, a copy of WORKDIR made on first use (kept for later runs)."""
    copy = work.with_name(f"{work.name}.{name}")
    if not copy.exists():
        shutil.copytree(work, copy, symlinks=True)
    return copy


async def measure(work: Path, rounds: int, trees: dict[str, str], copies: bool) -> None:
    walls: dict[str, list[float]] = {name: [] for name in trees}
    cpus: dict[str, list[float]] = {name: [] for name in trees}
    homes = {name: own_copy(work, name) if copies else work for name in trees}
    for name, src in trees.items():
        os.environ["PYTHONPATH"] = src
        tool = sbs.affidavit_tool(homes[name])
        run(tool.unlock, tool.unlock_env, tool.unlock_stdin)
        if copies:  # this tree's own snapshot, sealed by its warm-up (not measured)
            await one_start(tool, linger=5.0)
    print(f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, load {sbs.load()}")
    for _ in range(rounds):
        for name, src in trees.items():
            os.environ["PYTHONPATH"] = src
            tool = sbs.affidavit_tool(homes[name])
            wall, cpu = await one_start(tool)
            walls[name].append(wall)
            cpus[name].append(cpu)
            print(f"{name:10} wall {wall:6.0f} ms  server CPU {cpu:5.0f} ms  load {sbs.load()}")
    for name in trees:
        print(
            f"{name:10} p50 wall {statistics.median(walls[name]):.0f} ms, p50 server CPU "
            f"{statistics.median(cpus[name]):.0f} ms (n={rounds})"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("workdir", type=Path)
    parser.add_argument("trees", nargs="+", help="NAME=SRC: a checkout's src directory")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--copies", action="store_true", help="each tree on its own copy")
    args = parser.parse_args()
    trees = dict(tree.split("=", 1) for tree in args.trees)
    asyncio.run(measure(args.workdir, args.rounds, trees, args.copies))


if __name__ == "__main__":
    main()
