"""migrate: a file vault into PostgreSQL in place, and back into a new file vault; verified
record by record, all or nothing."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from affidavit.core.errors import ConflictError, IntegrityError
from affidavit.vault import DB_NAME, NewItem, Vault
from affidavit.vault import migrate as moving
from affidavit.vault import store as stores
from tests.pg import Cluster
from tests.vault.conftest import TEST_PASSPHRASE, create_test_vault, raw_execute


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
