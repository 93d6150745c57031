"""JSON Schema builders shared by the tool catalogues of affidavit's own MCP servers.

The dev server and the memory server spell their tool contracts the same way: inputs are
closed objects (an unknown argument is an error, not silently ignored), outputs are open
objects with the fields every result carries listed as required. One builder each keeps the
two catalogues from drifting apart.
"""

from __future__ import annotations

from typing import Any


def input_object(properties: dict[str, Any], required: list[str] | None = None) -> dict[str, Any]:
    """A tool's input schema: exactly ``properties``, no others; ``required`` if any."""
    schema: dict[str, Any] = {
        "type": "object",
        "properties": properties,
        "additionalProperties": False,
    }
    if required:
        schema["required"] = required
    return schema


def output_object(properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    """A tool's output schema: ``properties`` with ``required`` always present."""
    return {"type": "object", "properties": properties, "required": required}
