"""How much CPU a memory server burns after it has answered a call (issue 27).

    python benchmarks/after_answer_cpu.py WORKDIR [--compartment VENV] [--calls 15]

Why: ``mcp_side_by_side.py`` alternates calls between affidavit and Compartment on one
2-core machine, so work a server does after its answer runs during the other's next call.
For each server (its vault in WORKDIR, filled by that script; Compartment from its virtual
environment VENV, ``benchmarks/out/peers/compartment``), through the official SDK client:
stores and searches, each followed by 50 ms of quiet, with the CPU of every thread of the
server (and of affidavit's model service) read from ``/proc/PID/task/*/schedstat`` (ns)
during the call and during the quiet after it.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import time
from pathlib import Path

from _mcp_host import checked, client, run  # benchmarks/ is on sys.path
from _procs import children, service_pid
from mcp_side_by_side import MemoryTool, affidavit_tool, compartment_tool, facts, queries

QUIET_S = 0.05


def cpu_ms(pids: list[int]) -> float:
    """CPU of every thread of ``pids`` so far, in ms."""
    total = 0
    for pid in pids:
        for task in Path(f"/proc/{pid}/task").iterdir():
            try:
                total += int((task / "schedstat").read_text().split()[0])
            except OSError:
                continue  # a thread that ended meanwhile
    return total / 1e6


async def probe(tool: MemoryTool, calls: int) -> None:
    run(tool.unlock, tool.unlock_env, tool.unlock_stdin)
    before = children()
    async with client(tool.server()) as session:
        pids = [max(children() - before)]
        await session.list_tools()
        for query in queries(5, seed=3):
            await session.call_tool("memory_search", {"query": query})
        await asyncio.sleep(1.0)
        service = service_pid(tool.home / "private") if tool.name == "affidavit" else None
        pids += [service] if service else []
        work = {
            "memory_store": [
                {"text": t, "source": "benchmark"} for t in facts(calls, time.time_ns())
            ],
            "memory_search": [{"query": q} for q in queries(calls, seed=4)],
        }
        for name, arguments in work.items():
            during, after = [], []
            for args in arguments:
                start = cpu_ms(pids)
                checked(await session.call_tool(name, args), name)
                answered = cpu_ms(pids)
                await asyncio.sleep(QUIET_S)
                during.append(answered - start)
                after.append(cpu_ms(pids) - answered)
            print(
                f"| {tool.name} | {name} | {statistics.median(during):.1f} | "
                f"{statistics.median(after):.1f} | {max(after):.1f} |"
            )


async def main_async(args: argparse.Namespace) -> None:
    work = args.workdir.resolve()
    print(f"load average at start {os.getloadavg()}")
    print("| server | call | CPU during the call, p50 ms | CPU in the 50 ms after the answer, "
          "p50 ms | max ms |\n|---|---|---|---|---|")  # fmt: skip
    tools = [affidavit_tool(work)]
    if args.compartment:
        tools.insert(0, compartment_tool(work, args.compartment))
    for tool in tools:
        await probe(tool, args.calls)
    print(f"load average at end {os.getloadavg()}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("workdir", type=Path)
    parser.add_argument("--compartment", type=Path, metavar="VENV")
    parser.add_argument("--calls", type=int, default=15)
    asyncio.run(main_async(parser.parse_args()))


if __name__ == "__main__":
    main()
