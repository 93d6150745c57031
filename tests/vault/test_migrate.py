"""migrate: a file vault into PostgreSQL in place, and back into a new file vault; verified
record by record, all or nothing."""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from affidavit.core.errors import ConflictError, IntegrityError
from affidavit.vault import DB_NAME, NewItem, Vault
from affidavit.vault import migrate as moving
from affidavit.vault import store as stores
from tests.pg import Cluster
from tests.support import cli_env, run_cli
from tests.vault.conftest import TEST_PASSPHRASE, create_test_vault, raw_execute, vault_env


def _state(v: Vault) -> dict[str, tuple[Any, ...]]:
    return {
        it.id: (it.kind, it.namespace, it.seq, it.saved_at, it.data, it.vector) for it in v.items()
    }


def _filled(path: Path) -> tuple[Vault, dict[str, tuple[Any, ...]]]:
    v = create_test_vault(path)
    v.put_many(
        [
            NewItem(data={"text": f"fact {i}", "source": "s"}, vector=bytes([i]) * 8)
            for i in range(20)
        ]
    )
    first = next(iter(v.items())).id
    v.update(first, {"text": "fact 0 corrected", "source": "s"})
    v.forget(list(v.items())[3].id)
    v.forget(list(v.items())[4].id, shred=True)
    v.set_setting("grants", {"a": "rw"})
    return v, _state(v)


def test_file_to_postgres_in_place_and_back(
    tmp_path: Path, runtime_dir: Path, pg_cluster: Cluster
) -> None:
    url = pg_cluster.new_database()
    home = tmp_path / "vault"
    v, before = _filled(home)
    done = moving.migrate(v, url)
    assert (done.records, done.audit_entries) == (
        21,
        25,
    )  # init, 20 stores, update, forget, shred, setting
    assert stores.pointer(home) == url
    assert not (home / DB_NAME).exists() and (home / (DB_NAME + ".before-migrate")).exists()
    team = Vault.open(home, passphrase=TEST_PASSPHRASE)
    try:
        assert _state(team) == before and team.verify_audit().ok
        assert team.get_setting("grants") == {"a": "rw"}
        team.put(NewItem(data={"text": "written in the team vault", "source": "s"}))
        back = moving.migrate(team, str(tmp_path / "back"))
    finally:
        team.close()
    assert back.directory == str(tmp_path / "back")
    assert stores.pointer(home) == url  # the team database stays where it is
    again = Vault.open(tmp_path / "back", passphrase=TEST_PASSPHRASE)
    try:
        assert {k: v for k, v in _state(again).items() if k in before} == before
        assert len(again) == len(before) + 1 and again.verify_audit().ok
    finally:
        again.close()


def test_a_database_that_holds_a_vault_is_refused(
    tmp_path: Path, runtime_dir: Path, pg_cluster: Cluster
) -> None:
    url = pg_cluster.new_database()
    create_test_vault(tmp_path / "other", store=url).close()
    v, before = _filled(tmp_path / "vault")
    with pytest.raises(ConflictError, match="already holds a vault"):
        moving.migrate(v, url)
    assert stores.pointer(tmp_path / "vault") is None
    assert _state(v) == before
    v.close()


def test_a_damaged_source_migrates_nothing(
    tmp_path: Path, runtime_dir: Path, pg_cluster: Cluster
) -> None:
    url = pg_cluster.new_database()
    v, _ = _filled(tmp_path / "vault")
    raw_execute(
        v.path,
        None,
        "UPDATE {t}audit SET blob = (SELECT blob FROM {t}audit WHERE n = 1) WHERE n = 3",
    )
    with pytest.raises(IntegrityError, match="audit chain does not verify"):
        moving.migrate(v, url)
    v.close()
    assert stores.pointer(tmp_path / "vault") is None and (tmp_path / "vault" / DB_NAME).exists()
    assert not stores.holds_vault(url)  # the half-made copy was removed


