"""A real MCP server subprocess driven line by line, below any SDK: for tests that send what no
well-behaved client would and need to see exactly what comes back."""

from __future__ import annotations

import json
import queue
import subprocess
import threading
from collections.abc import Mapping, Sequence
from typing import Any

from tests.support import PYTHON, handshake

REPLY_WAIT_S = 120.0
"""How long to wait for a reply before calling the server hung (a guard, not a measurement)."""


class RawServer:
    """``python -m affidavit ARGS`` with its stdin and stdout in the test's hands."""

    def __init__(self, args: Sequence[str], env: Mapping[str, str]) -> None:
        self.process = subprocess.Popen(
            [PYTHON, "-m", "affidavit", *args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=dict(env),
        )
        self._lines: queue.Queue[bytes] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self._lines.put(line)

    def send(self, message: str | bytes | Mapping[str, Any]) -> None:
        """Write one line: a message (serialized here) or raw text/bytes exactly as given."""
        if isinstance(message, Mapping):
            message = json.dumps(message)
        raw = message.encode() if isinstance(message, str) else message
        assert self.process.stdin is not None
        self.process.stdin.write(raw + b"\n")
        self.process.stdin.flush()

    def next_message(self, wait: float = REPLY_WAIT_S) -> dict[str, Any]:
        """The next line the server writes, which must be one JSON-RPC message."""
        try:
            line = self._lines.get(timeout=wait)
        except queue.Empty:
            raise AssertionError(f"the server wrote nothing for {wait:g} s") from None
        message = json.loads(line)
        assert isinstance(message, dict) and message.get("jsonrpc") == "2.0", line
        return message

    def reply_to(self, request_id: Any) -> dict[str, Any]:
        """The server's reply to ``request_id`` (a response or an error; notifications skipped)."""
        while True:
            message = self.next_message()
            if "method" not in message and message.get("id") == request_id:
                return message

    def open_session(self) -> None:
        """The MCP handshake, with its reply checked."""
        initialize, initialized = handshake("raw-wire")
        self.send(initialize)
        assert "result" in self.reply_to(initialize["id"])
        self.send(initialized)

    def call_tool(self, request_id: int, name: str, arguments: Mapping[str, Any]) -> None:
        """Send a ``tools/call`` request (its answer is read with :meth:`reply_to`)."""
        params = {"name": name, "arguments": dict(arguments)}
        self.send({"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params})

    def ping(self, request_id: int) -> None:
        """Prove the server still serves: a ping must come back as an empty result."""
        self.send({"jsonrpc": "2.0", "id": request_id, "method": "ping"})
        assert self.reply_to(request_id) == {"jsonrpc": "2.0", "id": request_id, "result": {}}

    def close(self, wait: float = REPLY_WAIT_S) -> tuple[int, str]:
        """Close stdin as a client that goes away does; the exit code and stderr."""
        assert self.process.stdin is not None and self.process.stderr is not None
        self.process.stdin.close()
        try:
            code = self.process.wait(timeout=wait)
        finally:
            if self.process.poll() is None:
                self.process.kill()
                self.process.wait()
        return code, self.process.stderr.read().decode("utf-8", errors="replace")
