"""``affidavit wrap`` / ``unwrap`` over JSON, TOML and YAML configs in a fake HOME."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest
import yaml

from tests.support import NODE_TOOLS, run_cli

CLAUDE = """{
  "numStartups": 3,
  "mcpServers": {
    "git": {"type": "stdio", "command": "uvx", "args": ["mcp-server-git"],
            "env": {"GITHUB_TOKEN": "ghp_secret"}},
    "remote": {"type": "http", "url": "https://example.invalid/mcp",
               "headers": {"Authorization": "Bearer hdr_secret"}},
    "legacy": {"type": "sse", "url": "https://example.invalid/sse"}
  },
  "projects": {
    "/work/app": {"allowedTools": [], "mcpServers": {
      "time": {"type": "stdio", "command": "uvx", "args": ["mcp-server-time"], "env": {}}}}
  }
}
"""
CODEX = """# codex
model = "o3"

[mcp_servers.fs]
command = "npx"
args = ["-y", "@modelcontextprotocol/server-filesystem", "/tmp"]
env = { "API_KEY" = "k_secret" }

[mcp_servers.docs]
url = "https://example.invalid/mcp"
bearer_token_env_var = "DOCS_TOKEN"
"""
GOOSE = """# goose config
GOOSE_PROVIDER: openai
extensions:
  developer:
    enabled: true
    name: developer
    type: builtin
  github:
    name: GitHub
    cmd: npx
    args: [-y, '@modelcontextprotocol/server-github']
    enabled: true
    envs: {GITHUB_TOKEN: "g_secret"}
    type: stdio
    timeout: 300
