"""The memory section of ``affidavit demo``, run for real in a child process: two agents over
MCP on one vault. README's first command runs it, so it must not break unseen."""

from __future__ import annotations

from pathlib import Path

from tests.servers.memory.conftest import OFFERED
from tests.support import run_demo_section


def test_demo_two_agents_share_a_vault_and_a_panic_lock_stops_both(
    tmp_path: Path, home: Path
) -> None:
    work = tmp_path / "work"
    work.mkdir()
    done = run_demo_section("memory", work, home)
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert f"{len(OFFERED)} tools each" in out
    assert "a batch with a bulleted entry is refused whole" in out
    assert "planner stored 3 memories" in out
    assert "reviewer cannot delete it" in out
    assert "planner panic-locks the vault" in out
    assert "everything on disk is sealed" in out
