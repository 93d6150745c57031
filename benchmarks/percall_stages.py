"""Where one memory_store and one memory_search spend their time over MCP (issue 27).

    python benchmarks/percall_stages.py WORKDIR [--searches 200] [--stores 50]
                                        [--tree LABEL=SRC ...] [--rounds 1]

WORKDIR is a work directory ``benchmarks/mcp_side_by_side.py`` filled (its ``affidavit``
vault is used as it is; copy it first: stores add memories). A real ``affidavit serve``
is started by the official SDK client (as the side-by-side benchmark does) with
``benchmarks/stage_probe`` on ``PYTHONPATH``: its ``sitecustomize`` wraps named functions in
the server and in the model service the server starts, so the product's code carries no
tracing. The client's own stages (parsing the reply line, validating the result against
the tool's output schema) are timed in this process the same way.

``--beside VENV`` follows each timed call with the same call to Compartment's server (its
vault in WORKDIR, its virtual environment VENV), as the side-by-side run alternates them:
what a call costs when another server has just worked.

Each ``--tree LABEL=SRC`` puts SRC (a checkout's ``src/``) first on the server's path;
trees alternate round by round, each with a fresh server and a fresh model service (the
service a server finds running is stopped first, so it is always the probed one). The
table gives each stage's median per call in ms of wall time, the CPU time of the thread
that ran it, and per call the CPU of each process (client, server, model service).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import shutil
import signal
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import mcp.client.session
import mcp.client.stdio
from mcp import StdioServerParameters

from _mcp_host import affidavit_env, checked, client, run  # benchmarks/ is on sys.path
from _procs import children, service_pid
from mcp_side_by_side import MemoryTool, compartment_tool, facts, queries

HERE = Path(__file__).resolve().parent
PROBE = HERE / "stage_probe" / "sitecustomize.py"
CLIENT: list[tuple[str, float, float, float]] = []  # (label, start, end, thread CPU)
ROUTED = "client: route the reply to its call, read it as a CallToolResult (pydantic)"
SENT = "(the text reaches the model service: ms after the handler began)"
IN_THE_SERVER = ("handler:", "recall:", "ranking:", "vault:", "IPC:")
PROCESS_STAGES = ("server:", "handler:", "recall:", "ranking:", "vault:", "IPC:", "service:")


def _timed_client(owner: Any, name: str, label: str) -> None:
    """Time ``owner.name`` in this process (the SDK client's own stages)."""
    inner = getattr(owner, name)
    is_async = asyncio.iscoroutinefunction(inner)

    if is_async:

        async def timed_async(*args: Any, **kwargs: Any) -> Any:
            cpu, start = time.thread_time(), time.perf_counter()
            try:
                return await inner(*args, **kwargs)
            finally:
                CLIENT.append((label, start, time.perf_counter(), time.thread_time() - cpu))

        setattr(owner, name, timed_async)
    else:

        def timed(*args: Any, **kwargs: Any) -> Any:
            cpu, start = time.thread_time(), time.perf_counter()
            try:
                return inner(*args, **kwargs)
            finally:
                CLIENT.append((label, start, time.perf_counter(), time.thread_time() - cpu))

        setattr(owner, name, timed)


_timed_client(mcp.client.stdio, "_parse_line", "client: parse reply line (pydantic)")
_timed_client(
    mcp.client.session.ClientSession,
    "validate_tool_result",
    "client: validate result against output schema",
)


def cpu_seconds(pid: int) -> float:
    """User + system CPU of a process so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def own_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


@dataclass
class Call:
    """One timed call: its window and the spans of every process inside it."""

    tool: str
    start: float
    end: float
    spans: list[tuple[str, float, float, float]] = field(default_factory=list)


@dataclass
class Run:
    """One server's calls, and each process's CPU per call."""

    calls: list[Call] = field(default_factory=list)
    cpu: dict[str, dict[str, float]] = field(default_factory=dict)


def stop_service(runtime: Path) -> None:
    """Stop the model service the benchmark's servers started (it is restarted, probed)."""
    pid = service_pid(runtime)
    if pid is None:
        return
    os.kill(pid, signal.SIGTERM)
    for _ in range(100):
        if not Path(f"/proc/{pid}").exists():
            return
        time.sleep(0.05)


async def one_server(
    home: Path, src: str, searches: int, stores: int, peer: MemoryTool | None = None
) -> Run:
    """A probed server on ``src``: warm-up, then the timed searches and stores; with a
    ``peer``, each call is followed by the same call to the peer's server (untimed), as
    ``mcp_side_by_side.py`` alternates them."""
    probe = Path(tempfile.mkdtemp(prefix="stage-probe-"))
    shutil.copy(PROBE, probe / "sitecustomize.py")
    env = affidavit_env(home)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (src, str(probe)) if p)
    stop_service(home / "private")
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "affidavit", "serve", "--caller", "user"], env=env
    )
    asked = queries(searches + 10, seed=7)
    stored = facts(stores, seed=time.time_ns())
    timed = Run()
    before = children()
    async with AsyncExitStack() as stack:
        session = await stack.enter_async_context(client(params))
        server = max(children() - before)
        other = None
        if peer is not None:
            run(peer.unlock, peer.unlock_env, peer.unlock_stdin)
            other = await stack.enter_async_context(client(peer.server()))
            await other.list_tools()
        await session.list_tools()
        for query in asked[:10]:
            checked(await session.call_tool("memory_search", {"query": query}), "warm-up")
            if other is not None:
                await other.call_tool("memory_search", {"query": query})
        service = service_pid(home / "private")
        CLIENT.clear()
        for tool, items in (
            ("memory_search", [{"query": q} for q in asked[10:]]),
            ("memory_store", [{"text": t, "source": "benchmark"} for t in stored]),
        ):
            at = {"client": own_cpu(), "server": cpu_seconds(server)}
            if service:
                at["service"] = cpu_seconds(service)
            for arguments in items:
                start = time.perf_counter()
                checked(await session.call_tool(tool, arguments), tool)
                timed.calls.append(Call(tool, start, time.perf_counter()))
                if other is not None:
                    checked(await other.call_tool(tool, arguments), f"the peer's {tool}")
            now = {"client": own_cpu(), "server": cpu_seconds(server)}
            if service:
                now["service"] = cpu_seconds(service)
            timed.cpu[tool] = {k: (now[k] - at[k]) * 1000 / len(items) for k in now}
    time.sleep(0.3)  # the server flushed its last spans at exit
    stop_service(home / "private")  # its spans flush at exit (SIGTERM: atexit does not run)
    spans = [(label, s, e, c) for label, s, e, c in CLIENT]
    for path in (probe / "out").glob("*.jsonl"):
        for line in path.read_text().splitlines():
            _pid, label, s, e, c = json.loads(line)
            spans.append((label, s, e, c))
    for call in timed.calls:
        call.spans = [sp for sp in spans if call.start <= sp[1] <= call.end]
    shutil.rmtree(probe, ignore_errors=True)
    return timed


