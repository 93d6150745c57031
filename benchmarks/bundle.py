"""The Claude Desktop bundle: how big it is, how long `affidavit bundle` takes, how fast the
server inside starts.

Run: ``python benchmarks/bundle.py``. One ``affidavit bundle`` process (wall and CPU time: a
busy shared machine stretches the first, much less the second), the file's size and entry
count, then the unzipped server entry started with ``python -S`` (nothing but the bundle on
the path) until it answers ``tools/list``: the first start (which compiles the bytecode the
bundle leaves out) and the median of the next 5.
"""

from __future__ import annotations

import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

from rich.console import Console
from rich.table import Table

from _rpc import LineClient  # benchmarks/ is on sys.path


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _start_to_tools(folder: Path, home: Path) -> float:
    manifest = json.loads((folder / "manifest.json").read_text())
    args = [
        a.replace("${__dirname}", str(folder)).replace("${user_config.vault}", "")
        for a in manifest["server"]["mcp_config"]["args"]
    ]
    args = [a.replace("${user_config.caller}", "bench") for a in args]
    env = {"HOME": str(home), "PATH": os.environ.get("PATH", "")}
    started = time.perf_counter()
    client = LineClient([sys.executable, "-S", *args], env)
    client.request(
        "initialize",
        {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "bench", "version": "0"},
        },
    )
    client.notify("notifications/initialized")
    client.request("tools/list", {})
    elapsed = time.perf_counter() - started
    client.close()
    return elapsed


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        out = root / "affidavit.mcpb"
        cpu0, wall0 = _children_cpu(), time.perf_counter()
        subprocess.run(
            [sys.executable, "-m", "affidavit", "bundle", "--out", str(out)],
            check=True,
            capture_output=True,
        )
        wall, cpu = time.perf_counter() - wall0, _children_cpu() - cpu0
        with zipfile.ZipFile(out) as archive:
            entries = len(archive.namelist())
            unpacked = sum(i.file_size for i in archive.infolist())
            archive.extractall(root / "installed")
        (root / "home").mkdir()
        starts = [_start_to_tools(root / "installed", root / "home") for _ in range(6)]
        table = Table("measure", "value", title=f"affidavit bundle (load {os.getloadavg()[0]:.1f})")
        table.add_row("bundle file", f"{out.stat().st_size / 1e6:.1f} MB ({entries} entries)")
        table.add_row("unpacked", f"{unpacked / 1e6:.1f} MB")
        table.add_row("affidavit bundle", f"{wall:.1f} s wall ({cpu:.1f} s CPU)")
        table.add_row("first start to tools/list", f"{starts[0] * 1000:.0f} ms")
        table.add_row(
            "start to tools/list", f"{statistics.median(starts[1:]) * 1000:.0f} ms (median of 5)"
        )
        Console().print(table)


if __name__ == "__main__":
    main()
