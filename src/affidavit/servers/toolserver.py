"""Serve MCP tools over stdio, answering the common messages without importing the MCP SDK.

Why: importing the SDK's low-level server costs 0.5-1 s on this kind of machine (two
generations of pydantic protocol models), and an MCP client waits for ``initialize`` and
``tools/list`` before its agent can do anything. What those answers hold is static (server
info, instructions, the tool catalogue as JSON), and a ``tools/call`` result is one small
JSON object built by :mod:`.toolkit` for both paths. So a plain loop answers, from the first
line: ``initialize`` (a handshake-era protocol version), ``notifications/initialized``,
``ping``, ``tools/list`` and ``tools/call``, each only in the exact shape it knows.

Anything else (another method, a second ``initialize``, a protocol revision it does not
know, a line it cannot read or would read differently from the SDK: a lone surrogate, a
batch, an unusual id) is handed to the SDK: the loop waits for its call in flight, imports
the SDK, and replays the handshake lines and the new line into the SDK's session through
:func:`affidavit.servers.stdio.stdio_transport`, which drops the SDK's second reply to the
replayed ``initialize``. From then on the SDK serves the session exactly as it would have
from the start (ADR 0110). Tests compare both paths' answers message by message.

Calls run on one worker thread, one at a time (the vault and its index are not re-entrant);
the reading thread keeps answering ``ping`` meanwhile. At end of input the loop waits for the
call in flight and writes its answer before returning.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from contextlib import suppress
from dataclasses import dataclass
from typing import Any

from affidavit.servers.standard_streams import Wire, claim

#: The protocol revisions negotiated by ``initialize`` that this loop answers (the SDK's
#: ``HANDSHAKE_PROTOCOL_VERSIONS``; a test keeps them equal). Any other: handed to the SDK.
HANDSHAKE_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
INVALID_PARAMS = -32602
_ENVELOPE = frozenset({"jsonrpc", "id", "method", "params"})
_CLIENT_INFO = ("name", "version")
_CALL_PARAMS = frozenset({"name", "arguments", "_meta"})
#: A ``\\uD800``-``\\uDFFF`` escape: maybe a lone surrogate, which the SDK refuses.
_SURROGATE = re.compile(rb"\\u[dD][89abcdefABCDEF]")


class UnknownToolError(Exception):
    """A ``tools/call`` for a tool the server does not offer (a protocol error)."""


@dataclass(frozen=True)
class ToolServer:
    """What the loop needs from a server: its ``initialize`` answer, its tools, and the SDK
    server to hand unusual sessions to (built only then)."""

    name: str
    title: str
    version: str
    instructions: str
    list_tools: Callable[[], list[dict[str, Any]]]
    call_tool: Callable[[str, dict[str, Any] | None], dict[str, Any]]
    sdk_server: Callable[[], Any]

    def initialize_result(self, version: str) -> dict[str, Any]:
        return {
            "capabilities": {"tools": {"listChanged": False}},
            "instructions": self.instructions,
            "protocolVersion": version,
            "serverInfo": {"name": self.name, "title": self.title, "version": self.version},
        }


def serve_stdio(server: ToolServer) -> None:
    """Serve ``server`` over this process's stdin/stdout until the client closes stdin."""
    wire = claim()
    try:
        takeover = _FastSession(server, wire).run()
    except BaseException:
        wire.release()
        raise
    if takeover is None:
        wire.release()
        return
    _hand_over(server, takeover)


