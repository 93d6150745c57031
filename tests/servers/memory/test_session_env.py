"""`affidavit unlock` in a desktop terminal reaches a server an MCP client starts bare.

A terminal has XDG_RUNTIME_DIR and the rest of a desktop session's environment; an MCP client
starts `affidavit serve` with exactly HOME, LOGNAME, PATH, SHELL, TERM and USER. Both must find
the same unlock session. These tests use the machine's real session location (nothing points
it elsewhere) and lock again at the end, so nothing is left behind.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from mcp import Client, StdioServerParameters

from affidavit.vault import session_dir
from tests.servers.memory.conftest import body, error_text, run
from tests.support import PYTHON, run_cli
from tests.vault.conftest import TEST_PASSPHRASE, create_test_vault

MINIMAL = ("HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER")
PLAINTEXT_KEYRING = "keyrings.alt.file.PlaintextKeyring"


def minimal_env(home: Path) -> dict[str, str]:
    """Exactly what an MCP client passes to a server it starts (HOME is the test's)."""
    env = {name: os.environ.get(name, "") for name in MINIMAL}
    env["HOME"] = str(home)
    return env


def bare_server(home: Path) -> Client:
    """`affidavit serve` as an MCP client starts it: the minimal environment and nothing else."""
    params = StdioServerParameters(
        command=PYTHON, args=["-m", "affidavit", "serve"], env=minimal_env(home)
    )
    return Client(params)


@pytest.fixture
def desktop(home: Path, tmp_path: Path) -> Iterator[dict[str, str]]:
    """A vault in the default place of ``home`` and a desktop terminal's environment for it.

    The terminal has its own XDG_RUNTIME_DIR (as /run/user/<uid> is on a desktop). The
    vault is locked again afterwards whatever the test did.
    """
    create_test_vault(home / ".affidavit" / "vault").close()
    xdg = tmp_path / "xdg-runtime"
    xdg.mkdir(mode=0o700)
    terminal = {
        "XDG_RUNTIME_DIR": str(xdg),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_DATA_HOME": str(home / ".local" / "share"),
        "AFFIDAVIT_HOME": str(home / ".affidavit"),
    }
    stored = run_cli(
        ["store", "The Lantern staging database listens on port 5433.", "--source", "t"],
        home,
        env={**terminal, "AFFIDAVIT_PASSPHRASE": TEST_PASSPHRASE},
    )
    assert stored.returncode == 0, stored.stderr
    yield terminal
    run_cli(["lock"], home, env=terminal)


def _unlock(home: Path, terminal: dict[str, str], *args: str) -> None:
    done = run_cli(
        ["unlock", *args], home, env={**terminal, "AFFIDAVIT_PASSPHRASE": TEST_PASSPHRASE}
    )
    assert done.returncode == 0, done.stderr


async def _lock_reaches(client: Client, home: Path, terminal: dict[str, str]) -> None:
    """`affidavit lock` in the terminal; the server's next call must answer locked."""
    assert run_cli(["lock"], home, env=terminal).returncode == 0
    refused = await client.call_tool("memory_search", {"query": "staging database"})
    assert "locked" in error_text(refused)


async def _search(client: Client) -> list[str]:
    found = body(await client.call_tool("memory_search", {"query": "staging database port"}))
    return [r["text"] for r in found["results"]]


def test_a_terminal_unlock_opens_the_vault_for_a_server_with_the_minimal_environment(
    home: Path, desktop: dict[str, str]
) -> None:
    _unlock(home, desktop)
    assert "AFFIDAVIT_HOME" not in minimal_env(home)

    async def scenario() -> None:
        async with bare_server(home) as client:
            assert await _search(client) == ["The Lantern staging database listens on port 5433."]
            status = body(await client.call_tool("memory_status", {}))
            assert status["locked"] is False

    run(scenario)


def test_lock_in_the_terminal_reaches_the_bare_server(home: Path, desktop: dict[str, str]) -> None:
    _unlock(home, desktop)

    async def scenario() -> None:
        async with bare_server(home) as client:
            assert await _search(client)
            await _lock_reaches(client, home, desktop)

    run(scenario)


def test_a_one_time_unlock_is_taken_by_the_server_which_keeps_it_and_nobody_else(
    home: Path, desktop: dict[str, str]
) -> None:
    _unlock(home, desktop, "--once")

    async def scenario() -> None:
        async with bare_server(home) as client:
            assert await _search(client)
            assert await _search(client)  # the server keeps what it took
            after = run_cli(["search", "staging database"], home, env=desktop)
            assert after.returncode == 6 and "locked" in after.stderr
            await _lock_reaches(client, home, desktop)

    run(scenario)


def test_the_os_keyring_store_also_reaches_the_bare_server(
    home: Path, desktop: dict[str, str]
) -> None:
    """The keyring is chosen the way a user configures it: keyringrc.cfg in the home folder."""
    config = home / ".config" / "python_keyring" / "keyringrc.cfg"
    config.parent.mkdir(parents=True)
    config.write_text(f"[backend]\ndefault-keyring = {PLAINTEXT_KEYRING}\n")
    _unlock(home, desktop, "--store", "keyring")
    status = json.loads(run_cli(["status", "--json"], home, env=desktop).stdout)
    assert status["state"] == "unlocked" and status["store"] == "keyring"
    keyring_file = home / ".local" / "share" / "python_keyring" / "keyring_pass.cfg"
    assert status["vault_id"] in keyring_file.read_text()  # the entry is named by the vault
    private = session_dir.private_dir(create=False)
    assert private is not None
    token = private / f"{status['vault_id']}.session"
    assert token.stat().st_size == 17  # a tag and the session id: the secret is not here

    async def scenario() -> None:
        async with bare_server(home) as client:
            assert await _search(client)

    run(scenario)
    assert run_cli(["lock"], home, env=desktop).returncode == 0
    assert status["vault_id"] not in keyring_file.read_text()
    assert not token.exists()


def test_the_environment_of_the_test_is_the_one_a_client_gives() -> None:
    """Guard for the tests above: the SDK adds nothing to the environment it is given."""
    from mcp.client.stdio import get_default_environment

    assert set(get_default_environment()) <= set(MINIMAL)
