"""A captured candidate is invisible to the memory server's tools until a person accepts it."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from tests.intake.conftest import LIGHT, line
from tests.servers.memory.conftest import VaultSetup, body, error_text, run, setup  # noqa: F401
from tests.support import mcp_client, run_cli


def test_memory_search_and_get_do_not_return_a_candidate_until_accepted(
    setup: VaultSetup,  # noqa: F811
    transcript: Callable[..., Path],
) -> None:
    env = setup.env(**LIGHT)
    path = transcript(line("user", "The Lantern staging database listens on port 5433."))
    event = json.dumps({"transcript_path": str(path)})
    assert run_cli(["hook", "run", "claude-code"], setup.home, env=env, input=event).returncode == 0
    (candidate,) = json.loads(run_cli(["review", "--json"], setup.home, env=env).stdout)[
        "candidates"
    ]

    async def search(query: str) -> list[str]:
        async with mcp_client(["serve"], setup.home, env=env) as client:
            found = body(await client.call_tool("memory_search", {"query": query}))
            recent = body(await client.call_tool("memory_recent", {"limit": 10}))
            got = await client.call_tool("memory_get", {"id": candidate["id"]})
            if candidate["id"] not in [r["id"] for r in found["results"]]:
                error = error_text(got)  # an error that quotes nothing of the candidate
                assert "staging" not in error and "relations" not in error
            return [r["text"] for r in found["results"]] + [r["text"] for r in recent["results"]]

    async def before() -> None:
        assert await search("staging database port") == []

    run(before)
    accepted = run_cli(["review", "accept", candidate["id"], "--json"], setup.home, env=env)
    assert json.loads(accepted.stdout)["stored"] is True

    async def after() -> None:
        texts = await search("staging database port")
        assert texts == [candidate["text"]] * 2  # found by search and listed by recent

    run(after)