class _FastSession:
    """One client session on the plain loop, until its end or a hand-over."""

    def __init__(self, server: ToolServer, wire: Wire) -> None:
        self.server = server
        self.wire = wire
        self.handshake: list[bytes] = []  # the lines the SDK must replay on a hand-over
        self.initialize_id: int | str | None = None

    def run(self) -> Any:
        """None at end of input, or the :class:`~affidavit.servers.stdio.Takeover` for the SDK."""
        worker = ThreadPoolExecutor(1, thread_name_prefix="affidavit-call")
        try:
            while line := self.wire.incoming.readline():
                if not line.strip():
                    continue  # a blank line is no message
                message = _plain(line)
                if message is None or not self._answer(message, line, worker):
                    worker.shutdown(wait=True)  # its answers go out before the SDK's
                    from affidavit.servers.stdio import Takeover

                    return Takeover(self.wire, [*self.handshake, line], self.initialize_id)
        finally:
            worker.shutdown(wait=True)
        return None

    def _answer(self, message: dict[str, Any], line: bytes, worker: ThreadPoolExecutor) -> bool:
        """Answer ``message`` if this loop knows its exact shape; False to hand it over."""
        method, params = message["method"], message.get("params", {})
        if "id" not in message:
            if method == "notifications/initialized" and self.initialize_id is not None:
                self.handshake.append(line)
                return True
            return False
        request_id = message["id"]
        if self.initialize_id is None:
            version = _handshake_version(method, params)
            if version is None:
                return False
            self.initialize_id = request_id
            self.handshake.append(line)
            self._reply(request_id, self.server.initialize_result(version))
        elif method == "ping" and not params:
            self._reply(request_id, {})
        elif method == "tools/list" and set(params) <= {"cursor", "_meta"}:
            self._reply(request_id, {"tools": self.server.list_tools()})
        elif method == "tools/call" and _call_shape(params):
            worker.submit(self._call, request_id, params["name"], params.get("arguments"))
        else:
            return False
        return True

    def _call(self, request_id: int | str, name: str, arguments: dict[str, Any] | None) -> None:
        try:
            result = self.server.call_tool(name, arguments)
        except UnknownToolError:
            error = {"code": INVALID_PARAMS, "message": f"Unknown tool: {name}"}
            self._send({"jsonrpc": "2.0", "id": request_id, "error": error})
            return
        self._reply(request_id, result)

    def _reply(self, request_id: int | str, result: dict[str, Any]) -> None:
        self._send({"jsonrpc": "2.0", "id": request_id, "result": result})

    def _send(self, message: dict[str, Any]) -> None:
        data = json.dumps(message, ensure_ascii=False, separators=(",", ":"))
        with suppress(BrokenPipeError):  # the client left; the loop ends at end of input
            self.wire.write_line(data.encode("utf-8"))


def _plain(line: bytes) -> dict[str, Any] | None:
    """The message on ``line`` when it is one plain JSON-RPC request or notification that
    the SDK would read the same way; None for anything to hand over."""
    if _SURROGATE.search(line):
        return None
    try:
        message = _DECODER.decode(line.decode("utf-8"))
    except ValueError:  # UnicodeDecodeError included
        return None
    if not isinstance(message, dict) or not set(message) <= _ENVELOPE:
        return None
    if message.get("jsonrpc") != "2.0" or not isinstance(message.get("method"), str):
        return None
    if not isinstance(message.get("params", {}), dict):
        return None
    request_id = message.get("id", "")
    if isinstance(request_id, bool) or not isinstance(request_id, int | str):
        return None
    return message


def _refuse(constant: str) -> Any:
    raise ValueError(f"{constant} is not JSON")


#: One decoder for every line: NaN and Infinity are not JSON, so the SDK would refuse them.
_DECODER = json.JSONDecoder(parse_constant=_refuse)


def _handshake_version(method: str, params: dict[str, Any]) -> str | None:
    """The version to answer an ``initialize`` of a known shape and revision with."""
    if method != "initialize":
        return None
    version, info = params.get("protocolVersion"), params.get("clientInfo")
    if version not in HANDSHAKE_VERSIONS or not isinstance(params.get("capabilities"), dict):
        return None
    if not isinstance(info, dict) or not all(
        isinstance(info.get(k), str) for k in ("name", "version")
    ):
        return None
    return str(version)


def _call_shape(params: dict[str, Any]) -> bool:
    return (
        set(params) <= _CALL_PARAMS
        and isinstance(params.get("name"), str)
        and isinstance(params.get("arguments", {}), dict | None)
        and isinstance(params.get("_meta", {}), dict)
    )


def _hand_over(server: ToolServer, takeover: Any) -> None:
    """Serve the rest of the session with the SDK (imported only now)."""
    import anyio

    from affidavit.servers.stdio import stdio_transport

    sdk = server.sdk_server()

    async def main() -> None:
        async with stdio_transport(takeover) as (read_stream, write_stream):
            await sdk.run(read_stream, write_stream, sdk.create_initialization_options())

    anyio.run(main)
