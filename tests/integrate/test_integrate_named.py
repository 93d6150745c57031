"""``integrate --pack`` / ``--proxy`` / ``--remove --name``: more than one affidavit entry per
file, each with its own backups, each started for real from what the config now says."""

from __future__ import annotations

import os
from pathlib import Path

import anyio
import pytest
from mcp import Client, StdioServerParameters

from affidavit.integrate import install
from affidavit.integrate.clients import BY_KEY, CLIENTS
from tests.packs.conftest import write_pack
from tests.support import PYTHON, run_cli

CURSOR = """{
  // mine
  "mcpServers": {
    "git": {"command": "uvx", "args": ["mcp-server-git"], "env": {"GH_TOKEN": "tok-1"}}
  }
}
"""
MINIMAL_ENV = ("LOGNAME", "PATH", "SHELL", "TERM", "USER")


def _servers(config: Path) -> dict:
    return BY_KEY["cursor"].load(config.read_text()).servers()


def _tools(entry: dict, home: Path) -> list[str]:
    """Start the server exactly as the config says, as a client would, and list its tools."""
    env = {k: os.environ.get(k, "") for k in MINIMAL_ENV} | {
        "HOME": str(home),
        "AFFIDAVIT_HOME": str(home / ".affidavit"),
    }
    params = StdioServerParameters(command=entry["command"], args=entry["args"], env=env)

    async def run() -> list[str]:
        async with Client(params) as client:  # type: ignore[arg-type]
            return sorted(t.name for t in (await client.list_tools()).tools)

    return anyio.run(run)


@pytest.fixture
def cursor(home: Path) -> Path:
    config = home / ".cursor" / "mcp.json"
    config.parent.mkdir()
    config.write_text(CURSOR)
    return config


def test_a_pack_is_verified_wired_started_and_removed_byte_for_byte(home, cursor, tmp_path):
    pack = write_pack(tmp_path / "Garden Notes")
    done = run_cli(["integrate", "cursor", "--pack", str(pack)], home)
    assert done.returncode == 0, done.stderr
    entry = _servers(cursor)["pack-Garden-Notes"]
    assert entry["args"][-4:] == ["pack", "serve", "--pack", str(pack)]
    assert _tools(entry, home) == ["verified_memory_get", "verified_memory_search"]

    again = run_cli(["integrate", "cursor", "--pack", str(pack)], home)
    assert "unchanged" in again.stdout
    gone = run_cli(["integrate", "--remove", "cursor", "--name", "pack-Garden-Notes"], home)
    assert gone.returncode == 0, gone.stderr
    assert "restored" in gone.stdout and cursor.read_text() == CURSOR


def test_trust_flags_go_to_the_entry_and_a_pack_that_fails_them_is_not_wired(
    home, cursor, tmp_path
):
    pack = write_pack(tmp_path / "p")
    refused = run_cli(["integrate", "cursor", "--pack", str(pack), "--", "--strict"], home)
    assert refused.returncode != 0 and "Traceback" not in refused.stderr
    assert refused.stderr.count("\n") == 1
    assert cursor.read_text() == CURSOR
    tampered = write_pack(tmp_path / "t")
    (tampered / "MEMORY.md").write_text("changed after sealing\n")
    bad = run_cli(["integrate", "cursor", "--pack", str(tampered)], home)
    assert bad.returncode != 0 and "Traceback" not in bad.stderr
    assert cursor.read_text() == CURSOR
    unknown = run_cli(["integrate", "cursor", "--pack", str(pack), "--", "--bogus"], home)
    assert unknown.returncode == 2 and "--bogus" in unknown.stderr


def test_a_proxied_server_starts_through_the_proxy(home, cursor, tmp_path):
    pack = write_pack(tmp_path / "p")
    backend = [PYTHON, "-m", "affidavit", "pack", "serve", "--pack", str(pack)]
    done = run_cli(["integrate", "cursor", "--proxy", "--name", "packs", "--", *backend], home)
    assert done.returncode == 0, done.stderr
    entry = _servers(cursor)["packs"]
    sub = entry["args"][entry["args"].index("proxy") :]
    assert sub[:2] == ["proxy", "--receipts"] and sub[sub.index("--") + 1 :] == backend
    assert _tools(entry, home) == ["verified_memory_get", "verified_memory_search"]
    assert _servers(cursor)["git"]["env"] == {"GH_TOKEN": "tok-1"}


