"""The memory server's plain stdio loop (servers/toolserver.py) answers exactly as the SDK does.

Each scenario runs twice on a real ``affidavit serve``: once as any client opens a session
(the plain loop answers), once after a ``ping`` sent before ``initialize``, which the loop
does not answer itself, so the SDK serves that whole session. Every answer must be equal.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS

from affidavit.servers.toolserver import HANDSHAKE_VERSIONS
from tests.servers.memory.conftest import LIGHT, OFFERED, VaultSetup
from tests.servers.rawwire import RawServer


def _initialize(request_id: int, version: str) -> dict[str, Any]:
    params = {
        "protocolVersion": version,
        "capabilities": {},
        "clientInfo": {"name": "plain-loop-test", "version": "0"},
    }
    return {"jsonrpc": "2.0", "id": request_id, "method": "initialize", "params": params}


def _call(request_id: int, name: str, arguments: dict[str, Any] | None) -> dict[str, Any]:
    params: dict[str, Any] = {"name": name}
    if arguments is not None:
        params["arguments"] = arguments
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}


#: Requests after the handshake; each gets exactly one answer.
SESSION = [
    {"jsonrpc": "2.0", "id": 2, "method": "ping"},
    {"jsonrpc": "2.0", "id": 3, "method": "tools/list"},
    {"jsonrpc": "2.0", "id": "four", "method": "tools/list", "params": {"cursor": "x"}},
    _call(5, "memory_store", {"text": "The deploy key rotates every 90 days.", "source": "t"}),
    _call(6, "memory_search", {"query": "deploy key rotation"}),
    _call(7, "memory_status", None),
    _call(8, "memory_search", {"query": "x", "q": 1}),  # an unknown argument: isError
    _call(9, "memory_search", {}),  # a missing argument: isError
    _call(10, "no_such_tool", {}),  # a protocol error
    _call(11, "memory_unlock", {"passphrase": "not offered"}),  # hidden: like an unknown tool
    {"jsonrpc": "2.0", "id": 12, "method": "resources/list"},  # handed to the SDK mid-session
    {"jsonrpc": "2.0", "id": 13, "method": "tools/list"},  # the SDK answers from here on
    _call(14, "memory_get", {"id": "0" * 32}),
]


def _answers(setup: VaultSetup, version: str, *, sdk_from_start: bool) -> Iterator[Any]:
    server = RawServer(["serve", "--caller", "user"], setup.env(**LIGHT))
    try:
        if sdk_from_start:
            server.ping(100)
        server.send(_initialize(1, version))
        yield _comparable(server.reply_to(1))
        server.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        for request in SESSION:
            server.send(request)
            yield _comparable(server.reply_to(request["id"]))
    finally:
        server.close()


def _comparable(message: dict[str, Any]) -> Any:
    """The answer without what legitimately differs between two runs: stored ids."""
    content = message.get("result", {}).get("structuredContent", {})
    for entry in content.get("results", []):
        entry.pop("id", None)
        entry.pop("saved_at", None)
    if content.get("results"):
        message["result"]["content"] = "(checked through structuredContent)"
    return message


@pytest.mark.parametrize("version", ["2025-06-18", "2024-11-05"])
def test_the_plain_loop_answers_what_the_sdk_answers(setup: VaultSetup, version: str) -> None:
    plain = list(_answers(setup, version, sdk_from_start=False))
    sdk_setup = setup  # a second, fresh vault would differ in its path; reuse and compare
    sdk = list(_answers(sdk_setup, version, sdk_from_start=True))
    assert len(plain) == len(sdk) == len(SESSION) + 1
    for request, ours, theirs in zip([{"id": 1}, *SESSION], plain, sdk, strict=True):
        if request["id"] in (5, 6):  # the second run stores a duplicate and finds two
            assert ("error" in ours) == ("error" in theirs)
            continue
        assert ours == theirs, request


def test_the_loop_negotiates_the_sdks_handshake_versions() -> None:
    assert HANDSHAKE_VERSIONS == HANDSHAKE_PROTOCOL_VERSIONS


def test_an_unknown_protocol_version_is_negotiated_by_the_sdk(setup: VaultSetup) -> None:
    server = RawServer(["serve"], setup.env(**LIGHT))
    try:
        server.send(_initialize(1, "1999-01-01"))
        answer = server.reply_to(1)
        assert answer["result"]["protocolVersion"] in HANDSHAKE_PROTOCOL_VERSIONS
        server.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        server.send({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
        assert {tool["name"] for tool in server.reply_to(2)["result"]["tools"]} == OFFERED
    finally:
        server.close()


def test_a_malformed_line_mid_session_is_answered_and_the_session_goes_on(
    setup: VaultSetup,
) -> None:
    server = RawServer(["serve"], setup.env(**LIGHT))
    try:
        server.open_session()
        server.send(b'{"jsonrpc": "2.0", "id": 5, "method": "tools/list", "params": [1]}')
        assert server.reply_to(5)["error"]["code"] == -32602
        server.ping(6)
        server.call_tool(7, "memory_status", {})
        assert server.reply_to(7)["result"]["isError"] is False
    finally:
        server.close()


def test_a_call_in_flight_at_end_of_input_is_still_answered(setup: VaultSetup) -> None:
    server = RawServer(["serve"], setup.env(**LIGHT))
    server.open_session()
    server.call_tool(2, "memory_status", {})
    code, _ = server.close()
    assert code == 0
    answer = server.reply_to(2)
    assert answer["result"]["structuredContent"]["caller"] == "user"
