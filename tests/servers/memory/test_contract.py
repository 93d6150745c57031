"""The CLI's ``--json`` and the memory server's results are one wire shape, value by value.

Issue 15 made ``search`` one shape; issue 25 found ``get``, ``store``, ``recent``, ``link`` and
``unlink`` still answered differently (and ``forget`` built by hand on each side). Each value
now gets its shape from one serializer (``affidavit.recall.views``), so for the same vault the
CLI command and the MCP tool in each row of :data:`CONTRACT` must answer the same JSON
object, compared whole: same fields, same values, same notice; and the tool's answer follows
the output schema the server publishes (generated from the same wire type).

A read runs on the same record from both sides. A write cannot be repeated on one record, so
each side makes its own twin (two new memories, two relations to remove), and the twin's id
is the one difference allowed: it is replaced by ``<twin>`` on both sides. Timings (the
self-test's milliseconds) are replaced by ``<ms>``.

Not in the table, and why (test_every_tool_is_in_the_table_or_said_why holds the list whole):
memory_store_many (the CLI stores files with ``affidavit import``), memory_lock and
memory_unlock (the terminal locks and unlocks the machine's session, not one server's keys),
memory_status (``affidavit status`` reports the vault file and its session, which a server
cannot see; the caller's view is ``affidavit namespaces``).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from affidavit.recall import NOTICE
from affidavit.servers.memory.catalogue import catalogue
from affidavit.servers.memory.schemas import output_schemas
from tests.servers.memory.conftest import LIGHT, VaultSetup, body, run
from tests.support import mcp_client, run_cli

NOT_IN_THE_TABLE = {"memory_store_many", "memory_lock", "memory_unlock", "memory_status"}
TIMINGS = {"ms", "store_ms", "search_p50_ms"}


@dataclass(frozen=True)
class Row:
    """One value both front-ends return: the command, the tool, and how to call each.

    ``cli`` and ``mcp`` may name records of the seeded vault as ``{name}``; a ``twin`` row's
    ``{twin}`` is a record each side makes for itself first (``make_twin``: CLI arguments,
    run once per side with the side's label), and a ``makes`` row stores ``{text}``, which
    differs by side, so the new record's id is the twin. ``pick``: the part of the CLI's
    JSON that is the tool's value (the CLI's ``selftest`` wraps it with the model and vault
    checks). ``caller``: the server the row asks; its CLI arguments say ``--caller`` too.
    """

    name: str
    cli: list[str]
    tool: str
    mcp: dict[str, Any]
    make_twin: Callable[[str], list[str]] | None = None
    makes: bool = False
    pick: str | None = None
    exit_code: int = 0
    caller: str = "user"
    twin_key: tuple[str, ...] = field(default=("id",))


def _twin_memory(label: str) -> list[str]:
    return ["store", f"The {label} twin parcel waits at locker {len(label)}.", "--source", "t"]


def _twin_relation(label: str) -> list[str]:
    return ["link", f"{label}-twin", "stores", "parcels"]


CONTRACT = [
    Row(
        "search",
        ["search", "when does Lantern deploy"],
        "memory_search",
        {"query": "when does Lantern deploy"},
    ),
    Row(
        "search, filtered",
        ["search", "Lantern", "--namespace", "user", "--kind", "fact", "--tag", "ops"],
        "memory_search",
        {"query": "Lantern", "namespace": "user", "kind": "fact", "tags": ["ops"]},
    ),
    Row(
        "search, nothing",
        ["search", "sourdough bread recipe"],
        "memory_search",
        {"query": "sourdough bread recipe"},
    ),
    Row("recent", ["recent", "--limit", "3"], "memory_recent", {"limit": 3}),
    Row("get", ["get", "{deploys}"], "memory_get", {"id": "{deploys}"}),
    Row("get by record_id", ["get", "{deploys}"], "memory_get", {"record_id": "{deploys}"}),
    Row("get, quarantined", ["get", "{rumour}"], "memory_get", {"id": "{rumour}"}),
    Row("get, superseded", ["get", "{old_port}"], "memory_get", {"id": "{old_port}"}),
    Row(
        "store, a duplicate",
        ["store", "Ada owns the Lantern release checklist.", "--source", "chat"],
        "memory_store",
        {"text": "Ada owns the Lantern release checklist.", "source": "chat"},
    ),
    Row(
        "store, a conflict",
        [
            "store",
            "I prefer tea to coffee in the mornings.",
            "--source",
            "chat",
            "--kind",
            "opinion",
        ],
        "memory_store",
        {"text": "I prefer tea to coffee in the mornings.", "source": "chat", "kind": "opinion"},
        exit_code=4,
    ),
    Row(
        "store, new",
        ["store", "{text}", "--source", "t", "--tag", "Parcels"],
        "memory_store",
        {"text": "{text}", "source": "t", "tags": ["Parcels"]},
        makes=True,
    ),
    Row(
        "store, as a named caller",
        ["store", "{text}", "--source", "t", "--caller", "cursor"],
        "memory_store",
        {"text": "{text}", "source": "t"},
        makes=True,
        caller="cursor",
    ),
    Row("forget", ["forget", "{twin}"], "memory_forget", {"id": "{twin}"}, make_twin=_twin_memory),
    Row(
        "forget, shredded",
        ["forget", "{twin}", "--shred"],
        "memory_forget",
        {"record_id": "{twin}", "shred": True},
        make_twin=_twin_memory,
    ),
    Row(
        "link, existing",
        ["link", "Ada", "owns", "checklist", "--src", "{checklist}"],
        "memory_link",
        {"subject": "Ada", "predicate": "owns", "object": "checklist", "src_id": "{checklist}"},
    ),
    Row(
        "relations",
        ["relations", "--entity", "ada", "--limit", "50"],
        "memory_relations",
        {"entity": "ada", "limit": 50},
    ),
    Row(
        "relations, truncated",
        ["relations", "--predicate", "owns", "--limit", "1"],
        "memory_relations",
        {"predicate": "owns", "limit": 1},
    ),
    Row(
        "unlink",
        ["unlink", "{twin}"],
        "memory_unlink",
        {"relation_id": "{twin}"},
        make_twin=_twin_relation,
        twin_key=("relation", "id"),
    ),
    Row("namespaces", ["namespaces"], "memory_list_namespaces", {}),
    Row(
        "namespaces, as a named caller",
        ["namespaces", "--caller", "cursor"],
        "memory_list_namespaces",
        {},
        caller="cursor",
    ),
    Row("selftest", ["selftest"], "memory_selftest", {}, pick="recall"),
]


def _seed(setup: VaultSetup, env: dict[str, str]) -> dict[str, str]:
    """The shared vault: a few memories, an opinion, a correction, a quarantined one, edges."""

    def cli(*args: str) -> dict[str, Any]:
        done = run_cli([*args, "--json"], setup.home, env=env)
        assert done.returncode == 0, done.stderr
        return dict(json.loads(done.stdout))

    ids = {
        "deploys": cli(
            "store",
            "Deploys of Lantern run every Friday afternoon.",
            "--source",
            "chat",
            "--tag",
            "ops",
        )["id"],
        "checklist": cli("store", "Ada owns the Lantern release checklist.", "--source", "chat")[
            "id"
        ],
        "old_port": cli(
            "store",
            "The Lantern staging database listens on port 5432.",
            "--source",
            "chat",
            "--tag",
            "ops",
        )["id"],
        "rumour": cli(
            "store", "Lantern will be renamed next year.", "--source", "a web page", "--quarantined"
        )["id"],
    }
    cli(
        "store",
        "The Lantern staging database listens on port 5433.",
        "--source",
        "chat",
        "--supersedes",
        ids["old_port"],
    )
    cli(
        "store", "I prefer tea over coffee in the morning.", "--source", "chat", "--kind", "opinion"
    )
    cli("link", "Ada", "owns", "checklist", "--src", ids["checklist"])
    cli("link", "Bob", "reviews", "checklist")
    cli("link", "Ada", "owns", "release-notes", "--namespace", "docs")
    return ids


def _fill(value: Any, names: dict[str, str]) -> Any:
    if isinstance(value, str):
        return value.format(**names)
    if isinstance(value, list):
        return [_fill(v, names) for v in value]
    if isinstance(value, dict):
        return {k: _fill(v, names) for k, v in value.items()}
    return value


def _normal(value: Any, twin: str | None) -> Any:
    """``value`` with the twin's id and the timings replaced by placeholders."""
    if isinstance(value, dict):
        return {k: "<ms>" if k in TIMINGS else _normal(v, twin) for k, v in value.items()}
    if isinstance(value, list):
        return [_normal(v, twin) for v in value]
    return "<twin>" if twin is not None and value == twin else value


