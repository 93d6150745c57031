"""The memory tools' output schemas: generated from the types their handlers return.

Each handler of :class:`~.handlers.MemoryTools` declares the wire type it returns
(``-> SearchJSON``); :func:`generate` turns each into its tool's output schema
(:func:`affidavit.servers.wire_schema.wire_schema`) and ``output_schemas.json`` beside this
module holds the result, which the catalogue reads when it is built (:mod:`.published`).
Nobody writes an output schema by hand; the descriptions are the wire types' field docstrings.

After changing a wire type or a handler's return type, regenerate the file::

    python -m affidavit.servers.memory.schemas

tests/servers/memory/test_schemas.py fails while the file and the types disagree.
"""

from __future__ import annotations

import json
import typing
from typing import Any

from affidavit.servers.memory.published import SCHEMAS_FILE


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
