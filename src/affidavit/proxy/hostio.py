"""The proxy's own stdin/stdout, the host side of the relay: blocking lines, one per call.

The relay reads each side in its own thread (see :mod:`affidavit.proxy.relay`), so the host's
input is read with plain blocking reads, whatever fd 0 is (a pipe, a socket, a terminal, a
regular file), and output is written straight to fd 1 under a lock, by whichever thread has
a line for the host. A blocking write is the back-pressure: a host that stops reading holds
up only the thread writing to it.
"""

from __future__ import annotations

import contextlib
import io
import os
import select
import sys
import threading

LINE_LIMIT = 256 * 1024 * 1024
"""Longest line accepted from either side (MCP results can carry whole files)."""
READ_BUFFER = 1 << 16


class LineReader:
    """Newline-framed input from one fd: each line with its newline, ``b""`` for a line over
    :data:`LINE_LIMIT` (skipped to its end), ``None`` at end of input."""

    def __init__(self, fd: int) -> None:
        if not os.get_blocking(fd):  # a parent may have left a shared pipe non-blocking
            os.set_blocking(fd, True)
        self._file = io.BufferedReader(io.FileIO(fd, "rb", closefd=False), READ_BUFFER)

    def readline(self) -> bytes | None:
        try:
            line = self._file.readline(LINE_LIMIT + 1)
        except (OSError, ValueError):
            return None
        if not line:
            return None
        if len(line) > LINE_LIMIT and not line.endswith(b"\n"):
            while True:  # drop the rest of the over-long line
                rest = self._file.readline(READ_BUFFER)
                if not rest or rest.endswith(b"\n"):
                    return b""
        return line


def framed(line: bytes) -> bytes:
    """``line`` as one message on the wire: with exactly one trailing ``\\n``."""
    if line.endswith(b"\n"):
        return line[:-2] + b"\n" if line.endswith(b"\r\n") else line
    return line + b"\n"


def write_all(fd: int, data: bytes) -> None:
    """Write every byte of ``data`` to ``fd`` (waiting for room if the fd is non-blocking)."""
    try:
        written = os.write(fd, data)  # nearly always all of it, at once
    except BlockingIOError:
        written = 0
    view = memoryview(data)[written:]
    while view:
        try:
            written = os.write(fd, view)
        except BlockingIOError:
            select.select([], [fd], [])
            continue
        view = view[written:]


class HostIO:
    """Line input from the host and output to it, safe to use from any thread."""

    def __init__(self) -> None:
        self._reader: LineReader | None = None
        self._lock = threading.Lock()
        self.closed = False

    def open(self) -> None:
        """Attach to fds 0 and 1."""
        self._reader = LineReader(0)

    def readline(self) -> bytes | None:
        """The next line from the host (with its newline); ``None`` at end of input."""
        assert self._reader is not None
        return self._reader.readline()

    def write(self, line: bytes) -> None:
        """Send one message line to the host (a newline is added if missing)."""
        data = framed(line)
        with self._lock:
            if self.closed:
                return
            try:
                write_all(1, data)
            except OSError:  # the host went away (EPIPE) or closed our stdout
                self.closed = True

    def close(self) -> None:
        """Close stdout, so the host sees the end of our output."""
        with self._lock:
            self.closed = True
            with contextlib.suppress(OSError, ValueError):
                sys.stdout.flush()
                sys.stdout.close()
