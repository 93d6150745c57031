"""Streamable HTTP backends, against a loopback server in this process (JSON and SSE replies)."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from tests.proxy.conftest import HERE, REPO, RawProxy, text_of
from tests.support import run_cli

TOKEN = "tok-loopback-very-secret-123"


class Recorder:
    def __init__(self) -> None:
        self.requests: list[tuple[str, dict[str, str], dict | None]] = []
        self.push: list[dict] = []


def make_handler(recorder: Recorder) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args) -> None:  # keep test output quiet
            pass

        def _send(
            self, status: int, body: bytes = b"", ctype: str = "application/json", extra=None
        ) -> None:
            self.send_response(status)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(body)))
            for key, value in (extra or {}).items():
                self.send_header(key, value)
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self) -> None:
            recorder.requests.append(("GET", dict(self.headers), None))
            if not recorder.push:
                self._send(405)
                return
            stream = "".join(f"data: {json.dumps(m)}\n\n" for m in recorder.push)
            self._send(200, stream.encode(), ctype="text/event-stream")

        def do_DELETE(self) -> None:
            recorder.requests.append(("DELETE", dict(self.headers), None))
            self._send(200)

        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            recorder.requests.append(("POST", dict(self.headers), body))
            if self.headers.get("Authorization") != f"Bearer {TOKEN}":
                self._send(401, b'{"error": "unauthorized"}')
                return
            method, rid = body.get("method"), body.get("id")
            if rid is None:
                self._send(202)
                return
            if method == "initialize":
                result = {
                    "protocolVersion": "2025-06-18",
                    "capabilities": {"tools": {}},
                    "serverInfo": {"name": "http-backend", "version": "1"},
                }
                # pretty-printed on purpose: the proxy must re-frame it as one line
                self._send(
                    200,
                    json.dumps({"jsonrpc": "2.0", "id": rid, "result": result}, indent=2).encode(),
                    extra={"Mcp-Session-Id": "sess-42"},
                )
                return
            if self.headers.get("Mcp-Session-Id") != "sess-42":
                self._send(400, b"{}")
                return
            if method == "tools/call":
                progress = {
                    "jsonrpc": "2.0",
                    "method": "notifications/progress",
                    "params": {"progressToken": "p", "progress": 1},
                }
                reply = {
                    "jsonrpc": "2.0",
                    "id": rid,
                    "result": {
                        "content": [{"type": "text", "text": "sse says hi"}],
                        "isError": False,
                    },
                }
                stream = "".join(
                    f"event: message\ndata: {json.dumps(m)}\n\n" for m in (progress, reply)
                )
                self._send(200, stream.encode(), ctype="text/event-stream")
                return
            self._send(200, json.dumps({"jsonrpc": "2.0", "id": rid, "result": {}}).encode())

    return Handler


@pytest.fixture
def http_backend() -> Iterator[tuple[str, Recorder]]:
    recorder = Recorder()
    server = ThreadingHTTPServer(("127.0.0.1", 0), make_handler(recorder))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/mcp", recorder
    server.shutdown()
    server.server_close()


def start(url: str, home, tmp_path, *header_args: str, env=None) -> RawProxy:
    args = ["--audit-log", str(tmp_path / "audit.jsonl"), "--backend-url", url, *header_args]
    return RawProxy(args, home, env)


def initialize(proxy: RawProxy) -> dict:
    return proxy.initialize()


@pytest.mark.parametrize(
    ("header_args", "env"),
    [
        (
            ["--header-from-env", "Authorization=LOOPBACK_AUTH"],
            {"LOOPBACK_AUTH": f"Bearer {TOKEN}"},
        ),
        (["--header", "Authorization: Bearer ${LOOPBACK_TOKEN}"], {"LOOPBACK_TOKEN": TOKEN}),
    ],
)
def test_json_and_sse_replies_session_and_version_headers(
    http_backend, home, tmp_path, header_args, env
):
    url, recorder = http_backend
    proxy = start(url, home, tmp_path, *header_args, "--header", "X-Team: core", env=env)
    init = initialize(proxy)
    assert init["result"]["serverInfo"]["name"] == "http-backend"
    proxy.begin_call(2, "echo", {})
    progress, reply = proxy.recv(), proxy.recv()
    assert progress["method"] == "notifications/progress"
    assert reply["id"] == 2 and text_of(reply) == "sse says hi"
    assert proxy.close() == 0
    posts = [headers for verb, headers, _ in recorder.requests if verb == "POST"]
    assert "Mcp-Session-Id" not in posts[0]
    assert all(h.get("Mcp-Session-Id") == "sess-42" for h in posts[1:])
    assert all(h.get("MCP-Protocol-Version") == "2025-06-18" for h in posts[1:])
    assert all(h.get("X-Team") == "core" for h in posts)
    assert any(verb == "DELETE" for verb, _, _ in recorder.requests)
    assert TOKEN not in proxy.stderr
    assert TOKEN not in (tmp_path / "audit.jsonl").read_text()


def test_http_failures_become_json_rpc_errors(http_backend, home, tmp_path):
    url, _ = http_backend
    proxy = start(
        url,
        home,
        tmp_path,
        "--header-from-env",
        "Authorization=WRONG",
        env={"WRONG": "Bearer nope"},
    )
    reply = initialize(proxy)
    assert reply["error"]["code"] == -32001 and "401" in reply["error"]["message"]
    assert "nope" not in proxy.stderr


def test_unreachable_backend_is_an_error_reply(home, tmp_path):
    proxy = start("http://127.0.0.1:9/mcp", home, tmp_path)
    reply = initialize(proxy)
    assert reply["error"]["code"] == -32001 and "unreachable" in reply["error"]["message"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            [
                "--backend-url",
                "http://127.0.0.1:1/mcp",
                "--header",
                "Authorization: Bearer literal",
            ],
            "credential in the command line",
        ),
        (["--backend-url", "ftp://x/mcp"], "is not an http(s) URL"),
        (["--backend-url", "http://u:p@127.0.0.1/mcp"], "must not carry credentials"),
        (
            [
                "--backend-url",
                "http://127.0.0.1:1/mcp",
                "--header-from-env",
                "Authorization=NOT_SET_ANYWHERE",
            ],
            "NOT_SET_ANYWHERE is not set",
        ),
        (["--header", "X: y", "--", "true"], "need --backend-url"),
    ],
)
def test_header_and_url_misuse_is_refused(home, tmp_path, args, message):
    result = run_cli(["proxy", "--audit-log", str(tmp_path / "a.jsonl"), *args], home)
    assert result.returncode == 2 and message in result.stderr
    assert "literal" not in result.stderr and result.stderr.count("\n") == 1


def test_server_messages_on_the_get_stream_reach_the_host(http_backend, home, tmp_path):
    url, recorder = http_backend
    recorder.push = [{"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}]
    proxy = start(
        url, home, tmp_path, "--header-from-env", "Authorization=A", env={"A": f"Bearer {TOKEN}"}
    )
    initialize(proxy)
    assert proxy.recv()["method"] == "notifications/tools/list_changed"
    gets = [headers for verb, headers, _ in recorder.requests if verb == "GET"]
    assert (
        gets and gets[0]["Mcp-Session-Id"] == "sess-42" and gets[0]["Accept"] == "text/event-stream"
    )


@pytest.fixture
def sdk_server(tmp_path) -> Iterator[tuple[str, Path]]:
    """The demo backend served by the official SDK's Streamable HTTP app on loopback."""
    root = tmp_path / "served"
    root.mkdir()
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = subprocess.Popen(
        [sys.executable, str(HERE / "sdk_http_server.py"), str(root), str(port)],
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    deadline = time.monotonic() + 60
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            break
        except OSError:
            assert server.poll() is None and time.monotonic() < deadline, "SDK server did not start"
            time.sleep(0.1)
    yield f"http://127.0.0.1:{port}/mcp", root
    server.terminate()
    server.wait(20)


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
@pytest.mark.anyio
async def test_official_client_to_an_sdk_http_server_in_both_eras(sdk_server, home, tmp_path, mode):
    from tests.support import mcp_client

    url, root = sdk_server
    args = ["proxy", "--receipts", "--root", str(root), "--audit-log", str(tmp_path / "a.jsonl"),
            "--backend-url", url]  # fmt: skip
    async with mcp_client(args, home, mode=mode) as client:
        assert {t.name for t in (await client.list_tools()).tools} == {"write_file", "git_commit"}
        result = await client.call_tool("write_file", {"path": "h.txt", "content": "over http"})
    assert not result.is_error
    assert (result.meta or {})["affidavit/receipt"]["verdict"] == "verified"
    assert (root / "h.txt").read_text() == "over http"
