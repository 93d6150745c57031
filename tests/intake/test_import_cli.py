"""``affidavit import --from FORMAT`` as a process: dry run, JSON, progress, the old default."""

from __future__ import annotations

import json
from pathlib import Path

from tests.intake.conftest import LIGHT
from tests.support import run_cli


def _notes(tmp_path: Path, count: int) -> Path:
    path = tmp_path / "notes.md"
    lines = ["# Inventory"] + [f"- Shelf {i} holds {i * 3} boxes of screws." for i in range(count)]
    path.write_text("\n".join(lines) + "\nA closing paragraph.\n")
    return path


def _count(home: Path, env: dict[str, str]) -> int:
    listed = run_cli(["recent", "--limit", "1000", "--json"], home, env=env)
    return len(json.loads(listed.stdout)["results"])


def test_dry_run_prints_what_would_be_stored_and_stores_nothing(
    home: Path, cli_vault: dict[str, str], tmp_path: Path
) -> None:
    env = {**cli_vault, **LIGHT}
    done = run_cli(
        ["import", "--from", "markdown", str(_notes(tmp_path, 3)), "--dry-run"], home, env=env
    )
    assert done.returncode == 0, done.stderr
    assert "would store: Shelf 0 holds 0 boxes of screws.  [inventory]" in done.stdout
    assert "3 claims would be stored in user (dry run)" in done.stdout  # your own namespace
    assert "skipped 1: a paragraph, not a bullet" in done.stdout
    assert _count(home, env) == 0


def test_import_reports_json_shows_progress_and_stores_nothing_twice(
    home: Path, cli_vault: dict[str, str], tmp_path: Path
) -> None:
    env = {**cli_vault, **LIGHT, "FORCE_COLOR": "1", "COLUMNS": "100"}
    path = _notes(tmp_path, 150)
    args = ["memory", "import", "--from", "markdown", str(path), "--json", "--namespace", "shop"]
    first = run_cli(args, home, env=env)
    assert first.returncode == 0, first.stderr
    report = json.loads(first.stdout)
    assert (report["stored"], report["duplicates"], report["namespace"]) == (150, 0, "shop")
    assert report["skipped"] == [
        {"where": f"{path}:152", "reason": "a paragraph, not a bullet: one claim per bullet"}
    ]
    assert "sealing" in first.stderr  # the progress bar, on stderr
    again = json.loads(run_cli(args, home, env=env).stdout)
    assert (again["stored"], again["duplicates"]) == (0, 150)
    assert _count(home, env) == 150


def test_a_bad_file_is_one_line_and_nothing_is_stored(
    home: Path, cli_vault: dict[str, str], tmp_path: Path
) -> None:
    path = tmp_path / "export.jsonl"
    path.write_text('{"text": "Alice owns billing."}\n[1, 2]\n')
    done = run_cli(["import", "--from", "compartment", str(path)], home, env=cli_vault)
    assert done.returncode != 0
    assert done.stderr.startswith("affidavit: error: export.jsonl:2 is not a JSON object")
    assert "Traceback" not in done.stderr and _count(home, cli_vault) == 0


def test_an_affidavit_export_still_imports_by_default(
    home: Path, cli_vault: dict[str, str], tmp_path: Path
) -> None:
    env = {**cli_vault, **LIGHT}
    run_cli(["store", "Alice owns billing.", "--source", "test"], home, env=env)
    export = tmp_path / "export.jsonl"
    exported = run_cli(["export", "--plaintext"], home, env=env)
    assert exported.returncode == 0, exported.stderr
    export.write_text(exported.stdout)
    done = run_cli(["import", str(export), "--json"], home, env=env)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["already_present"] >= 1
    refused = run_cli(["import", str(export), "--dry-run"], home, env=env)
    assert refused.returncode != 0 and "--dry-run" in refused.stderr
