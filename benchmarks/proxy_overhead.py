"""How much the verifying proxy costs: added latency per tools/call, throughput, memory, start-up.

Run: ``python benchmarks/proxy_overhead.py [--calls N]``. Every figure comes from real
processes over real pipes: a raw JSON-RPC driver (no SDK, so only the proxy is measured)
talks to the same backend once directly and once through ``affidavit proxy``.

- unverified: a minimal echo backend (no verifier applies); target: added p50 <= 1 ms;
- verified file write: the official filesystem server's ``write_file`` (filesystem verifier);
- verified commit: mcp-server-git's ``git_commit`` (git verifier); targets <= 10 ms added;
- pass-through: pipelined pings per second through the proxy;
- proxy RSS after the runs, and start-to-initialized (spawn to initialize reply).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _rpc import LineClient  # benchmarks/ is on sys.path

REPO = Path(__file__).resolve().parents[1]
NODE_TOOLS = Path(
    os.environ.get("AFFIDAVIT_NODE_TOOLS", REPO / ".ci" / "node-tools" / "node_modules")
)
GIT_ENV = {
    "GIT_AUTHOR_NAME": "Bench",
    "GIT_AUTHOR_EMAIL": "bench@example.invalid",
    "GIT_COMMITTER_NAME": "Bench",
    "GIT_COMMITTER_EMAIL": "bench@example.invalid",
    "GIT_CONFIG_NOSYSTEM": "1",
}
ECHO_BACKEND = r"""
import json, sys
for raw in sys.stdin:
    m = json.loads(raw)
    if "id" not in m or "method" not in m:
        continue
    if m["method"] == "initialize":
        r = {"protocolVersion": "2025-06-18", "capabilities": {"tools": {}},
             "serverInfo": {"name": "echo", "version": "1"}}
    elif m["method"] == "tools/call":
        text = json.dumps(m["params"].get("arguments"))
        r = {"content": [{"type": "text", "text": text}], "isError": False}
    else:
        r = {}
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": m["id"], "result": r}) + "\n")
    sys.stdout.flush()
