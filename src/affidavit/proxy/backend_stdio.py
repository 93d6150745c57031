"""A backend MCP server run as a subprocess speaking newline-delimited JSON-RPC on stdio.

The relay reads the child's stdout with blocking reads in its own thread and writes to its
stdin with blocking writes (see :mod:`affidavit.proxy.relay`): a line costs one ``read`` and
one ``write`` system call, with no event loop in between. The child's stderr is inherited (its
logs stay visible to the host, which shows server stderr). Closing follows the MCP stdio
shutdown sequence: close the child's stdin, wait, then SIGTERM, then SIGKILL, so a
well-behaved server exits on its own and a stuck one cannot outlive us.
"""

from __future__ import annotations

import asyncio
import contextlib
import shutil
import subprocess
import threading
from collections.abc import Sequence
from pathlib import Path

from affidavit.core.errors import ExternalError, UsageError
from affidavit.proxy.hostio import LineReader, framed, write_all


class StdioBackend:
    """One backend subprocess."""

    def __init__(self, argv: Sequence[str]) -> None:
        if not argv:
            raise UsageError(
                "no backend command", "put it after `--`, e.g. `affidavit proxy -- mcp-server-git`"
            )
        self.argv = tuple(argv)
        self.process: subprocess.Popen[bytes] | None = None
        self._reader: LineReader | None = None
        self._write_lock = threading.Lock()

    @property
    def identity(self) -> str:
        """What names this backend for pinning: its command line."""
        return "stdio:" + " ".join(self.argv)

    async def start(self) -> None:
        """Start the subprocess; a missing program is one clear error."""
        program = self.argv[0]
        if shutil.which(program) is None and not Path(program).is_file():
            raise ExternalError(
                f"backend command {program!r} was not found", "check the command after `--`"
            )
        try:
            self.process = subprocess.Popen(
                self.argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0
            )
        except OSError as exc:
            raise ExternalError(
                f"backend command {program!r} could not start ({exc.strerror})",
                "check the command after `--`",
            ) from None
        assert self.process.stdout is not None
        self._reader = LineReader(self.process.stdout.fileno())

    def send(self, line: bytes) -> None:
        """Write one message line to the child (blocks while its stdin pipe is full).

        A child that has gone away is not an error here: the reader sees its end of output."""
        assert self.process is not None and self.process.stdin is not None
        data = framed(line)
        with self._write_lock, contextlib.suppress(OSError, ValueError):
            write_all(self.process.stdin.fileno(), data)

    def receive(self) -> bytes | None:
        """The next line from the child (with its newline), ``b""`` for an over-long line
        (reported as invalid by the relay, then dropped), ``None`` once it closed its output."""
        assert self._reader is not None
        return self._reader.readline()

    def exit_status(self) -> str:
        """A short description of how the child ended (for error replies)."""
        code = self.process.returncode if self.process else None
        if code is None:
            return "closed its output"
        if code < 0:
            return f"was killed by signal {-code}"
        return f"exited with code {code}"

    async def close(self, grace: float = 5.0) -> None:
        """Stop the child politely, then firmly; safe to call more than once."""
        if self.process is not None:
            await asyncio.to_thread(self._stop, self.process, grace)

    def _stop(self, process: subprocess.Popen[bytes], grace: float) -> None:
        # a write blocked on a child that stopped reading holds the lock until the child dies:
        # then stdin is closed after the signals (never under a writer's feet, so its fd
        # number cannot be reused while a write is still aimed at it)
        closed = self._close_stdin(process, timeout=grace)
        for action in (None, process.terminate, process.kill):
            if action is not None:
                with contextlib.suppress(ProcessLookupError):
                    action()
            try:
                process.wait(grace)
                break
            except subprocess.TimeoutExpired:
                continue
        if not closed:
            self._close_stdin(process, timeout=-1)

    def _close_stdin(self, process: subprocess.Popen[bytes], timeout: float) -> bool:
        if process.stdin is None:
            return True
        if not self._write_lock.acquire(timeout=timeout):
            return False
        try:
            with contextlib.suppress(OSError):
                process.stdin.close()
        finally:
            self._write_lock.release()
        return True
