"""The stdio transport all three affidavit MCP servers run on: one JSON-RPC message per line,
and an answer for every request, even one the server cannot read.

It replaces the SDK's ``stdio_server`` for one reason: that transport drops a line it cannot
validate (``params`` that is not an object, a lone surrogate, a batch, bytes that are not
UTF-8) without a word, and a client that put a request in it waits forever. Here each such
line is answered with the JSON-RPC errors :func:`.malformed.refusals` names, and the server
serves on. Valid lines cost what they cost in the SDK: one validation, straight from bytes.

Like the SDK's transport it claims the standard descriptors while serving: fd 0 then reads
``/dev/null`` and fd 1 writes to stderr, so a child process or a stray ``print`` can neither
swallow nor corrupt protocol lines; both are restored on exit. Every file object it needs is
opened on entry, so it keeps working once the pack server arms its read-only sandbox
(:mod:`affidavit.core.sandbox`) inside the ``async with``.
"""

from __future__ import annotations

import os
import sys
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager, suppress
from typing import IO, Any

import anyio
import mcp_types as types
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from mcp.shared.message import SessionMessage

from affidavit.servers.malformed import Refusal, refusals

Streams = tuple[
    MemoryObjectReceiveStream[SessionMessage | Exception], MemoryObjectSendStream[SessionMessage]
]


@asynccontextmanager
async def stdio_transport() -> AsyncIterator[Streams]:
    """``(read_stream, write_stream)`` over this process's stdin and stdout, for
    ``Server.run``; the context ends once the client closes stdin and every reply is out."""
    wire_in, wire_out, release = _claim_standard_streams()
    read_send, read_stream = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    write_stream, write_receive = anyio.create_memory_object_stream[SessionMessage](0)
    answers = write_stream.clone()  # the reader's own handle, for the errors it sends back

    async def read_lines() -> None:
        async with read_send, answers:
            while line := await anyio.to_thread.run_sync(wire_in.readline):
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
                data = outgoing.message.model_dump_json(by_alias=True, exclude_unset=True)
                await anyio.to_thread.run_sync(_write_line, wire_out, data.encode("utf-8"))

    try:
        async with anyio.create_task_group() as group:
            group.start_soon(_until_closed, read_lines)
            group.start_soon(_until_closed, write_lines)
            yield read_stream, write_stream
    finally:
        release()


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


def _write_line(wire: IO[bytes], data: bytes) -> None:
    wire.write(data + b"\n")
    wire.flush()


def _claim_standard_streams() -> tuple[IO[bytes], IO[bytes], Callable[[], None]]:
    """The wire's input and output on private descriptors, fd 0 and 1 pointed elsewhere, and
    the function that points them back."""
    sys.stdout.flush()
    wire_in_fd, wire_out_fd = os.dup(0), os.dup(1)
    nothing = os.open(os.devnull, os.O_RDONLY)
    os.dup2(nothing, 0)
    os.close(nothing)
    os.dup2(2, 1)

    def release() -> None:
        os.dup2(wire_in_fd, 0)
        os.dup2(wire_out_fd, 1)

    # closefd=False: a reader thread may still be blocked on the descriptor at exit, so it is
    # never closed (and never reused under that thread).
    wire_in = os.fdopen(wire_in_fd, "rb", closefd=False)
    wire_out = os.fdopen(wire_out_fd, "wb", closefd=False)
    return wire_in, wire_out, release
