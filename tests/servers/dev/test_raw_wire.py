"""Hostile bytes on the wire, below what an SDK client would ever send: the server answers
each with an error (or ignores it) and keeps serving."""

from __future__ import annotations

import json
import queue
import subprocess
import threading
from pathlib import Path

from tests.support import GIT_IDENTITY, PYTHON, cli_env, handshake


def test_garbage_and_malformed_requests_do_not_stop_the_server(repo: Path, home: Path) -> None:
    lines: list[dict | str] = [
        *handshake("raw"),
        "this is not json",
        {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "tools/call",
            "params": {"name": "git_status", "arguments": [1]},
        },
        {"jsonrpc": "2.0", "id": 3, "method": "no/such/method", "params": {}},
        '{"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {"name": "write_file",'
        ' "arguments": {"path": "x.txt", "content": "\\ud800"}}}',
        {
            "jsonrpc": "2.0",
            "id": 5,
            "method": "resources/read",
            "params": {"uri": "repo://file/../x"},
        },
        {
            "jsonrpc": "2.0",
            "id": 6,
            "method": "tools/call",
            "params": {"name": "git_status", "arguments": {}},
        },
    ]
    server = subprocess.Popen(
        [PYTHON, "-m", "affidavit", "devserver", "--repo-path", str(repo)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env=cli_env(home, GIT_IDENTITY),
    )
    assert server.stdin is not None and server.stdout is not None
    received: queue.Queue[dict] = queue.Queue()

    def read() -> None:
        assert server.stdout is not None
        for raw in server.stdout:
            received.put(json.loads(raw))  # every line the server writes is JSON-RPC

    threading.Thread(target=read, daemon=True).start()
    for line in lines:
        server.stdin.write((line if isinstance(line, str) else json.dumps(line)) + "\n")
    server.stdin.flush()
    replies: dict[int, dict] = {}
    try:
        while not {2, 3, 4, 5, 6} <= replies.keys():  # any order; stdin stays open till then
            message = received.get(timeout=120)
            if "id" in message:
                replies[message["id"]] = message
    finally:
        server.stdin.close()
        server.wait(timeout=60)
    assert "error" in replies[2] and "error" in replies[3]
    # id 4 (a lone surrogate) never reaches a handler: the transport answers it.
    assert replies[4]["error"]["code"] == -32602 and "surrogate" in replies[4]["error"]["message"]
    assert "climbs with '..'" in replies[5]["error"]["message"]
    assert replies[6]["result"]["isError"] is False
    assert replies[6]["result"]["structuredContent"]["branch"] == "main"
    assert not (repo / "x.txt").exists()
