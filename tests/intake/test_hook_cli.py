"""``affidavit hook run claude-code`` as Claude Code runs it: a real process, JSON on stdin."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from tests.intake.conftest import LIGHT, line
from tests.support import run_cli


def test_run_captures_candidates_that_review_lists_and_search_does_not_find(
    home: Path, cli_vault: dict[str, str], transcript: Callable[..., Path]
) -> None:
    env = {**cli_vault, **LIGHT}
    path = transcript(line("user", "No, the staging database is db-2. Thanks!"))
    event = json.dumps({"session_id": "s-1", "transcript_path": str(path)})
    done = run_cli(["hook", "run", "claude-code"], home, env=env, input=event)
    assert done.returncode == 0 and "1 candidate memories captured" in done.stdout
    listed = run_cli(["review", "--json"], home, env=env)
    (candidate,) = json.loads(listed.stdout)["candidates"]
    assert candidate["text"] == "No, the staging database is db-2."
    found = run_cli(["search", "staging database", "--json"], home, env=env)
    assert json.loads(found.stdout)["results"] == []
    accepted = run_cli(["review", "accept", candidate["id"], "--json"], home, env=env)
    assert accepted.returncode == 0, accepted.stderr
    assert json.loads(accepted.stdout)["status"] == "stored"
    found = run_cli(["search", "staging database", "--json"], home, env=env)
    assert [r["text"] for r in json.loads(found.stdout)["results"]] == [candidate["text"]]
    assert json.loads(run_cli(["review", "--json"], home, env=env).stdout)["candidates"] == []


def test_run_never_fails_the_agent(home: Path, cli_vault: dict[str, str], tmp_path: Path) -> None:
    locked = {k: v for k, v in cli_vault.items() if k != "AFFIDAVIT_PASSPHRASE"}
    event = json.dumps({"transcript_path": str(tmp_path / "missing.jsonl")})
    for env, stdin in [
        (cli_vault, "not json"),
        (cli_vault, event),
        (locked, json.dumps({"transcript_path": __file__})),
    ]:
        done = run_cli(["hook", "run", "claude-code"], home, env=env, input=stdin)
        assert done.returncode == 0, done.stderr
        assert done.stdout.count("\n") == 1 and "nothing captured" in done.stdout
        assert "Traceback" not in done.stdout + done.stderr


def test_review_shows_escape_sequences_from_a_transcript_instead_of_obeying_them(
    home: Path, cli_vault: dict[str, str], transcript: Callable[..., Path]
) -> None:
    env = {**cli_vault, **LIGHT}
    hostile = "The API listens on port 8080 \x1b]52;c;ZXZpbA==\x07 [bold]now[/bold]."
    path = transcript(line("assistant", [{"type": "text", "text": hostile}]))
    event = json.dumps({"transcript_path": str(path)})
    run_cli(["hook", "run", "claude-code"], home, env=env, input=event)
    shown = run_cli(["review"], home, env={**env, "COLUMNS": "300"})
    assert shown.returncode == 0, shown.stderr
    assert "\x1b" not in shown.stdout and "\x07" not in shown.stdout
    assert "\u241b]52;c;ZXZpbA==" in shown.stdout and "[bold]now[/bold]" in shown.stdout
