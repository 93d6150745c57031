"""A minimal host that speaks raw JSON-RPC lines to an MCP process, for the benchmarks.

No SDK sits between the clock and the pipes, so what a benchmark measures is the process under
test (a server, or the proxy in front of one), not the client. Scripts in ``benchmarks/``
import it as ``from _rpc import LineClient``: running ``python benchmarks/X.py`` puts this
folder on ``sys.path``.
"""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path
from typing import Any


class LineClient:
    """One child process with its stdin/stdout as a blocking JSON-RPC line channel."""

    def __init__(self, argv: list[str], env: dict[str, str], cwd: Path | None = None) -> None:
        self.started = time.perf_counter()
        self.proc = subprocess.Popen(
            argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=env,
            cwd=cwd,
        )
        self.next_id = 0

    def send(self, message: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(message).encode() + b"\n")
        self.proc.stdin.flush()

    def notify(self, method: str) -> None:
        self.send({"jsonrpc": "2.0", "method": method})

    def request(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        """Send a request and return its reply, skipping whatever else arrives first (progress,
        or a request from the other side that happens to carry the same id)."""
        self.next_id += 1
        self.send({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params or {}})
        assert self.proc.stdout is not None
        while True:
            line = self.proc.stdout.readline()
            if not line:
                raise RuntimeError(f"{self.proc.args[0]} exited while {method} was pending")
            message = json.loads(line)
            if message.get("id") == self.next_id and "method" not in message:
                return dict(message)

    def initialize(self) -> float:
        """Open the MCP session; return the seconds from spawn to the ``initialize`` reply."""
        reply = self.request(
            "initialize",
            {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "bench", "version": "0"},
            },
        )
        seconds = time.perf_counter() - self.started
        assert "result" in reply, reply
        self.notify("notifications/initialized")
        return seconds

    def rss_mb(self) -> float:
        """The child's resident memory now, in MiB (Linux ``/proc``)."""
        for line in Path(f"/proc/{self.proc.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
        return float("nan")

    def close(self, timeout: float = 30) -> None:
        """Close stdin (the MCP way to stop a stdio server) and wait; kill it if it hangs."""
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        try:
            self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
