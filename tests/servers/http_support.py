"""Start a real affidavit server with ``--http`` and talk to it over real HTTP."""

from __future__ import annotations

import re
import subprocess
import threading
from collections.abc import Iterator, Mapping, Sequence
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from tests.support import PYTHON, cli_env

_READY = re.compile(r"serving .* at (https?://\S+)")
JSON_HEADERS = {
    "content-type": "application/json",
    "accept": "application/json, text/event-stream",
    "mcp-protocol-version": "2025-06-18",
}
SEARCH_CALL = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "tools/call",
    "params": {"name": "memory_search", "arguments": {"query": "cat"}},
}


@dataclass
class HttpServer:
    """A running server process, its URL, and everything it wrote to stderr so far."""

    process: subprocess.Popen[str]
    url: str
    stderr: list[str] = field(default_factory=list)

    def log(self) -> str:
        """All of stderr so far."""
        return "".join(self.stderr)


@contextmanager
def http_server(
    args: Sequence[str], home: Path, env: Mapping[str, str] | None = None
) -> Iterator[HttpServer]:
    """``affidavit ARGS`` (which include ``--http HOST:0``) until the block ends."""
    process = subprocess.Popen(
        [PYTHON, "-m", "affidavit", *args],
        env=cli_env(home, env),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert process.stderr is not None
    lines: list[str] = []
    url = None
    for line in process.stderr:
        lines.append(line)
        found = _READY.search(line)
        if found:
            url = found.group(1)
            break
    if url is None:
        process.wait(timeout=30)
        raise AssertionError(f"the server did not start: {''.join(lines)}")
    server = HttpServer(process, url, lines)
    drain = threading.Thread(target=lambda: server.stderr.extend(process.stderr or []))
    drain.start()
    try:
        yield server
    finally:
        process.terminate()
        process.wait(timeout=30)
        drain.join(timeout=30)


@asynccontextmanager
async def http_client(
    url: str, token: str | None, mode: str = "legacy", **http_options: Any
) -> Any:
    """The official SDK client over Streamable HTTP, sending ``token`` as a bearer token."""
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    async with (
        httpx2.AsyncClient(headers=headers, timeout=60, **http_options) as http,
        Client(streamable_http_client(url, http_client=http), mode=mode) as client,  # type: ignore[arg-type]
    ):
        yield client
