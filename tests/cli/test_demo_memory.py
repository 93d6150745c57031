"""The memory section of ``affidavit demo``, run for real in a child process: two agents over
MCP on one vault. README's first command runs it, so it must not break unseen."""

from __future__ import annotations

import subprocess
from pathlib import Path

from tests.support import PYTHON, cli_env

SCRIPT = (
    "import sys, pathlib; from affidavit.cli.demo_memory import run; run(pathlib.Path(sys.argv[1]))"
)


def test_demo_two_agents_share_a_vault_and_a_panic_lock_stops_both(
    tmp_path: Path, home: Path
) -> None:
    work = tmp_path / "work"
    work.mkdir()
    done = subprocess.run(
        [PYTHON, "-c", SCRIPT, str(work)],
        env={**cli_env(home), "COLUMNS": "200"},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "13 tools each" in out
    assert "a batch with a bulleted entry is refused whole" in out
    assert "planner stored 3 memories" in out
    assert "reviewer cannot delete it" in out
    assert "planner panic-locks the vault" in out
    assert "everything on disk is sealed" in out
