"""Helpers every test module shares: run the real CLI, start real MCP servers over stdio.

Subprocesses run ``python -m affidavit`` with the offline guard on and with ``HOME`` and
``AFFIDAVIT_HOME`` pointed at the test's temporary directory, so no test touches the real home.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from mcp import Client, StdioServerParameters

PYTHON = sys.executable
REPO_ROOT = Path(__file__).resolve().parents[1]
NODE_TOOLS = Path(
    os.environ.get("AFFIDAVIT_NODE_TOOLS", REPO_ROOT / ".ci" / "node-tools" / "node_modules")
)
"""The node_modules folder with Node 22, the MCP Inspector CLI and the official filesystem
server; CI names it in ``AFFIDAVIT_NODE_TOOLS``."""
INSPECTOR = NODE_TOOLS / ".bin" / "mcp-inspector"
GIT_IDENTITY = {
    "GIT_AUTHOR_NAME": "Ada Tester",
    "GIT_AUTHOR_EMAIL": "ada@example.invalid",
    "GIT_COMMITTER_NAME": "Ada Tester",
    "GIT_COMMITTER_EMAIL": "ada@example.invalid",
    "GIT_CONFIG_NOSYSTEM": "1",
}
"""Environment for real git in tests: a fixed, fake author, and no system config to leak in."""


def cli_env(home: Path, extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment for a CLI subprocess rooted in ``home`` (a temporary directory)."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith("AFFIDAVIT_") and k not in {"PYTEST_CURRENT_TEST"}
    }
    env.update(
        {
            "HOME": str(home),
            "AFFIDAVIT_HOME": str(home / ".affidavit"),
            "AFFIDAVIT_ASSERT_OFFLINE": "1",
            "PYTHONUNBUFFERED": "1",
        }
    )
    if extra:
        env.update(extra)
    return env


def run_cli(
    args: Sequence[str],
    home: Path,
    *,
    env: Mapping[str, str] | None = None,
    input: str | bytes | None = None,
    cwd: Path | None = None,
    timeout: float = 120,
) -> subprocess.CompletedProcess[str]:
    """Run ``affidavit ARGS`` as a real process; return it with text stdout/stderr."""
    if isinstance(input, bytes):
        input = input.decode("utf-8")
    return subprocess.run(
        [PYTHON, "-m", "affidavit", *args],
        env=cli_env(home, env),
        input=input,
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=timeout,
        check=False,
    )


def run_on_terminal(
    args: Sequence[str], env: Mapping[str, str], prompt: bytes, typed: bytes
) -> tuple[int, str]:
    """Run ``affidavit ARGS`` with a pseudo-terminal as its controlling terminal, type ``typed``
    once ``prompt`` appears on it; return the exit code and everything the terminal showed."""
    import pty
    import select

    pid, fd = pty.fork()
    if pid == 0:  # the child: becomes the CLI
        os.execve(PYTHON, [PYTHON, "-m", "affidavit", *args], dict(env))  # noqa: S606
    seen = b""
    sent = False
    while True:
        ready, _, _ = select.select([fd], [], [], 120)
        if not ready:
            os.kill(pid, 9)
            break
        try:
            chunk = os.read(fd, 4096)
        except OSError:  # EIO: the child closed the terminal
            break
        if not chunk:
            break
        seen += chunk
        if not sent and prompt in seen:
            os.write(fd, typed)
            sent = True
    _, status = os.waitpid(pid, 0)
    os.close(fd)
    return os.waitstatus_to_exitcode(status), seen.decode("utf-8", "replace")


def run_demo_section(section: str, workdir: Path, home: Path) -> subprocess.CompletedProcess[str]:
    """One section of ``affidavit demo`` (``affidavit.cli.demo_<section>.run``) run for real in
    a child process on ``workdir``, its output wide enough that no check reads a wrapped line."""
    script = (
        f"import sys, pathlib; from affidavit.cli.demo_{section} import run; "
        "run(pathlib.Path(sys.argv[1]))"
    )
    return subprocess.run(
        [PYTHON, "-c", script, str(workdir)],
        env={**cli_env(home), "COLUMNS": "200"},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def stdio_server(
    args: Sequence[str], home: Path, *, env: Mapping[str, str] | None = None
) -> StdioServerParameters:
    """Parameters for the official MCP client to launch ``affidavit ARGS`` over stdio."""
    return StdioServerParameters(
        command=PYTHON, args=["-m", "affidavit", *args], env=cli_env(home, env)
    )


def mcp_client(
    args: Sequence[str],
    home: Path,
    *,
    env: Mapping[str, str] | None = None,
    **client_options: object,
) -> Client:
    """An official ``mcp.Client`` for ``affidavit ARGS``; use as ``async with``."""
    return Client(stdio_server(args, home, env=env), **client_options)  # type: ignore[arg-type]


def node_first(env: Mapping[str, str]) -> dict[str, str]:
    """``env`` with the bundled Node 22 first on ``PATH``: the Inspector and the official
    filesystem server need a newer Node than the system may have."""
    return {**env, "PATH": f"{NODE_TOOLS / '.bin'}{os.pathsep}{env.get('PATH', '')}"}


def inspector_cli(
    args: Sequence[str], env: Mapping[str, str], *, timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    """Run the official MCP Inspector CLI (``mcp-inspector --cli ARGS``), a second client
    independent of the Python SDK, in ``env`` with Node 22 first; return it with text output."""
    return subprocess.run(
        [str(INSPECTOR), "--cli", *args],
        env=node_first(env),
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def inspector_tool_call(tool: str, **arguments: str) -> list[str]:
    """Inspector CLI flags for one ``tools/call`` of ``tool`` with string ``arguments``."""
    flags = ["--method", "tools/call", "--tool-name", tool]
    for name, value in arguments.items():
        flags += ["--tool-arg", f"{name}={value}"]
    return flags


def handshake(
    client: str, *, request_id: int = 1, capabilities: Mapping[str, Any] | None = None
) -> list[dict[str, Any]]:
    """The two raw JSON-RPC messages that open an MCP session: ``initialize`` (which the server
    answers) and ``notifications/initialized``; for tests that write the wire below any SDK."""
    return [
        {
            "jsonrpc": "2.0",
            "id": request_id,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": dict(capabilities or {}),
                "clientInfo": {"name": client, "version": "0"},
            },
        },
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
    ]


def model_service_pid(runtime: Path) -> int | None:
    """The pid the user's model service wrote into its lock under ``runtime`` (the
    AFFIDAVIT_RUNTIME_DIR it was started with), or None when none was started there."""
    from affidavit.recall.model_service import LOCK_NAME

    lock = runtime / f"affidavit-{os.getuid()}" / LOCK_NAME
    text = lock.read_text() if lock.exists() else ""
    return int(text) if text.isdigit() else None


def process_alive(pid: int) -> bool:
    """Whether ``pid`` is a running process (a zombie waiting for its parent is not)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"
