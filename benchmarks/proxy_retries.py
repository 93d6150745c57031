"""Retry benchmark: does a retried side effect run twice, with and without --idempotent-replay?

Run: ``python benchmarks/proxy_retries.py [--json OUT]``. Five non-idempotent side effects
(a commit, a branch, an appending edit, a move, a CI run) are each sent twice with identical
arguments through ``affidavit proxy`` in front of the honest mode of the lying backend
(``tests/proxy/lying_backend.py``), which logs every call it executes. Two retry patterns:
sequential (the retry after the first reply, as after a timeout) and overlapping (both in
flight at once, as after a dropped connection). A duplicate is a side effect the backend
executed more than once. Then the stale-state case: write x, write y, write x again — the
third write must run, because the file no longer holds x.

Targets: 0 duplicates with --idempotent-replay, overlapping retries included (the reference
proxy runs an in-flight retry twice); the stale write always runs.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
from mcp import Client

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from tests.proxy.lying_corpus import Workspace  # noqa: E402 - the repo root first


@dataclass(frozen=True)
class SideEffect:
    """A non-idempotent call and what it needs in the repository first."""

    name: str
    tool: str
    arguments: dict[str, Any]
    setup: Callable[[Path], None]


def _dirty(repo: Path) -> None:
    (repo / "README.md").write_text("# demo\nretried\n")


def _module(repo: Path) -> None:
    (repo / "app.py").write_text("x = 1\n")


def _notes(repo: Path) -> None:
    (repo / "notes.txt").write_text("remember\n")


SIDE_EFFECTS = [
    SideEffect("commit", "git_commit", {"message": "Retried commit"}, _dirty),
    SideEffect("branch", "git_branch", {"name": "retried", "base": "main"}, lambda r: None),
    SideEffect(
        "appending edit",
        "edit_file",
        {"path": "app.py", "edits": [{"oldText": "x = 1", "newText": "x = 1\nx += 1"}]},
        _module,
    ),
    SideEffect("move", "move_file", {"source": "notes.txt", "destination": "moved.txt"}, _notes),
    SideEffect("CI run", "run_ci_pipeline", {"pipeline": "green"}, lambda r: None),
]


def _executions(log: Path, tool: str, arguments: dict[str, Any]) -> int:
    if not log.exists():
        return 0
    entries = [json.loads(line) for line in log.read_text().splitlines() if line]
    return sum(1 for e in entries if e["tool"] == tool and e["arguments"] == arguments)


async def _retry(client: Client, effect: SideEffect, overlapping: bool) -> list[Any]:
    replies: list[Any] = []
    if overlapping:
        async with anyio.create_task_group() as group:
            for _ in range(2):
                group.start_soon(_call_into, client, effect, replies)
    else:
        for _ in range(2):
            await _call_into(client, effect, replies)
    return replies


async def _call_into(client: Client, effect: SideEffect, replies: list[Any]) -> None:
    replies.append(await client.call_tool(effect.tool, effect.arguments))


def run_pattern(ws: Workspace, *, replay: bool, overlapping: bool) -> list[dict[str, Any]]:
    """Every side effect retried once in one proxy session; executions counted per effect."""
    log = ws.base / f"exec-{replay}-{overlapping}.jsonl"
    flags = ("--idempotent-replay",) if replay else ()
    params = ws.params(ws.backend_argv(exec_log=log), *flags)
    rows: list[dict[str, Any]] = []

    async def session() -> None:
        async with Client(params, read_timeout_seconds=120) as client:
            for effect in SIDE_EFFECTS:
                ws.reset()
                effect.setup(ws.repo)
                replies = await _retry(client, effect, overlapping)
                rows.append(
                    {
                        "effect": effect.name,
                        "pattern": "overlapping" if overlapping else "sequential",
                        "replay": replay,
                        "executions": _executions(log, effect.tool, effect.arguments),
                        "errors": sum(1 for r in replies if r.is_error),
                    }
                )

    anyio.run(session)
    return rows


def stale_state(ws: Workspace, *, replay: bool) -> dict[str, Any]:
    """Write x, y, x: the third write must execute and leave x on disk."""
    log = ws.base / f"exec-stale-{replay}.jsonl"
    flags = ("--idempotent-replay",) if replay else ()
    params = ws.params(ws.backend_argv(exec_log=log), *flags)
    x = {"path": "state.txt", "content": "x\n"}
    y = {"path": "state.txt", "content": "y\n"}

    async def session() -> None:
        async with Client(params, read_timeout_seconds=120) as client:
            for args in (x, y, x):
                await client.call_tool("write_file", args)

    ws.reset()
    anyio.run(session)
    return {
        "replay": replay,
        "writes_executed": _executions(log, "write_file", x) + _executions(log, "write_file", y),
        "file_holds_x": (ws.repo / "state.txt").read_text() == "x\n",
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args()
    start = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="affidavit-retries-") as tmp:
        ws = Workspace(Path(tmp))
        rows = [
            row
            for replay in (False, True)
            for overlapping in (False, True)
            for row in run_pattern(ws, replay=replay, overlapping=overlapping)
        ]
        stale = [stale_state(ws, replay=False), stale_state(ws, replay=True)]
    print(f"{'side effect':<15} {'retry':<12} {'executions, no replay':>22} {'with replay':>12}")
    print("-" * 64)
    for plain in (r for r in rows if not r["replay"]):
        replayed = next(
            r
            for r in rows
            if r["replay"] and r["effect"] == plain["effect"] and r["pattern"] == plain["pattern"]
        )
        print(
            f"{plain['effect']:<15} {plain['pattern']:<12} {plain['executions']:>22} "
            f"{replayed['executions']:>12}"
        )
    rates = {}
    for replay in (False, True):
        chosen = [r for r in rows if r["replay"] is replay]
        dupes = sum(1 for r in chosen if r["executions"] > 1)
        rates[replay] = (dupes, len(chosen))
        label = "--idempotent-replay" if replay else "no replay"
        errors = sum(r["errors"] for r in chosen)
        print(
            f"duplicate rate, {label}: {dupes}/{len(chosen)} ({100 * dupes / len(chosen):.0f}%)"
            f"; retries the host saw fail: {errors}"
        )
    for case in stale:
        label = "--idempotent-replay" if case["replay"] else "no replay"
        print(
            f"stale state (write x, y, x), {label}: {case['writes_executed']}/3 writes executed, "
            f"file holds x: {case['file_holds_x']}"
        )
    print(f"wall time {time.monotonic() - start:.1f} s (process start-up included)")
    if args.json:
        args.json.write_text(json.dumps({"rows": rows, "stale": stale}, indent=2))
    ok = rates[True][0] == 0 and all(c["writes_executed"] == 3 and c["file_holds_x"] for c in stale)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
