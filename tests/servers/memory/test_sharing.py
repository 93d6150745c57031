"""Several agents on one vault: cross-server visibility, caller grants, locked vault, lock."""

from __future__ import annotations

import contextlib

import pytest
from mcp.shared.exceptions import MCPError

from affidavit.access import unlock_gate
from affidavit.recall import Claim
from affidavit.vault import Vault
from tests.servers.memory.conftest import LIGHT, body, error_text, run
from tests.support import mcp_client, run_cli
from tests.vault.conftest import TEST_PASSPHRASE


def _store(text: str, **extra: object) -> dict[str, object]:
    return {"text": text, "source": "from chat", **extra}


def test_a_memory_stored_through_one_server_is_found_by_the_other(setup):
    async def scenario():
        async with contextlib.AsyncExitStack() as stack:
            user = await stack.enter_async_context(
                mcp_client(["serve"], setup.home, env=setup.env())
            )
            cursor = await stack.enter_async_context(
                mcp_client(["serve", "--caller", "cursor"], setup.home, env=setup.env())
            )
            # both servers are up and indexed before either writes
            assert body(await user.call_tool("memory_search", {"query": "deploy"}))["results"] == []
            assert (
                body(await cursor.call_tool("memory_search", {"query": "deploy"}))["results"] == []
            )

            made = body(
                await cursor.call_tool(
                    "memory_store", _store("Deploys of Lantern go out on Tuesdays after 14:00.")
                )
            )
            assert made["namespace"] == "cursor"
            seen = body(await user.call_tool("memory_search", {"query": "when do we deploy"}))
            assert [r["id"] for r in seen["results"]] == [made["id"]]

            mine = body(
                await user.call_tool("memory_store", _store("Grace approves every Lantern deploy."))
            )
            back = body(await cursor.call_tool("memory_search", {"query": "who approves deploys"}))
            assert mine["id"] in [r["id"] for r in back["results"]]

            # default grants: another caller reads the user's namespace but cannot write it
            denied = await cursor.call_tool("memory_store", _store("x y z", namespace="user"))
            assert "affidavit grant cursor user rw" in error_text(denied)
            denied = await cursor.call_tool("memory_forget", {"id": mine["id"]})
            assert "may not write" in error_text(denied)
            spaces = body(await cursor.call_tool("memory_list_namespaces", {}))
            assert {(n["name"], n["access"]) for n in spaces["namespaces"]} == {
                ("cursor", "rw"),
                ("user", "ro"),
            }

    run(scenario)


def test_grants_are_sealed_set_by_the_cli_and_apply_to_a_running_server(setup):
    async def scenario():
        async with mcp_client(
            ["serve", "--caller", "scratch"], setup.home, env=setup.env(**LIGHT)
        ) as scratch:
            with Vault.open(setup.path, passphrase=TEST_PASSPHRASE) as v:
                from affidavit.recall.memory import Memory

                secret = Memory(v).store(
                    Claim(
                        text="The payroll export runs on the 25th.",
                        source="from chat",
                        namespace="user",
                    ),
                )
            found = body(await scratch.call_tool("memory_search", {"query": "payroll export"}))
            assert [r["id"] for r in found["results"]] == [secret["id"]]

            cli = run_cli(["grant", "scratch", "*", "ro"], setup.home, env=setup.env())
            assert cli.returncode == 0, cli.stderr
            refused = await scratch.call_tool("memory_store", _store("Scratch note one."))
            assert "access: ro" in error_text(refused)

            cli = run_cli(["grant", "scratch", "user", "none"], setup.home, env=setup.env())
            assert cli.returncode == 0, cli.stderr
            hidden = body(await scratch.call_tool("memory_search", {"query": "payroll export"}))
            assert hidden["results"] == []
            assert "no record" in error_text(
                await scratch.call_tool("memory_get", {"id": secret["id"]})
            )
            named = await scratch.call_tool(
                "memory_search", {"query": "payroll", "namespace": "user"}
            )
            assert "no access" in error_text(named)
            spaces = body(await scratch.call_tool("memory_list_namespaces", {}))
            assert "user" not in {n["name"] for n in spaces["namespaces"]}

        listing = run_cli(["grant", "--list", "--json"], setup.home, env=setup.env())
        assert listing.returncode == 0, listing.stderr
        assert '"scratch"' in listing.stdout and '"none"' in listing.stdout
        bad = run_cli(["grant", "scratch", "user", "write"], setup.home, env=setup.env())
        assert bad.returncode == 2 and "'rw', 'ro', 'none'" in bad.stderr
        for file in setup.path.rglob("*"):  # nothing about grants is readable on disk
            if file.is_file():
                data = file.read_bytes()
                assert b"scratch" not in data and b"acl.grants" not in data, file

    run(scenario)