def test_a_team_vault_is_not_moved_away_from_its_team(
    tmp_path: Path, runtime_dir: Path, pg_cluster: Cluster
) -> None:
    """Copying a member's team vault into an empty database would re-point this member
    alone: the others keep writing to the old database and the two drift apart, silently."""
    team_url, empty = pg_cluster.new_database(), pg_cluster.new_database()
    create_test_vault(tmp_path / "first", store=team_url).close()
    member = Vault.join(tmp_path / "member", team_url, TEST_PASSPHRASE)
    with pytest.raises(ConflictError, match="away from the team") as caught:
        moving.migrate(member, empty)
    member.close()
    assert "pg_dump" in str(caught.value) and "\n" not in str(caught.value)
    assert stores.pointer(tmp_path / "member") == team_url
    assert not stores.holds_vault(empty)


def test_members_follow_a_copy_of_the_team_database_one_by_one(
    tmp_path: Path, runtime_dir: Path, pg_cluster: Cluster
) -> None:
    """How a team moves: the administrator copies the database while nobody writes, then
    each member's migrate verifies the copy is this vault's very log and re-points."""
    old, new = pg_cluster.new_database(), pg_cluster.new_database()
    first = create_test_vault(tmp_path / "first", store=old)
    stored = first.put(NewItem(data={"text": "stored before the move", "source": "s"}))
    second = Vault.join(tmp_path / "second", old, TEST_PASSPHRASE)
    pg_cluster.copy_database(old, new)
    moving.migrate(first, new)
    second.put(NewItem(data={"text": "written to the old database", "source": "s"}))
    with pytest.raises(ConflictError, match="log differs"):
        moving.migrate(second, new)  # the copy no longer is this log: refused, nothing moved
    assert stores.pointer(tmp_path / "second") == old
    second.close()
    back = Vault.open(tmp_path / "first", passphrase=TEST_PASSPHRASE)
    try:
        assert stores.pointer(tmp_path / "first") == new
        assert back.get(stored.id).data["text"] == "stored before the move"
        assert back.verify_audit().ok
    finally:
        back.close()


#: ``migrate`` in a child process killed -9 the moment its copy has committed, before the copy
#: is read back and checked and before the vault directory points at it.
KILLED_AFTER_THE_COPY = """
import os, signal, sys
from pathlib import Path
from affidavit.vault import Vault
from affidavit.vault import migrate as moving
from affidavit.vault.pgstore import PgStore
from affidavit.vault.rows import RowFile

for engine in (PgStore, RowFile):
    copy = engine.init_schema
    def committed_then_killed(self, *args, _copy=copy, **kwargs):
        _copy(self, *args, **kwargs)
        os.kill(os.getpid(), signal.SIGKILL)
    engine.init_schema = committed_then_killed

vault = Vault.open(Path(sys.argv[1]), passphrase=os.environ["AFFIDAVIT_PASSPHRASE"])
moving.migrate(vault, sys.argv[2])
"""


@pytest.mark.parametrize("to", ["postgresql", "directory"])
def test_a_rerun_finishes_a_migration_killed_after_its_copy_committed(
    tmp_path: Path, home: Path, runtime_dir: Path, pg_cluster: Cluster, to: str
) -> None:
    target = pg_cluster.new_database() if to == "postgresql" else str(tmp_path / "copy")
    v, before = _filled(tmp_path / "vault")
    v.close()
    env = cli_env(home, vault_env(tmp_path / "vault", runtime_dir))
    killed = subprocess.run(
        [sys.executable, "-c", KILLED_AFTER_THE_COPY, str(tmp_path / "vault"), target],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    assert stores.existing_target(target) is not None  # complete, but never checked
    rerun = run_cli(
        ["migrate", "--to", target], home, env=vault_env(tmp_path / "vault", runtime_dir)
    )
    assert rerun.returncode == 0, rerun.stderr
    where = tmp_path / "vault" if to == "postgresql" else Path(target)
    moved = Vault.open(where, passphrase=TEST_PASSPHRASE)
    try:
        assert _state(moved) == before and moved.verify_audit().ok
    finally:
        moved.close()
    if to == "postgresql":
        assert stores.pointer(tmp_path / "vault") == target
        assert (tmp_path / "vault" / (DB_NAME + ".before-migrate")).exists()
