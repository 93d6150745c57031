"""The CLI's ``--json`` and the memory server's results are one wire shape, value by value.

Issue 15 made ``search`` one shape; issue 25 found ``get``, ``store``, ``recent``, ``link`` and
``unlink`` still answered differently (and ``forget`` built by hand on each side). Each value
now gets its shape from one serializer (``affidavit.recall.views``), so for the same vault the
CLI command and the MCP tool in each row of :data:`CONTRACT` must answer the same JSON
object, compared whole: same fields, same values, same notice; and the tool's answer follows
the output schema the server publishes (generated from the same wire type).

A read runs on the same record from both sides. A write cannot be repeated on one record, so
each side makes its own twin (two new memories, two relations to remove), and the twin's id
and the moment it was saved are the differences allowed: they are replaced by ``<twin>`` and
``<saved>`` on both sides. Timings (the self-test's milliseconds) are replaced by ``<ms>``.
Each row also checks what its answer must show (``expect``): a quarantined memory's warning,
a caller's own namespace, a conflict's rivals.

Not in the table, and why (test_every_tool_is_in_the_table_or_said_why holds the list whole):
memory_store_many (the CLI stores files with ``affidavit import``), memory_lock and
memory_unlock (the terminal locks and unlocks the machine's session, not one server's keys),
memory_status (``affidavit status`` reports the vault file and its session, which a server
cannot see; the caller's view is ``affidavit namespaces``).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from affidavit.recall import NOTICE
from affidavit.servers.memory.catalogue import catalogue
from affidavit.servers.memory.published import output_schemas
from affidavit.vault.session_dir import RUNTIME_ENV
from tests.servers.memory.conftest import LIGHT, body, run
from tests.support import mcp_client, run_cli
from tests.vault.conftest import create_test_vault, vault_env

NOT_IN_THE_TABLE = {"memory_store_many", "memory_lock", "memory_unlock", "memory_status"}
#: A store result's save time, in Compartment's forms (a twin is saved on each side).
SAVED = {"created", "created_local"}
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
    ``expect``: what the (common) answer must show besides being common.
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
    expect: Callable[[Any], bool] = lambda answer: True


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
        expect=lambda a: a["notice"] == NOTICE and a["results"][0]["text"].startswith("Deploys"),
    ),
    Row(
        "search, filtered",
        [
            "search",
            "when does Lantern deploy",
            "--namespace",
            "user",
            "--kind",
            "fact",
            "--tag",
            "ops",
        ],
        "memory_search",
        {"query": "when does Lantern deploy", "namespace": "user", "kind": "fact", "tags": ["ops"]},
        expect=lambda a: {r["namespace"] for r in a["results"]} == {"user"},
    ),
    Row(
        "search, proven only",
        ["search", "when does Lantern deploy", "--proven-only"],
        "memory_search",
        {"query": "when does Lantern deploy", "proven_only": True},
        expect=lambda a: a["results"] == [],  # nothing in this vault carries evidence
    ),
    Row(
        "search, nothing",
        ["search", "sourdough bread recipe"],
        "memory_search",
        {"query": "sourdough bread recipe"},
        expect=lambda a: a["results"] == [],
    ),
    Row(
        "recent",
        ["recent", "--limit", "3"],
        "memory_recent",
        {"limit": 3},
        expect=lambda a: len(a["results"]) == 3 and a["notice"] == NOTICE,
    ),
    Row(
        "get",
        ["get", "{deploys}"],
        "memory_get",
        {"id": "{deploys}"},
        expect=lambda a: a["notice"] == NOTICE and a["memory"]["tags"] == ["ops"],
    ),
    Row("get by record_id", ["get", "{deploys}"], "memory_get", {"record_id": "{deploys}"}),
    Row(
        "get, quarantined",
        ["get", "{rumour}"],
        "memory_get",
        {"id": "{rumour}"},
        expect=lambda a: a["memory"]["warning"].startswith("quarantined"),
    ),
    Row(
        "get, superseded",
        ["get", "{old_port}"],
        "memory_get",
        {"id": "{old_port}"},
        expect=lambda a: a["memory"]["superseded_by"] is not None,
    ),
    Row(
        "store, a duplicate",
        ["store", "Ada owns the Lantern release checklist.", "--source", "chat"],
        "memory_store",
        {"text": "Ada owns the Lantern release checklist.", "source": "chat"},
        expect=lambda a: a["status"] == "duplicate",
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
        expect=lambda a: a["status"] == "conflict" and a["existing"],
    ),
    Row(
        "store, new",
        ["store", "{text}", "--source", "t", "--tag", "Parcels"],
        "memory_store",
        {"text": "{text}", "source": "t", "tags": ["Parcels"]},
        makes=True,
        expect=lambda a: a["stored"] and a["namespace"] == "user",
    ),
    Row(
        "store, as a named caller",
        ["store", "{text}", "--source", "t", "--caller", "cursor"],
        "memory_store",
        {"text": "{text}", "source": "t"},
        makes=True,
        caller="cursor",
        expect=lambda a: a["namespace"] == "cursor",
    ),  # its own, whichever front-end
    Row(
        "forget",
        ["forget", "{twin}"],
        "memory_forget",
        {"id": "{twin}"},
        make_twin=_twin_memory,
        expect=lambda a: a["forgotten"] and not a["shredded"],
    ),
    Row(
        "forget, shredded",
        ["forget", "{twin}", "--shred"],
        "memory_forget",
        {"record_id": "{twin}", "shred": True},
        make_twin=_twin_memory,
        expect=lambda a: a["shredded"],
    ),
    Row(
        "link, existing",
        ["link", "Ada", "owns", "checklist", "--src", "{checklist}"],
        "memory_link",
        {"subject": "Ada", "predicate": "owns", "object": "checklist", "src_id": "{checklist}"},
        expect=lambda a: a["created"] is False and a["relation"]["src_id"],
    ),
    Row(
        "relations",
        ["relations", "--entity", "ada", "--limit", "50"],
        "memory_relations",
        {"entity": "ada", "limit": 50},
        expect=lambda a: a["total"] == 2,
    ),
    Row(
        "relations, truncated",
        ["relations", "--predicate", "owns", "--limit", "1"],
        "memory_relations",
        {"predicate": "owns", "limit": 1},
        expect=lambda a: a["truncated"] is True,
    ),
    Row(
        "unlink",
        ["unlink", "{twin}"],
        "memory_unlink",
        {"relation_id": "{twin}"},
        make_twin=_twin_relation,
        twin_key=("relation", "id"),
        expect=lambda a: a["removed"] is True,
    ),
    Row(
        "namespaces",
        ["namespaces"],
        "memory_list_namespaces",
        {},
        expect=lambda a: (  # "cursor" too once a row stored as cursor: user may write it
            {"user", "docs"} <= {r["name"] for r in a["namespaces"]}
            and {r["access"] for r in a["namespaces"]} == {"rw"}
        ),
    ),
    Row(
        "namespaces, as a named caller",
        ["namespaces", "--caller", "cursor"],
        "memory_list_namespaces",
        {},
        caller="cursor",
        expect=lambda a: (
            a["default_namespace"] == "cursor"
            and {r["name"]: r["access"] for r in a["namespaces"]}
            == {"user": "ro", "docs": "ro", "cursor": "rw"}
        ),
    ),
    Row(
        "selftest", ["selftest"], "memory_selftest", {}, pick="recall", expect=lambda a: a["passed"]
    ),
]


@dataclass(frozen=True)
class World:
    """The vault every row runs on (one per test worker), and the ids of its records."""

    home: Path
    env: dict[str, str]
    names: dict[str, str]


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    """A vault seeded once per worker: memories, an opinion, a correction, a quarantined
    memory and relations; rows that write make their own records, so rows stay apart."""
    base = tmp_path_factory.mktemp("contract")
    home = base / "home"
    home.mkdir()
    create_test_vault(base / "vault").close()
    env = {**vault_env(base / "vault", base / "run"), **LIGHT}
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(RUNTIME_ENV, str(base / "run"))
        yield World(home, env, _seed(home, env))


def _seed(home: Path, env: dict[str, str]) -> dict[str, str]:
    """The shared vault: a few memories, an opinion, a correction, a quarantined one, edges."""

    def cli(*args: str) -> dict[str, Any]:
        done = run_cli([*args, "--json"], home, env=env)
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
    """``value`` with the twin's id, the moment a store saved it and the timings replaced by
    placeholders (a link's ``created`` is a bool, whether the edge is new, and is kept)."""
    if isinstance(value, dict):
        return {
            k: "<ms>"
            if k in TIMINGS
            else "<saved>"
            if twin is not None and k in SAVED and not isinstance(v, bool)
            else _normal(v, twin)
            for k, v in value.items()
        }
    if isinstance(value, list):
        return [_normal(v, twin) for v in value]
    return "<twin>" if twin is not None and value == twin else value


def test_every_tool_is_in_the_table_or_said_why() -> None:
    tools = {spec.name for spec in catalogue()}
    assert {row.tool for row in CONTRACT} | NOT_IN_THE_TABLE == tools
    assert not {row.tool for row in CONTRACT} & NOT_IN_THE_TABLE


@pytest.mark.parametrize("row", CONTRACT, ids=lambda row: row.name)
def test_the_cli_and_the_memory_server_answer_the_same_json(world: World, row: Row) -> None:
    def cli_json(args: list[str], exit_code: int = 0) -> Any:
        done = run_cli([*args, "--json"], world.home, env=world.env)
        assert done.returncode == exit_code, done.stderr
        return json.loads(done.stdout)

    def twin(side: str) -> str | None:
        if row.make_twin is None:
            return None
        made = cli_json(row.make_twin(side))
        for key in row.twin_key:
            made = made[key]
        return str(made)

    text = f"The {row.name} parcel waits at locker {{side}}."
    cli_twin, mcp_twin = twin("cli"), twin("mcp")
    cli_names = {**world.names, "twin": cli_twin, "text": text.format(side="C")}
    mcp_names = {**world.names, "twin": mcp_twin, "text": text.format(side="M")}
    printed = cli_json(_fill(row.cli, cli_names), row.exit_code)
    if row.pick:
        printed = printed[row.pick]
    served: dict[str, Any] = {}

    async def ask() -> None:
        async with mcp_client(["serve", "--caller", row.caller], world.home, env=world.env) as c:
            served.update(body(await c.call_tool(row.tool, _fill(row.mcp, mcp_names))))

    run(ask)
    Draft202012Validator(output_schemas()[row.tool]).validate(served)  # as published
    if row.makes:
        cli_twin, mcp_twin = printed["id"], served["id"]
    assert _normal(printed, cli_twin) == _normal(served, mcp_twin)
    assert row.expect(printed), printed


@pytest.mark.parametrize("name", [row.name for row in CONTRACT])
def test_each_row_names_a_real_command(name: str, home: Path) -> None:
    row = next(row for row in CONTRACT if row.name == name)
    done = run_cli([row.cli[0], "--help"], home)
    assert done.returncode == 0 and "--json" in done.stdout
    assert row.tool == "memory_selftest" or "--caller" in done.stdout  # a caller like any other