"""


def proxied(argv: list[str], work: Path, *flags: str) -> list[str]:
    return [
        sys.executable,
        "-m",
        "affidavit",
        "proxy",
        "--audit-log",
        str(work / "audit.jsonl"),
        *flags,
        "--",
        *argv,
    ]


def timed_calls(driver: LineClient, calls: int, make_args, before=None) -> list[float]:
    samples = []
    for i in range(calls):
        name, args = make_args(i)
        if before is not None:
            before(i)
        t0 = time.perf_counter()
        reply = driver.request("tools/call", {"name": name, "arguments": args})
        samples.append((time.perf_counter() - t0) * 1000)
        assert "result" in reply and not reply["result"].get("isError"), reply
    return samples


def pct(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def compare(
    label: str,
    direct: list[str],
    via: list[str],
    env,
    cwd,
    calls,
    make_args,
    before=None,
    rows=None,
    extra=None,
):
    results = {}
    for mode, argv in (("direct", direct), ("proxy", via)):
        driver = LineClient(argv, env, cwd)
        driver.initialize()
        timed_calls(driver, min(20, calls), make_args, before)  # warm-up
        results[mode] = timed_calls(driver, calls, make_args, before)
        if mode == "proxy" and extra is not None:
            extra["rss"] = max(extra.get("rss", 0.0), driver.rss_mb())
        driver.close()
    d50, d95 = pct(results["direct"], 0.5), pct(results["direct"], 0.95)
    p50, p95 = pct(results["proxy"], 0.5), pct(results["proxy"], 0.95)
    rows.append((label, d50, d95, p50, p95, p50 - d50, p95 - d95))


def breakdown(audit: Path) -> dict[str, dict[str, float]]:
    """Median per-step times (ms) the proxy recorded for each tool, from its audit log."""
    steps: dict[str, dict[str, list[float]]] = {}
    for line in audit.read_text().splitlines():
        body = json.loads(line)["body"]
        timings = body.get("timings_ms") or {}
        if body.get("kind") != "call" or "backend" not in timings:
            continue
        own = timings["total"] - timings["backend"]
        row = steps.setdefault(body["tool"], {"snapshot": [], "verify": [], "proxy own": []})
        row["snapshot"].append(timings.get("snapshot", 0.0))
        row["verify"].append(timings.get("verify", 0.0))
        row["proxy own"].append(own - timings.get("snapshot", 0.0) - timings.get("verify", 0.0))
    return {
        tool: {k: statistics.median(v) for k, v in row.items() if v} for tool, row in steps.items()
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=200)
    calls = parser.parse_args().calls
    with tempfile.TemporaryDirectory(prefix="affidavit-bench-") as tmp:
        work = Path(tmp)
        env = {**os.environ, **GIT_ENV, "AFFIDAVIT_HOME": str(work / "home")}
        rows: list[tuple] = []
        extra: dict[str, float] = {}
        echo = work / "echo.py"
        echo.write_text(ECHO_BACKEND)
        echo_argv = [sys.executable, str(echo)]
        compare(
            "unverified (echo)",
            echo_argv,
            proxied(echo_argv, work),
            env,
            work,
            calls,
            lambda i: ("echo", {"i": i}),
            rows=rows,
            extra=extra,
        )

        files = work / "files"
        files.mkdir()
        node = NODE_TOOLS / ".bin" / "node"
        fs_server = NODE_TOOLS / "@modelcontextprotocol" / "server-filesystem" / "dist" / "index.js"
        if node.exists():
            fs_argv = [str(node), str(fs_server), str(files)]
            compare(
                "verified write_file (fs)",
                fs_argv,
                proxied(fs_argv, work, "--root", str(files)),
                env,
                work,
                calls,
                lambda i: (
                    "write_file",
                    {"path": str(files / f"f{i % 10}.txt"), "content": f"v{i}"},
                ),
                rows=rows,
                extra=extra,
            )

        repo = work / "repo"
        subprocess.run(["git", "init", "-q", "-b", "main", str(repo)], check=True, env=env)
        (repo / "a.txt").write_text("0")
        subprocess.run(["git", "-C", str(repo), "add", "."], check=True, env=env)
        subprocess.run(["git", "-C", str(repo), "commit", "-qm", "init"], check=True, env=env)
        counter = iter(range(1, 10**9))

        def stage(_i: int) -> None:
            (repo / "a.txt").write_text(str(next(counter)))
            subprocess.run(["git", "-C", str(repo), "add", "a.txt"], check=True, env=env)

        git_argv = [sys.executable, "-m", "mcp_server_git", "--repository", str(repo)]
        git_calls = max(20, calls // 4)
        compare(
            "verified git_commit (git)",
            git_argv,
            proxied(git_argv, work, "--root", str(repo)),
            env,
            work,
            git_calls,
            lambda i: ("git_commit", {"repo_path": str(repo), "message": f"c{i}"}),
            before=stage,
            rows=rows,
            extra=extra,
        )

        # pass-through throughput: pipelined pings
        driver = LineClient(proxied(echo_argv, work), env, work)
        start_proxy = driver.initialize()
        n = 5000
        assert driver.proc.stdin and driver.proc.stdout
        payload = b"".join(
            b'{"jsonrpc":"2.0","id":%d,"method":"ping"}\n' % (10**6 + i) for i in range(n)
        )
        t0 = time.perf_counter()
        driver.proc.stdin.write(payload)
        driver.proc.stdin.flush()
        for _ in range(n):
            driver.proc.stdout.readline()
        rate = n / (time.perf_counter() - t0)
        extra["rss"] = max(extra.get("rss", 0.0), driver.rss_mb())
        driver.close()
        direct = LineClient(echo_argv, env, work)
        start_direct = direct.initialize()
        direct.close()
        steps = breakdown(work / "audit.jsonl")

    print(
        f"{'call':<28}{'direct p50':>11}{'p95':>8}{'proxy p50':>11}{'p95':>8}"
        f"{'added p50':>11}{'p95':>8}  (ms)"
    )
    for label, d50, d95, p50, p95, a50, a95 in rows:
        print(f"{label:<28}{d50:>11.2f}{d95:>8.2f}{p50:>11.2f}{p95:>8.2f}{a50:>11.2f}{a95:>8.2f}")
    print("inside the proxy, median ms (from its audit log): snapshot / verify / relay and audit")
    for tool, row in steps.items():
        print(
            f"  {tool:<12}{row.get('snapshot', 0):>8.2f}{row.get('verify', 0):>8.2f}"
            f"{row.get('proxy own', 0):>8.2f}"
        )
    print(f"pass-through (pipelined ping): {rate:,.0f} messages/s")
    print(f"proxy RSS (max seen): {extra['rss']:.1f} MiB")
    print(
        f"start-to-initialized: direct {start_direct * 1000:.0f} ms, "
        f"through the proxy {start_proxy * 1000:.0f} ms"
    )
    print(
        f"calls per row: {calls} (git_commit: {git_calls}); "
        f"machine load average {os.getloadavg()[0]:.1f}"
    )


if __name__ == "__main__":
    main()
