"""Values that cross modules are enums, and every front-end's choices come from them (issue 25
item 6): a new kind, format, mode or check is one edit, not a hunt for copied lists."""

from __future__ import annotations

import json
import typing
from pathlib import Path

import click
import pytest

from affidavit import exports
from affidavit.access import Mode
from affidavit.cli.intake import import_
from affidavit.cli.memory_server import grant
from affidavit.cli.recall import search, store
from affidavit.intake import Format
from affidavit.packs import Check
from affidavit.recall import MemoryKind
from affidavit.servers.memory import shapes
from affidavit.servers.memory.catalogue import catalogue
from tests.support import run_cli


def _choices(command: click.Command, name: str) -> list[str]:
    (param,) = [p for p in command.params if p.name == name]
    assert isinstance(param.type, click.Choice)
    return [str(choice) for choice in param.type.choices]


@pytest.mark.parametrize(
    ("command", "name", "enum"),
    [
        (store, "kind", MemoryKind),
        (search, "kind", MemoryKind),
        (import_, "fmt", Format),
        (grant, "mode", Mode),
    ],
)
def test_cli_choices_are_the_enum_values(
    command: click.Command, name: str, enum: type[object]
) -> None:
    assert _choices(command, name) == [m.value for m in enum]  # type: ignore[attr-defined]


def test_the_chat_export_formats_are_the_export_readers_own() -> None:
    assert {Format.CHATGPT.value, Format.CLAUDE.value} == set(exports.FORMATS)


def _kind_enums(schema: object) -> list[object]:
    """Every ``kind`` property's ``enum`` anywhere in a JSON schema."""
    if isinstance(schema, list):
        return [e for item in schema for e in _kind_enums(item)]
    if not isinstance(schema, dict):
        return []
    found = [e for value in schema.values() for e in _kind_enums(value)]
    kind = schema.get("properties", {}).get("kind") if "properties" in schema else None
    return [kind["enum"], *found] if isinstance(kind, dict) and "enum" in kind else found


def test_the_memory_tools_offer_exactly_the_memory_kinds() -> None:
    kinds = [m.value for m in MemoryKind]
    offered = [e for spec in catalogue() for e in _kind_enums(spec.input_schema)]
    assert len(offered) >= 3 and all(e == kinds for e in offered), offered
    for shape in (shapes.StoreArguments, shapes.SearchArguments):
        assert list(typing.get_args(typing.get_type_hints(shape)["kind"])) == kinds


def test_the_enums_keep_the_plain_strings_on_the_wire(
    home: Path, cli_vault: dict[str, str]
) -> None:
    env = {**cli_vault, "AFFIDAVIT_EMBEDDER": "off"}
    done = run_cli(["store", "Tea beats coffee.", "--source", "t", "--kind", "opinion", "--json"],
                   home, env=env)  # fmt: skip
    assert done.returncode == 0, done.stderr
    got = run_cli(["get", json.loads(done.stdout)["id"], "--json"], home, env=env)
    assert json.loads(got.stdout)["memory"]["kind"] == "opinion"
    granted = run_cli(["grant", "cursor", "work", "ro", "--json"], home, env=env)
    assert json.loads(granted.stdout) == {"cursor": {"work": "ro"}}
    refused = run_cli(["grant", "cursor", "work", "rwx"], home, env=env)
    assert refused.returncode == 2 and "'rw', 'ro', 'none'" in refused.stderr
    missing = run_cli(["pack", "verify", str(home), "--json"], home, env=env)
    assert json.loads(missing.stdout)["check"] == Check.FILES.value
