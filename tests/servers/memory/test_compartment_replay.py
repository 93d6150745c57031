"""Recorded Compartment calls, replayed against the real ``affidavit serve`` (issue 28 item 1).

A user switching from Compartment keeps prompts and agents that call its tools with its
argument names and value forms, and read the fields its results carry. Each tool has a
recorded session in ``compartment_calls.json`` (its format is described there); this sends
every call through the official MCP client and compares the recorded result's fields, one by
one, with what affidavit answered. A difference names the tool, the step and the field.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from tests.servers.memory.conftest import LIGHT, OFFERED, body, run
from tests.support import mcp_client

RECORDED = json.loads((Path(__file__).with_name("compartment_calls.json")).read_text())
TOOLS: dict[str, list[dict[str, Any]]] = RECORDED["tools"]
_DAY = re.compile(r"\d{4}-\d{2}-\d{2}")
_TYPES: dict[str, Any] = {
    "<bool>": bool,
    "<int>": int,
    "<number>": (int, float),
    "<str>": str,
    "<list>": list,
    "<object>": dict,
}


def _at(saved: dict[str, Any], reference: str) -> Any:
    """The value ``$NAME.PATH`` names in an earlier step's result."""
    name, *path = reference[1:].split(".")
    value = saved[name]
    for key in path:
        value = value[int(key)] if isinstance(value, list) else value[key]
    return value


def _filled(value: Any, saved: dict[str, Any]) -> Any:
    """A recorded call's arguments with ``$NAME.PATH`` replaced by the earlier value."""
    if isinstance(value, str) and value.startswith("$"):
        return _at(saved, value)
    if isinstance(value, dict):
        return {k: _filled(v, saved) for k, v in value.items()}
    if isinstance(value, list):
        return [_filled(v, saved) for v in value]
    return value


def differences(expected: Any, got: Any, saved: dict[str, Any], where: str) -> list[str]:
    """Each recorded field that the answer does not match, named by its path."""
    if isinstance(expected, str) and expected.startswith("$"):
        expected = _at(saved, expected)
    if expected == "<id>":
        ok = isinstance(got, str) and bool(got)
    elif expected == "<day>":
        ok = isinstance(got, str) and bool(_DAY.fullmatch(got))
    elif isinstance(expected, str) and expected in _TYPES:
        ok = isinstance(got, _TYPES[expected]) and not (
            isinstance(got, bool) and expected != "<bool>"
        )
    elif isinstance(expected, dict):
        if not isinstance(got, dict):
            return [f"{where}: expected an object, got {got!r}"]
        missing = [f"{where}.{key}: missing" for key in expected if key not in got]
        return missing + [
            problem
            for key, value in expected.items()
            if key in got
            for problem in differences(value, got[key], saved, f"{where}.{key}")
        ]
    elif isinstance(expected, list):
        if not isinstance(got, list) or len(got) != len(expected):
            return [f"{where}: expected {len(expected)} items, got {got!r}"]
        return [
            problem
            for i, (want, have) in enumerate(zip(expected, got, strict=True))
            for problem in differences(want, have, saved, f"{where}[{i}]")
        ]
    else:
        ok = got == expected and type(got) is type(expected)
    return [] if ok else [f"{where}: expected {expected!r}, got {got!r}"]


def test_every_offered_tool_has_a_recorded_session() -> None:
    assert set(TOOLS) == OFFERED  # memory_unlock is off unless the user allows it, as there


@pytest.mark.parametrize("tool", sorted(TOOLS))
def test_a_recorded_compartment_session_gets_compartments_fields(setup, tool: str) -> None:
    async def replay() -> None:
        saved: dict[str, Any] = {}
        async with mcp_client(["serve"], setup.home, env=setup.env(**LIGHT)) as client:
            for n, step in enumerate(TOOLS[tool]):
                name = step.get("tool", tool)
                answer = body(await client.call_tool(name, _filled(step["call"], saved)))
                problems = differences(step["result"], answer, saved, f"{tool}[{n}] {name}")
                assert not problems, "\n".join(problems)
                if "as" in step:
                    saved[step["as"]] = answer

    run(replay)


def test_the_comparison_names_what_differs() -> None:
    saved = {"a": {"results": [{"id": "m1"}]}}
    recorded = {"id": "$a.results.0.id", "duplicate": True, "created": "<day>", "n": "<int>"}
    assert (
        differences(
            recorded, {"id": "m1", "duplicate": True, "created": "2026-01-02", "n": 3}, saved, "x"
        )
        == []
    )
    found = differences(recorded, {"id": "m2", "created": "Jan 2", "n": True}, saved, "x")
    assert found == [
        "x.duplicate: missing",
        "x.id: expected 'm1', got 'm2'",
        "x.created: expected '<day>', got 'Jan 2'",
        "x.n: expected '<int>', got True",
    ]
