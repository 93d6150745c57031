"""``pack serve --http``: the SDK client and the MCP Inspector over HTTP, the token file rules,
and the sandbox that still holds while the server accepts connections."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from pathlib import Path

import anyio
import pytest

from affidavit.servers.packs import CHANGED, NOTICE, SEARCH_TOOL
from tests.packs._build_fixtures import build_sample
from tests.servers.http_support import http_client, http_server
from tests.support import INSPECTOR, cli_env, inspector_cli, run_cli

TOKEN = "pack-token-" + "k" * 32


def _token_file(directory: Path, mode: int = 0o600) -> Path:
    path = directory / "token"
    path.write_text(TOKEN + "\n")
    path.chmod(mode)
    return path


def _serve(pack: Path, token: Path) -> list[str]:
    return ["pack", "serve", f"--pack={pack}", "--http", "127.0.0.1:0", "--token-file", str(token)]


def test_sdk_client_searches_over_http_and_change_still_latches(tmp_path: Path, home: Path) -> None:
    pack = build_sample(tmp_path / "pack")
    with http_server(_serve(pack, _token_file(tmp_path)), home) as server:

        async def scenario() -> None:
            async with http_client(server.url, TOKEN, "2026-07-28") as client:
                found = await client.call_tool(SEARCH_TOOL, {"query": "cafe"})
                assert [m["record_id"] for m in found.structured_content["matches"]] == [
                    "M-repair-1"
                ]
                assert found.structured_content["notice"] == NOTICE
                (pack / "README.md").write_text("changed\n")
                refused = await client.call_tool(SEARCH_TOOL, {"query": "cafe"})
                assert refused.is_error and CHANGED in refused.content[0].text

        anyio.run(scenario)

        async def wrong() -> None:
            async with http_client(server.url, "not-the-token") as client:
                await client.list_tools()

        with pytest.raises(Exception):  # noqa: B017 - the SDK surfaces the 401 as an error
            anyio.run(wrong)
    assert TOKEN not in server.log()


@pytest.mark.skipif(not INSPECTOR.exists(), reason="MCP Inspector not installed (.ci/node-tools)")
def test_inspector_cli_lists_tools_over_http(tmp_path: Path, home: Path) -> None:
    pack = build_sample(tmp_path / "pack")
    with http_server(_serve(pack, _token_file(tmp_path)), home) as server:
        base = [server.url, "--transport", "http", "--method", "tools/list"]
        done = inspector_cli([*base, "--header", f"Authorization: Bearer {TOKEN}"], cli_env(home))
        assert done.returncode == 0, done.stderr
        names = [tool["name"] for tool in json.loads(done.stdout)["tools"]]
        assert names == ["verified_memory_search", "verified_memory_get"]
        refused = inspector_cli(base, cli_env(home))
        assert refused.returncode != 0
        # the Inspector reads the 401 as "authorization needed" and stops
        assert "auth" in refused.stdout + refused.stderr


@pytest.mark.parametrize(
    ("mode", "flags", "expected"),
    [
        (0o644, ["--http", "127.0.0.1:0", "--token-file", "{token}"], "chmod 600"),
        (0o600, ["--http", "127.0.0.1:0"], "--http needs --token-file"),
        (0o600, ["--token-file", "{token}"], "--token-file needs --http"),
        (0o600, ["--http", "10.1.2.3:0", "--token-file", "{token}"], "--allow-remote"),
    ],
)
def test_token_file_and_exposure_rules(
    tmp_path: Path, home: Path, mode: int, flags: list[str], expected: str
) -> None:
    pack = build_sample(tmp_path / "pack")
    token = _token_file(tmp_path, mode)
    args = [flag.replace("{token}", str(token)) for flag in flags]
    done = run_cli(["pack", "serve", f"--pack={pack}", *args], home, timeout=60)
    assert done.returncode != 0
    assert expected in done.stderr and "Traceback" not in done.stderr
    assert TOKEN not in done.stderr


ACCEPTING = r"""
import json, socket, sys
from affidavit.core import sandbox
listener = socket.create_server(("127.0.0.1", 0))
print(listener.getsockname()[1], flush=True)
sandbox.arm("test probe", accept_connections=True)
peer, _ = listener.accept()
peer.sendall(b"accepted")
def probe(name, action):
    try:
        action()
    except sandbox.SandboxViolation:
        print(json.dumps({name: "refused"}), flush=True)
    else:
        print(json.dumps({name: "allowed"}), flush=True)
probe("write", lambda: open(sys.argv[1], "w"))
probe("connect", lambda: socket.create_connection(("127.0.0.1", listener.getsockname()[1])))
probe("bind", lambda: socket.socket().bind(("127.0.0.1", 0)))
probe("lookup", lambda: socket.getaddrinfo("localhost", 80))
"""


def test_sandbox_accepts_connections_and_still_refuses_the_rest(tmp_path: Path) -> None:
    child = subprocess.Popen(
        [sys.executable, "-c", ACCEPTING, str(tmp_path / "written.txt")],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert child.stdout is not None
    port = int(child.stdout.readline())
    with socket.create_connection(("127.0.0.1", port), timeout=60) as client:
        assert client.recv(16) == b"accepted"
    outcomes: dict[str, str] = {}
    for line in child.stdout:
        outcomes.update(json.loads(line))
    assert child.wait(timeout=60) == 0
    assert outcomes == {
        "write": "refused",
        "connect": "refused",
        "bind": "refused",
        "lookup": "refused",
    }
    assert not (tmp_path / "written.txt").exists()
