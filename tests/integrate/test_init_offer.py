"""`affidavit init` offers to wire the MCP clients it finds; `integrate --print` serves the apps
that keep their servers in their own storage. Real CLI processes in a fake HOME."""

from __future__ import annotations

import json
from pathlib import Path

from tests.integrate.conftest import CLIENT_ENV
from tests.support import cli_env, run_cli, run_on_terminal
from tests.vault.conftest import TEST_PASSPHRASE


def _env(home: Path) -> dict[str, str]:
    """The fake home's vault and passphrase; every client location variable inside it."""
    moved = {name: str(home / "elsewhere" / name) for name in CLIENT_ENV}
    moved["XDG_CONFIG_HOME"] = str(home / ".config")
    return {**moved, "AFFIDAVIT_PASSPHRASE": TEST_PASSPHRASE}


def _cursor_and_gemini(home: Path) -> tuple[Path, Path]:
    (home / ".cursor").mkdir()
    gemini = home / ".gemini" / "settings.json"
    gemini.parent.mkdir()
    gemini.write_text('{"theme": "dark"}\n')
    return home / ".cursor" / "mcp.json", gemini


def test_init_integrate_wires_every_client_found_with_the_new_vault(home):
    cursor, gemini = _cursor_and_gemini(home)
    done = run_cli(["init", "--integrate"], home, env=_env(home))
    assert done.returncode == 0, done.stderr
    vault = str(home / ".affidavit" / "vault")
    for path in (cursor, gemini):
        entry = json.loads(path.read_text())["mcpServers"]["affidavit"]
        assert entry["args"][-3:] == ["serve", "--vault", vault]
    assert json.loads(gemini.read_text())["theme"] == "dark"
    assert "cursor: added" in done.stderr and "gemini: added" in done.stderr
    assert TEST_PASSPHRASE not in done.stdout + done.stderr


def test_init_in_a_script_only_says_what_it_found(home):
    cursor, gemini = _cursor_and_gemini(home)
    done = run_cli(["init", "--json"], home, env=_env(home))
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["path"].endswith("vault")  # stdout: the JSON value alone
    assert "found MCP clients: Cursor, Gemini CLI" in done.stderr
    assert "affidavit integrate --all" in done.stderr
    assert not cursor.exists() and gemini.read_text() == '{"theme": "dark"}\n'
    assert run_cli(["integrate", "--all"], home, env=_env(home)).returncode == 0
    assert cursor.exists()


def test_init_no_integrate_leaves_every_client_alone(home):
    cursor, _ = _cursor_and_gemini(home)
    done = run_cli(["init", "--no-integrate"], home, env=_env(home))
    assert done.returncode == 0, done.stderr
    assert "found MCP clients" not in done.stderr and not cursor.exists()


def test_init_on_a_terminal_asks_before_wiring(home):
    cursor, _ = _cursor_and_gemini(home)
    code, screen = run_on_terminal(["init"], cli_env(home, _env(home)), b"[Y/n]:", b"n\r")
    assert code == 0, screen
    assert "Found Cursor, Gemini CLI. Add affidavit's memory server to them?" in screen
    assert not cursor.exists()


def test_init_on_a_terminal_wires_on_yes(home):
    cursor, _ = _cursor_and_gemini(home)
    code, screen = run_on_terminal(["init"], cli_env(home, _env(home)), b"[Y/n]:", b"y\r")
    assert code == 0, screen
    assert "cursor: added" in screen and cursor.exists()


def test_print_gives_the_block_to_paste_and_writes_nothing(home):
    before = sorted(p.relative_to(home) for p in home.rglob("*"))
    done = run_cli(["integrate", "--print", "--caller", "chatbox"], home, env=_env(home))
    assert done.returncode == 0, done.stderr
    entry = json.loads(done.stdout)["mcpServers"]["affidavit"]
    assert Path(entry["command"]).is_absolute()
    assert entry["args"][:3] == ["serve", "--caller", "chatbox"]
    assert sorted(p.relative_to(home) for p in home.rglob("*")) == before


def test_print_with_a_client_is_a_usage_error(home):
    done = run_cli(["integrate", "--print", "cursor"], home, env=_env(home))
    assert done.returncode == 2 and "--print" in done.stderr


def test_init_offers_only_the_clients_not_wired_yet(home):
    cursor, _ = _cursor_and_gemini(home)
    assert run_cli(["integrate", "cursor"], home, env=_env(home)).returncode == 0
    wired = cursor.read_bytes()
    done = run_cli(["init", "--integrate"], home, env=_env(home))
    assert done.returncode == 0, done.stderr
    assert "gemini: added" in done.stderr and "cursor:" not in done.stderr
    assert cursor.read_bytes() == wired
