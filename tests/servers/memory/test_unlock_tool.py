"""memory_unlock is no passphrase oracle: hidden while disabled, slowed down while enabled."""

from __future__ import annotations

import json

import pytest
from mcp.shared.exceptions import MCPError

from tests.servers.memory.conftest import LIGHT, body, error_text, run
from tests.support import mcp_client, run_cli
from tests.vault.conftest import TEST_PASSPHRASE

GATE = "unlock-tool.json"


async def _refusal(client, name: str, arguments: dict[str, str]) -> tuple[int, str]:
    with pytest.raises(MCPError) as caught:
        await client.call_tool(name, arguments)
    return caught.value.code, caught.value.error.message.replace(name, "NAME")


def test_a_disabled_memory_unlock_is_unlisted_and_answers_exactly_like_an_unknown_tool(setup):
    async def scenario():
        env = setup.env(passphrase=None, **LIGHT)
        async with mcp_client(["serve"], setup.home, env=env) as client:
            names = {tool.name for tool in (await client.list_tools()).tools}
            assert "memory_unlock" not in names and "memory_lock" in names
            unknown = await _refusal(client, "memory_no_such_tool", {"passphrase": "x"})
            right = await _refusal(client, "memory_unlock", {"passphrase": TEST_PASSPHRASE})
            wrong = await _refusal(client, "memory_unlock", {"passphrase": "not it at all"})
            assert right == wrong == unknown
            assert body(await client.call_tool("memory_status", {}))["locked"] is True

    run(scenario)


def test_an_unlock_tool_disabled_after_the_server_started_disappears_from_it(setup):
    assert run_cli(["unlock-tool", "enable"], setup.home, env=setup.env()).returncode == 0

    async def scenario():
        env = setup.env(passphrase=None, **LIGHT)
        async with mcp_client(["serve"], setup.home, env=env) as client:
            names = {tool.name for tool in (await client.list_tools()).tools}
            assert "memory_unlock" in names
            assert run_cli(["unlock-tool", "disable"], setup.home, env=setup.env()).returncode == 0
            names = {tool.name for tool in (await client.list_tools()).tools}
            assert "memory_unlock" not in names
            unknown = await _refusal(client, "memory_no_such_tool", {})
            assert await _refusal(client, "memory_unlock", {"passphrase": "x"}) == unknown

    run(scenario)


def test_wrong_passphrases_pause_memory_unlock_across_server_restarts(setup):
    assert run_cli(["unlock-tool", "enable"], setup.home, env=setup.env()).returncode == 0
    env = setup.env(passphrase=None, **LIGHT)

    async def guesses():
        async with mcp_client(["serve"], setup.home, env=env) as client:
            for guess in ("guess one", "guess two", "guess three"):
                wrong = error_text(await client.call_tool("memory_unlock", {"passphrase": guess}))
                assert "wrong passphrase" in wrong and guess not in wrong
            paused = error_text(
                await client.call_tool("memory_unlock", {"passphrase": TEST_PASSPHRASE})
            )
            assert "paused" in paused and "affidavit unlock" in paused
            assert TEST_PASSPHRASE not in paused

    async def after_restart():
        async with mcp_client(["serve"], setup.home, env=env) as client:
            paused = error_text(
                await client.call_tool("memory_unlock", {"passphrase": TEST_PASSPHRASE})
            )
            assert "paused" in paused
            assert body(await client.call_tool("memory_status", {}))["locked"] is True

    run(guesses)
    run(after_restart)

    gate = setup.path / GATE
    state = json.loads(gate.read_text())
    assert state["failures"] == 3 and gate.stat().st_mode & 0o777 == 0o600
    state["last_failure"] -= 3600  # an hour passes
    gate.write_text(json.dumps(state))

    async def later():
        async with mcp_client(["serve"], setup.home, env=env) as client:
            opened = body(await client.call_tool("memory_unlock", {"passphrase": TEST_PASSPHRASE}))
            assert opened == {"locked": False}

    run(later)
    assert json.loads(gate.read_text())["failures"] == 0
