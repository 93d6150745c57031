"""The proxy's own stdin/stdout, the host side of the relay, as asyncio streams.

Pipes and sockets (what every MCP host gives a stdio server) are driven by the event loop
directly. Anything else (a terminal, a regular file) is read by a thread and written
synchronously, because making a shared terminal non-blocking would break stderr.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import stat
import sys
import threading
from typing import BinaryIO

from affidavit.proxy.backend_stdio import LINE_LIMIT


def _is_stream(fd: int) -> bool:
    mode = os.fstat(fd).st_mode
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)


class HostIO:
    """Line input from the host and buffered output to it."""

    def __init__(self) -> None:
        self._reader: asyncio.StreamReader | None = None
        self._writer: asyncio.StreamWriter | None = None
        self._queue: asyncio.Queue[bytes | None] | None = None
        self._out: BinaryIO = sys.stdout.buffer
        self.closed = False

    async def open(self) -> None:
        """Attach to fds 0 and 1."""
        loop = asyncio.get_running_loop()
        if _is_stream(0):
            self._reader = asyncio.StreamReader(limit=LINE_LIMIT)
            protocol = asyncio.StreamReaderProtocol(self._reader)
            await loop.connect_read_pipe(lambda: protocol, sys.stdin.buffer)
        else:
            self._queue = asyncio.Queue()
            threading.Thread(target=self._pump, args=(loop,), daemon=True).start()
        if _is_stream(1):
            transport, proto = await loop.connect_write_pipe(
                asyncio.streams.FlowControlMixin, sys.stdout.buffer
            )
            self._writer = asyncio.StreamWriter(transport, proto, None, loop)

    def _pump(self, loop: asyncio.AbstractEventLoop) -> None:
        assert self._queue is not None
        queue = self._queue
        with contextlib.suppress(OSError, ValueError, RuntimeError):
            for line in iter(sys.stdin.buffer.readline, b""):
                loop.call_soon_threadsafe(queue.put_nowait, line)
            loop.call_soon_threadsafe(queue.put_nowait, None)

    async def readline(self) -> bytes | None:
        """The next line from the host without its newline; ``None`` at end of input."""
        if self._queue is not None:
            line = await self._queue.get()
        else:
            assert self._reader is not None
            try:
                line = await self._reader.readline()
            except (ValueError, asyncio.LimitOverrunError):
                return b""
        if not line:
            return None
        return line.rstrip(b"\r\n")

    def write(self, line: bytes) -> None:
        """Queue one line (newline added) for the host; never blocks the loop on a pipe."""
        if self.closed:
            return
        data = line + b"\n"
        try:
            if self._writer is not None:
                self._writer.write(data)
            else:
                self._out.write(data)
                self._out.flush()
        except (BrokenPipeError, ConnectionResetError, RuntimeError):
            self.closed = True

    async def drain(self) -> None:
        """Wait while the host is slow to read (back-pressure), not on every write."""
        if self._writer is not None and not self.closed:
            try:
                await self._writer.drain()
            except (BrokenPipeError, ConnectionResetError, RuntimeError):
                self.closed = True

    async def close(self) -> None:
        """Flush what is queued and close stdout."""
        if self._writer is not None and not self.closed:
            with contextlib.suppress(BrokenPipeError, ConnectionResetError, RuntimeError):
                await self._writer.drain()
                self._writer.close()
        self.closed = True
