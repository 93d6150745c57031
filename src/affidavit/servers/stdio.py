"""The stdio transport all three affidavit MCP servers run on: one JSON-RPC message per line,
and an answer for every request, even one the server cannot read.

It replaces the SDK's ``stdio_server`` for one reason: that transport drops a line it cannot
validate (``params`` that is not an object, a lone surrogate, a batch, bytes that are not
UTF-8) without a word, and a client that put a request in it waits forever. Here each such
line is answered with the JSON-RPC errors :func:`.malformed.refusals` names, and the server
serves on. Valid lines cost what they cost in the SDK: one validation, straight from bytes.

Like the SDK's transport it claims the standard descriptors while serving
(:mod:`.standard_streams`); both are restored on exit. Every file object it needs is opened on
entry, so it keeps working once the pack server arms its read-only sandbox
(:mod:`affidavit.core.sandbox`) inside the ``async with``. The memory server's fast path
(:mod:`.toolserver`) hands over a wire it already claimed, the lines it already read (to be
read again) and the id whose reply it already sent (that reply is not sent twice).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager, suppress
from dataclasses import dataclass
from typing import Any

import anyio
import mcp_types as types
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from mcp.shared.message import SessionMessage

from affidavit.servers.malformed import Refusal, refusals
from affidavit.servers.standard_streams import Wire, claim

Streams = tuple[
    MemoryObjectReceiveStream[SessionMessage | Exception], MemoryObjectSendStream[SessionMessage]
]


@dataclass(frozen=True)
class Takeover:
    """A session the fast path started: its wire, lines to read first, and the request id
    whose reply the client already has (the replayed ``initialize``)."""

    wire: Wire
    replay: Sequence[bytes]
    answered: Any = None


@asynccontextmanager
async def stdio_transport(takeover: Takeover | None = None) -> AsyncIterator[Streams]:
    """``(read_stream, write_stream)`` over this process's stdin and stdout, for
    ``Server.run``; the context ends once the client closes stdin and every reply is out."""
    wire = takeover.wire if takeover is not None else claim()
    pending = list(takeover.replay) if takeover is not None else []
    skip = [takeover.answered] if takeover is not None and takeover.answered is not None else []
    read_send, read_stream = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    write_stream, write_receive = anyio.create_memory_object_stream[SessionMessage](0)
    answers = write_stream.clone()  # the reader's own handle, for the errors it sends back

    async def read_lines() -> None:
        async with read_send, answers:
            while line := (pending.pop(0) if pending else await _next_line(wire)):
                if not line.strip():
                    continue  # a blank line is no message, so there is nothing to answer
                message = _validated(line)
                found = refusals(line.rstrip(b"\r\n")) if _suspect(message, line) else []
                for refusal in found:
                    await answers.send(_error_message(refusal))
                if message is not None and not found:
                    await read_send.send(SessionMessage(message))

    async def write_lines() -> None:
        async with write_receive:
            async for outgoing in write_receive:
                if skip and _is_reply_to(outgoing.message, skip[0]):
                    skip.clear()  # the fast path sent this reply already
                    continue
                data = outgoing.message.model_dump_json(by_alias=True, exclude_unset=True)
                await anyio.to_thread.run_sync(wire.write_line, data.encode("utf-8"))

    try:
        async with anyio.create_task_group() as group:
            group.start_soon(_until_closed, read_lines)
            group.start_soon(_until_closed, write_lines)
            yield read_stream, write_stream
    finally:
        wire.release()


async def _next_line(wire: Wire) -> bytes:
    line: bytes = await anyio.to_thread.run_sync(wire.incoming.readline)
    return line


def _is_reply_to(message: types.JSONRPCMessage, request_id: Any) -> bool:
    return isinstance(message, types.JSONRPCResponse | types.JSONRPCError) and (
        message.id == request_id
    )


async def _until_closed(loop: Callable[[], Any]) -> None:
    """Run one direction until its peer goes away (the server stopped reading or writing)."""
    with suppress(anyio.BrokenResourceError, anyio.ClosedResourceError, BrokenPipeError):
        await loop()


def _validated(line: bytes) -> types.JSONRPCMessage | None:
    """The message on ``line`` as the SDK reads it, or None when the SDK refuses it."""
    try:
        return types.jsonrpc_message_adapter.validate_json(line, by_name=False)
    except ValueError:
        return None


def _suspect(message: types.JSONRPCMessage | None, line: bytes) -> bool:
    """Whether ``line`` needs a closer look: the SDK refused it, or it read a request whose id
    MCP does not allow (``null``, ``1.5``, an object) as a notification, dropping the id and
    with it the client's only way to get an answer."""
    return message is None or (isinstance(message, types.JSONRPCNotification) and b'"id"' in line)


def _error_message(refusal: Refusal) -> SessionMessage:
    error = types.ErrorData(code=refusal.code, message=refusal.message)
    return SessionMessage(types.JSONRPCError(jsonrpc="2.0", id=refusal.id, error=error))
