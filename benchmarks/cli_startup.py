"""CLI cold starts: how long a person, a script or an MCP host waits before a command works.

Run: ``python benchmarks/cli_startup.py [--runs 11] [--workdir DIR]``. Every figure is the
median of ``--runs`` new ``python -m affidavit`` processes (page cache warm, one untimed run
first): wall-clock time, and in brackets the CPU time the process used (user + system), which
a busy shared machine disturbs much less. Rows:

- ``affidavit --version``, ``affidavit --help`` and ``affidavit store --help``;
- ``affidavit pack verify DIR`` of a pack of 10,000 records (ADR 10 target: <= 0.35 s);
- ``affidavit serve``: spawn to the ``initialize`` reply, and to the ``tools/list`` reply
  (issue 19 target: <= 500 ms), on a vault of 10,000 memories unlocked by a session;
- ``affidavit search QUESTION`` and ``affidavit store TEXT`` on that vault, embedding through
  the per-user model service (the default, ADR 0167: warm, since the untimed first run
  starts it and each run comes within its idle time) and with the model loaded in the
  process (``AFFIDAVIT_EMBEDDER=local``, what they did before; issue 25 target: a warm
  search well under a second).

The vault is made and filled through the CLI itself (``init``, ``import``, ``unlock``), so
the benchmark measures the same commands on any version of the code; ``--workdir`` keeps it
(and the pack) for the next run, since embedding 10,000 memories takes minutes.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from _rpc import LineClient  # benchmarks/ is on sys.path
from _table import print_table
from affidavit.packs.build import build_pack
from mcp_server import synthetic
from packs import _write_inputs

PASSPHRASE = "benchmark passphrase, not a secret"  # noqa: S105 - a throwaway benchmark vault
SIZE = 10_000
"""Records in the pack, memories in the vault: the size the targets are set for."""


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _medians(action: Callable[[], object], runs: int) -> tuple[float, float]:
    """Median wall-clock and CPU seconds of ``action``, which runs one child process."""
    action()  # warm the page cache
    walls, cpus = [], []
    for _ in range(runs):
        cpu, begun = _children_cpu(), time.perf_counter()
        action()
        walls.append(time.perf_counter() - begun)
        cpus.append(_children_cpu() - cpu)
    return statistics.median(walls), statistics.median(cpus)


def _ms(wall: float, cpu: float) -> str:
    return f"{wall * 1000:.0f} ms ({cpu * 1000:.0f})"


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


def _serve(env: dict[str, str], stop: str) -> None:
    """Start a server, wait for its reply to ``stop`` (a method), then kill it."""
    server = LineClient([sys.executable, "-m", "affidavit", "serve"], env)
    try:
        server.initialize()
        if stop == "tools/list":
            server.request("tools/list", {})
    finally:
        server.proc.kill()  # SIGKILL: what the figure measures ends with the reply
        server.proc.wait()


def _embedding_commands(
    env: dict[str, str], memories: str, runs: int
) -> list[tuple[str, str, str]]:
    """``search`` and ``store`` through the warm model service, then with the model here."""
    rows = []
    for how, extra in (
        ("model service", {}),
        ("model in process", {"AFFIDAVIT_EMBEDDER": "local"}),
    ):
        chosen = {**env, **extra}
        for label, argv in (
            ("search", ["search", "how do we deploy the service"]),
            ("store", ["store", "The staging deploy runs at noon.", "--source", "bench"]),
        ):
            wall, cpu = _medians(lambda a=argv, e=chosen: _cli(e, *a), runs)
            target = "< 1 s" if (label, how) == ("search", "model service") else ""
            rows.append((f"affidavit {label}, {how} ({memories})", _ms(wall, cpu), target))
    return rows


def main() -> None:
    """Measure every row and print the table."""
    options = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    options.add_argument("--runs", type=int, default=11, help="processes per row (median)")
    options.add_argument("--workdir", type=Path, help="keep the pack and the vault here; reuse")
    options.add_argument("--size", type=int, default=SIZE, help="records and memories")
    args = options.parse_args()
    size = args.size
    with tempfile.TemporaryDirectory(prefix="affidavit-bench-") as tmp:
        workdir = (args.workdir or Path(tmp)).resolve()
        workdir.mkdir(parents=True, exist_ok=True)
        env = _vault_env(workdir, size)
        rows = []
        for label, argv in (
            ("affidavit --version", ["--version"]),
            ("affidavit --help", ["--help"]),
            ("affidavit store --help", ["store", "--help"]),
            (
                f"affidavit pack verify ({size:,} records)",
                ["pack", "verify", str(_pack(workdir, size))],
            ),
        ):
            wall, cpu = _medians(lambda a=argv: _cli(env, *a), args.runs)
            rows.append((label, _ms(wall, cpu), "<= 350 ms" if "verify" in label else ""))
        memories = f"{size:,} memories"
        for stop, target in (("initialize", ""), ("tools/list", "<= 500 ms")):
            wall, cpu = _medians(lambda s=stop: _serve(env, s), args.runs)
            rows.append((f"affidavit serve to {stop} ({memories})", _ms(wall, cpu), target))
        rows.extend(_embedding_commands(env, memories, args.runs))
    print_table(
        f"affidavit cold starts (median of {args.runs} processes)",
        ("command", "wall (cpu)", "target"),
        rows,
    )


if __name__ == "__main__":
    main()
