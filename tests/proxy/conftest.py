"""Fixtures for the relay tests: the real proxy process driven over raw pipes.

:class:`RawProxy` writes JSON-RPC lines to ``affidavit proxy``'s stdin exactly as given and
reads what comes out, so tests can check bytes on the wire. The backend is usually
``raw_backend.py`` (scripted, logs what it receives); the file verifier in
``file_verifier.py`` is loaded with ``--verifier``.
"""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from tests.support import cli_env, handshake

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
RAW_BACKEND = [sys.executable, str(HERE / "raw_backend.py")]
VERIFIER = "tests.proxy.file_verifier:FileWriteVerifier"


def proxy_env(home: Path, extra: dict[str, str] | None = None) -> dict[str, str]:
    """The environment for a proxy subprocess: the fake home plus the repo on the path."""
    env = cli_env(home, extra)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH", "")]))
    return env


class RawProxy:
    """``affidavit proxy ARGS -- BACKEND`` with its stdin/stdout as raw byte pipes."""

    def __init__(self, args: Sequence[str], home: Path, env: dict[str, str] | None = None) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "affidavit", "proxy", *args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=proxy_env(home, env),
            cwd=REPO,
        )
        self._lines: queue.Queue[bytes | None] = queue.Queue()
        self._stderr: list[bytes] = []
        threading.Thread(target=self._pump, daemon=True).start()
        threading.Thread(target=self._pump_err, daemon=True).start()

    def _pump(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self._lines.put(line)
        self._lines.put(None)

    def _pump_err(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self._stderr.append(line)

    @property
    def stderr(self) -> str:
        return b"".join(self._stderr).decode("utf-8", "replace")

    def saw(self, text: str, timeout: float = 30) -> bool:
        """Whether ``text`` appears on the proxy's stderr (read by a thread: allow it time)."""
        deadline = time.monotonic() + timeout
        while text not in self.stderr:
            if time.monotonic() > deadline:
                return False
            time.sleep(0.02)
        return True

    def send(self, data: bytes | dict[str, Any]) -> None:
        if isinstance(data, dict | list):
            data = json.dumps(data).encode() + b"\n"
        assert self.proc.stdin is not None
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def recv_raw(self, timeout: float = 60) -> bytes | None:
        """The next raw line (with its newline), ``None`` at end of output."""
        try:
            return self._lines.get(timeout=timeout)
        except queue.Empty:
            raise AssertionError(
                f"no output from the proxy in {timeout}s; stderr:\n{self.stderr}"
            ) from None

    def recv(self, timeout: float = 60) -> dict[str, Any]:
        line = self.recv_raw(timeout)
        assert line is not None, f"proxy closed its output; stderr:\n{self.stderr}"
        return json.loads(line)

    def request(
        self, request_id: Any, method: str, params: dict[str, Any] | None = None
    ) -> dict[str, Any]:
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            message["params"] = params
        self.send(message)
        return self.recv()

    def initialize(self, capabilities: dict[str, Any] | None = None) -> dict[str, Any]:
        opening, opened = handshake("raw-test-host", request_id=0, capabilities=capabilities)
        self.send(opening)
        reply = self.recv()
        self.send(opened)
        return reply

    def begin_call(self, request_id: Any, name: str, arguments: dict[str, Any]) -> None:
        """Send a ``tools/call`` without waiting for its reply: the proxy or the backend may
        ask the host something first, or other traffic may overtake it."""
        message = {"jsonrpc": "2.0", "id": request_id, "method": "tools/call"}
        self.send({**message, "params": {"name": name, "arguments": arguments}})

    def call(self, request_id: Any, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        self.begin_call(request_id, name, arguments)
        return self.recv()

    def close(self, timeout: float = 30) -> int:
        if self.proc.stdin and not self.proc.stdin.closed:
            self.proc.stdin.close()
        try:
            return self.proc.wait(timeout)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
                self.proc.wait()


@pytest.fixture
def backend_log(tmp_path: Path) -> Path:
    return tmp_path / "backend.log"


@pytest.fixture
def raw_proxy(home: Path, tmp_path: Path, backend_log: Path) -> Iterator[Any]:
    """A factory: ``raw_proxy(*proxy_args, env=...)`` in front of the scripted backend."""
    started: list[RawProxy] = []

    def start(
        *args: str, env: dict[str, str] | None = None, backend: Sequence[str] = RAW_BACKEND
    ) -> RawProxy:
        extra = {"RAW_BACKEND_LOG": str(backend_log), **(env or {})}
        audit = ["--audit-log", str(tmp_path / "audit.jsonl")] if "--audit-log" not in args else []
        proxy = RawProxy([*audit, *args, "--", *backend], home, extra)
        started.append(proxy)
        return proxy

    yield start
    for proxy in started:
        proxy.close()


def backend_lines(log: Path) -> list[bytes]:
    """What the backend received, line by line, exactly."""
    return log.read_bytes().splitlines(keepends=True) if log.exists() else []


def tool_calls(log: Path, name: str) -> int:
    """How many tools/call for ``name`` reached the backend."""
    count = 0
    for line in backend_lines(log):
        try:
            message = json.loads(line)
        except ValueError:
            continue
        if isinstance(message, dict) and message.get("method") == "tools/call":
            count += (message.get("params") or {}).get("name") == name
    return count


def sample_twice(proxy: RawProxy) -> str:
    """The backend asks the host to sample twice (the host answers the first): the text of
    the second call's reply, which a sampling limit of one refuses."""
    proxy.initialize({"sampling": {}})
    proxy.begin_call(1, "ask_host", {})
    ask = proxy.recv()
    assert ask["method"] == "sampling/createMessage"
    answer = {"role": "assistant", "model": "m", "content": {"type": "text", "text": "ok"}}
    proxy.send({"jsonrpc": "2.0", "id": ask["id"], "result": answer})
    assert "ok" in text_of(proxy.recv())
    return text_of(proxy.call(2, "ask_host", {}))


def text_of(reply: dict[str, Any]) -> str:
    return " ".join(c.get("text", "") for c in reply["result"].get("content", []))


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"
