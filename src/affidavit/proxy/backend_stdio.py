"""A backend MCP server run as a subprocess speaking newline-delimited JSON-RPC on stdio.

The child's stderr is inherited (its logs stay visible to the host, which shows server stderr).
Closing follows the MCP stdio shutdown sequence: close the child's stdin, wait, then SIGTERM,
then SIGKILL, so a well-behaved server exits on its own and a stuck one cannot outlive us.
"""

from __future__ import annotations

import asyncio
import contextlib
import shutil
from collections.abc import Sequence
from pathlib import Path

from affidavit.core.errors import ExternalError, UsageError

LINE_LIMIT = 256 * 1024 * 1024
"""Longest line accepted from a backend (MCP results can carry whole files)."""


class StdioBackend:
    """One backend subprocess."""

    def __init__(self, argv: Sequence[str]) -> None:
        if not argv:
            raise UsageError(
                "no backend command", "put it after `--`, e.g. `affidavit proxy -- mcp-server-git`"
            )
        self.argv = tuple(argv)
        self.process: asyncio.subprocess.Process | None = None

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
            self.process = await asyncio.create_subprocess_exec(
                *self.argv,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                limit=LINE_LIMIT,
            )
        except OSError as exc:
            raise ExternalError(
                f"backend command {program!r} could not start ({exc.strerror})",
                "check the command after `--`",
            ) from None

    async def send(self, line: bytes) -> None:
        """Write one message line (with its newline) to the child."""
        assert self.process is not None and self.process.stdin is not None
        self.process.stdin.write(line)
        await self.process.stdin.drain()

    async def receive(self) -> bytes | None:
        """The next line from the child (without the newline), or ``None`` once it closed."""
        assert self.process is not None and self.process.stdout is not None
        try:
            line = await self.process.stdout.readline()
        except (ValueError, asyncio.LimitOverrunError):
            return b""  # an over-long line: reported as invalid by the relay, then dropped
        if not line:
            return None
        return line.rstrip(b"\r\n")

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
        process = self.process
        if process is None or process.returncode is not None:
            if process is not None:
                await process.wait()
            return
        if process.stdin is not None:
            with contextlib.suppress(OSError, RuntimeError):
                process.stdin.close()
        for action in (None, process.terminate, process.kill):
            if action is not None:
                with contextlib.suppress(ProcessLookupError):
                    action()
            try:
                await asyncio.wait_for(process.wait(), grace)
                return
            except TimeoutError:
                continue
