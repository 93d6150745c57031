"""Attacks on namespaces through ids: two MCP servers (the owner and an intruder) on one vault.

An intruder may name any id it learned. Whatever it calls with that id, it must not change a
record in a namespace it may only read, and for a namespace it cannot see it must get exactly
the answer an id that never existed gets (no existence oracle).
"""

from __future__ import annotations

import contextlib
import secrets
from typing import Any

from tests.servers.memory.conftest import LIGHT, body, error_text, run
from tests.support import mcp_client, run_cli

OWNER_FACT = "The Lantern database password rotates on the first Monday of each month."


def _store(text: str, **extra: object) -> dict[str, object]:
    return {"text": text, "source": "from chat", **extra}


async def _owner_records(owner: Any) -> dict[str, str]:
    """A live memory, a relation and a forgotten memory in the owner's namespace."""
    fact = body(await owner.call_tool("memory_store", _store(OWNER_FACT)))["id"]
    gone = body(await owner.call_tool("memory_store", _store("Old office wifi is lantern-guest.")))
    body(await owner.call_tool("memory_forget", {"id": gone["id"]}))
    edge = body(
        await owner.call_tool(
            "memory_link",
            {"subject": "grace", "predicate": "owns", "object": "lantern", "src_id": fact},
        )
    )
    return {"fact": fact, "relation": edge["relation"]["id"], "forgotten": gone["id"]}


async def _still_intact(owner: Any, fact: str) -> None:
    got = body(await owner.call_tool("memory_get", {"id": fact}))["memory"]
    assert got["text"] == OWNER_FACT and got["superseded_by"] is None
    found = body(await owner.call_tool("memory_search", {"query": "database password rotates"}))
    assert [r["id"] for r in found["results"]] == [fact]


def test_a_reader_cannot_supersede_what_it_may_only_read(setup):
    async def scenario():
        async with contextlib.AsyncExitStack() as stack:
            env = setup.env(**LIGHT)
            owner = await stack.enter_async_context(mcp_client(["serve"], setup.home, env=env))
            reader = await stack.enter_async_context(
                mcp_client(["serve", "--caller", "reader"], setup.home, env=env)
            )
            ids = await _owner_records(owner)
            # the reader sees the owner's memory (default grant: ro on other namespaces) ...
            seen = body(await reader.call_tool("memory_get", {"id": ids["fact"]}))
            assert seen["memory"]["namespace"] == "user"
            # ... and tries to replace it with its own "correction", one way and the other
            for name, args in [
                (
                    "memory_store",
                    _store("The Lantern password never rotates.", supersedes=[ids["fact"]]),
                ),
                (
                    "memory_store_many",
                    {
                        "source": "from chat",
                        "facts": [
                            {"text": "Reader note one."},
                            {"text": "Lantern passwords are fixed.", "supersedes": [ids["fact"]]},
                        ],
                    },
                ),
            ]:
                refused = error_text(await reader.call_tool(name, args))
                assert "may not write to namespace 'user'" in refused, refused
                assert "affidavit grant reader user rw" in refused
            newest = body(await reader.call_tool("memory_recent", {}))["results"][0]
            assert newest["id"] == ids["fact"]  # nothing of either call was stored
            await _still_intact(owner, ids["fact"])

            # with a write grant the same correction is allowed
            granted = run_cli(["grant", "reader", "user", "rw"], setup.home, env=env)
            assert granted.returncode == 0, granted.stderr
            fixed = body(
                await reader.call_tool(
                    "memory_store",
                    _store("The Lantern password rotates every quarter.", supersedes=[ids["fact"]]),
                )
            )
            assert fixed["superseded"] == [ids["fact"]]

    run(scenario)


def test_a_hidden_id_answers_exactly_like_an_unknown_one_in_every_tool(setup):
    async def scenario():
        async with contextlib.AsyncExitStack() as stack:
            env = setup.env(**LIGHT)
            owner = await stack.enter_async_context(mcp_client(["serve"], setup.home, env=env))
            ids = await _owner_records(owner)
            hidden = run_cli(["grant", "stranger", "user", "none"], setup.home, env=env)
            assert hidden.returncode == 0, hidden.stderr
            stranger = await stack.enter_async_context(
                mcp_client(["serve", "--caller", "stranger"], setup.home, env=env)
            )
            unknown = secrets.token_hex(10)

            def calls(record: str) -> list[tuple[str, dict[str, object]]]:
                return [
                    ("memory_get", {"id": record}),
                    ("memory_forget", {"id": record}),
                    ("memory_forget", {"id": record, "shred": True}),
                    ("memory_unlink", {"relation_id": record}),
                    ("memory_link", {"subject": "a", "predicate": "b", "object": "c",
                                     "src_id": record}),
                    ("memory_store", _store("Passwords never rotate.", supersedes=[record])),
                    ("memory_store_many", {"source": "s", "facts": [
                        {"text": "First stranger note."},
                        {"text": "Passwords never rotate.", "supersedes": [record]},
                    ]}),
                ]  # fmt: skip

            for record in (ids["fact"], ids["relation"], ids["forgotten"]):
                for (name, args), (_, twin) in zip(calls(record), calls(unknown), strict=True):
                    got = error_text(await stranger.call_tool(name, args))
                    expected = error_text(await stranger.call_tool(name, twin))
                    assert got.replace(record, "ID") == expected.replace(unknown, "ID"), name
            assert body(await stranger.call_tool("memory_recent", {}))["results"] == []
            await _still_intact(owner, ids["fact"])
            edges = body(await owner.call_tool("memory_relations", {"entity": "grace"}))
            assert [r["id"] for r in edges["relations"]] == [ids["relation"]]

    run(scenario)
