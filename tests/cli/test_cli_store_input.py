"""What a first-time user types into ``store`` and ``import``, and the one error each gets."""

from __future__ import annotations

import json
from pathlib import Path

from tests.support import run_cli


def _one_line(stderr: str) -> str:
    lines = [line for line in stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "Traceback" not in stderr, stderr
    return lines[0]


def _recent(home: Path, env: dict[str, str]) -> list[dict[str, object]]:
    done = run_cli(["recent", "--json"], home, env=env)
    assert done.returncode == 0, done.stderr
    return list(json.loads(done.stdout)["results"])


def test_reimporting_an_export_without_vectors_is_idempotent(
    home: Path, cli_vault: dict[str, str], tmp_path: Path
) -> None:
    rows = tmp_path / "handwritten.jsonl"
    rows.write_text(
        json.dumps(
            {
                "id": "note-1",
                "data": {"text": "The freezer holds -18 C.", "source": "manual"},
                "saved_at": "2026-01-05T10:00:00Z",
            }
        )
        + "\n"
        + json.dumps({"id": "note-2", "data": {"text": "Bins go out on Monday.", "source": "s"}})
        + "\n"
    )
    first = run_cli(["import", str(rows), "--json"], home, env=cli_vault)
    assert first.returncode == 0, first.stderr
    assert json.loads(first.stdout)["imported"] == 2
    again = run_cli(["import", str(rows), "--json"], home, env=cli_vault)
    assert again.returncode == 0, again.stderr  # was: "already exists with different content"
    assert json.loads(again.stdout) == {
        "rows": 2,
        "imported": 0,
        "already_present": 2,
        "kept_forgotten": 0,
    }
    found = run_cli(["search", "how cold is the freezer", "--json"], home, env=cli_vault)
    assert json.loads(found.stdout)["results"][0]["id"] == "note-1"  # embedded on first import

    changed = tmp_path / "changed.jsonl"
    changed.write_text(
        json.dumps({"id": "note-2", "data": {"text": "Bins go out on Tuesday.", "source": "s"}})
        + "\n"
    )
    conflict = run_cli(["import", str(changed)], home, env=cli_vault)
    assert conflict.returncode == 4 and "different content" in _one_line(conflict.stderr)


def test_an_expiry_date_in_the_past_is_refused_before_anything_is_stored(
    home: Path, cli_vault: dict[str, str]
) -> None:
    env = {**cli_vault, "AFFIDAVIT_EMBEDDER": "off"}
    done = run_cli(
        ["store", "The gate code is 4411.", "--source", "s", "--expires", "2020-03-01"],
        home,
        env=env,
    )
    assert done.returncode == 2, done.stderr
    line = _one_line(done.stderr)
    assert "2020-03-01" in line and "past" in line, line
    assert _recent(home, env) == []
    today = run_cli(
        ["store", "The gate code is 4412.", "--source", "s", "--expires", "0d"], home, env=env
    )
    assert today.returncode == 0, today.stderr  # the expiry day itself is still live
    assert [m["text"] for m in _recent(home, env)] == ["The gate code is 4412."]


def test_text_that_begins_with_a_dash_gets_told_about_double_dash(
    home: Path, cli_vault: dict[str, str]
) -> None:
    env = {**cli_vault, "AFFIDAVIT_EMBEDDER": "off"}
    text = "-5 degrees is the freezer setting"
    done = run_cli(["store", text, "--source", "s"], home, env=env)
    assert done.returncode == 2
    line = _one_line(done.stderr)
    assert "-5" in line and "--" in line and "affidavit store" in line, line
    ok = run_cli(["store", "--source", "s", "--", text], home, env=env)
    assert ok.returncode == 0, ok.stderr
    assert [m["text"] for m in _recent(home, env)] == [text]

    typo = run_cli(["store", "x", "--sorce", "s"], home, env=env)
    assert typo.returncode == 2 and "--source" in typo.stderr  # a misspelt option stays one


def test_a_too_long_memory_is_explained_in_cli_terms(home: Path, cli_vault: dict[str, str]) -> None:
    env = {**cli_vault, "AFFIDAVIT_EMBEDDER": "off"}
    done = run_cli(["store", "word " * 60, "--source", "s"], home, env=env)
    assert done.returncode == 2
    line = _one_line(done.stderr)
    assert "store_many" not in line and "200 characters" in line, line


def test_evidence_on_the_command_line_is_checked_and_shown_by_get(
    home: Path, cli_vault: dict[str, str], tmp_path: Path
) -> None:
    from affidavit.proxy import AuditLog

    env = {**cli_vault, "AFFIDAVIT_EMBEDDER": "off"}
    log = tmp_path / "audit.jsonl"
    AuditLog(log, session="s").append({"kind": "call", "tool": "git_commit", "verdict": "verified"})
    entry = json.loads(log.read_text())["hash"]
    receipt = json.dumps({"type": "receipt", "log": str(log), "entry": entry})
    for bad, says in (("{not json", "--evidence is not JSON"), ('{"type": "url"}', "'pack' or")):
        refused = run_cli(
            ["store", "The commit landed", "--source", "proxy", "--evidence", bad], home, env=env
        )
        assert refused.returncode == 2 and says in _one_line(refused.stderr), refused.stderr
    wrong = receipt.replace(entry, "e" * 64)
    refused = run_cli(
        ["store", "The commit landed", "--source", "proxy", "--evidence", wrong], home, env=env
    )
    assert refused.returncode == 2 and "does not check" in _one_line(refused.stderr)
    untrusted = run_cli(
        ["store", "The commit landed", "--source", "proxy", "--evidence", receipt], home, env=env
    )
    assert untrusted.returncode == 2 and "proxy trust-log" in _one_line(untrusted.stderr)
    assert _recent(home, env) == []  # nothing stored with a false claim of proof
    assert run_cli(["proxy", "trust-log", str(log)], home, env=env).returncode == 0
    stored = run_cli(
        ["store", "The commit landed", "--source", "proxy", "--evidence", receipt, "--json"],
        home,
        env=env,
    )
    assert stored.returncode == 0, stored.stderr
    got = run_cli(["get", json.loads(stored.stdout)["id"], "--json"], home, env=env)
    assert json.loads(got.stdout)["memory"]["evidence"]["status"] == "proven", got.stdout
