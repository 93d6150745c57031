"""CLI cold starts: how long a person, a script or an MCP host waits before a command works.

Run: ``python benchmarks/cli_startup.py [--runs 11] [--records 10000] [--memories 10000]
[--workdir DIR]``. Every figure is the median of ``--runs`` new ``python -m affidavit``
processes (page cache warm, one untimed run first). Rows:

- ``affidavit --version``, ``affidavit --help`` and ``affidavit store --help``;
- ``affidavit pack verify DIR`` of a pack of ``--records`` records (ADR 10 target: <= 0.35 s);
- ``affidavit serve``: spawn to the ``initialize`` reply, and to the ``tools/list`` reply
  (issue 19 target: <= 500 ms), on a vault of ``--memories`` memories unlocked by a session.

The vault is made and filled through the CLI itself (``init``, ``import``, ``unlock``), so
the benchmark measures the same commands on any version of the code; ``--workdir`` keeps it
(and the pack) for the next run, since embedding 10,000 memories takes minutes.
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
from collections.abc import Callable
from pathlib import Path

from _rpc import LineClient  # benchmarks/ is on sys.path
from affidavit.packs.build import build_pack
from mcp_server import synthetic
from packs import _write_inputs

PASSPHRASE = "benchmark passphrase, not a secret"  # noqa: S105 - a throwaway benchmark vault


def _median_s(action: Callable[[], float | None], runs: int) -> float:
    """The median duration of ``action`` (its own figure when it returns one)."""
    action()  # warm the page cache
    times = []
    for _ in range(runs):
        begun = time.perf_counter()
        measured = action()
        times.append(measured if measured is not None else time.perf_counter() - begun)
    return statistics.median(times)


def _cli(env: dict[str, str], *args: str, stdin: str | None = None) -> None:
    subprocess.run(
        [sys.executable, "-m", "affidavit", *args],
        env=env,
        input=stdin,
        capture_output=True,
        text=True,
        check=True,
    )


def _pack(workdir: Path, records: int) -> Path:
    pack = workdir / f"pack-{records}"
    if not pack.exists():
        messages, rows = _write_inputs(workdir, records)
        build_pack(messages, rows, pack, "Benchmark")
    return pack


def _vault_env(workdir: Path, memories: int) -> dict[str, str]:
    """The environment of a host whose vault holds ``memories`` memories, unlocked."""
    home = workdir / f"vault-{memories}"
    run = home / "run"
    env = {k: v for k, v in os.environ.items() if not k.startswith("AFFIDAVIT_")}
    env.update(
        {
            "HOME": str(home),
            "AFFIDAVIT_HOME": str(home / ".affidavit"),
            "AFFIDAVIT_RUNTIME_DIR": str(run),
        }
    )
    keyed = {**env, "AFFIDAVIT_PASSPHRASE": PASSPHRASE}
    if not home.exists():
        run.mkdir(parents=True, mode=0o700)
        _cli(keyed, "init")
        rows = [
            {
                "id": f"{n:020x}",
                "kind": "memory",
                "namespace": "user",
                "data": {"text": text, "source": "benchmark", "kind": "fact", "tags": []},
            }
            for n, text in enumerate(synthetic(memories), start=1)
        ]
        _cli(keyed, "import", "-", stdin="".join(json.dumps(row) + "\n" for row in rows))
    _cli(keyed, "unlock")
    return env


def _serve(env: dict[str, str]) -> tuple[float, float]:
    """Seconds from spawn to the ``initialize`` reply and to the ``tools/list`` reply."""
    server = LineClient([sys.executable, "-m", "affidavit", "serve"], env)
    try:
        ready = server.initialize()
        server.request("tools/list", {})
        listed = time.perf_counter() - server.started
    finally:
        server.close()
    return ready, listed


def main() -> None:
    """Measure every row and print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=11)
    parser.add_argument("--records", type=int, default=10_000)
    parser.add_argument("--memories", type=int, default=10_000)
    parser.add_argument("--workdir", type=Path, help="keep the pack and the vault here; reuse")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="affidavit-bench-") as tmp:
        workdir = (args.workdir or Path(tmp)).resolve()
        workdir.mkdir(parents=True, exist_ok=True)
        env = _vault_env(workdir, args.memories)
        rows = []
        for label, argv in (
            ("affidavit --version", ["--version"]),
            ("affidavit --help", ["--help"]),
            ("affidavit store --help", ["store", "--help"]),
            (
                f"affidavit pack verify ({args.records:,} records)",
                ["pack", "verify", str(_pack(workdir, args.records))],
            ),
        ):
            seconds = _median_s(lambda a=argv: _cli(env, *a), args.runs)
            target = "<= 350 ms" if "verify" in label else ""
            rows.append((label, f"{seconds * 1000:.0f} ms", target))
        starts = [_serve(env) for _ in range(args.runs + 1)][1:]
        memories = f"{args.memories:,} memories"
        ready = statistics.median(s[0] for s in starts)
        listed = statistics.median(s[1] for s in starts)
        rows.append((f"affidavit serve to initialize ({memories})", f"{ready * 1000:.0f} ms", ""))
        rows.append(
            (f"affidavit serve to tools/list ({memories})", f"{listed * 1000:.0f} ms", "<= 500 ms")
        )
    width = max(len(r[0]) for r in rows)
    print(f"{'command (median of ' + str(args.runs) + ')':<{width}}  {'value':>8}  target")
    for name, value, target in rows:
        print(f"{name:<{width}}  {value:>8}  {target}")


if __name__ == "__main__":
    main()