def first(call: Call, label: str) -> tuple[float, float, float] | None:
    for name, s, e, c in call.spans:
        if name == label:
            return s, e, c
    return None


def total(call: Call, label: str) -> tuple[float, float]:
    """Wall and thread-CPU seconds of every span of ``label`` in ``call`` (summed)."""
    wall = sum(e - s for name, s, e, _ in call.spans if name == label)
    cpu = sum(c for name, _, _, c in call.spans if name == label)
    return wall, cpu


def stage_rows(calls: list[Call]) -> list[tuple[str, float, float]]:
    """(stage, median wall ms, median thread CPU ms), in the order a call flows."""
    labels: list[str] = []
    for call in calls:
        for name, *_ in sorted(call.spans, key=lambda sp: sp[1]):
            if name not in labels:
                labels.append(name)
    rows: dict[str, tuple[list[float], list[float]]] = defaultdict(lambda: ([], []))

    def add(stage: str, wall: float, cpu: float = float("nan")) -> None:
        rows[stage][0].append(wall * 1000)
        rows[stage][1].append(cpu * 1000)

    for call in calls:
        read = first(call, "server: read line, parse JSON")
        worker = first(call, "server: worker call")
        send = first(call, "server: encode reply, write")
        parse = first(call, "client: parse reply line (pydantic)")
        check = first(call, "client: validate result against output schema")
        if not (read and worker and send and parse):
            continue
        add("client: build request, write; server wakes, reads line", read[0] - call.start)
        for label in {name for name, *_ in call.spans}:  # the stages this call went through
            if label.startswith(PROCESS_STAGES) and label != "server: encode reply, write":
                add(label, *total(call, label))
        add("server: parse -> worker thread starts", worker[0] - read[1])
        handler = first(call, f"handler: {call.tool}")
        sent = first(call, "IPC: send the question (search)") or first(
            call, "IPC: model service round trip"
        )
        if handler and sent:
            add(SENT, sent[0] - handler[0])
        add("server: encode reply, write; pipe; client wakes, reads line", parse[0] - send[0])
        add("client: parse reply line (pydantic)", parse[1] - parse[0], parse[2])
        if check:
            add(ROUTED, check[0] - parse[1])
            add("client: validate result against output schema", check[1] - check[0], check[2])
        last = check[1] if check else parse[1]
        add("client: hand the result to the caller", call.end - last)
        add("total, as the caller sees it", call.end - call.start)
    order = [
        "client: build request, write; server wakes, reads line",
        "server: read line, parse JSON",
        "server: parse -> worker thread starts",
        "server: worker call",
        "server: validate arguments",
        SENT,
        *[lb for lb in labels if lb.startswith(IN_THE_SERVER)],
        *[lb for lb in labels if lb.startswith("service:")],
        "server: encode result text",
        "server: encode reply, write; pipe; client wakes, reads line",
        "client: parse reply line (pydantic)",
        ROUTED,
        "client: validate result against output schema",
        "client: hand the result to the caller",
        "total, as the caller sees it",
    ]
    out = []
    for stage in order:
        if stage in rows:
            walls, cpus = rows[stage]
            cpu = [c for c in cpus if c == c]
            out.append((stage, statistics.median(walls), statistics.median(cpu) if cpu else -1))
    return out


