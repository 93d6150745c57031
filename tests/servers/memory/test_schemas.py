"""The memory tools' output schemas are generated from the types their handlers return.

Nobody writes an output schema by hand (issue 25): ``output_schemas.json`` is what
``python -m affidavit.servers.memory.schemas`` makes from the wire types, and it is checked in
only because generating it needs pydantic, which a server must not pay for at start-up.
"""

from __future__ import annotations

import subprocess
import sys

import pytest
from jsonschema import Draft202012Validator

from affidavit.servers.memory.catalogue import catalogue
from affidavit.servers.memory.published import SCHEMAS_FILE, output_schemas
from affidavit.servers.memory.schemas import generate, render


def test_the_checked_in_schemas_are_the_generated_ones() -> None:
    assert SCHEMAS_FILE.read_text(encoding="utf-8") == render(generate()), (
        "the wire types changed: run `python -m affidavit.servers.memory.schemas`"
    )


@pytest.mark.parametrize("spec", catalogue(), ids=lambda spec: spec.name)
def test_every_tool_publishes_its_generated_schema(spec) -> None:
    schema = spec.output_schema
    assert schema == output_schemas()[spec.name]
    Draft202012Validator.check_schema(schema)
    assert schema["type"] == "object" and schema["description"]
    assert "$ref" not in str(schema) and "title" not in schema  # self-contained, no noise


def test_descriptions_come_from_the_field_docstrings() -> None:
    search = output_schemas()["memory_search"]["properties"]
    hit = search["results"]["items"]["properties"]
    assert search["semantic"]["description"] == "false when only keyword recall is available."
    assert hit["channels"]["items"]["enum"] == ["semantic", "literal", "context", "date"]
    assert hit["discovered"]["description"].startswith("The day the fact became known")


def test_a_server_lists_its_tools_without_importing_pydantic_or_recall() -> None:
    probe = (
        "import sys\n"
        "from affidavit.servers.memory.handlers import MemoryTools\n"
        "from affidavit.servers.memory.server import Calls\n"
        "listed = Calls(MemoryTools('user')).wire_listing\n"
        "assert all(tool['outputSchema']['type'] == 'object' for tool in listed)\n"
        "print(sorted(m for m in sys.modules if m.startswith(('pydantic', 'affidavit.recall.'))))\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"
