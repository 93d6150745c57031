"""Shared helpers for the verifier tests: real git repositories, call contexts, real backends.

A verifier is judged the way the relay drives it: ``snapshot`` before the backend acts,
``verify`` on the reply afterwards. :func:`judge` does exactly that around an action that
really changes files or git (an honest backend's work, or a lying one's).
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from mcp import Client, StdioServerParameters

from affidavit.proxy.verifiers.base import CallContext, Receipt, Verifier
from tests.support import NODE_TOOLS, cli_env, mcp_client, node_first

LYING_BACKEND = Path(__file__).with_name("lying_backend.py")
RECEIPT_META = "affidavit/receipt"
GIT_IDENTITY = {
    "GIT_AUTHOR_NAME": "Vera Fier",
    "GIT_AUTHOR_EMAIL": "vera@example.invalid",
    "GIT_COMMITTER_NAME": "Vera Fier",
    "GIT_COMMITTER_EMAIL": "vera@example.invalid",
    "GIT_CONFIG_NOSYSTEM": "1",
}


def git_env() -> dict[str, str]:
    """The environment git and git-driving servers run with in these tests."""
    return {**os.environ, **GIT_IDENTITY}


def git(repo: Path, *args: str, stdin: str | None = None) -> str:
    """Run real git in ``repo``; return stdout stripped of the trailing newline."""
    return subprocess.run(
        ["git", *args],
        cwd=repo,
        env=git_env(),
        input=stdin,
        check=True,
        capture_output=True,
        text=True,
    ).stdout.rstrip("\n")


def init_repo(path: Path) -> Path:
    """A work tree on ``main`` with one commit holding README.md."""
    path.mkdir(parents=True, exist_ok=True)
    git(path, "init", "-q", "-b", "main")
    git(path, "config", "user.name", GIT_IDENTITY["GIT_AUTHOR_NAME"])
    git(path, "config", "user.email", GIT_IDENTITY["GIT_AUTHOR_EMAIL"])
    (path / "README.md").write_text("# demo\n")
    git(path, "add", "-A")
    git(path, "commit", "-q", "-m", "initial commit")
    return path


def call(
    name: str,
    arguments: Mapping[str, Any] | None = None,
    *,
    roots: Sequence[Path] = (),
    backend_command: Sequence[str] = (),
    method: str = "tools/call",
    backend: str = "",
    settings: Mapping[str, Any] | None = None,
) -> CallContext:
    """A :class:`CallContext` as the relay would build it."""
    return CallContext(
        method=method,
        name=name,
        arguments=dict(arguments or {}),
        backend=backend,
        backend_command=tuple(backend_command),
        roots=tuple(roots),
        settings=dict(settings or {}),
    )


def dev_command(repo: Path) -> tuple[str, ...]:
    """The argv the proxy would start the dev server with."""
    return ("affidavit", "devserver", "--repo-path", str(repo))


def dev_client(repo: Path, home: Path) -> Client:
    """An official MCP client for the real dev server on ``repo``, to record honest replies
    (CI runs are slow under load, hence the long read timeout); use as ``async with``."""
    return mcp_client(
        ["devserver", "--repo-path", str(repo)], home, env=GIT_IDENTITY, read_timeout_seconds=120
    )


def tool_result(
    text: str = "", structured: Mapping[str, Any] | None = None, *, is_error: bool = False
) -> dict[str, Any]:
    """A ``tools/call`` result object as it appears on the wire."""
    result: dict[str, Any] = {"content": [{"type": "text", "text": text}]}
    if structured is not None:
        result["structuredContent"] = dict(structured)
    if is_error:
        result["isError"] = True
    return result


def judge(verifier: Verifier, ctx: CallContext, act: Callable[[], Mapping[str, Any]]) -> Receipt:
    """Snapshot, let ``act`` do the backend's work and return its reply, then verify."""
    assert verifier.applies(ctx), f"{verifier.name} should apply to {ctx.name}"
    before = verifier.snapshot(ctx)
    result = act()
    return verifier.verify(ctx, before, result)


def wire(result: Any) -> dict[str, Any]:
    """A typed SDK result turned back into its wire shape (camelCase keys)."""
    return result.model_dump(by_alias=True, exclude_none=True, mode="json")


def node_tools() -> Path:
    """The node_modules folder holding Node 22 and the official filesystem server."""
    return NODE_TOOLS


def node_path_env() -> dict[str, str]:
    """PATH with the bundled Node first, as the filesystem server needs."""
    return node_first(os.environ)


def filesystem_server_argv(*roots: Path) -> list[str]:
    """argv of the official filesystem server allowed into ``roots``."""
    return [str(node_tools() / ".bin" / "mcp-server-filesystem"), *(str(r) for r in roots)]


def git_server_argv(repo: Path) -> list[str]:
    """argv of PyPI's mcp-server-git confined to ``repo``."""
    return [sys.executable, "-m", "mcp_server_git", "--repository", str(repo)]


def proxied(
    backend: Sequence[str],
    roots: Sequence[Path],
    home: Path,
    *flags: str,
    env: Mapping[str, str] | None = None,
) -> StdioServerParameters:
    """``affidavit proxy --receipts --root R... FLAGS -- BACKEND`` for the official client
    (``env`` added to the environment both get)."""
    argv = ["proxy", "--receipts", "--audit-log", str(home / "audit.jsonl")]
    for root in roots:
        argv += ["--root", str(root)]
    env = cli_env(home, {**GIT_IDENTITY, "PATH": node_path_env()["PATH"], **(env or {})})
    return StdioServerParameters(
        command=sys.executable, args=["-m", "affidavit", *argv, *flags, "--", *backend], env=env
    )


def direct(
    backend: Sequence[str], home: Path, env: Mapping[str, str] | None = None
) -> StdioServerParameters:
    """Launch parameters for ``backend`` with no proxy in front (the baseline)."""
    env = cli_env(home, {**GIT_IDENTITY, "PATH": node_path_env()["PATH"], **(env or {})})
    return StdioServerParameters(command=backend[0], args=list(backend[1:]), env=env)


def verdict_of(result: Mapping[str, Any]) -> str | None:
    """The verdict of the receipt the proxy attached (``--receipts``), if any."""
    receipt = (result.get("_meta") or {}).get(RECEIPT_META)
    return receipt.get("verdict") if isinstance(receipt, Mapping) else None
