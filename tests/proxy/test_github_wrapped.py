"""``wrap`` turns the GitHub verifier on for GitHub's MCP server, with the server's own token.

The attack: a token the user gave GitHub's MCP server (in the client entry's ``env``) must not
land in argv (the written config, any process's command line), in the proxy's stderr, in its
audit log or in what the host is shown, while the proxy uses it to check the server's claims.
"""

from __future__ import annotations

import json
import secrets
import sys
from pathlib import Path

import anyio
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client

from tests.proxy._verifier_fixtures import LYING_BACKEND, verdict_of, wire
from tests.proxy.fake_github import ENTERPRISE_PREFIX, seeded, serving
from tests.support import cli_env, run_cli

PR = {"owner": "acme", "repo": "app", "title": "Add feature", "head": "feature", "base": "main"}


def _github_server(tmp_path: Path, plan: Path) -> Path:
    """An executable named like GitHub's server: the lying backend, talking to the API that
    ``GITHUB_HOST`` names (as the real server reads it)."""
    server = tmp_path / "bin" / "github-mcp-server"
    server.parent.mkdir()
    server.write_text(
        f"#!{sys.executable}\n"
        "import os, sys\n"
        f"api = os.environ['GITHUB_HOST'].rstrip('/') + {ENTERPRISE_PREFIX!r}\n"
        f"argv = [sys.executable, {str(LYING_BACKEND)!r}, '--repo-path', {str(tmp_path)!r},\n"
        f"        '--plan', {str(plan)!r}, '--github-api', api]\n"
        "os.execv(sys.executable, argv)\n"
    )
    server.chmod(0o755)
    return server


def _command_lines() -> str:
    """Every process's argv on this machine, as one string."""
    found = []
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            found.append(cmdline.read_bytes().replace(b"\0", b" ").decode(errors="replace"))
        except OSError:
            continue
    return "\n".join(found)


def test_a_wrapped_github_server_is_verified_with_its_own_token(home: Path, tmp_path: Path):
    token = "plain" + secrets.token_hex(20)  # no known token shape: redaction would not hide it
    state = seeded()
    plan = tmp_path / "plan.json"
    with serving(state) as origin:
        server = _github_server(tmp_path, plan)
        config = home / ".cursor" / "mcp.json"
        config.parent.mkdir()
        env = {"GITHUB_PERSONAL_ACCESS_TOKEN": token, "GITHUB_HOST": origin}
        original = json.dumps(
            {"mcpServers": {"github": {"command": str(server), "args": ["stdio"], "env": env}}}
        )
        config.write_text(original)
        wrapped = run_cli(["wrap", "--client", "cursor"], home)
        assert wrapped.returncode == 0, wrapped.stderr
        assert token not in wrapped.stdout + wrapped.stderr
        entry = json.loads(config.read_text())["mcpServers"]["github"]
        api = origin + ENTERPRISE_PREFIX
        assert entry["args"] == [
            "proxy",
            "--receipts",
            "--github-api",
            api,
            "--",
            str(server),
            "stdio",
        ]
        assert entry["env"] == env  # the token stays where the user put it, and only there
        assert token not in json.dumps({k: v for k, v in entry.items() if k != "env"})

        stderr = tmp_path / "proxy-stderr.txt"

        async def session() -> tuple[list[dict], str]:
            params = StdioServerParameters(
                command=entry["command"], args=entry["args"], env={**cli_env(home), **env}
            )
            replies = []
            with stderr.open("w") as errlog:
                async with Client(stdio_client(params, errlog=errlog)) as client:  # type: ignore[arg-type]
                    for lie in ("honest", "older_pr", "wrong_title"):
                        plan.write_text(json.dumps({"create_pull_request": lie}))
                        replies.append(wire(await client.call_tool("create_pull_request", PR)))
                    argv_seen = _command_lines()
            return replies, argv_seen

        (honest, older, retitled), argv_seen = anyio.run(session)

    assert verdict_of(honest) == "verified" and not honest.get("isError")
    assert verdict_of(older) == "contradicted" and older["isError"] is True
    assert verdict_of(retitled) == "contradicted" and retitled["isError"] is True
    assert f"Bearer {token}" in state.auth_seen  # the server's own token did the checking
    assert "github-mcp-server" in argv_seen and token not in argv_seen
    assert token not in json.dumps([honest, older, retitled])
    assert token not in stderr.read_text()
    audit = (home / ".affidavit" / "proxy" / "audit.jsonl").read_text()
    assert '"verdict":"contradicted"' in audit and token not in audit

    assert run_cli(["unwrap", "--client", "cursor"], home).returncode == 0
    assert config.read_text() == original
