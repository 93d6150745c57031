"""``devserver --http``: the git/CI server over Streamable HTTP, with the SDK client and the
MCP Inspector CLI, behind the token of --token-file."""

from __future__ import annotations

import json
from pathlib import Path

import anyio
import httpx2
import pytest

from tests.servers.http_support import JSON_HEADERS, http_client, http_server
from tests.support import INSPECTOR, cli_env, inspector_cli, inspector_tool_call

TOKEN = "dev-token-" + "d" * 32


def _serve(repo: Path, directory: Path) -> list[str]:
    token = directory / "token"
    token.write_text(TOKEN)
    token.chmod(0o600)
    return [
        "devserver",
        "--repo-path",
        str(repo),
        "--http",
        "127.0.0.1:0",
        "--token-file",
        str(token),
    ]


def test_sdk_client_writes_a_file_over_http(repo: Path, home: Path, tmp_path: Path) -> None:
    with http_server(_serve(repo, tmp_path), home) as server:

        async def scenario() -> None:
            async with http_client(server.url, TOKEN) as client:
                wrote = await client.call_tool(
                    "write_file", {"path": "notes/over-http.txt", "content": "hello"}
                )
                assert wrote.is_error is False, wrote.content

        anyio.run(scenario)
        assert (repo / "notes" / "over-http.txt").read_text() == "hello"
        refused = httpx2.post(server.url, content=b"{}", headers=JSON_HEADERS, timeout=60)
        assert refused.status_code == 401


@pytest.mark.skipif(not INSPECTOR.exists(), reason="MCP Inspector not installed (.ci/node-tools)")
def test_inspector_calls_a_tool_over_http(repo: Path, home: Path, tmp_path: Path) -> None:
    with http_server(_serve(repo, tmp_path), home) as server:
        call = inspector_tool_call("write_file", path="notes/inspector.txt", content="hi")
        done = inspector_cli(
            [
                server.url,
                "--transport",
                "http",
                "--header",
                f"Authorization: Bearer {TOKEN}",
                *call,
            ],
            cli_env(home),
        )
        assert done.returncode == 0, done.stderr
        assert json.loads(done.stdout)["isError"] is False
        assert (repo / "notes" / "inspector.txt").read_text() == "hi"