def test_a_locked_vault_answers_one_clear_error_and_unlock_is_off_by_default(setup):
    async def scenario():
        env = setup.env(passphrase=None, **LIGHT)
        async with mcp_client(["serve"], setup.home, env=env) as client:
            status = body(await client.call_tool("memory_status", {}))
            assert status["locked"] is True and "affidavit unlock" in status["hint"]
            for name, args in [
                ("memory_search", {"query": "anything"}),
                ("memory_store", _store("A claim.")),
                ("memory_recent", {}),
                ("memory_list_namespaces", {}),
            ]:
                assert "run `affidavit unlock`" in error_text(await client.call_tool(name, args))
            assert body(await client.call_tool("memory_lock", {})) == {
                "locked": True,
                "failures": [],
            }
            with pytest.raises(MCPError, match="Unknown tool: memory_unlock") as refused:
                await client.call_tool("memory_unlock", {"passphrase": TEST_PASSPHRASE})
            assert TEST_PASSPHRASE not in str(refused.value)
            assert body(await client.call_tool("memory_status", {}))["locked"] is True

        with Vault.open(setup.path, passphrase=TEST_PASSPHRASE) as v:
            unlock_gate.set_unlock_tool(v, True)
        async with mcp_client(["serve"], setup.home, env=env) as client:
            wrong = await client.call_tool("memory_unlock", {"passphrase": "not it at all"})
            assert "not it at all" not in error_text(wrong)
            opened = body(await client.call_tool("memory_unlock", {"passphrase": TEST_PASSPHRASE}))
            assert opened == {"locked": False}
            assert body(await client.call_tool("memory_store", _store("Unlocked by tool.")))[
                "stored"
            ]

    run(scenario)


def test_memory_lock_ends_the_session_for_every_server(setup):
    with Vault.open(setup.path, passphrase=TEST_PASSPHRASE) as v:
        credential = v.start_session()

    async def scenario():
        env = setup.env(passphrase=None, **LIGHT)
        async with contextlib.AsyncExitStack() as stack:
            first = await stack.enter_async_context(mcp_client(["serve"], setup.home, env=env))
            second = await stack.enter_async_context(mcp_client(["serve"], setup.home, env=env))
            body(await first.call_tool("memory_store", _store("Session unlock works.")))
            assert body(await second.call_tool("memory_status", {}))["memories"] == 1
            assert body(await first.call_tool("memory_lock", {})) == {
                "locked": True,
                "failures": [],
            }
            assert not credential.exists()
            locked = await second.call_tool("memory_search", {"query": "session"})
            assert "affidavit unlock" in error_text(locked)
            assert "affidavit unlock" in error_text(await first.call_tool("memory_recent", {}))

    run(scenario)


def test_a_panic_lock_sticks_even_when_the_passphrase_came_from_the_environment(setup):
    async def scenario():
        async with mcp_client(["serve"], setup.home, env=setup.env(**LIGHT)) as client:
            body(await client.call_tool("memory_store", _store("Opened by AFFIDAVIT_PASSPHRASE.")))
            assert body(await client.call_tool("memory_lock", {}))["locked"] is True
            after = await client.call_tool("memory_recent", {})
            assert "affidavit unlock" in error_text(after)
            assert body(await client.call_tool("memory_status", {}))["locked"] is True

    run(scenario)
