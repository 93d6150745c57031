"""``affidavit demo``, tools section: the verifying proxy in front of a deliberately lying server.

Everything is real: a git repository in the demo directory, the ``affidavit proxy`` process,
the demo backend (``affidavit.proxy.demo_backend``, honest about files, lying about commits)
and the official MCP client. Shown: the lie caught, an honest write confirmed, a retry
answered from the verified result without touching the backend, the audit chain intact.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any, TextIO

from affidavit.cli.output import stdout
from affidavit.core.errors import IntegrityError

_GIT_ID = {
    "GIT_AUTHOR_NAME": "Demo Author",
    "GIT_AUTHOR_EMAIL": "demo@example.invalid",
    "GIT_COMMITTER_NAME": "Demo Author",
    "GIT_COMMITTER_EMAIL": "demo@example.invalid",
    "GIT_CONFIG_NOSYSTEM": "1",
}


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(repo), *args],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, **_GIT_ID},
    ).stdout.strip()


def _make_repo(repo: Path) -> None:
    repo.mkdir()
    _git(repo, "init", "-q", "-b", "main")
    (repo / "README.md").write_text("A fictional project for the demo.\n", encoding="utf-8")
    _git(repo, "add", "README.md")
    _git(repo, "commit", "-qm", "Initial commit")
    (repo / "CHANGELOG.md").write_text("- nothing yet\n", encoding="utf-8")
    _git(repo, "add", "CHANGELOG.md")


def _meta(result: Any) -> dict[str, Any]:
    return dict(result.meta or {})


def _require(condition: bool, what: str) -> None:
    if not condition:
        raise IntegrityError(f"demo: {what}", "rerun with AFFIDAVIT_DEBUG=1 and report it")


async def _session(workdir: Path, repo: Path, audit: Path) -> None:
    with (workdir / "proxy-stderr.log").open("w", encoding="utf-8") as proxy_log:
        await _drive(workdir, repo, audit, proxy_log)


async def _drive(workdir: Path, repo: Path, audit: Path, proxy_log: TextIO) -> None:
    """The three calls; the proxy's own stderr (its receipt lines) goes to ``proxy_log``."""
    from mcp import Client, StdioServerParameters
    from mcp.client.stdio import stdio_client

    params = StdioServerParameters(
        command=sys.executable,
        args=[
            "-m",
            "affidavit",
            "proxy",
            "--root",
            str(repo),
            "--idempotent-replay",
            "--receipts",
            "--audit-log",
            str(audit),
            "--",
            sys.executable,
            "-m",
            "affidavit.proxy.demo_backend",
            "--root",
            str(repo),
        ],
        env={**os.environ, **_GIT_ID},
        cwd=str(workdir),
    )
    async with Client(stdio_client(params, errlog=proxy_log), mode="legacy") as client:
        old_head = _git(repo, "rev-parse", "HEAD")
        lie = await client.call_tool(
            "git_commit", {"repo_path": str(repo), "message": "Add the changelog"}
        )
        receipt = _meta(lie).get("affidavit/receipt", {})
        stdout.print(f"[bold]git_commit[/] — the backend claims a commit with hash {old_head[:12]}")
        stdout.print(f"  proxy verdict: [red]{receipt.get('verdict', '?').upper()}[/]")
        for item in receipt.get("evidence", []):
            stdout.print(f"  evidence: {item['observed']}", markup=False)
        _require(
            lie.is_error and receipt.get("verdict") == "contradicted", "the lie was not caught"
        )

        args = {"path": "notes.md", "content": "Verified notes.\n"}
        honest = await client.call_tool("write_file", args)
        receipt = _meta(honest).get("affidavit/receipt", {})
        stdout.print("[bold]write_file notes.md[/] — the backend claims it wrote the file")
        stdout.print(f"  proxy verdict: [green]{receipt.get('verdict', '?').upper()}[/]")
        _require(
            not honest.is_error and receipt.get("verdict") == "verified",
            "the write was not verified",
        )

        retry = await client.call_tool("write_file", args)
        replayed = _meta(retry).get("affidavit/replayed") is True
        stdout.print("[bold]write_file notes.md[/] again (a retry after a lost reply)")
        stdout.print(
            "  answered from the verified result; the backend was not asked again"
            if replayed
            else "  the retry reached the backend"
        )
        _require(replayed, "the retry was not answered from the verified result")


def run(workdir: Path) -> None:
    """Catch a lying commit, confirm an honest write, replay a verified retry, check the log."""
    import anyio

    from affidavit.proxy import verify_log

    repo, audit = workdir / "repo", workdir / "audit.jsonl"
    _make_repo(repo)
    anyio.run(_session, workdir, repo, audit)
    report = verify_log(audit)
    _require(report.ok and report.entries == 3, "the audit log did not verify")
    stdout.print(f"audit log: {report.entries} hash-chained entries, chain intact ({audit.name})")