def test_three_entries_come_out_one_by_one_back_to_the_original_bytes(home, cursor, tmp_path):
    pack = write_pack(tmp_path / "p")
    steps = [
        ["integrate", "cursor"],
        ["integrate", "cursor", "--pack", str(pack), "--name", "facts"],
        ["integrate", "cursor", "--proxy", "--name", "echo", "--", "/bin/cat"],
    ]
    for step in steps:
        assert run_cli(step, home).returncode == 0
    assert set(_servers(cursor)) == {"git", "affidavit", "facts", "echo"}
    # Out of order: the middle one first (its backup would undo "echo"), so only it goes.
    middle = run_cli(["integrate", "--remove", "cursor", "--name", "facts"], home)
    assert "removed only the facts entry" in middle.stdout
    assert set(_servers(cursor)) == {"git", "affidavit", "echo"}
    for name in ("echo", "affidavit"):
        assert run_cli(["integrate", "--remove", "cursor", "--name", name], home).returncode == 0
    assert set(_servers(cursor)) == {"git"}
    assert "// mine" in cursor.read_text()


def test_a_name_that_is_not_affidavits_is_never_taken_or_removed(home, cursor):
    taken = run_cli(["integrate", "cursor", "--proxy", "--name", "git", "--", "/bin/cat"], home)
    assert taken.returncode != 0 and "not affidavit's" in taken.stderr
    kept = run_cli(["integrate", "--remove", "cursor", "--name", "git"], home)
    assert kept.returncode != 0 and "not affidavit's" in kept.stderr
    assert cursor.read_text() == CURSOR


@pytest.mark.parametrize(
    "args",
    [
        ["integrate", "cursor", "--proxy", "--", "/bin/cat"],
        ["integrate", "cursor", "--proxy", "--name", "x"],
        ["integrate", "cursor", "--proxy", "--name", "bad name", "--", "/bin/cat"],
        ["integrate", "cursor", "--proxy", "--name", "x", "--caller", "a", "--", "/bin/cat"],
        ["integrate", "cursor", "--pack", "/", "--proxy", "--name", "x"],  # a path that exists
        ["integrate", "cursor", "--name", "x"],
        ["integrate", "cursor", "--", "/bin/cat"],
        ["integrate", "--remove", "cursor", "--name", "../x"],
    ],
)
def test_usage_errors_are_one_line_and_write_nothing(home, cursor, args):
    result = run_cli(args, home)
    assert result.returncode == 2, (args, result.stderr)
    assert result.stderr.startswith("affidavit: error:") and "Traceback" not in result.stderr
    assert cursor.read_text() == CURSOR


@pytest.mark.parametrize("c", CLIENTS, ids=lambda c: c.key)
def test_every_client_keeps_its_other_servers_byte_for_byte(c, fake_home):
    """A config that already holds another server, in the client's own format: add the
    memory server and a proxied one, add again (no change), remove both: the same bytes."""
    path = c.config_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    original = c.snippet("other", "/usr/bin/other-server", ["--flag"]).encode()
    path.write_bytes(original)
    memory = install.memory_entry(None, fake_home / "v")
    proxied = install.proxy_entry("fronted", ["/usr/bin/other-server", "--flag"])
    for entry in (memory, proxied):
        assert install.add(c, entry).action == "added"
    for entry in (memory, proxied):
        assert install.add(c, entry).action == "unchanged"
    names = set(c.load(path.read_text()).servers())
    assert names == {"other", "affidavit", "fronted"}
    assert install.remove(c, "fronted").action == "restored"
    assert install.remove(c).action == "restored"
    assert path.read_bytes() == original


def test_all_with_proxy_takes_the_whole_command_after_the_dashes(home, cursor):
    (home / ".kiro" / "settings").mkdir(parents=True)
    done = run_cli(
        ["integrate", "--all", "--proxy", "--name", "echo", "--", "/bin/cat", "-u"], home
    )
    assert done.returncode == 0, done.stderr
    assert sorted(line.split(":")[0] for line in done.stdout.splitlines()) == ["cursor", "kiro"]
    args = _servers(cursor)["echo"]["args"]
    assert args[args.index("--") + 1 :] == ["/bin/cat", "-u"]
