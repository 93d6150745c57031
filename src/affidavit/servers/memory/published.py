"""The memory tools' output schemas as the server publishes them: read from the checked-in
``output_schemas.json`` beside this module.

Generating them needs the catalogue and pydantic (:mod:`.schemas`); a running server only
reads the file, and the catalogue that lists the tools reads it here, so listing the tools
never imports the generator (nor the generator the catalogue at load time).
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

SCHEMAS_FILE = Path(__file__).with_name("output_schemas.json")


@cache
def output_schemas() -> dict[str, dict[str, Any]]:
    """The checked-in output schema of each tool, by tool name (read once per process)."""
    loaded: dict[str, dict[str, Any]] = json.loads(SCHEMAS_FILE.read_text(encoding="utf-8"))
    return loaded
