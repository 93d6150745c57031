"""Memory held by three memory servers with and without the shared model service (issue 18).

    python benchmarks/model_sharing.py [--memories N] [--servers K] [--workdir DIR]

One vault of N synthetic facts (filled through ``affidavit init`` + ``import``, unlocked by a
session), then:

- ``local``: one ``affidavit serve`` with the model in its own process (the baseline "one");
- ``local`` x K: K servers, each with its own model (``AFFIDAVIT_EMBEDDER=local``);
- ``shared`` x K: K servers and the one per-user model service they share (``serve``'s
  default), the service counted in.

Each server is started by the official SDK client over stdio (different callers), lists its
tools and answers searches, so its index is built and the model has run. Reported per setup:
the sum of ``VmRSS`` (what the issue's target is written in; it counts shared library pages
once per process) and the sum of ``Pss`` from ``/proc/PID/smaps_rollup`` (shared pages split
between the processes that map them: the fairer total). The target: K shared servers, service
included, <= 1.5x the RSS of one local server.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from contextlib import AsyncExitStack
from datetime import UTC, datetime
from pathlib import Path

from mcp import Client, StdioServerParameters

from _procs import children, service_pid  # benchmarks/ is on sys.path

PASSPHRASE = "model sharing benchmark passphrase, not a secret"  # noqa: S105 - throwaway vault
GUARD_S = 300.0
WORDS = ["deploy", "key", "cluster", "review", "budget", "release", "schema", "backup", "alert"]
NAMES = ["Ada", "Ben", "Chloe", "Dev", "Elif", "Femi", "Gus", "Hana", "Ivo", "Jun"]


def memory(pid: int) -> tuple[float, float]:
    """(RSS, PSS) of a process, in MiB."""
    rss = pss = 0.0
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            rss = int(line.split()[1]) / 1024
    for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
        if line.startswith("Pss:"):
            pss = int(line.split()[1]) / 1024
    return rss, pss


def stop_service(runtime: Path) -> None:
    """End the service this benchmark's servers started (by its pid), and wait for it."""
    pid = service_pid(runtime)
    if pid is None:
        return
    os.kill(pid, 15)
    deadline = time.monotonic() + GUARD_S
    while Path(f"/proc/{pid}").exists() and time.monotonic() < deadline:
        time.sleep(0.05)


def fill(env: dict[str, str], work: Path, count: int) -> None:
    rng = random.Random(18)
    secret = {**env, "AFFIDAVIT_PASSPHRASE": PASSPHRASE}
    cli = [sys.executable, "-m", "affidavit"]
    subprocess.run([*cli, "init", "--json"], env=secret, check=True, capture_output=True)
    lines = work / "import.jsonl"
    with lines.open("w") as out:
        for number in range(1, count + 1):
            text = (
                f"{rng.choice(NAMES)} noted the {rng.choice(WORDS)} {rng.choice(WORDS)} "
                f"change (ticket OPS-{number})."
            )
            data = {"text": text, "source": "benchmark", "kind": "fact", "tags": []}
            record = {"id": f"{number:020x}", "kind": "memory", "namespace": "user",
                      "saved_at": "2025-06-01T12:00:00.000Z", "data": data}  # fmt: skip
            out.write(json.dumps(record) + "\n")
    subprocess.run([*cli, "import", str(lines), "--json"], env=secret, check=True,
                   capture_output=True)  # fmt: skip
    subprocess.run([*cli, "unlock", "--json"], env=secret, check=True, capture_output=True)