def report(label: str, runs: list[Run]) -> None:
    for tool in ("memory_store", "memory_search"):
        calls = [c for r in runs for c in r.calls if c.tool == tool]
        print(f"\n{label}: {tool}, {len(calls)} calls, median per call")
        print("| stage | wall ms | thread CPU ms |\n|---|---|---|")
        for stage, wall, cpu in stage_rows(calls):
            print(f"| {stage} | {wall:.3f} | {'' if cpu < 0 else f'{cpu:.3f}'} |")
        cpu = defaultdict(list)
        for r in runs:
            for proc, ms in r.cpu.get(tool, {}).items():
                cpu[proc].append(ms)
        print(
            "CPU per call (process totals, mean): "
            + ", ".join(f"{p} {statistics.mean(v):.2f} ms" for p, v in cpu.items())
        )


async def main_async(args: argparse.Namespace) -> None:
    trees = [tuple(t.split("=", 1)) for t in args.tree] or [("this tree", "")]
    home = args.workdir.resolve() / "affidavit"
    print(f"load average at start {os.getloadavg()}", flush=True)
    peer = compartment_tool(args.workdir.resolve(), args.beside) if args.beside else None
    results: dict[str, list[Run]] = defaultdict(list)
    for _ in range(args.rounds):
        for label, src in trees:
            results[label].append(await one_server(home, src, args.searches, args.stores, peer))
    for label, _ in trees:
        report(label, results[label])
    print(f"\nload average at end {os.getloadavg()}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("workdir", type=Path)
    parser.add_argument("--searches", type=int, default=200)
    parser.add_argument("--stores", type=int, default=50)
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--tree", action="append", default=[], metavar="LABEL=SRC")
    parser.add_argument(
        "--beside",
        type=Path,
        metavar="VENV",
        help="Compartment's virtual environment (benchmarks/out/peers/compartment): each "
        "call is followed by the same call to Compartment's server on WORKDIR/compartment",
    )
    asyncio.run(main_async(parser.parse_args()))


if __name__ == "__main__":
    main()
