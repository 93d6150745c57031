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
WIN_ENV = {"APPDATA": "/h/AppData/Roaming", "LOCALAPPDATA": "/h/AppData/Local"}

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
    "hermes": (".hermes/config.yaml", ".hermes/config.yaml", "AppData/Local/hermes/config.yaml"),
    "openclaw": (".openclaw/openclaw.json",) * 3,
    "junie": (".junie/mcp/mcp.json",) * 3,
    "factory": (".factory/mcp.json",) * 3,
    "omp": (".omp/agent/mcp.json",) * 3,
    "crush": (".config/crush/crush.json",) * 2 + ("AppData/Local/crush/crush.json",),
    "anythingllm": tuple(
        f"{base}/anythingllm-desktop/storage/plugins/anythingllm_mcp_servers.json"
        for base in (".config", "Library/Application Support", "AppData/Roaming")
    ),
    "boltai": (".boltai/mcp.json",) * 3,
    "jan": tuple(
        f"{base}/Jan/data/mcp_config.json"
        for base in (".local/share", "Library/Application Support", "AppData/Roaming")
    ),
    "witsy": tuple(
        f"{base}/Witsy/settings.json"
        for base in (".config", "Library/Application Support", "AppData/Roaming")
    ),
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


@pytest.mark.parametrize(
    ("key", "env", "expected"),
    [
        ("hermes", {"HERMES_HOME": "/hh"}, "/hh/config.yaml"),
        ("openclaw", {"OPENCLAW_CONFIG_PATH": "/oc/my.json"}, "/oc/my.json"),
        ("openclaw", {"OPENCLAW_STATE_DIR": "/state"}, "/state/openclaw.json"),
        ("openclaw", {"OPENCLAW_HOME": "/other"}, "/other/.openclaw/openclaw.json"),
        ("crush", {"CRUSH_GLOBAL_CONFIG": "/cg"}, "/cg/crush.json"),
        ("crush", {"XDG_CONFIG_HOME": "/x"}, "/x/crush/crush.json"),
        ("jan", {"JAN_DATA_ROOT": "/jr"}, "/jr/Jan/data/mcp_config.json"),
        ("jan", {"XDG_DATA_HOME": "/xd"}, "/xd/Jan/data/mcp_config.json"),
        ("witsy", {"XDG_CONFIG_HOME": "/x"}, "/x/Witsy/settings.json"),
    ],
)
def test_the_variables_a_client_reads_move_its_file(key, env, expected):
    assert BY_KEY[key].config_path(platform="linux", home=HOME, env=env) == Path(expected)


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
    found = json.loads(text)
    for key in c.container:
        found = found[key]
    return found


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


def test_every_client_says_where_its_location_was_confirmed():
    from tests.support import REPO_ROOT

    text = (REPO_ROOT / "docs" / "integrate.md").read_text()
    section = text.split("### Where each location was confirmed", 1)[1].split("\n### ", 1)[0]
    sourced = {line.split("`")[1] for line in section.splitlines() if line.startswith("| `")}
    earlier = section.split("The other rows (", 1)[1].split("were located before", 1)[0]
    for c in CLIENTS:
        assert c.key in sourced or f"`{c.key}`" in earlier, c.key
