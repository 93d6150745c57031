"""Record what Compartment's own MCP server answers to the calls in compartment_calls.json.

Why: the replay test (test_compartment_replay.py) must compare affidavit against the fields
Compartment *actually* returns, not against field names read off its descriptions. This
script runs the real Compartment server, sends every session's calls through the official
``mcp`` client, and writes ``compartment_recorded.json``: per tool, each step's arguments and
Compartment's raw result (the JSON its ``result`` text holds), plus the result with its
volatile values (ids, clock times) replaced by markers the replay test compares by form.

Not collected by pytest (no ``test_`` prefix) and not run by CI: it needs Compartment
installed. Re-run it after a Compartment release, from the repository root (the replay test
imports its ``at``/``filled``, so it runs as a module)::

    python -m tests.servers.memory.record_compartment /work/venvs/compartment/bin/compartment

then run test_compartment_replay.py: a field Compartment changed shows up as a difference to
fix or to list (with why) under ``differences`` in compartment_calls.json.

Each session gets its own copy of one freshly initialised vault in a throwaway HOME (a
passphrase made up for the run, passed in the environment, never argv), with Compartment's
offline guard on (``COMPARTMENT_ASSERT_OFFLINE=1``: it aborts on any network attempt; its
embedding model is bundled) and its shared embedding daemon off. The starter memories
``compartment init`` seeds are kept (that is the vault a Compartment user has); results
list them like any memory, so the recorder drops list items no session call created and
says how many it dropped (``seeded_dropped``), since affidavit's fresh vault has none.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import secrets
import shutil
import subprocess
import sys
import tempfile
from datetime import date
from pathlib import Path
from typing import Any

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

HERE = Path(__file__).parent
SESSIONS = HERE / "compartment_calls.json"
OUT = HERE / "compartment_recorded.json"
_HEX32 = re.compile(r"[0-9a-f]{32}")
_HEX64 = re.compile(r"[0-9a-f]{64}")
_MINUTE = re.compile(r"\d{4}-\d{2}-\d{2} \d{2}:\d{2}")
#: Numbers that the call itself fixed: compared by value. Every other number (counts that
#: include the seeded memories, scores, latencies, clock times) is compared by form.
_FIXED_NUMBERS = {"importance", "valid_from", "valid_to", "limit"}


def _env(home: Path, passphrase: str) -> dict[str, str]:
    return {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "COMPARTMENT_PASSPHRASE": passphrase,
        "COMPARTMENT_ASSERT_OFFLINE": "1",
        "COMPARTMENT_EMBED_DAEMON": "0",
    }


def _template(compartment: str, root: Path, passphrase: str) -> Path:
    """One initialised vault (init is slow: it seeds thousands of memories), copied per session."""
    home = root / "template"
    home.mkdir()
    subprocess.run(
        [compartment, "init", "--passphrase-stdin", "--no-app", "--assert-offline"],
        input=passphrase + "\n",
        env=_env(home, passphrase),
        check=True,
        capture_output=True,
        text=True,
    )
    return home


def at(saved: dict[str, Any], reference: str) -> Any:
    """The value ``$NAME.PATH`` names in an earlier step's result."""
    name, *path = reference[1:].split(".")
    value = saved[name]
    for key in path:
        value = value[int(key)] if isinstance(value, list) else value[key]
    return value


def filled(value: Any, saved: dict[str, Any]) -> Any:
    """A session call's arguments with ``$NAME.PATH`` replaced by the earlier value."""
    if isinstance(value, str) and value.startswith("$"):
        return at(saved, value)
    if isinstance(value, dict):
        return {k: filled(v, saved) for k, v in value.items()}
    if isinstance(value, list):
        return [filled(v, saved) for v in value]
    return value


def _decoded(result: Any) -> Any:
    """Compartment's answer: the JSON its one text item holds (its structured ``result``
    field carries the same text)."""
    text = result.content[0].text
    try:
        return json.loads(text)
    except ValueError:
        return {"error_text": text, "is_error": bool(result.is_error)}


