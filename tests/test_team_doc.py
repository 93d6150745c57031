"""docs/team.md's setup, run as written: two members, two homes, one real PostgreSQL server.

The blocks are read from the page, so the page cannot drift from what works. Only the URL's
server part is swapped for the test's throwaway cluster (``PGHOST``/``PGUSER`` point libpq's
own tools at it too), and the passphrase comes from AFFIDAVIT_PASSPHRASE instead of a prompt.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from tests.pg import Cluster
from tests.support import cli_env

PAGE = Path(__file__).parents[1] / "docs" / "team.md"
DOC_URL = "postgresql://db.example.com/team_memory"


def _block(title: str) -> str:
    text = PAGE.read_text()
    found = re.search(rf"<!-- team-setup: {title} -->\n```sh\n(.*?)```", text, re.S)
    assert found, f"docs/team.md lost its '{title}' block"
    return found.group(1)


def _commands(block: str) -> list[str]:
    return [line for line in block.splitlines() if line.strip()]


def _run(block: str, home: Path, cluster: Cluster) -> subprocess.CompletedProcess[str]:
    home.mkdir()
    run = home / "run"
    run.mkdir(mode=0o700)
    env = cli_env(
        home,
        {
            "PATH": f"{Path(sys.executable).parent}:{cluster.bin}:{os.environ['PATH']}",
            "PGHOST": str(cluster.root),
            "PGUSER": cluster.user,
            "AFFIDAVIT_PASSPHRASE": "the team's long passphrase",
            "AFFIDAVIT_RUNTIME_DIR": str(run),
            "COLUMNS": "200",  # the result table on one line per memory
        },
    )
    script = "set -euo pipefail\n" + block.replace(DOC_URL, cluster.url("team_memory"))
    return subprocess.run(
        ["bash", "-c", script], env=env, capture_output=True, text=True, timeout=300, check=False
    )


def test_team_setup_from_nothing_in_under_ten_commands(pg_cluster: Cluster, tmp_path: Path) -> None:
    first, other = _block("first member"), _block("other member")
    assert len(_commands(first)) + len(_commands(other)) < 10
    assert DOC_URL in first and DOC_URL in other
    made = _run(first, tmp_path / "alice", pg_cluster)
    assert made.returncode == 0, made.stderr
    assert "created an encrypted vault in postgresql://" in made.stdout
    joined = _run(other, tmp_path / "bob", pg_cluster)
    assert joined.returncode == 0, joined.stderr
    assert "joined the team vault" in joined.stdout
    assert "The staging database moved to db2 on Monday" in joined.stdout
    store_file = tmp_path / "bob" / ".affidavit" / "vault" / "store.url"
    assert store_file.read_text().strip() == pg_cluster.url("team_memory")
    assert oct(store_file.stat().st_mode & 0o777) == "0o600"