async def measure(env: dict[str, str], mode: str, servers: int, runtime: Path) -> dict[str, float]:
    """Start ``servers`` servers in ``mode``, search on each, and sum their memory."""
    pids: list[int] = []
    async with AsyncExitStack() as stack:
        sessions = []
        for index in range(servers):
            before = children()
            params = StdioServerParameters(
                command=sys.executable,
                args=["-m", "affidavit", "serve", "--caller", f"agent{index}"],
                env={**env, "AFFIDAVIT_EMBEDDER": mode},
            )
            session = await stack.enter_async_context(Client(params, mode="legacy", cache=None))
            pids += sorted(children() - before)
            sessions.append(session)
        for session in sessions:
            await asyncio.wait_for(session.list_tools(), GUARD_S)
            for question in ("who noted the deploy key", "budget review", "backup alert"):
                result = await asyncio.wait_for(
                    session.call_tool("memory_search", {"query": question}), GUARD_S
                )
                if result.is_error or not (result.structured_content or {}).get("semantic"):
                    raise RuntimeError(f"{mode}: a search failed or ran without the model")
        totals = {"rss": 0.0, "pss": 0.0, "service_rss": 0.0, "service_pss": 0.0}
        for pid in pids:
            rss, pss = memory(pid)
            totals["rss"] += rss
            totals["pss"] += pss
        service = service_pid(runtime) if mode == "shared" else None
        if service is not None:
            totals["service_rss"], totals["service_pss"] = memory(service)
    return totals


async def main_async(args: argparse.Namespace) -> None:
    work = args.workdir or Path(tempfile.mkdtemp(prefix="affmodel", dir="/tmp"))
    runtime = work / "run"
    runtime.mkdir(parents=True, exist_ok=True, mode=0o700)
    keys = ("PATH", "LOGNAME", "USER", "SHELL", "TERM", "PYTHONPATH")
    env = {k: os.environ[k] for k in keys if k in os.environ}
    env["HOME"] = str(work)
    env["AFFIDAVIT_HOME"] = str(work / ".affidavit")
    env["AFFIDAVIT_VAULT"] = str(work / "vault")
    env["AFFIDAVIT_RUNTIME_DIR"] = str(runtime)
    load_start = "/".join(f"{x:.1f}" for x in os.getloadavg())
    if not (work / "vault").exists():
        fill(env, work, args.memories)
    stop_service(runtime)
    one = await measure(env, "local", 1, runtime)
    many_local = await measure(env, "local", args.servers, runtime)
    stop_service(runtime)  # the shared run starts its own service, as a first server would
    many_shared = await measure(env, "shared", args.servers, runtime)
    stop_service(runtime)
    k = args.servers
    shared_rss = many_shared["rss"] + many_shared["service_rss"]
    shared_pss = many_shared["pss"] + many_shared["service_pss"]
    print("| setup | sum of RSS | sum of PSS | RSS / one local server |")
    print("|---|---|---|---|")
    print(f"| 1 server, model in process | {one['rss']:.0f} MiB | {one['pss']:.0f} MiB | 1.00x |")
    print(
        f"| {k} servers, model in each | {many_local['rss']:.0f} MiB | "
        f"{many_local['pss']:.0f} MiB | {many_local['rss'] / one['rss']:.2f}x |"
    )
    print(
        f"| {k} servers + shared model service | {shared_rss:.0f} MiB | {shared_pss:.0f} MiB "
        f"| {shared_rss / one['rss']:.2f}x |"
    )
    print(
        f"| {k} servers alone (service not counted) | {many_shared['rss']:.0f} MiB | "
        f"{many_shared['pss']:.0f} MiB | {many_shared['rss'] / one['rss']:.2f}x |"
    )
    print()
    print(
        f"- {datetime.now(UTC):%Y-%m-%d %H:%M} UTC, {args.memories:,} memories, service alone "
        f"{many_shared['service_rss']:.0f} MiB RSS / {many_shared['service_pss']:.0f} MiB PSS; "
        f"target: {k} shared <= 1.5x one ({'met' if shared_rss <= 1.5 * one['rss'] else 'missed'})"
    )
    now = "/".join(f"{x:.1f}" for x in os.getloadavg())
    print(f"- load average at start {load_start}, at end {now}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--memories", type=int, default=2000)
    parser.add_argument("--servers", type=int, default=3)
    parser.add_argument("--workdir", type=Path, help="kept vault (default: a new temp dir)")
    asyncio.run(main_async(parser.parse_args()))


if __name__ == "__main__":
    main()
