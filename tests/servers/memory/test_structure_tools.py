"""Conversation structure and the duplicate rule through the MCP tools (issue 13, 1 and 3)."""

from __future__ import annotations

from tests.servers.memory.conftest import LIGHT, body, error_text, run
from tests.support import mcp_client


def test_a_thread_is_stored_shown_and_checked(setup):
    async def scenario():
        async with mcp_client(["serve"], setup.home, env=setup.env(**LIGHT)) as client:
            asked = body(
                await client.call_tool(
                    "memory_store",
                    {"text": "Where is the kestrel offsite?", "source": "chat", "thread": "c1"},
                )
            )
            reply = body(
                await client.call_tool(
                    "memory_store",
                    {
                        "text": "In Porto, by the river.",
                        "source": "chat",
                        "thread": "c1",
                        "turn": 2,
                        "reply_to": asked["id"],
                    },
                )
            )
            assert reply["stored"] is True
            got = body(await client.call_tool("memory_get", {"id": reply["id"]}))
            shown = got["memory"]
            assert (shown["thread"], shown["turn"], shown["reply_to"]) == ("c1", 2, asked["id"])
            found = body(await client.call_tool("memory_search", {"query": "kestrel offsite"}))
            assert found["results"][0]["thread"] == "c1"
            for args, needle in [
                ({"turn": 3}, "turn need a thread"),
                ({"reply_to": asked["id"]}, "reply_to need a thread"),
                ({"thread": "has spaces"}, "thread"),
                ({"thread": "c1", "turn": -1}, "turn"),
            ]:
                bad = await client.call_tool(
                    "memory_store", {"text": "Porto it is.", "source": "chat", **args}
                )
                assert needle in error_text(bad), args

    run(scenario)


def test_swapped_roles_are_two_memories(setup):
    async def scenario():
        async with mcp_client(["serve"], setup.home, env=setup.env()) as client:
            done = body(
                await client.call_tool(
                    "memory_store_many",
                    {
                        "facts": [
                            {"text": "Move the cache from disk to memory"},
                            {"text": "Move the cache from memory to disk"},
                        ],
                        "source": "chat",
                    },
                )
            )
            assert [r["status"] for r in done["results"]] == ["stored", "stored"]
            again = body(
                await client.call_tool(
                    "memory_store", {"text": "move the cache from disk to memory.", "source": "s"}
                )
            )
            assert again["status"] == "duplicate"
            assert again["id"] == done["results"][0]["id"]

    run(scenario)
