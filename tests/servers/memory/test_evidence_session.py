"""An agent session end to end: the proxy verifies a commit the dev server made, the agent
stores what it learned with the call's receipt, search shows the memory ``proven``; the
audit log is edited and the same memory shows ``stale`` with the reason (issue 29).

Real processes: ``affidavit proxy`` in front of ``affidavit devserver`` on a real git
repository, and ``affidavit serve``, each through the official MCP client.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.servers.memory.conftest import LIGHT, VaultSetup, body, error_text, run
from tests.support import GIT_IDENTITY, mcp_client, run_cli


def _entries(log: Path) -> list[dict]:
    return [json.loads(line) for line in log.read_text().splitlines()]


def test_a_verified_commit_proves_a_memory_until_the_audit_log_is_edited(
    setup: VaultSetup, tmp_path: Path
) -> None:
    env = setup.env(**LIGHT, **GIT_IDENTITY)
    repo = tmp_path / "repo"
    subprocess.run(["git", "init", "-q", "-b", "main", str(repo)], check=True)
    log = tmp_path / "audit" / "audit.jsonl"
    devserver = [sys.executable, "-m", "affidavit", "devserver", "--repo-path", str(repo)]
    proxy = ["proxy", "--receipts", "--audit-log", str(log), "--", *devserver]

    async def agent_at_work() -> None:
        async with mcp_client(proxy, setup.home, env=env) as tools:
            wrote = await tools.call_tool("write_file", {"path": "notes.md", "content": "hi\n"})
            assert not wrote.is_error
            commit = await tools.call_tool("git_commit", {"message": "add notes"})
            assert not commit.is_error, commit.content[0].text

    run(agent_at_work)
    calls = [e for e in _entries(log) if e["body"].get("tool") == "git_commit"]
    assert [e["body"]["verdict"] for e in calls] == ["verified"]
    receipt = {"type": "receipt", "log": str(log), "entry": calls[0]["hash"]}
    trusted = run_cli(["proxy", "trust-log", str(log)], setup.home, env=env)  # as a user does
    assert trusted.returncode == 0 and f"trusted: {log}" in trusted.stdout, trusted.stderr

    async def remember_and_recall() -> None:
        async with mcp_client(["serve"], setup.home, env=env) as memory:
            forged = {**receipt, "entry": "f" * 64}
            refused = await memory.call_tool(
                "memory_store",
                {"text": "The notes commit is on main", "source": "proxy", "evidence": [forged]},
            )
            assert "does not check" in error_text(refused)
            stored = body(
                await memory.call_tool(
                    "memory_store",
                    {
                        "text": "The notes commit is on main",
                        "source": "the proxy's verified git_commit",
                        "evidence": [receipt],
                    },
                )
            )
            found = body(await memory.call_tool("memory_search", {"query": "notes commit"}))
            hit = next(h for h in found["results"] if h["id"] == stored["id"])
            assert hit["evidence"] == {"status": "proven", "items": [receipt]}

            lines = log.read_text().splitlines()  # someone rewrites history in the log
            first = json.loads(lines[0])
            first["body"]["tool"] = "read_file"
            log.write_text("\n".join([json.dumps(first), *lines[1:]]) + "\n")

            again = body(await memory.call_tool("memory_search", {"query": "notes commit"}))
            hit = next(h for h in again["results"] if h["id"] == stored["id"])
            assert hit["evidence"]["status"] == "stale"
            assert "no longer verifies" in hit["evidence"]["reasons"][0]
            got = body(await memory.call_tool("memory_get", {"id": stored["id"]}))
            assert got["memory"]["evidence"]["status"] == "stale"
            assert got["memory"]["text"] == "The notes commit is on main"

    run(remember_and_recall)
