"""Real git repositories in a temporary directory, and a real MCP client for the dev server."""

from __future__ import annotations

import hashlib
import os
import subprocess
from collections.abc import Awaitable, Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import anyio
import pytest

from tests.support import GIT_IDENTITY, mcp_client


def git(repo: Path, *args: str) -> str:
    """Run real git in ``repo`` with the test identity; return stdout."""
    env = {**os.environ, **GIT_IDENTITY, "HOME": str(repo.parent)}
    return subprocess.run(
        ["git", *args], cwd=repo, env=env, check=True, capture_output=True, text=True
    ).stdout


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A git work tree with one commit (README.md, src/app.py) on branch ``main``."""
    path = tmp_path / "repo"
    path.mkdir()
    git(path, "init", "-q", "-b", "main")
    (path / "README.md").write_text("# demo\n")
    (path / "src").mkdir()
    (path / "src" / "app.py").write_text("print('hello')\n")
    git(path, "add", "-A")
    git(path, "commit", "-q", "-m", "initial commit")
    return path


def snapshot(repo: Path) -> dict[str, Any]:
    """Everything an attack could change: every file and link in the tree, refs, HEAD, index."""
    tree: dict[str, str] = {}
    for current, dirs, names in os.walk(repo):
        dirs.sort()
        for name in sorted(names) + [d for d in dirs if (Path(current) / d).is_symlink()]:
            path = Path(current) / name
            rel = path.relative_to(repo).as_posix()
            if path.is_symlink():
                tree[rel] = "link:" + os.readlink(path)
            elif rel != ".git/index" and not rel.startswith(".git/objects/"):
                tree[rel] = hashlib.sha256(path.read_bytes()).hexdigest()
    return {
        "tree": tree,
        "refs": git(repo, "for-each-ref", "--format=%(refname) %(objectname)"),
        "head": (repo / ".git" / "HEAD").read_text(),
        "index": hashlib.sha256((repo / ".git" / "index").read_bytes()).hexdigest(),
        "objects": sorted(p.name for p in (repo / ".git" / "objects").rglob("*")),
    }


def devserver(
    repo: Path,
    home: Path,
    *,
    server_args: Sequence[str] = (),
    env: Mapping[str, str] | None = None,
    **options: Any,
) -> Any:
    """An official MCP client connected to ``affidavit devserver --repo-path REPO [ARGS]``,
    started with the test git identity plus ``env``."""
    options.setdefault("read_timeout_seconds", 120)
    argv = ["devserver", "--repo-path", str(repo), *server_args]
    return mcp_client(argv, home, env={**GIT_IDENTITY, **(env or {})}, **options)


@pytest.fixture
def client_for(home: Path) -> Callable[..., Any]:
    """``client_for(repo, server_args=[...], env={...}, mode=..., sampling_callback=...)`` ->
    an un-entered client."""

    def make(repo: Path, **options: Any) -> Any:
        return devserver(repo, home, **options)

    return make


async def eventually(check: Callable[[], bool | Awaitable[bool]], timeout: float = 60.0) -> None:
    """Wait until ``check()`` holds (notifications arrive asynchronously); fail after timeout."""
    with anyio.fail_after(timeout):
        while True:
            outcome = check()
            if not isinstance(outcome, bool):
                outcome = await outcome
            if outcome:
                return
            await anyio.sleep(0.05)
