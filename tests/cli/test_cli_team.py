"""The team vault's commands as a user runs them: init --store (create, join), the password
refusal, migrate; real processes against a real PostgreSQL server."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from affidavit.vault import DB_NAME
from tests.pg import Cluster
from tests.support import run_cli
from tests.vault.conftest import TEST_PASSPHRASE, create_test_vault, vault_env


@pytest.mark.parametrize("where", ["argv", "env"])
def test_a_password_in_the_url_is_refused_before_anything_happens(
    home: Path, tmp_path: Path, where: str
) -> None:
    url = "postgresql://alice:hunter2-secret@db.example.com/team"
    env = vault_env(tmp_path / "vault", tmp_path / "run")
    args = ["init", "--store", url] if where == "argv" else ["init"]
    if where == "env":
        env["AFFIDAVIT_STORE"] = url
    done = run_cli(args, home, env=env)
    assert done.returncode != 0
    assert "carries a password" in done.stderr and "~/.pgpass" in done.stderr
    assert "PGPASSWORD" in done.stderr
    assert "hunter2-secret" not in done.stderr + done.stdout
    assert "Traceback" not in done.stderr and len(done.stderr.strip().splitlines()) <= 2
    assert not (tmp_path / "vault").exists()


def test_init_creates_then_joins_and_a_wrong_passphrase_joins_nothing(
    home: Path, tmp_path: Path, pg_cluster: Cluster
) -> None:
    url = pg_cluster.new_database()
    first = vault_env(tmp_path / "a", tmp_path / "run-a")
    made = run_cli(["init", "--store", url, "--json"], home, env=first)
    assert made.returncode == 0, made.stderr
    assert json.loads(made.stdout)["store"] == url
    assert sorted(p.name for p in (tmp_path / "a").iterdir()) == ["store.url"]

    wrong = vault_env(tmp_path / "b", tmp_path / "run-b", passphrase="not the passphrase")
    refused = run_cli(["init", "--store", url], home, env=wrong)
    assert refused.returncode != 0 and "wrong passphrase" in refused.stderr
    assert not (tmp_path / "b" / "store.url").exists()

    other = vault_env(tmp_path / "b", tmp_path / "run-b")
    joined = run_cli(["init", "--store", url], home, env=other)
    assert joined.returncode == 0, joined.stderr
    stored = run_cli(["store", "from a", "--source", "test"], home, env=first)
    assert stored.returncode == 0, stored.stderr
    found = run_cli(["recent", "--json"], home, env=other)
    assert "from a" in found.stdout


def test_migrate_command_moves_a_file_vault_and_reports(
    home: Path, tmp_path: Path, pg_cluster: Cluster
) -> None:
    url = pg_cluster.new_database()
    create_test_vault(tmp_path / "vault").close()
    env = vault_env(tmp_path / "vault", tmp_path / "run")
    assert run_cli(["store", "a fact", "--source", "t"], home, env=env).returncode == 0
    with sqlite3.connect(tmp_path / "vault" / DB_NAME) as db:  # the rows the file holds
        (records,) = db.execute("SELECT count(*) FROM records").fetchone()
        (entries,) = db.execute("SELECT count(*) FROM audit").fetchone()
    assert records >= 1 and entries >= 2  # the fact (and the model's identity), their entries
    moved = run_cli(["migrate", "--to", url], home, env=env)
    assert moved.returncode == 0, moved.stderr
    assert f"moved {records} records and {entries} audit entries" in moved.stdout
    assert (tmp_path / "vault" / (DB_NAME + ".before-migrate")).exists()
    found = run_cli(["recent", "--json"], home, env=env)
    assert "a fact" in found.stdout
    status = run_cli(["audit", "verify"], home, env=env)
    assert status.returncode == 0, status.stderr
    again = run_cli(["migrate", "--to", url], home, env=env)
    assert again.returncode != 0 and "already lives in" in again.stderr
    assert TEST_PASSPHRASE not in again.stderr


def test_a_signed_manifest_is_refused_for_a_team_vault(
    home: Path, tmp_path: Path, pg_cluster: Cluster
) -> None:
    create_test_vault(tmp_path / "vault", store=pg_cluster.new_database()).close()
    env = vault_env(tmp_path / "vault", tmp_path / "run")
    done = run_cli(["lock", "--sign"], home, env=env)
    assert done.returncode != 0
    assert "a team vault has none" in done.stderr and "Traceback" not in done.stderr
    assert run_cli(["lock"], home, env=env).returncode == 0
