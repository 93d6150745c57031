"""What a memory server and its model service hold in RAM, step by step (issue 27).

    python benchmarks/memory_rss.py WORKDIR [--service-only]

WORKDIR is a work directory ``benchmarks/mcp_side_by_side.py`` filled (its ``affidavit``
vault, unlocked by that script's run). Each side runs in a fresh Python process that takes
the steps ``affidavit serve`` and the model service take, in their order, and reads its own
``/proc/self/smaps_rollup`` after each: resident size, of which anonymous memory (the heap,
numpy's and onnxruntime's buffers) and mapped files (the interpreter, shared libraries,
which several processes share). RSS does not depend on the machine's load.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent

MEASURE = r"""
import json, os, sys
def rollup():
    out = {}
    for line in open("/proc/self/smaps_rollup"):
        parts = line.split()
        if parts[0] in ("Rss:", "Anonymous:"):
            out[parts[0][:-1]] = int(parts[1]) / 1024
    return out
steps = []
def step(name):
    steps.append([name, rollup()])
"""

SERVER = (
    MEASURE
    + r"""
step("Python started")
from affidavit.cli import main as _cli  # what `affidavit serve` imports first
from affidavit.servers.memory import server
step("imports for the handshake (cli, server, toolkit, catalogue)")
from affidavit.recall import Memory, prefer_shared, shared_embedder
from affidavit.vault import Vault
step("imports of recall and vault")
import numpy
step("numpy")
prefer_shared()
embedder = shared_embedder()
step("tokenizers + tokenizer.json, connected to the model service")
vault = Vault.open(None)
step(f"vault opened from its snapshot ({len(vault)} records)")
memory = Memory(vault, caller="user")
step("recall over the vault (expiry and evidence maps, pack shelf)")
memory.index
step("recall index restored (vectors, keyword postings)")
for q in sys.argv[1:]:
    memory.search(q)
step(f"after {len(sys.argv) - 1} searches")
print(json.dumps(steps))
"""
)

SERVICE = (
    MEASURE
    + r"""
step("Python started")
import numpy
step("numpy")
import onnxruntime
step("onnxruntime imported")
from affidavit.recall import onnx_model
if hasattr(onnx_model, "map_large_buffers"):  # what the service does first (this tree on)
    onnx_model.map_large_buffers()
model = onnx_model.local_model()
step("session created")
model([[101] + [2000 + i for i in range(9)] + [102]])
step("first question run")
for n in (11, 32, 64, 256):
    for _ in range(20):
        model([[101] + [2000 + i for i in range(n - 2)] + [102]])
step("after questions and memories of 11-256 tokens")
print(json.dumps(steps))
"""
)


def run(script: str, env: dict[str, str], args: list[str]) -> list[tuple[str, dict[str, float]]]:
    done = subprocess.run(
        [sys.executable, "-c", script, *args], env=env, capture_output=True, text=True, check=False
    )
    if done.returncode != 0:
        raise SystemExit(f"the probe failed: {done.stderr[-800:]}")
    return [(name, sizes) for name, sizes in json.loads(done.stdout.strip().splitlines()[-1])]


def table(title: str, steps: list[tuple[str, dict[str, float]]]) -> None:
    print(f"\n{title}\n| step | RSS MiB | added | of which anonymous |\n|---|---|---|---|")
    before = {"Rss": 0.0, "Anonymous": 0.0}
    for name, sizes in steps:
        added = sizes["Rss"] - before["Rss"]
        anon = sizes["Anonymous"] - before["Anonymous"]
        print(f"| {name} | {sizes['Rss']:.1f} | {added:+.1f} | {anon:+.1f} |")
        before = sizes
    print(f"total anonymous {steps[-1][1]['Anonymous']:.1f} MiB")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("workdir", type=Path)
    parser.add_argument("--service-only", action="store_true")
    args = parser.parse_args()
    sys.path.insert(0, str(HERE))
    from _mcp_host import affidavit_env
    from mcp_side_by_side import queries

    home = args.workdir.resolve() / "affidavit"
    env = {**affidavit_env(home), "AFFIDAVIT_EMBEDDER": "shared"}
    print(f"load average {os.getloadavg()}")
    table("model service (the steps of `python -m affidavit.recall.model_service`)",
          run(SERVICE, env, []))  # fmt: skip
    if not args.service_only:
        table(f"memory server at {home}", run(SERVER, env, queries(10, seed=7)))


if __name__ == "__main__":
    main()
