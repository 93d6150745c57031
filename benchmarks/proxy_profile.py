"""Where the proxy's time goes on a call nobody verifies: py-spy samples of a live proxy.

    python benchmarks/proxy_profile.py [--calls N] [--svg FILE] [--all-threads]

Starts ``affidavit proxy`` in front of a trivial JSON-RPC echo backend, drives ``tools/call``
through it with a raw line client, attaches ``py-spy`` (``pip install py-spy``) to the proxy
and prints the frames that held the GIL most (inclusive and own share), per thread: the
text form of a flame graph (``--svg`` also writes the graph). Only samples taken while a
thread holds the GIL are counted (``--gil``), so waiting in ``read`` does not show;
``--all-threads`` counts every sample instead.
"""

from __future__ import annotations

import argparse
import collections
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _rpc import LineClient  # benchmarks/ is on sys.path
from proxy_overhead import ECHO_BACKEND


def record(proxy_pid: int, out: Path, fmt: str, gil: bool) -> subprocess.Popen[bytes]:
    spy = shutil.which("py-spy") or str(Path(sys.executable).parent / "py-spy")
    flags = ["--threads", "--nonblocking", "-r", "1000", "-f", fmt, "-o", str(out)]
    return subprocess.Popen(
        [spy, "record", *flags, *(["--gil"] if gil else []), "--pid", str(proxy_pid)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


def summary(raw: Path, top: int = 25) -> str:
    """Inclusive and own shares of the sampled frames (py-spy's collapsed ``raw`` format)."""
    inclusive: collections.Counter[str] = collections.Counter()
    own: collections.Counter[str] = collections.Counter()
    threads: collections.Counter[str] = collections.Counter()
    total = 0
    for line in raw.read_text().splitlines():
        stack, _, count = line.rpartition(" ")
        thread, *frames = stack.split(";")
        samples = int(count)
        total += samples
        threads[thread.split(":", 1)[-1].strip().strip('"')] += samples
        names = [frame.split(" (")[0] + " (" + frame.split(" (")[-1].split(":")[0] + ")"
                 for frame in frames]  # fmt: skip
        for name in set(names):
            inclusive[name] += samples
        if names:
            own[names[-1]] += samples
    lines = [f"{total} samples; by thread: " + ", ".join(
        f"{name} {100 * n / total:.0f}%" for name, n in threads.most_common())]  # fmt: skip
    lines.append("inclusive:")
    lines += [f"  {100 * n / total:5.1f}%  {name}" for name, n in inclusive.most_common(top)]
    lines.append("own:")
    lines += [f"  {100 * n / total:5.1f}%  {name}" for name, n in own.most_common(top // 2)]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=5000)
    parser.add_argument("--svg", type=Path, help="also write a flame graph here")
    parser.add_argument("--all-threads", action="store_true", help="count waiting samples too")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="affidavit-profile-") as tmp:
        work = Path(tmp)
        (work / "echo.py").write_text(ECHO_BACKEND)
        env = {**os.environ, "AFFIDAVIT_HOME": str(work / "home")}
        proxy = LineClient(
            [sys.executable, "-m", "affidavit", "proxy", "--audit-log", str(work / "a.jsonl"),
             "--", sys.executable, str(work / "echo.py")],
            env,
        )  # fmt: skip
        proxy.initialize()
        for i in range(200):  # warm up
            proxy.request("tools/call", {"name": "echo", "arguments": {"i": i}})
        raw = work / "profile.txt"
        spies = [record(proxy.proc.pid, raw, "raw", not args.all_threads)]
        if args.svg:
            spies.append(record(proxy.proc.pid, args.svg, "flamegraph", not args.all_threads))
        time.sleep(1.0)  # py-spy attaches
        started = time.perf_counter()
        for i in range(args.calls):
            proxy.request("tools/call", {"name": "echo", "arguments": {"i": i}})
        elapsed = time.perf_counter() - started
        for spy in spies:
            spy.send_signal(2)
            spy.wait()
        proxy.close()
        print(f"{args.calls} calls, {elapsed / args.calls * 1000:.3f} ms each while sampled; "
              f"load average {os.getloadavg()[0]:.1f}")  # fmt: skip
        print(summary(raw))


if __name__ == "__main__":
    main()
