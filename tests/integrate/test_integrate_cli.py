"""``affidavit integrate`` as a user runs it: a real subprocess in a fake HOME."""

from __future__ import annotations

import json
import os
from pathlib import Path

from tests.support import run_cli

CURSOR = """{
  // my servers
  "mcpServers": {
    "git": {"command": "uvx", "args": ["mcp-server-git"], "env": {"GH_TOKEN": "tok-123"}}
  },
  "other": true
}
"""


def _state(home: Path) -> list[dict]:
    return json.loads((home / ".affidavit" / "integrate" / "state.json").read_text())


def test_integrate_merges_backs_up_byte_exact_and_removes(home):
    config = home / ".cursor" / "mcp.json"
    config.parent.mkdir()
    config.write_text(CURSOR)
    config.chmod(0o640)

    result = run_cli(["integrate", "cursor"], home)
    assert result.returncode == 0, result.stderr
    assert "cursor: added" in result.stdout
    text = config.read_text()
    assert text.startswith('{\n  // my servers\n  "mcpServers": {\n    "git": {"command": "uvx"')
    assert '"other": true' in text
    assert oct(config.stat().st_mode & 0o777) == "0o640"

    (record,) = _state(home)
    backup = Path(record["backup"])
    assert backup.read_bytes() == CURSOR.encode()
    assert oct(backup.stat().st_mode & 0o777) == "0o600"
    assert oct(backup.parent.stat().st_mode & 0o777) == "0o700"

    removed = run_cli(["integrate", "--remove", "cursor"], home)
    assert removed.returncode == 0, removed.stderr
    assert "restored" in removed.stdout
    assert config.read_bytes() == CURSOR.encode()


def test_remove_after_a_user_edit_keeps_the_edit(home):
    config = home / ".gemini" / "settings.json"
    config.parent.mkdir()
    config.write_text('{"theme": "dark"}\n')
    assert run_cli(["integrate", "gemini"], home).returncode == 0
    data = json.loads(config.read_text())
    data["theme"] = "light"
    config.write_text(json.dumps(data, indent=2))

    removed = run_cli(["integrate", "--remove", "gemini"], home)
    assert removed.returncode == 0, removed.stderr
    assert "removed only the affidavit entry" in removed.stdout
    assert json.loads(config.read_text()) == {"theme": "light", "mcpServers": {}}


def test_an_unparsable_file_is_refused_untouched_with_a_block_to_paste(home):
    config = home / ".codeium" / "windsurf" / "mcp_config.json"
    config.parent.mkdir(parents=True)
    broken = '{"mcpServers": {"a": {"command": "x",}\n'
    config.write_text(broken)
    result = run_cli(["integrate", "windsurf"], home)
    assert result.returncode == 2
    assert result.stderr.count("\n") == 1 and "Traceback" not in result.stderr
    assert "left it untouched" in result.stderr and "line 2" in result.stderr
    pasted = json.loads(result.stdout.split("\n", 1)[1])
    vault = str(home / ".affidavit" / "vault")
    assert pasted["mcpServers"]["affidavit"]["args"] == ["serve", "--vault", vault]
    assert config.read_text() == broken
    assert not (home / ".affidavit" / "integrate" / "backups").exists()


def test_dry_run_writes_nothing(home):
    config = home / ".lmstudio" / "mcp.json"
    config.parent.mkdir()
    original = '{"mcpServers": {"gh": {"command": "gh-mcp", "env": {"GH_TOKEN": "tok-999"}}}}'
    config.write_text(original)
    result = run_cli(["integrate", "lmstudio", "--dry-run"], home)
    assert result.returncode == 0, result.stderr
    assert "would be added" in result.stdout and '"affidavit"' in result.stdout
    assert "tok-999" not in result.stdout  # only our entry is shown, never others' secrets
    assert config.read_text() == original
    assert not (home / ".affidavit" / "integrate" / "state.json").exists()


