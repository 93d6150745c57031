"""Malformed lines on the stdio wire of all three servers: every one that carries an id gets a
JSON-RPC error with that id (so the client never waits forever), every other one that could
be a request gets an error with a null id, and the server keeps serving afterwards.

Each server runs as a real subprocess and is written to below any SDK, because the SDK client
never sends these lines.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.packs._build_fixtures import build_sample
from tests.servers.dev.conftest import git
from tests.servers.rawwire import RawServer
from tests.support import GIT_IDENTITY, cli_env
from tests.vault.conftest import create_test_vault, vault_env

PARSE_ERROR, INVALID_REQUEST, INVALID_PARAMS = -32700, -32600, -32602


@dataclass(frozen=True)
class Case:
    """One malformed line and the error replies it must draw, as ``(id, code)`` pairs."""

    name: str
    line: bytes
    replies: tuple[tuple[int | None, int], ...]
    says: str  # a word the error message must contain, so the client learns what was wrong


CASES = [
    Case(
        "params is an array",
        b'{"jsonrpc": "2.0", "id": 11, "method": "tools/list", "params": [1]}',
        ((11, INVALID_PARAMS),),
        "params",
    ),
    Case(
        "params is a string",
        b'{"jsonrpc": "2.0", "id": "twelve", "method": "tools/call", "params": "x"}',
        (("twelve", INVALID_PARAMS),),  # type: ignore[arg-type]
        "params",
    ),
    Case(
        "a lone surrogate in an argument",
        b'{"jsonrpc": "2.0", "id": 13, "method": "tools/call",'
        b' "params": {"name": "any", "arguments": {"text": "\\ud800"}}}',
        ((13, INVALID_PARAMS),),
        "surrogate",
    ),
    Case(
        "a batch of two requests",
        b'[{"jsonrpc": "2.0", "id": 14, "method": "ping"},'
        b' {"jsonrpc": "2.0", "id": 15, "method": "tools/list"}]',
        ((14, INVALID_REQUEST), (15, INVALID_REQUEST)),
        "batch",
    ),
    Case("an empty batch", b"[]", ((None, INVALID_REQUEST),), "batch"),
    Case(
        "bytes that are not UTF-8",
        b'{"jsonrpc": "2.0", "id": 16, "method": "ping", "params": {"x": "\xff"}}',
        ((16, PARSE_ERROR),),
        "UTF-8",
    ),
    Case(
        "a cut-off line",
        b'{"jsonrpc": "2.0", "id": 17, "method": ',
        ((None, PARSE_ERROR),),
        "JSON",
    ),
    Case(
        "another protocol version",
        b'{"jsonrpc": "1.0", "id": 18, "method": "ping"}',
        ((18, INVALID_REQUEST),),
        "jsonrpc",
    ),
    Case("no method", b'{"jsonrpc": "2.0", "id": 19}', ((19, INVALID_REQUEST),), "method"),
    Case(
        "an id that is an object",
        b'{"jsonrpc": "2.0", "id": {"n": 20}, "method": "ping"}',
        ((None, INVALID_REQUEST),),
        "id",
    ),
    Case(
        "a null id (read by the SDK as a notification)",
        b'{"jsonrpc": "2.0", "id": null, "method": "ping"}',
        ((None, INVALID_REQUEST),),
        "id",
    ),
    Case(
        "a fractional id",
        b'{"jsonrpc": "2.0", "id": 1.5, "method": "tools/list"}',
        ((None, INVALID_REQUEST),),
        "id",
    ),
    Case("a bare number", b"21", ((None, INVALID_REQUEST),), "object"),
]


@pytest.fixture(params=["memory", "packs", "dev"])
def server(request: pytest.FixtureRequest, tmp_path: Path, home: Path) -> Iterator[RawServer]:
    """Each of the three servers, started as an MCP host would start it."""
    if request.param == "memory":
        create_test_vault(tmp_path / "vault").close()
        env = vault_env(tmp_path / "vault", tmp_path / "run")
        started = RawServer(["serve"], cli_env(home, {**env, "AFFIDAVIT_EMBEDDER": "off"}))
    elif request.param == "packs":
        pack = build_sample(tmp_path / "pack")
        started = RawServer(["pack", "serve", f"--pack={pack}"], cli_env(home))
    else:
        repo = tmp_path / "repo"
        repo.mkdir()
        git(repo, "init", "-q", "-b", "main")
        started = RawServer(["devserver", "--repo-path", str(repo)], cli_env(home, GIT_IDENTITY))
    try:
        yield started
    finally:
        if started.process.poll() is None:
            started.process.kill()
            started.process.wait()


def test_every_malformed_request_is_answered_and_serving_goes_on(server: RawServer) -> None:
    server.open_session()
    for number, case in enumerate(CASES):
        server.send(case.line)
        for request_id, code in case.replies:
            reply = server.next_message()
            assert reply.get("id") == request_id, (case.name, reply)
            assert reply.get("error", {}).get("code") == code, (case.name, reply)
            message = reply["error"]["message"]
            assert case.says in message and "Traceback" not in message, (case.name, message)
        server.ping(1000 + number)  # the very next line out is the ping's answer
    code, stderr = server.close()
    assert code == 0, stderr
    assert "Traceback" not in stderr


def test_a_malformed_notification_gets_no_reply(server: RawServer) -> None:
    """JSON-RPC never answers a notification, not even a broken one."""
    server.open_session()
    server.send(b'{"jsonrpc": "2.0", "method": "notifications/initialized", "params": [1]}')
    server.send(b'{"jsonrpc": "2.0", "method": "notifications/cancelled", "params": 7}')
    server.send(b'{"jsonrpc": "2.0", "method": "notifications/progress", "params": {"id": 1}}')
    server.ping(2)  # the next message out is the ping's, nothing for the notifications
    assert server.close()[0] == 0
