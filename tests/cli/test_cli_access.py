"""The CLI is caller ``user``: the grant checks of the recall layer apply to it as to any agent."""

from __future__ import annotations

import json
import secrets
from pathlib import Path

from tests.cli.test_cli_vault import seed
from tests.support import run_cli


def test_the_cli_needs_write_access_to_supersede_or_forget_and_hides_like_unknown(
    home: Path, cli_vault: dict[str, str]
) -> None:
    env = {**cli_vault, "AFFIDAVIT_EMBEDDER": "off"}
    (team_fact,) = seed(env, "The team standup is at 09:30 in room Orion.", namespace="team")
    assert run_cli(["grant", "user", "team", "ro"], home, env=env).returncode == 0

    correction = run_cli(
        ["store", "The standup moved to 10:00.", "--source", "s", "--supersedes", team_fact],
        home,
        env=env,
    )
    assert correction.returncode == 7, correction.stderr
    assert "may not write to namespace 'team'" in correction.stderr
    forgot = run_cli(["forget", team_fact], home, env=env)
    assert forgot.returncode == 7 and "may not write" in forgot.stderr
    kept = run_cli(["get", team_fact, "--json"], home, env=env)
    assert kept.returncode == 0 and json.loads(kept.stdout)["memory"]["superseded_by"] is None

    assert run_cli(["grant", "user", "team", "none"], home, env=env).returncode == 0
    unknown = secrets.token_hex(10)
    for args in (["get", "{}"], ["forget", "{}"], ["forget", "--shred", "{}"]):
        hidden = run_cli([a.format(team_fact) for a in args], home, env=env)
        missing = run_cli([a.format(unknown) for a in args], home, env=env)
        assert hidden.returncode == missing.returncode == 3
        assert hidden.stderr.replace(team_fact, "ID") == missing.stderr.replace(unknown, "ID")
