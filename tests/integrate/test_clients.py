"""Every known client: its config location per platform, and a real add/remove round trip."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest
import yaml

from affidavit.core.errors import UsageError
from affidavit.integrate import install
from affidavit.integrate.clients import BY_KEY, CLIENTS, client

HOME = Path("/h")
WIN_ENV = {"APPDATA": "/h/AppData/Roaming"}

EXPECTED = {
    # key: (linux, macOS, Windows) relative to HOME
    "claude-code": (".claude.json", ".claude.json", ".claude.json"),
    "claude-desktop": (
        ".config/Claude/claude_desktop_config.json",
        "Library/Application Support/Claude/claude_desktop_config.json",
        "AppData/Roaming/Claude/claude_desktop_config.json",
    ),
    "cursor": (".cursor/mcp.json",) * 3,
    "vscode": (
        ".config/Code/User/mcp.json",
        "Library/Application Support/Code/User/mcp.json",
        "AppData/Roaming/Code/User/mcp.json",
    ),
    "windsurf": (".codeium/windsurf/mcp_config.json",) * 3,
    "zed": (
        ".config/zed/settings.json",
        ".config/zed/settings.json",
        "AppData/Roaming/Zed/settings.json",
    ),
    "codex": (".codex/config.toml",) * 3,
    "gemini": (".gemini/settings.json",) * 3,
    "cline": tuple(
        f"{base}/Code/User/globalStorage/saoudrizwan.claude-dev/settings/cline_mcp_settings.json"
        for base in (".config", "Library/Application Support", "AppData/Roaming")
    ),
    "continue": (".continue/config.yaml",) * 3,
    "goose": (
        ".config/goose/config.yaml",
        ".config/goose/config.yaml",
        "AppData/Roaming/Block/goose/config/config.yaml",
    ),
    "lmstudio": (".lmstudio/mcp.json",) * 3,
    "vscode-insiders": (
        ".config/Code - Insiders/User/mcp.json",
        "Library/Application Support/Code - Insiders/User/mcp.json",
        "AppData/Roaming/Code - Insiders/User/mcp.json",
    ),
    "roo": tuple(
        f"{base}/Code/User/globalStorage/rooveterinaryinc.roo-cline/settings/mcp_settings.json"
        for base in (".config", "Library/Application Support", "AppData/Roaming")
    ),
    "kiro": (".kiro/settings/mcp.json",) * 3,
    "amazon-q": (".aws/amazonq/mcp.json",) * 3,
    "copilot-cli": (".copilot/mcp-config.json",) * 3,
    "qwen": (".qwen/settings.json",) * 3,
    "opencode": (".config/opencode/opencode.json",) * 3,
    "kilo": (".config/kilo/kilo.jsonc",) * 3,
}


def test_the_registry_covers_the_required_clients():
    assert set(BY_KEY) == set(EXPECTED)


@pytest.mark.parametrize("key", sorted(EXPECTED))
def test_config_locations_per_platform(key):
    found = tuple(
        BY_KEY[key].config_path(platform=p, home=HOME, env=WIN_ENV if p == "win32" else {})
        for p in ("linux", "darwin", "win32")
    )
    assert found == tuple(HOME / rel for rel in EXPECTED[key])


def test_env_overrides_are_honoured():
    assert BY_KEY["codex"].config_path(
        platform="linux", home=HOME, env={"CODEX_HOME": "/c"}
    ) == Path("/c/config.toml")
    assert BY_KEY["zed"].config_path(
        platform="linux", home=HOME, env={"XDG_CONFIG_HOME": "/x"}
    ) == Path("/x/zed/settings.json")


def test_unknown_client_names_the_known_ones():
    with pytest.raises(UsageError, match="cursor"):
        client("emacs")


def _launch_args(c, entry: dict) -> list[str]:
    return entry[c.command_key][1:] if c.argv else entry["args"]


def _server_map(key: str, path: Path) -> dict:
    text = path.read_text()
    c = BY_KEY[key]
    if c.fmt == "toml":
        return tomllib.loads(text)["mcp_servers"]
    if c.fmt.startswith("yaml"):
        data = yaml.safe_load(text)[c.container[0]]
        return {i["name"]: i for i in data} if c.fmt == "yaml-list" else data
    return json.loads(text)[c.container[0]]


@pytest.mark.parametrize("c", CLIENTS, ids=lambda c: c.key)
def test_add_writes_an_absolute_command_that_the_client_format_parses(c, fake_home):
    outcome = install.add(c, install.memory_entry("agent-a"))
    assert outcome.action == "added"
    entry = _server_map(c.key, c.config_path())["affidavit"]
    command = entry[c.command_key][0] if c.argv else entry[c.command_key]
    assert Path(command).is_absolute() and Path(command).exists()
    assert _launch_args(c, entry)[-3:] == ["serve", "--caller", "agent-a"]
    assert install.add(c, install.memory_entry("agent-a")).action == "unchanged"
    assert install.remove(c).action == "restored"
    assert not c.config_path().exists()  # the file did not exist before: it is gone again


def test_every_client_is_documented_with_its_file():
    from tests.support import REPO_ROOT

    table = (REPO_ROOT / "docs" / "integrate.md").read_text()
    for c in CLIENTS:
        row = next((line for line in table.splitlines() if line.startswith(f"| `{c.key}` |")), "")
        linux = str(c.config_path(platform="linux", home=Path("~"), env={}))
        assert row and linux.split("/")[-1] in row, c.key