"""


def _write(home: Path) -> dict[str, tuple[Path, str]]:
    files = {
        "claude-code": (home / ".claude.json", CLAUDE),
        "codex": (home / ".codex" / "config.toml", CODEX),
        "goose": (home / ".config" / "goose" / "config.yaml", GOOSE),
    }
    for path, text in files.values():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return files


def test_wrap_fronts_stdio_servers_only_and_unwrap_restores_byte_for_byte(home):
    files = _write(home)
    result = run_cli(["wrap"], home)
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "remote: skip" in out and "legacy: skip" in out and "docs: skip" in out
    assert "developer: skip" in out

    claude = json.loads(files["claude-code"][0].read_text())["mcpServers"]
    git = claude["git"]
    assert git["args"] == ["proxy", "--receipts", "--", "uvx", "mcp-server-git"]
    assert Path(git["command"]).is_absolute()
    assert git["env"] == {"GITHUB_TOKEN": "ghp_secret"} and git["type"] == "stdio"
    assert claude["remote"]["headers"] == {"Authorization": "Bearer hdr_secret"}
    assert "remote" not in json.dumps(git)
    for server in claude.values():  # no secret ever moved into argv
        assert not any("secret" in a for a in server.get("args", []))

    codex = tomllib.loads(files["codex"][0].read_text())["mcp_servers"]
    assert codex["fs"]["args"][:5] == ["proxy", "--receipts", "--root", "/tmp", "--"]
    assert codex["fs"]["env"] == {"API_KEY": "k_secret"}
    assert files["codex"][0].read_text().startswith('# codex\nmodel = "o3"')

    goose_text = files["goose"][0].read_text()
    assert goose_text.startswith("# goose config\n")
    goose = yaml.safe_load(goose_text)["extensions"]
    assert goose["github"]["args"][:6] == [  # GitHub's server: its verifier is turned on
        "proxy",
        "--receipts",
        "--github-api",
        "https://api.github.com",
        "--",
        "npx",
    ]
    assert goose["github"]["envs"] == {"GITHUB_TOKEN": "g_secret"}

    again = run_cli(["wrap"], home)
    assert again.returncode == 0
    assert "already behind affidavit proxy" in again.stdout
    assert json.loads(files["claude-code"][0].read_text())["mcpServers"]["git"] == git

    back = run_cli(["unwrap"], home)
    assert back.returncode == 0, back.stderr
    for path, text in files.values():
        assert path.read_text() == text


def test_dry_run_then_unwrap_after_an_edit_goes_entry_by_entry(home):
    files = _write(home)
    path, original = files["claude-code"]
    dry = run_cli(["wrap", "--client", "claude-code", "--dry-run"], home)
    assert "git: would wrap" in dry.stdout
    assert path.read_text() == original

    assert run_cli(["wrap", "--client", "claude-code"], home).returncode == 0
    data = json.loads(path.read_text())
    data["numStartups"] = 4  # the client rewrites its own file meanwhile
    path.write_text(json.dumps(data, indent=2))

    back = run_cli(["unwrap", "--client", "claude-code"], home)
    assert back.returncode == 0, back.stderr
    assert "one by one" in back.stdout
    restored = json.loads(path.read_text())
    assert restored["numStartups"] == 4
    assert restored["mcpServers"] == json.loads(original)["mcpServers"]
    assert restored["projects"] == json.loads(original)["projects"]


def test_affidavit_own_server_is_never_wrapped_but_the_devserver_is(home):
    (home / ".cursor").mkdir()
    assert run_cli(["integrate", "cursor"], home).returncode == 0
    before = (home / ".cursor" / "mcp.json").read_text()
    result = run_cli(["wrap", "--client", "cursor"], home)
    assert "affidavit: skip: affidavit's own server" in result.stdout
    assert (home / ".cursor" / "mcp.json").read_text() == before

    data = json.loads(before)
    command = data["mcpServers"]["affidavit"]["command"]
    data["mcpServers"]["dev"] = {"command": command, "args": ["devserver", "--repo", "/r"]}
    (home / ".cursor" / "mcp.json").write_text(json.dumps(data))
    assert run_cli(["wrap", "--client", "cursor"], home).returncode == 0
    dev = json.loads((home / ".cursor" / "mcp.json").read_text())["mcpServers"]["dev"]
    assert dev["args"] == ["proxy", "--receipts", "--", command, "devserver", "--repo", "/r"]


def test_the_memory_server_under_its_group_name_or_with_root_flags_is_not_wrapped(home):
    """`affidavit memory serve` and `affidavit -q serve` are the same server as `serve`."""
    (home / ".cursor").mkdir()
    assert run_cli(["integrate", "cursor"], home).returncode == 0
    data = json.loads((home / ".cursor" / "mcp.json").read_text())
    command = data["mcpServers"]["affidavit"]["command"]
    data["mcpServers"]["grouped"] = {"command": command, "args": ["memory", "serve"]}
    data["mcpServers"]["quiet"] = {"command": command, "args": ["-q", "--assert-offline", "serve"]}
    (home / ".cursor" / "mcp.json").write_text(json.dumps(data))
    result = run_cli(["wrap", "--client", "cursor"], home)
    assert "grouped: skip: affidavit's own server" in result.stdout
    assert "quiet: skip: affidavit's own server" in result.stdout


def test_a_wrapped_entry_really_launches_the_server_behind_the_proxy(home, tmp_path):
    import asyncio
    import subprocess
    import sys

    from mcp import Client, StdioServerParameters

    from tests.support import cli_env

    repo = tmp_path / "repo"
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    config = home / ".cursor" / "mcp.json"
    config.parent.mkdir()
    original = json.dumps(
        {
            "mcpServers": {
                "git": {
                    "command": sys.executable,
                    "args": ["-m", "mcp_server_git", "--repository", str(repo)],
                }
            }
        },
        indent=2,
    )
    config.write_text(original)
    assert run_cli(["wrap", "--client", "cursor"], home).returncode == 0
    entry = json.loads(config.read_text())["mcpServers"]["git"]
    assert entry["args"][:5] == ["proxy", "--receipts", "--root", str(repo), "--"]

    async def scenario():
        params = StdioServerParameters(
            command=entry["command"], args=entry["args"], env=cli_env(home)
        )
        async with Client(params) as client:
            names = {tool.name for tool in (await client.list_tools()).tools}
            assert "git_status" in names

    asyncio.run(scenario())
    assert run_cli(["unwrap", "--client", "cursor"], home).returncode == 0
    assert config.read_text() == original


def test_unwrap_without_its_backup_still_unwraps_entry_by_entry(home):
    files = _write(home)
    assert run_cli(["wrap", "--client", "codex"], home).returncode == 0
    for backup in (home / ".affidavit" / "integrate" / "backups").iterdir():
        backup.unlink()  # the user cleaned up
    back = run_cli(["unwrap", "--client", "codex"], home)
    assert back.returncode == 0, back.stderr
    servers = tomllib.loads(files["codex"][0].read_text())["mcp_servers"]
    assert servers["fs"]["command"] == "npx" and servers["fs"]["args"][0] == "-y"


def _claude_with_projects(home: Path, work: Path) -> tuple[Path, str]:
    """A ``~/.claude.json`` as Claude Code writes it: user servers and per-project servers."""
    (work / "docs").mkdir(parents=True)
    (work / "repo").mkdir()
    text = json.dumps(
        {
            "numStartups": 7,
            "mcpServers": {
                "files": {
                    "type": "stdio",
                    "command": "npx",
                    "args": ["-y", "@modelcontextprotocol/server-filesystem", str(work / "docs")],
                    "env": {},
                }
            },
            "projects": {
                str(work / "repo"): {
                    "allowedTools": [],
                    "mcpServers": {
                        "git": {
                            "type": "stdio",
                            "command": "uvx",
                            "args": ["mcp-server-git", f"--repository={work / 'repo'}"],
                            "env": {"GITHUB_TOKEN": "ghp_project_secret"},
                        },
                        "remote": {"type": "http", "url": "https://example.invalid/mcp"},
                    },
                },
                str(work / "empty"): {"allowedTools": []},
            },
        },
        indent=2,
    )
    path = home / ".claude.json"
    path.write_text(text)
    return path, text


def test_wrap_covers_claude_code_project_servers_with_roots_and_receipts(home, tmp_path):
    """Without ``--root`` every file claim came back unchecked; project servers were skipped."""
    path, original = _claude_with_projects(home, tmp_path / "work")
    work = tmp_path / "work"
    result = run_cli(["wrap", "--client", "claude-code"], home)
    assert result.returncode == 0, result.stderr
    assert f"{work / 'repo'}: git: wrapped" in result.stdout
    assert f"{work / 'repo'}: remote: skip" in result.stdout
    data = json.loads(path.read_text())
    files = data["mcpServers"]["files"]["args"]
    assert files[: files.index("--")] == ["proxy", "--receipts", "--root", str(work / "docs")]
    git = data["projects"][str(work / "repo")]["mcpServers"]["git"]
    assert git["args"][: git["args"].index("--") + 2] == [
        "proxy", "--receipts", "--root", str(work / "repo"), "--", "uvx",
    ]  # fmt: skip
    assert git["env"] == {"GITHUB_TOKEN": "ghp_project_secret"}
    assert data["projects"][str(work / "empty")] == {"allowedTools": []}
    again = run_cli(["wrap", "--client", "claude-code"], home)
    assert "already behind affidavit proxy" in again.stdout
    back = run_cli(["unwrap", "--client", "claude-code"], home)
    assert back.returncode == 0, back.stderr
    assert path.read_text() == original


@pytest.mark.skipif(
    not (NODE_TOOLS / ".bin" / "mcp-server-filesystem").exists(),
    reason="the official filesystem server is not installed",
)
def test_a_wrapped_filesystem_server_has_its_writes_verified(home, tmp_path):
    """The wrapped entry as a client launches it: the write comes back VERIFIED."""
    import asyncio

    from mcp import Client, StdioServerParameters

    from tests.support import cli_env, node_first

    allowed = tmp_path / "allowed"
    allowed.mkdir()
    server = str(NODE_TOOLS / ".bin" / "mcp-server-filesystem")
    config = home / ".cursor" / "mcp.json"
    config.parent.mkdir()
    config.write_text(
        json.dumps({"mcpServers": {"fs": {"command": server, "args": [str(allowed)]}}})
    )
    assert run_cli(["wrap", "--client", "cursor"], home).returncode == 0
    entry = json.loads(config.read_text())["mcpServers"]["fs"]

    async def scenario() -> dict:
        env = node_first(cli_env(home))
        params = StdioServerParameters(command=entry["command"], args=entry["args"], env=env)
        async with Client(params, read_timeout_seconds=60) as client:  # type: ignore[arg-type]
            reply = await client.call_tool("write_file", {"path": "a.txt", "content": "hello"})
        return reply.model_dump(by_alias=True, exclude_none=True, mode="json")

    reply = asyncio.run(scenario())
    assert (allowed / "a.txt").read_text() == "hello"
    assert reply["_meta"]["affidavit/receipt"]["verdict"] == "verified", reply