def test_all_wires_only_clients_installed_here_and_list_shows_every_one(home):
    (home / ".cursor").mkdir()
    (home / ".codex").mkdir()
    result = run_cli(["integrate", "--all"], home)
    assert result.returncode == 0, result.stderr
    assert sorted(line.split(":")[0] for line in result.stdout.splitlines()) == [
        "codex",
        "cursor",
    ]
    assert (home / ".codex" / "config.toml").read_text().startswith("[mcp_servers.affidavit]")
    assert not (home / ".gemini").exists()

    listing = run_cli(["integrate", "--list"], home, env={"COLUMNS": "200"})
    assert listing.returncode == 0
    for key in ("claude-code", "claude-desktop", "vscode", "zed", "cline", "goose", "continue"):
        assert key in listing.stdout


def test_a_symlinked_config_is_written_through_the_link(home):
    real = home / "dotfiles" / "settings.json"
    real.parent.mkdir()
    real.write_text("{}\n")
    link = home / ".gemini" / "settings.json"
    link.parent.mkdir()
    link.symlink_to(real)
    assert run_cli(["integrate", "gemini"], home).returncode == 0
    assert link.is_symlink()
    assert "affidavit" in json.loads(real.read_text())["mcpServers"]


def test_usage_errors_are_one_line(home):
    for args in (
        ["integrate"],
        ["integrate", "nope"],
        ["integrate", "cursor", "--all"],
        ["integrate", "cursor", "--caller", "two words"],
    ):
        result = run_cli(args, home)
        assert result.returncode == 2, (args, result.stderr)
        assert result.stderr.startswith("affidavit: error:") and "Traceback" not in result.stderr


def test_the_written_command_really_starts_affidavit(home):
    (home / ".cursor").mkdir()
    assert run_cli(["integrate", "cursor"], home).returncode == 0
    entry = json.loads((home / ".cursor" / "mcp.json").read_text())["mcpServers"]["affidavit"]
    assert os.path.isabs(entry["command"]) and os.access(entry["command"], os.X_OK)


def test_all_keeps_going_past_a_broken_file_and_fails_at_the_end(home):
    (home / ".cursor").mkdir()
    (home / ".gemini").mkdir()
    (home / ".gemini" / "settings.json").write_text("{not json")
    result = run_cli(["integrate", "--all"], home)
    assert result.returncode == 2
    assert "cursor: added" in result.stdout
    assert "# Gemini CLI: add this to" in result.stdout
    assert "gemini:" in result.stderr and "some clients" in result.stderr
    assert (home / ".gemini" / "settings.json").read_text() == "{not json"
    assert "affidavit" in json.loads((home / ".cursor" / "mcp.json").read_text())["mcpServers"]


MINIMAL_ENV = ("HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER")
"""What MCP clients pass to the servers they start; nothing of the shell's AFFIDAVIT_* arrives."""


def test_integrate_follows_affidavit_vault_and_says_when_there_is_none_yet(home, tmp_path):
    elsewhere = tmp_path / "elsewhere" / "vault"
    config = home / ".cursor" / "mcp.json"
    config.parent.mkdir()
    done = run_cli(["integrate", "cursor"], home, env={"AFFIDAVIT_VAULT": str(elsewhere)})
    assert done.returncode == 0, done.stderr
    assert f"no vault at {elsewhere} yet" in done.stderr and "affidavit init" in done.stderr
    args = json.loads(config.read_text())["mcpServers"]["affidavit"]["args"]
    assert args[-3:] == ["serve", "--vault", str(elsewhere)]


def test_the_server_a_client_starts_uses_the_vault_integrate_was_given(home, tmp_path):
    import asyncio

    from mcp import Client, StdioServerParameters

    from tests.vault.conftest import create_test_vault

    chosen = tmp_path / "team vault"
    create_test_vault(chosen).close()
    config = home / ".gemini" / "settings.json"
    config.parent.mkdir()
    done = run_cli(["integrate", "gemini", "--vault", str(chosen)], home)
    assert done.returncode == 0, done.stderr
    assert "no vault" not in done.stderr
    entry = json.loads(config.read_text())["mcpServers"]["affidavit"]
    minimal = {k: os.environ.get(k, "") for k in MINIMAL_ENV} | {"HOME": str(home)}

    async def status() -> dict:
        server = StdioServerParameters(command=entry["command"], args=entry["args"], env=minimal)
        async with Client(server) as client:  # type: ignore[arg-type]
            return dict((await client.call_tool("memory_status", {})).structured_content)

    seen = asyncio.run(status())
    assert seen["vault"] == str(chosen) and seen["locked"] is True
