"""Each tool's input schema and its handler's argument type say the same thing.

The input schemas are written by hand (their bounds, patterns and descriptions are the
contract an agent reads); the handlers read the checked arguments as a typed value
(:mod:`affidavit.servers.memory.shapes`). This holds the two to the same properties, types
and required names, so a handler cannot read an argument the schema does not offer, nor miss
one it does, and the old spellings of Compartment (ADR 137) stay in both.
"""

from __future__ import annotations

import json
import typing
from typing import Any

import pytest

from affidavit.recall import wire
from affidavit.servers.memory import shapes
from affidavit.servers.memory.catalogue import catalogue
from affidavit.servers.wire_schema import wire_schema


def _skeleton(schema: dict[str, Any]) -> dict[str, Any]:
    """What a schema says about types only (no bounds, patterns or descriptions)."""
    out: dict[str, Any] = {}
    if "type" in schema:
        out["type"] = schema["type"]
    if "enum" in schema:
        out["enum"] = sorted(schema["enum"])
    if "anyOf" in schema:
        out["anyOf"] = sorted((_skeleton(s) for s in schema["anyOf"]), key=json.dumps)
    if "items" in schema:
        out["items"] = _skeleton(schema["items"])
    if "properties" in schema:
        out["properties"] = {k: _skeleton(v) for k, v in schema["properties"].items()}
        out["required"] = sorted(schema.get("required", []))
    return out


@pytest.mark.parametrize("spec", catalogue(), ids=lambda spec: spec.name)
def test_the_argument_type_matches_the_input_schema(spec) -> None:
    hints = typing.get_type_hints(spec.handler, localns={"wire": wire, **vars(shapes)})
    typed = _skeleton(wire_schema(hints["args"]))
    assert typed == _skeleton(spec.input_schema)


def test_the_old_spellings_are_typed_too() -> None:
    search = typing.get_type_hints(shapes.SearchArguments)
    assert search["since"] == str | float and search["until"] == str | float
    link = typing.get_type_hints(shapes.LinkArguments)
    assert link["valid_from"] == str | float and link["valid_to"] == str | float
    assert typing.get_type_hints(shapes.RecentArguments)["include_seeded"] is bool
    assert set(typing.get_type_hints(shapes.RecordArguments)) == {"id", "record_id"}
