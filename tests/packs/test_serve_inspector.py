"""A second, independent client: the official MCP Inspector CLI (Node) drives the pack server."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from affidavit.servers.packs import NOTICE, SEARCH_TOOL
from tests.packs._build_fixtures import build_sample
from tests.support import INSPECTOR, cli_env, inspector_cli, inspector_tool_call


def _inspector(pack: Path, home: Path, *args: str) -> dict:
    server = [sys.executable, "-m", "affidavit", "pack", "serve", f"--pack={pack}"]
    done = inspector_cli(["-e", "AFFIDAVIT_ASSERT_OFFLINE=1", *server, *args], cli_env(home))
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


@pytest.mark.skipif(not INSPECTOR.exists(), reason="MCP Inspector not installed (.ci/node-tools)")
def test_inspector_searches(tmp_path: Path, home: Path) -> None:
    pack = build_sample(tmp_path / "pack")
    found = _inspector(pack, home, *inspector_tool_call(SEARCH_TOOL, query="cafe"))
    assert found.get("isError") in (None, False)
    body = found["structuredContent"]
    assert json.loads(found["content"][0]["text"]) == body
    assert [m["record_id"] for m in body["matches"]] == ["M-repair-1"]
    assert body["notice"] == NOTICE
