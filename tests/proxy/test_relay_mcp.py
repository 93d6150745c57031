"""The official MCP client through the real proxy in front of real servers, both protocol eras."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from affidavit.proxy.audit import verify_log
from tests.proxy.conftest import REPO
from tests.support import (
    GIT_IDENTITY,
    NODE_TOOLS,
    PYTHON,
    inspector_cli,
    inspector_tool_call,
    mcp_client,
)


def make_repo(path: Path) -> Path:
    path.mkdir()
    env = {**os.environ, **GIT_IDENTITY}
    subprocess.run(["git", "init", "-q", "-b", "main", str(path)], check=True, env=env)
    (path / "README.md").write_text("hello\n")
    subprocess.run(["git", "-C", str(path), "add", "."], check=True, env=env)
    subprocess.run(["git", "-C", str(path), "commit", "-qm", "init"], check=True, env=env)
    return path


def receipt_of(result) -> dict:
    return (result.meta or {}).get("affidavit/receipt", {})


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
@pytest.mark.anyio
async def test_official_client_through_the_proxy_to_mcp_server_git(home, tmp_path, mode):
    repo = make_repo(tmp_path / "repo")
    log = tmp_path / "audit.jsonl"
    args = [
        "proxy",
        "--receipts",
        "--root",
        str(repo),
        "--audit-log",
        str(log),
        "--",
        PYTHON,
        "-m",
        "mcp_server_git",
        "--repository",
        str(repo),
    ]
    (repo / "new.txt").write_text("content\n")
    async with mcp_client(args, home, env=GIT_IDENTITY, mode=mode) as client:
        names = {t.name for t in (await client.list_tools()).tools}
        assert {"git_status", "git_commit", "git_add"} <= names
        added = await client.call_tool("git_add", {"repo_path": str(repo), "files": ["new.txt"]})
        assert not added.is_error
        committed = await client.call_tool(
            "git_commit", {"repo_path": str(repo), "message": "add new"}
        )
        assert not committed.is_error
        assert receipt_of(committed)["verdict"] == "verified", receipt_of(committed)
        resources = await client.list_resources()
        assert "affidavit://audit" in {str(r.uri) for r in resources.resources}
        audit = await client.read_resource("affidavit://audit")
        entries = json.loads(audit.contents[0].text)
        assert [e["tool"] for e in entries if e["kind"] == "call"] == ["git_add", "git_commit"]
    head = subprocess.run(
        ["git", "-C", str(repo), "log", "-1", "--format=%s"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert head.stdout.strip() == "add new"
    report = verify_log(log)
    assert report.ok and report.entries == 2


@pytest.mark.skipif(not (NODE_TOOLS / ".bin" / "node").exists(), reason="node tools not installed")
@pytest.mark.anyio
async def test_official_filesystem_server_write_is_verified(home, tmp_path):
    root = tmp_path / "files"
    root.mkdir()
    server = NODE_TOOLS / "@modelcontextprotocol" / "server-filesystem" / "dist" / "index.js"
    args = [
        "proxy",
        "--receipts",
        "--root",
        str(root),
        "--audit-log",
        str(tmp_path / "a.jsonl"),
        "--",
        str(NODE_TOOLS / ".bin" / "node"),
        str(server),
        str(root),
    ]
    async with mcp_client(args, home, mode="legacy") as client:
        result = await client.call_tool(
            "write_file", {"path": str(root / "note.txt"), "content": "hi there"}
        )
        assert not result.is_error
        assert receipt_of(result)["verdict"] == "verified", receipt_of(result)
    assert (root / "note.txt").read_text() == "hi there"


@pytest.mark.anyio
async def test_dev_server_through_the_proxy(home, tmp_path):
    repo = make_repo(tmp_path / "repo")
    args = [
        "proxy",
        "--receipts",
        "--audit-log",
        str(tmp_path / "a.jsonl"),
        "--root",
        str(repo),
        "--",
        PYTHON,
        "-m",
        "affidavit",
        "devserver",
        "--repo-path",
        str(repo),
    ]
    async with mcp_client(
        args, home, env={**GIT_IDENTITY, "PYTHONPATH": str(REPO)}, mode="legacy"
    ) as client:
        tools = {t.name for t in (await client.list_tools()).tools}
        assert "write_file" in tools
        result = await client.call_tool(
            "write_file", {"path": "notes.md", "content": "dev server\n"}
        )
        assert not result.is_error
        assert receipt_of(result)["verdict"] == "verified", receipt_of(result)
    assert (repo / "notes.md").read_text() == "dev server\n"


@pytest.mark.skipif(not (NODE_TOOLS / ".bin" / "node").exists(), reason="node tools not installed")
def test_mcp_inspector_cli_through_the_proxy(home, tmp_path):
    """Another real client (the TypeScript SDK inside MCP Inspector) sees receipts and the audit."""
    from tests.proxy.conftest import proxy_env

    repo = make_repo(tmp_path / "repo")
    wrapper = tmp_path / "proxied-git.sh"
    wrapper.write_text(
        f"#!/bin/sh\nexec {PYTHON} -m affidavit proxy --receipts --audit-log {tmp_path / 'a.jsonl'}"
        f" -- {PYTHON} -m mcp_server_git --repository {repo}\n"
    )
    wrapper.chmod(0o755)
    done = inspector_cli(
        [str(wrapper), *inspector_tool_call("git_status", repo_path=str(repo))],
        proxy_env(home, GIT_IDENTITY),
    )
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert "working tree clean" in result["content"][0]["text"]
    assert result["content"][-1]["text"].startswith("[affidavit receipt] UNCHECKED")
    assert verify_log(tmp_path / "a.jsonl").entries == 1
