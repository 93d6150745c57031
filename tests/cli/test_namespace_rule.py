"""One namespace rule for every front-end (ADR 161), and vaults from before it keep working.

The CLI used to store into ``default`` while the memory server stored into the caller's own
namespace. Now the terminal is a caller like any other: ``user`` unless ``--caller`` (or
``AFFIDAVIT_CALLER``) names another, writing where ``serve`` for that caller writes.
"""

from __future__ import annotations

import json
from pathlib import Path

from affidavit.vault import NewItem, Vault
from tests.servers.memory.conftest import LIGHT, VaultSetup, body, run
from tests.support import mcp_client, run_cli
from tests.vault.conftest import TEST_PASSPHRASE


def _json(done) -> dict:
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_old_memories_in_default_stay_readable_and_new_ones_go_to_the_callers_own(
    setup: VaultSetup,
) -> None:
    with Vault.open(setup.path, passphrase=TEST_PASSPHRASE) as vault:  # as an older CLI left it
        old = vault.put(
            NewItem(
                {"text": "The boiler is serviced in October.", "source": "s"}, "memory", "default"
            )
        ).id
    env = setup.env(**LIGHT)

    def cli(*args: str) -> dict:
        return _json(run_cli([*args, "--json"], setup.home, env=env))

    assert cli("get", old)["memory"]["namespace"] == "default"
    assert [h["id"] for h in cli("search", "when is the boiler serviced")["results"]] == [old]
    new = cli("store", "The boiler's code is in the blue folder.", "--source", "s")
    assert new["namespace"] == "user"
    theirs = _json(
        run_cli(
            ["store", "The boiler room key hangs by the door.", "--source", "s", "--json"],
            setup.home,
            env={**env, "AFFIDAVIT_CALLER": "cursor"},
        )
    )
    assert theirs["namespace"] == "cursor"
    listed = {row["name"]: row for row in cli("namespaces")["namespaces"]}
    assert set(listed) == {"default", "user", "cursor"}
    assert listed["default"]["memories"] == 1 and listed["default"]["access"] == "rw"

    async def scenario() -> None:
        async with (
            mcp_client(["serve"], setup.home, env=env) as user,
            mcp_client(["serve", "--caller", "cursor"], setup.home, env=env) as cursor,
        ):
            found = body(await user.call_tool("memory_search", {"query": "boiler serviced"}))
            assert old in [h["id"] for h in found["results"]]  # the old default memory
            mine = body(await user.call_tool("memory_list_namespaces", {}))
            assert mine == cli("namespaces")  # one list, whichever front-end asks
            theirs_listed = body(await cursor.call_tool("memory_list_namespaces", {}))
            assert theirs_listed == cli("namespaces", "--caller", "cursor")
            refused = await cursor.call_tool("memory_forget", {"id": old})
            assert refused.is_error  # cursor reads default, as before, but may not change it

    run(scenario)


def test_a_bad_caller_name_is_one_clear_line(home: Path, cli_vault: dict[str, str]) -> None:
    done = run_cli(["recent", "--caller", "no spaces"], home, env=cli_vault)
    assert done.returncode == 2 and "caller 'no spaces' is not valid" in done.stderr
    assert "Traceback" not in done.stderr
