"""Recorded Compartment calls, replayed against the real ``affidavit serve`` (issue 28 item 1).

A user switching from Compartment keeps prompts and agents that call its tools with its
argument names and value forms, and read the fields its results carry. Each tool has a
session in ``compartment_calls.json``; ``record_compartment.py`` ran them against
Compartment's own MCP server and wrote what it answered to ``compartment_recorded.json``
(volatile values marked). This sends every call through the official MCP client to
``affidavit serve`` and compares every field Compartment returned, one by one, with what
affidavit answered. A difference names the tool, the step and the field; the differences
affidavit keeps on purpose are listed, with why, under ``differences`` in
``compartment_calls.json`` (ADR 0228), and a listed one that no longer differs fails too.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from tests.servers.memory.conftest import LIGHT, OFFERED, body, run
from tests.servers.memory.record_compartment import at, filled
from tests.support import mcp_client

RECORDED = json.loads((Path(__file__).with_name("compartment_recorded.json")).read_text())
TOOLS: dict[str, list[dict[str, Any]]] = RECORDED["tools"]
KEPT: dict[str, str] = json.loads((Path(__file__).with_name("compartment_calls.json")).read_text())[
    "differences"
]
_DAY = re.compile(r"\d{4}-\d{2}-\d{2}")
_MINUTE = re.compile(r"\d{4}-\d{2}-\d{2} \d{2}:\d{2}")
_TYPES: dict[str, Any] = {
    "<bool>": bool,
    "<int>": int,
    "<number>": (int, float),
    "<str>": str,
    "<list>": list,
    "<object>": dict,
}


def differences(expected: Any, got: Any, saved: dict[str, Any], where: str) -> list[str]:
    """Each recorded field that the answer does not match, named by its path."""
    if isinstance(expected, str) and expected.startswith("$"):
        expected = at(saved, expected)
    if expected == "<id>":
        ok = isinstance(got, str) and bool(got)
    elif expected == "<day>":
        ok = isinstance(got, str) and bool(_DAY.fullmatch(got))
    elif expected == "<minute>":
        ok = isinstance(got, str) and bool(_MINUTE.fullmatch(got))
    elif expected == "<unix>":  # seconds since 1970: a number, not a date string
        ok = isinstance(got, int | float) and not isinstance(got, bool) and got > 1e9
    elif isinstance(expected, str) and expected in _TYPES:
        ok = isinstance(got, _TYPES[expected]) and not (
            isinstance(got, bool) and expected != "<bool>"
        )
    elif isinstance(expected, dict):
        if not isinstance(got, dict):
            return [f"{where}: expected an object, got {got!r}"]
        missing = [
            f"{where}.{key}: missing"
            for key in expected
            if key not in got and key != "seeded_dropped"  # the recorder's note, not a field
        ]
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


def _field(problem: str) -> str:
    """The field a difference names as ``differences`` lists it: the tool called and the
    path, without the step, the list positions or what was expected and got (ids)."""
    called = problem.split(": ", 1)[0].split(" ", 1)[1]
    return re.sub(r"\[\d+\]", "", called)


def _own(field: str, tool: str) -> bool:
    """Whether ``field`` is one of ``tool``'s (checked by the session recorded for it)."""
    return field == tool or field.startswith(f"{tool}.")


def test_every_offered_tool_has_a_recorded_session() -> None:
    assert set(TOOLS) == OFFERED  # memory_unlock is off unless the user allows it, as there
    assert RECORDED["compartment_version"] == "4.13.0"


@pytest.mark.parametrize("tool", sorted(TOOLS))
def test_a_recorded_compartment_session_gets_compartments_fields(setup, tool: str) -> None:
    found: list[str] = []

    async def replay() -> None:
        saved: dict[str, Any] = {}
        async with mcp_client(["serve"], setup.home, env=setup.env(**LIGHT)) as client:
            for n, step in enumerate(TOOLS[tool]):
                name = step.get("tool", tool)
                answer = body(await client.call_tool(name, filled(step["call"], saved)))
                found.extend(differences(step["result"], answer, saved, f"{tool}[{n}] {name}"))
                if "as" in step:
                    saved[step["as"]] = answer

    run(replay)
    assert [p for p in found if _field(p) not in KEPT] == []
    fields = {_field(p) for p in found}
    assert [f for f in KEPT if _own(f, tool) and f not in fields] == []  # fixed: unlist it


def test_the_comparison_names_what_differs() -> None:
    saved = {"a": {"results": [{"id": "m1"}]}}
    recorded = {"id": "$a.results.0.id", "duplicate": True, "created": "<unix>", "n": "<int>"}
    recorded |= {"created_local": "<minute>", "discovered": "<day>"}
    right = {"id": "m1", "duplicate": True, "created": 1796436402.12, "n": 3}
    right |= {"created_local": "2026-12-05 02:06", "discovered": "2026-03-02"}
    assert differences(recorded, right, saved, "x") == []
    wrong = {"id": "m2", "created": "2026-03-02", "n": True, "created_local": "2026-12-05"}
    found = differences(recorded, wrong | {"discovered": 1796436402}, saved, "x")
    assert found == [
        "x.duplicate: missing",
        "x.id: expected 'm1', got 'm2'",
        "x.created: expected '<unix>', got '2026-03-02'",  # ADR 0227's guess, now refused
        "x.n: expected '<int>', got True",
        "x.created_local: expected '<minute>', got '2026-12-05'",
        "x.discovered: expected '<day>', got 1796436402",
    ]
    assert _field("memory_relations[2] memory_relations.relations[1].valid_from: x") == (
        "memory_relations.relations.valid_from"
    )
