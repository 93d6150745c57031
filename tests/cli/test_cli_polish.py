"""The terminal's finish (issue 25 item 8), through the real command: ``--json`` where a
script reads the answer, one duration grammar, errors that name the flag typed, a missing
file is "not found" (exit 3), "would remove" in a dry run, counts in agreement with their
nouns, and the self-test's real line breaks."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from tests.support import run_cli

CURSOR = '{"mcpServers": {"git": {"command": "uvx", "args": ["mcp-server-git"]}}}\n'


def _one_error(done: object, code: int) -> str:
    err = done.stderr  # type: ignore[attr-defined]
    assert done.returncode == code, err  # type: ignore[attr-defined]
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].count("affidavit: error:") == 1, err
    return str(lines[0])


def test_integrate_list_json_names_every_client_and_its_file(home: Path) -> None:
    (home / ".cursor").mkdir()
    done = run_cli(["integrate", "--list", "--json"], home)
    assert done.returncode == 0, done.stderr
    rows = {row["client"]: row for row in json.loads(done.stdout)}
    assert rows["cursor"]["config_file"] == str(home / ".cursor" / "mcp.json")
    assert rows["cursor"]["installed"] is True and rows["cursor"]["format"] == "json"
    assert set(rows["cursor"]) == {"client", "name", "installed", "format", "config_file"}


def test_remove_dry_run_says_would_remove_and_writes_nothing(home: Path) -> None:
    config = home / ".cursor" / "mcp.json"
    config.parent.mkdir()
    config.write_text(CURSOR)
    assert run_cli(["integrate", "cursor"], home).returncode == 0
    wired = config.read_bytes()
    done = run_cli(["integrate", "--remove", "cursor", "--dry-run"], home)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"cursor: would remove: {config}")
    assert "removed" not in done.stdout
    assert config.read_bytes() == wired


def test_wrap_and_unwrap_json_list_each_server_and_what_was_done(home: Path) -> None:
    config = home / ".cursor" / "mcp.json"
    config.parent.mkdir()
    config.write_text(CURSOR)
    planned = run_cli(["proxy", "wrap", "--client", "cursor", "--dry-run", "--json"], home)
    assert planned.returncode == 0, planned.stderr
    (result,) = json.loads(planned.stdout)
    assert result["dry_run"] is True and result["written"] is False
    assert [(s["server"], s["action"]) for s in result["servers"]] == [("git", "wrap")]
    assert config.read_text() == CURSOR
    wrapped = run_cli(["proxy", "wrap", "--client", "cursor", "--json"], home)
    assert json.loads(wrapped.stdout)[0]["written"] is True, wrapped.stderr
    undone = run_cli(["proxy", "unwrap", "--client", "cursor", "--json"], home)
    assert undone.returncode == 0, undone.stderr
    (result,) = json.loads(undone.stdout)
    assert result["path"] == str(config) and result["written"] is True
    assert config.read_text() == CURSOR


def test_unlock_tool_status_json(home: Path, cli_vault: dict[str, str]) -> None:
    done = run_cli(["unlock-tool", "status", "--json"], home, env=cli_vault)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {"tool": "memory_unlock", "enabled": False}


def test_store_expires_reads_the_one_duration_grammar(
    home: Path, cli_vault: dict[str, str]
) -> None:
    done = run_cli(
        ["store", "The door code is 4412.", "--source", "t", "--expires", "2w", "--json"],
        home,
        env=cli_vault,
    )
    assert done.returncode == 0, done.stderr
    got = run_cli(["get", json.loads(done.stdout)["id"], "--json"], home, env=cli_vault)
    in_two_weeks = (datetime.now(UTC) + timedelta(weeks=2)).date().isoformat()
    assert json.loads(got.stdout)["memory"]["expires"] == in_two_weeks


def test_errors_name_the_flag_the_user_typed(home: Path, cli_vault: dict[str, str]) -> None:
    since = _one_error(run_cli(["search", "x", "--since", "last week"], home, env=cli_vault), 2)
    assert "'--since'" in since and "YYYY-MM-DD" in since and "saved_since" not in since
    later = run_cli(["store", "a", "--source", "t", "--expires", "soon"], home, env=cli_vault)
    assert "--expires 'soon' is neither a date nor a duration" in _one_error(later, 2)
    for args, flag in (
        (["search", "x", "--top-k", "0"], "--top-k"),
        (["recent", "--limit", "0"], "--limit"),
        (["relations", "--limit", "0"], "--limit"),
        (["relations", "--as-of", "xx"], "--as-of"),
        (["link", "a", "b", "c", "--valid-from", "xx"], "--valid-from"),
        (["store", "a", "--source", "t", "--thread", "t", "--turn", "-1"], "--turn"),
    ):
        assert f"'{flag}'" in _one_error(run_cli(args, home, env=cli_vault), 2), args


#: Every flag or argument that names a file or directory the command reads, with the words
#: its refusal must hold: {missing} is a path that is not there, {file} and {dir} are.
MISSING_INPUTS = [
    (["import", "{missing}"], "FILE {missing}"),
    (["import", "--from", "chatgpt", "{missing}"], "FILE {missing}"),
    (["audit", "verify", "--log", "{missing}"], "--log {missing}"),
    (["proxy", "replay", "{missing}", "--policy", "{file}"], "AUDIT {missing}"),
    (["proxy", "replay", "{file}", "--policy", "{missing}"], "--policy {missing}"),
    (["proxy", "--root", "{missing}", "--", "true"], "--root {missing}"),
    (["bench", "retrieval", "--corpus", "{missing}", "--queries", "{file}"], "--corpus {missing}"),
    (["unlock", "--keyfile", "{missing}"], "--keyfile {missing}"),
    (["integrate", "cursor", "--pack", "{missing}"], "--pack {missing}"),
    (["verify", "{file}", "--vault", "{missing}"], "--vault {missing}"),
    (["pack", "verify", "{missing}"], "DIR {missing}"),
    (["pack", "verify", "{missing}", "--json"], "DIR {missing}"),
    (["pack", "install", "{missing}"], "DIR {missing}"),
    (["pack", "verify", "{dir}", "--trusted-keys", "{missing}"], "--trusted-keys {missing}"),
    (["pack", "verify", "{dir}", "--revoked-keys", "{missing}"], "--revoked-keys {missing}"),
    (["pack", "serve", "--pack", "{missing}"], "--pack {missing}"),
    (["pack", "sign", "--pack", "{missing}", "--key", "{file}", "--out", "{new}"], "--pack"),
    (["bundle", "--pack", "{missing}"], "--pack {missing}"),
    (["dev", "serve", "--repo-path", "{missing}"], "--repo-path {missing}"),
    (
        ["serve", "--http", "127.0.0.1:0", "--tls-cert", "{missing}", "--tls-key", "{file}"],
        "--tls-cert {missing}",
    ),
    (
        ["serve", "--http", "127.0.0.1:0", "--tls-cert", "{file}", "--tls-key", "{missing}"],
        "--tls-key {missing}",
    ),
    (
        ["pack", "serve", "--pack", "{dir}", "--http", "127.0.0.1:0", "--tls-cert", "{missing}"],
        "--tls-cert {missing}",
    ),
    (
        ["pack", "serve", "--pack", "{dir}", "--http", "127.0.0.1:0", "--token-file", "{missing}"],
        "--token-file {missing}",
    ),
]


@pytest.mark.parametrize(("args", "named"), MISSING_INPUTS, ids=lambda v: " ".join(v)[:60])
def test_a_missing_file_is_not_found_and_names_what_was_given(
    home: Path, cli_vault: dict[str, str], tmp_path: Path, args: list[str], named: str
) -> None:
    given = {
        "missing": str(tmp_path / "nothing.jsonl"),
        "file": str(tmp_path / "policy.yaml"),
        "dir": str(tmp_path),
        "new": str(tmp_path / "new"),
    }
    Path(given["file"]).write_text("rules: []\n")
    done = run_cli([arg.format(**given) for arg in args], home, env=cli_vault)
    line = _one_error(done, 3)
    assert named.format(**given) in line and "does not exist" in line, (args, line)
    assert "internal error" not in line and "Traceback" not in done.stderr


def test_a_file_to_write_in_a_missing_folder_is_refused_before_anything_runs(
    home: Path, cli_vault: dict[str, str], tmp_path: Path
) -> None:
    out = tmp_path / "no" / "manifest.json"
    line = _one_error(run_cli(["lock", "--sign", "--out", str(out)], home, env=cli_vault), 3)
    assert f"--out {out}: the folder {out.parent} does not exist" in line
    assert "internal error" not in line


def test_counts_agree_with_their_nouns(home: Path, cli_vault: dict[str, str]) -> None:
    done = run_cli(["unlock", "--auto-lock", "1"], home, env=cli_vault)
    assert done.returncode == 0, done.stderr
    assert "auto-lock after 1 idle minute" in done.stdout and "1 idle minutes" not in done.stdout
    status = run_cli(["status"], home, env=cli_vault)
    assert "after 1 idle minute\n" in status.stdout, status.stdout
    run_cli(["lock"], home, env=cli_vault)


def test_selftest_prints_real_line_breaks(home: Path, cli_vault: dict[str, str]) -> None:
    done = run_cli(["selftest"], home, env=cli_vault)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert [line.split()[0] for line in lines] == ["model", "vault", "recall"]
    assert "\u240a" not in done.stdout


def test_get_prints_each_field_once_and_a_relations_headline(
    home: Path, cli_vault: dict[str, str]
) -> None:
    linked = run_cli(["link", "Ada", "owns", "the checklist", "--json"], home, env=cli_vault)
    assert linked.returncode == 0, linked.stderr
    relation_id = json.loads(linked.stdout)["relation"]["id"]
    done = run_cli(["get", relation_id], home, env=cli_vault)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "Ada owns the checklist"
    keys = [line.split(":", 1)[0].strip() for line in lines[1:]]
    assert "subject" not in keys and len(keys) == len(set(keys)) and "id" in keys


LONG = (
    "The Lantern service deploys every Tuesday at 14:00 UTC from the release branch after "
    "the checklist is signed off by Ada Lovelace in the ops channel."
)


def test_tables_keep_ids_and_words_whole_at_80_columns_and_narrower(
    home: Path, cli_vault: dict[str, str]
) -> None:
    env = {**cli_vault, "AFFIDAVIT_EMBEDDER": "off"}
    stored = run_cli(["store", LONG, "--source", "ops channel", "--json"], home, env=env)
    memory_id = json.loads(stored.stdout)["id"]
    words = set(LONG.split())
    for columns in ("80", "50", "160"):
        for args in (["recent"], ["search", "when does Lantern deploy"]):
            done = run_cli(args, home, env={**env, "COLUMNS": columns})
            assert done.returncode == 0, done.stderr
            assert memory_id in done.stdout, (columns, done.stdout)  # on one line, whole
            lines = done.stdout.splitlines()
            assert all(len(line) <= int(columns) for line in lines), (columns, done.stdout)
            shown = {w.strip("│┃ ") for line in lines for w in line.split()}
            assert words <= shown, (columns, words - shown)  # no word cut in two