async def _session(
    compartment: str, home: Path, passphrase: str, steps: list[dict[str, Any]], tool: str
) -> list[dict[str, Any]]:
    params = StdioServerParameters(
        command=compartment, args=["serve", "--assert-offline"], env=_env(home, passphrase)
    )
    recorded: list[dict[str, Any]] = []
    saved: dict[str, Any] = {}
    async with stdio_client(params) as (read, write), ClientSession(read, write) as client:
        await client.initialize()
        for step in steps:
            name = step.get("tool", tool)
            raw = _decoded(await client.call_tool(name, filled(step["call"], saved)))
            expected = _marked(_organic(raw), saved, today=date.today().isoformat(), key="")
            recorded.append({**step, "raw": raw, "result": expected})
            if "as" in step:
                saved[step["as"]] = raw
    return recorded


def _seeded(item: Any) -> bool:
    """A starter memory ``compartment init`` put in the vault (not made by the session)."""
    return isinstance(item, dict) and (
        item.get("seeded") is True or (item.get("provenance") or {}).get("host") == "seed"
    )


def _organic(value: Any) -> Any:
    """``value`` without the starter memories in its lists, each list saying how many it
    lost (``seeded_dropped``) when any: affidavit's fresh vault has none to list."""
    if isinstance(value, dict):
        out = {k: _organic(v) for k, v in value.items()}
        for k, v in value.items():
            if isinstance(v, list) and any(_seeded(i) for i in v):
                out[k] = [_organic(i) for i in v if not _seeded(i)]
                out.setdefault("seeded_dropped", {})[k] = sum(_seeded(i) for i in v)
        return out
    if isinstance(value, list):
        return [_organic(i) for i in value]
    return value


def _references(saved: dict[str, Any]) -> dict[str, str]:
    """Each id an earlier step returned, as the ``$NAME.PATH`` that names it."""
    found: dict[str, str] = {}

    def walk(value: Any, path: str) -> None:
        if isinstance(value, dict):
            for k, v in value.items():
                walk(v, f"{path}.{k}")
        elif isinstance(value, list):
            for i, v in enumerate(value):
                walk(v, f"{path}.{i}")
        elif isinstance(value, str) and _HEX32.fullmatch(value):
            found.setdefault(value, path)

    for name, raw in saved.items():
        walk(raw, f"${name}")
    return found


def _marked(value: Any, saved: dict[str, Any], *, today: str, key: str) -> Any:
    """The recorded result with what differs run to run replaced by a marker the replay
    test compares by form: ids (or the earlier step's id they repeat), clock times, the
    local minute, today's date, counts and scores."""
    if isinstance(value, dict):
        return {
            k: v if k == "seeded_dropped" else _marked(v, saved, today=today, key=k)
            for k, v in value.items()
        }
    if isinstance(value, list):
        if value and all(isinstance(v, int | float) for v in value):
            return "<list>"  # latencies: how many and how long are the run's
        return [_marked(v, saved, today=today, key=key) for v in value]
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, int | float):
        if key in _FIXED_NUMBERS:
            return value
        if key == "created":
            return "<unix>"
        return "<int>" if isinstance(value, int) else "<number>"
    text = str(value)
    if key == "note":
        return "<str>"  # Compartment's own wording; the field's presence is what a caller reads
    if _HEX32.fullmatch(text):
        return _references(saved).get(text, "<id>")
    if _HEX64.fullmatch(text) or today in text or key == "vault":
        return "<minute>" if _MINUTE.fullmatch(text) else "<day>" if text == today else "<str>"
    return value


def main(compartment: str) -> None:
    sessions = json.loads(SESSIONS.read_text())["tools"]
    version = subprocess.run(
        [compartment, "--version"], check=True, capture_output=True, text=True
    ).stdout.strip()
    passphrase = secrets.token_urlsafe(24)
    out: dict[str, Any] = {"compartment_version": version, "tools": {}}
    with tempfile.TemporaryDirectory(prefix="compartment-record-") as tmp:
        root = Path(tmp)
        template = _template(compartment, root, passphrase)
        for tool, steps in sessions.items():
            home = root / tool
            shutil.copytree(template, home, symlinks=True)
            out["tools"][tool] = asyncio.run(_session(compartment, home, passphrase, steps, tool))
            print(tool, "recorded", file=sys.stderr)
    OUT.write_text(json.dumps(out, indent=1) + "\n")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "compartment")
