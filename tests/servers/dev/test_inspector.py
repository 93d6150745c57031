"""A second, independent client: the official MCP Inspector CLI (Node) drives the dev server."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from tests.support import INSPECTOR, cli_env, inspector_cli, inspector_tool_call


def inspector(repo: Path, home: Path, *args: str) -> dict:
    """Run one Inspector CLI request against ``affidavit devserver`` and parse its JSON."""
    server = [sys.executable, "-m", "affidavit", "devserver", "--repo-path", str(repo)]
    done = inspector_cli(["-e", "AFFIDAVIT_ASSERT_OFFLINE=1", *server, *args], cli_env(home))
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


@pytest.mark.skipif(not INSPECTOR.exists(), reason="MCP Inspector not installed (.ci/node-tools)")
def test_inspector_calls_a_tool(repo: Path, home: Path) -> None:
    wrote = inspector(
        repo,
        home,
        *inspector_tool_call("write_file", path="notes/from-inspector.txt", content="hello"),
    )
    assert wrote["isError"] is False
    assert wrote["structuredContent"]["path"] == "notes/from-inspector.txt"
    assert (repo / "notes" / "from-inspector.txt").read_text() == "hello"
