"""The memory tools' output schemas: generated from the types their handlers return.

Each handler of :class:`~.handlers.MemoryTools` declares the wire type it returns
(``-> SearchJSON``); :func:`generate` turns each into its tool's output schema
(:func:`affidavit.servers.wire_schema.wire_schema`) and ``output_schemas.json`` beside this
module holds the result, which the catalogue reads when it is built. Nobody writes an output
schema by hand; the descriptions are the wire types' field docstrings.

After changing a wire type or a handler's return type, regenerate the file::

    python -m affidavit.servers.memory.schemas

tests/servers/memory/test_schemas.py fails while the file and the types disagree.
"""

from __future__ import annotations

import json
import typing
from functools import cache
from pathlib import Path
from typing import Any

SCHEMAS_FILE = Path(__file__).with_name("output_schemas.json")


@cache
def output_schemas() -> dict[str, dict[str, Any]]:
    """The checked-in output schema of each tool, by tool name (read once per process)."""
    loaded: dict[str, dict[str, Any]] = json.loads(SCHEMAS_FILE.read_text(encoding="utf-8"))
    return loaded


def generate() -> dict[str, dict[str, Any]]:
    """Each tool's output schema, from its handler's return type (imports pydantic)."""
    from affidavit.recall import wire
    from affidavit.servers.memory import shapes
    from affidavit.servers.memory.catalogue import catalogue
    from affidavit.servers.wire_schema import wire_schema

    names = {"wire": wire, **vars(shapes)}  # the handlers import these for type checking only
    return {
        spec.name: wire_schema(typing.get_type_hints(spec.handler, localns=names)["return"])
        for spec in catalogue()
    }


def render(schemas: dict[str, dict[str, Any]]) -> str:
    """The file's text: stable (sorted keys) so a change shows as a small diff."""
    return json.dumps(schemas, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


if __name__ == "__main__":
    SCHEMAS_FILE.write_text(render(generate()), encoding="utf-8")
    print(f"wrote {SCHEMAS_FILE}")
