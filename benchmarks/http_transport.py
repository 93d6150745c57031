"""The memory server over Streamable HTTP: search latency at N memories, and concurrent clients.

    python benchmarks/http_transport.py [--memories 10000] [--queries 200]
                                        [--clients 8] [--calls 500] [--workdir DIR]

A fresh vault is filled with N synthetic fictional memories (embedded, sealed; the same ones
as benchmarks/mcp_server.py) and unlocked by a session; one token is issued with the real
``affidavit grant token`` and one ``affidavit serve --http 127.0.0.1:0`` process serves it.
Rows:

- memory_search p50/p95 over HTTP: one keep-alive connection POSTing ``tools/call`` (the
  stateless server needs no handshake), so the figure is the server and HTTP, not a client
  library. Each query is also sent to a stdio ``affidavit serve`` right after (paired, so
  both see the same machine load): the difference is what HTTP costs. The same searches
  through the official SDK client (``mcp.Client``) are shown too;
- C clients x K calls at once (threads, one connection each): wall time, calls/s, p50/p95,
  the CPU the server and the model service spent per call (from /proc), and errors (any
  non-200, JSON-RPC error or ``isError`` result). The server runs with
  ``--rate-limit 100000``: all clients share one caller, and the default limit (100
  requests/s sustained, bursts of 1,000 per caller) is meant to stop this much traffic from
  one caller.

Targets (issue 17): search p50 <= 25 ms at 10k; 8 clients x 500 calls with 0 errors.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import random
import re
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import httpx2

from mcp_server import PEOPLE, THINGS, Server, _ms, bench_vault  # benchmarks/ is on sys.path

HEADERS = {
    "content-type": "application/json",
    "accept": "application/json, text/event-stream",
    "mcp-protocol-version": "2025-06-18",
}


def _queries(count: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    return [f"what did {rng.choice(PEOPLE)} do with {rng.choice(THINGS)}" for _ in range(count)]


def _search(http: httpx2.Client, url: str, query: str) -> bool:
    """One memory_search call; whether it succeeded."""
    call = {"name": "memory_search", "arguments": {"query": query}}
    payload = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": call}
    reply = http.post(url, content=json.dumps(payload), headers=HEADERS)
    if reply.status_code != 200:
        return False
    body = reply.json()
    return "result" in body and not body["result"].get("isError")


def _paired(url: str, token: str, stdio: Server, queries: list[str]) -> tuple[list[float], ...]:
    """Each query over HTTP, then over stdio, one after the other: both under the same load."""
    over_http, over_stdio, errors = [], [], 0
    with httpx2.Client(headers={"authorization": f"Bearer {token}"}, timeout=120) as http:
        for query in queries:
            begun = time.perf_counter()
            errors += not _search(http, url, query)
            over_http.append(time.perf_counter() - begun)
            begun = time.perf_counter()
            stdio.call("memory_search", {"query": query})
            over_stdio.append(time.perf_counter() - begun)
    return over_http, over_stdio, [errors]


def _timed_searches(url: str, token: str, queries: list[str]) -> tuple[list[float], int]:
    """Latencies of ``queries`` on one connection, and how many failed."""
    times, errors = [], 0
    with httpx2.Client(headers={"authorization": f"Bearer {token}"}, timeout=120) as http:
        for query in queries:
            begun = time.perf_counter()
            errors += not _search(http, url, query)
            times.append(time.perf_counter() - begun)
    return times, errors


async def _sdk_searches(url: str, token: str, queries: list[str]) -> list[float]:
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    times = []
    headers = {"authorization": f"Bearer {token}"}
    async with (
        httpx2.AsyncClient(headers=headers, timeout=120) as http,
        Client(streamable_http_client(url, http_client=http), mode="legacy") as client,
    ):
        for query in queries:
            begun = time.perf_counter()
            result = await client.call_tool("memory_search", {"query": query})
            times.append(time.perf_counter() - begun)
            if result.is_error:
                raise RuntimeError(result.content[0].text)
    return times


def _cpu_s(pid: int | None) -> float:
    """CPU seconds (user + system) a process has used so far (0 when it is not there)."""
    if pid is None:
        return 0.0
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _model_service_pid(env: dict[str, str]) -> int | None:
    """The pid of the model service the server uses (written in its lock file), if any."""
    for lock in Path(env["AFFIDAVIT_RUNTIME_DIR"]).rglob("embed.lock"):
        text = lock.read_text().strip()
        if text.isdigit():
            return int(text)
    return None


def _serve(env: dict[str, str]) -> tuple[subprocess.Popen[str], str]:
    args = ["serve", "--http", "127.0.0.1:0", "--rate-limit", "100000"]
    process = subprocess.Popen(
        [sys.executable, "-m", "affidavit", *args], env=env, stderr=subprocess.PIPE, text=True
    )
    assert process.stderr is not None
    for line in process.stderr:
        found = re.search(r"at (http://\S+)", line)
        if found:
            threading.Thread(target=process.stderr.read, daemon=True).start()
            return process, found.group(1)
    raise SystemExit(f"the server did not start (exit {process.wait()})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--memories", type=int, default=10_000)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--calls", type=int, default=500)
    parser.add_argument("--workdir", type=Path, help="keep the filled vault here; reuse it")
    args = parser.parse_args()

    with contextlib.ExitStack() as stack:
        env = stack.enter_context(bench_vault(args.memories, args.workdir))
        issued = subprocess.run(
            [sys.executable, "-m", "affidavit", "grant", "token", "bench"],
            env=env,
            capture_output=True,
            text=True,
            check=True,
        )
        token = issued.stdout.strip()
        process, url = _serve(env)
        stack.callback(process.wait, 30)
        stack.callback(process.terminate)

        _timed_searches(url, token, ["warm up the index"])  # vault open, index, model
        stdio = Server(env, caller="bench")
        stack.callback(stdio.close)
        stdio.call("memory_search", {"query": "warm up the index"})
        times, stdio_times, (errors,) = _paired(url, token, stdio, _queries(args.queries, 11))
        sdk = asyncio.run(_sdk_searches(url, token, _queries(args.queries, 12)))

        results: list[tuple[list[float], int]] = [([], 0)] * args.clients

        def client(index: int) -> None:
            results[index] = _timed_searches(url, token, _queries(args.calls, 100 + index))

        threads = [threading.Thread(target=client, args=(i,)) for i in range(args.clients)]
        model = _model_service_pid(env)
        cpu_before = _cpu_s(process.pid), _cpu_s(model)
        begun = time.perf_counter()
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        wall = time.perf_counter() - begun
        cpu_server, cpu_model = (
            after - before
            for after, before in zip((_cpu_s(process.pid), _cpu_s(model)), cpu_before, strict=True)
        )
        all_times = [t for found, _ in results for t in found]
        all_errors = sum(failed for _, failed in results)

    rows: list[tuple[str, Any]] = [
        (f"memory_search p50 over HTTP at {args.memories}", f"{_ms(times, 0.5):.1f} ms"),
        ("memory_search p95 over HTTP", f"{_ms(times, 0.95):.1f} ms"),
        ("errors in those searches", errors),
        ("same searches over stdio, p50 (paired)", f"{_ms(stdio_times, 0.5):.1f} ms"),
        ("same through the SDK client, p50", f"{_ms(sdk, 0.5):.1f} ms"),
        (f"{args.clients} clients x {args.calls} calls: wall", f"{wall:.1f} s"),
        ("  calls/s", f"{len(all_times) / wall:.0f}"),
        ("  p50 / p95", f"{_ms(all_times, 0.5):.1f} / {_ms(all_times, 0.95):.1f} ms"),
        ("  errors", all_errors),
        (
            "  CPU per call: server / model service",
            f"{cpu_server / len(all_times) * 1e3:.1f} / {cpu_model / len(all_times) * 1e3:.1f} ms",
        ),
        (
            "  clients / (calls/s) (Little's law)",
            f"{args.clients / len(all_times) * wall * 1000:.1f} ms",
        ),
        ("load average at the end", os.getloadavg()[0]),
    ]
    width = max(len(name) for name, _ in rows)
    for name, value in rows:
        print(f"{name:<{width}}  {value}")


if __name__ == "__main__":
    main()