def test_every_tool_is_in_the_table_or_said_why() -> None:
    tools = {spec.name for spec in catalogue()}
    assert {row.tool for row in CONTRACT} | NOT_IN_THE_TABLE == tools
    assert not {row.tool for row in CONTRACT} & NOT_IN_THE_TABLE


def test_the_cli_and_the_memory_server_answer_the_same_json(setup: VaultSetup) -> None:
    env = setup.env(**LIGHT)
    names = _seed(setup, env)
    outcomes: list[tuple[str, Any, Any]] = []

    def cli_json(row: Row, args: list[str]) -> Any:
        done = run_cli([*args, "--json"], setup.home, env=env)
        assert done.returncode == row.exit_code, (row.name, done.stderr)
        printed = json.loads(done.stdout)
        return printed[row.pick] if row.pick else printed

    def twin(row: Row, side: str) -> str | None:
        if row.make_twin is None:
            return None
        made = cli_json(Row("twin", [], "", {}), row.make_twin(side))
        for key in row.twin_key:
            made = made[key]
        return str(made)

    async def scenario() -> None:
        servers = {
            caller: mcp_client(["serve", "--caller", caller], setup.home, env=env)
            for caller in ("user", "cursor")
        }
        async with servers["user"] as user, servers["cursor"] as cursor:
            clients = {"user": user, "cursor": cursor}
            for row in CONTRACT:
                text = f"The {row.name} parcel waits at locker {{side}}."
                cli_twin, mcp_twin = twin(row, "cli"), twin(row, "mcp")
                cli_names = {**names, "twin": cli_twin, "text": text.format(side="C")}
                mcp_names = {**names, "twin": mcp_twin, "text": text.format(side="M")}
                printed = cli_json(row, _fill(row.cli, cli_names))
                result = await clients[row.caller].call_tool(row.tool, _fill(row.mcp, mcp_names))
                served = body(result)
                Draft202012Validator(output_schemas()[row.tool]).validate(served)  # as published
                if row.makes:
                    cli_twin, mcp_twin = printed["id"], served["id"]
                outcomes.append((row.name, _normal(printed, cli_twin), _normal(served, mcp_twin)))

    run(scenario)
    for name, printed, served in outcomes:
        assert printed == served, name
    shown = dict((name, printed) for name, printed, _ in outcomes)
    assert shown["get, quarantined"]["memory"]["warning"].startswith("quarantined")
    assert shown["get"]["notice"] == NOTICE and shown["search"]["notice"] == NOTICE
    assert shown["store, as a named caller"]["namespace"] == "cursor"  # its own, either way
    assert shown["store, new"]["namespace"] == "user" and shown["store, new"]["stored"]
    assert shown["store, a conflict"]["status"] == "conflict"
    assert shown["relations, truncated"]["truncated"] is True
    assert shown["get, superseded"]["memory"]["superseded_by"]
    listed = {row["name"]: row["access"] for row in shown["namespaces"]["namespaces"]}
    assert listed == {"user": "rw", "docs": "rw", "cursor": "rw"}
    theirs = shown["namespaces, as a named caller"]
    assert theirs["default_namespace"] == "cursor"
    assert {row["name"]: row["access"] for row in theirs["namespaces"]} == {
        "user": "ro",
        "docs": "ro",
        "cursor": "rw",
    }


@pytest.mark.parametrize("name", [row.name for row in CONTRACT])
def test_each_row_names_a_real_command(name: str, home: Path) -> None:
    row = next(row for row in CONTRACT if row.name == name)
    done = run_cli([row.cli[0], "--help"], home)
    assert done.returncode == 0 and "--json" in done.stdout
    assert row.tool == "memory_selftest" or "--caller" in done.stdout  # a caller like any other
