"""How the benchmarks start an MCP server the way a host does, and talk to it with the SDK.

A host (Claude Desktop, an IDE, an evaluation harness) starts a stdio server with a small
environment (HOME, PATH, the login names, the shell, the terminal) plus what the tool
itself is configured with, and speaks to it through an MCP client; so do the benchmarks that
measure from the outside (``benchmarks/mcp_side_by_side.py``, ``benchmarks/agent_memory.py
--via mcp``). Scripts in ``benchmarks/`` import it as ``from _mcp_host import ...``: running
``python benchmarks/X.py`` puts this folder on ``sys.path``.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any

from mcp import Client, StdioServerParameters


def run(argv: list[str], env: dict[str, str], stdin: str | None = None) -> str:
    """Run a command to completion; its stdout, or a RuntimeError with the end of its output."""
    done = subprocess.run(argv, env=env, input=stdin, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(argv[:3])} failed: {(done.stderr or done.stdout)[-500:]}")
    return done.stdout


def minimal_env(home: Path, extra: dict[str, str]) -> dict[str, str]:
    """What an MCP host gives a stdio server (HOME, PATH, ...), plus the tool's own settings.
    ``PYTHONPATH`` is passed on too, so another checkout's code can be measured the same way
    (``PYTHONPATH=/path/to/old/src python benchmarks/mcp_side_by_side.py --only proxy``)."""
    keys = ("PATH", "LOGNAME", "USER", "SHELL", "TERM", "PYTHONPATH")
    env = {k: os.environ[k] for k in keys if k in os.environ}
    return {**env, "HOME": str(home), **extra}


def affidavit_env(home: Path) -> dict[str, str]:
    """The minimal environment of an ``affidavit serve`` whose vault, settings and private
    runtime folder (0700, for its session) all live under ``home``."""
    (home / "private").mkdir(parents=True, exist_ok=True, mode=0o700)
    return minimal_env(
        home,
        {
            "AFFIDAVIT_HOME": str(home / ".affidavit"),
            "AFFIDAVIT_VAULT": str(home / "vault"),
            "AFFIDAVIT_RUNTIME_DIR": str(home / "private"),
        },
    )


def client(params: StdioServerParameters) -> Client:
    """The official SDK client for one stdio server (initialize handshake on enter)."""
    return Client(params, mode="legacy", cache=None)


def checked(result: Any, what: str) -> Any:
    """A tool call's result, or a RuntimeError with its text when the tool reported an error."""
    if getattr(result, "is_error", False):
        text = " ".join(getattr(c, "text", "") for c in result.content)
        raise RuntimeError(f"{what} failed: {text[:300]}")
    return result
