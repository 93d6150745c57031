"""The unlock session: open for this user's processes until lock or reboot, useless when copied."""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

import pytest

from affidavit.core.errors import LockedError
from affidavit.vault import NewItem, Vault, session
from tests.support import run_cli
from tests.vault.conftest import vault_env


def test_unlocked_vault_opens_in_another_process_without_a_passphrase(
    vault: Vault, home: Path, runtime_dir: Path
) -> None:
    item = vault.put(NewItem(data={"text": "shared across processes", "source": "t"}))
    vault.start_session()
    env = vault_env(vault.path, runtime_dir, passphrase=None)
    done = run_cli(["get", item.id, "--json"], home, env=env)
    assert done.returncode == 0, done.stderr
    assert "shared across processes" in done.stdout
    session.clear(vault.path)
    refused = run_cli(["get", item.id], home, env=env)
    assert refused.returncode == 6
    assert refused.stderr.strip().startswith("affidavit: error: the vault at")
    assert "locked" in refused.stderr and "Traceback" not in refused.stderr


def test_files_of_a_session_are_private_and_hold_no_key_in_the_clear(
    vault: Vault, runtime_dir: Path
) -> None:
    credential = vault.start_session()
    secret_files = list(session.secret_dir().iterdir())
    assert len(secret_files) == 1
    assert session.secret_dir().stat().st_mode & 0o777 == 0o700
    for path in (credential, *secret_files):
        assert path.stat().st_mode & 0o777 == 0o600
    master = vault._keys.master  # type: ignore[union-attr]
    assert master not in credential.read_bytes()
    assert master not in secret_files[0].read_bytes()


def test_reboot_wipes_the_ram_secret_and_the_credential_alone_opens_nothing(
    vault: Vault, runtime_dir: Path
) -> None:
    vault.start_session()
    vault.close()
    Vault.open(vault.path).close()
    for path in session.secret_dir().iterdir():  # what a reboot does to /dev/shm
        path.unlink()
    assert (vault.path / session.CREDENTIAL_NAME).exists()
    with pytest.raises(LockedError):
        Vault.open(vault.path)


def test_a_copied_credential_on_another_machine_opens_nothing(
    vault: Vault, tmp_path: Path, runtime_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    vault.start_session()
    vault.close()
    stolen = tmp_path / "stolen"
    shutil.copytree(vault.path, stolen)
    other_machine = tmp_path / "other-run"
    other_machine.mkdir(mode=0o700)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(other_machine))
    with pytest.raises(LockedError):
        Vault.open(stolen)


def test_lock_reaches_processes_that_opened_through_the_session(
    vault: Vault, runtime_dir: Path
) -> None:
    vault.start_session()
    reader = Vault.open(vault.path)
    try:
        assert reader.refresh() == []
        Vault.open(vault.path).lock()
        with pytest.raises(LockedError):
            reader.refresh()
        assert reader.closed
    finally:
        reader.close()


def test_once_session_is_consumed_by_the_first_open(vault: Vault, runtime_dir: Path) -> None:
    vault.start_session(once=True)
    Vault.open(vault.path).close()
    with pytest.raises(LockedError):
        Vault.open(vault.path)
    assert list(session.secret_dir().iterdir()) == []


def test_idle_auto_lock(vault: Vault, runtime_dir: Path) -> None:
    vault.start_session(idle_minutes=5)
    Vault.open(vault.path).close()
    (secret,) = session.secret_dir().iterdir()
    six_minutes_ago = time.time() - 6 * 60
    os.utime(secret, (six_minutes_ago, six_minutes_ago))
    assert session.state(vault.path) == "locked"
    with pytest.raises(LockedError):
        Vault.open(vault.path)
    assert not secret.exists() and not (vault.path / session.CREDENTIAL_NAME).exists()


def test_using_the_vault_keeps_the_idle_clock_running(vault: Vault, runtime_dir: Path) -> None:
    vault.start_session(idle_minutes=5)
    (secret,) = session.secret_dir().iterdir()
    four_minutes_ago = time.time() - 4 * 60
    os.utime(secret, (four_minutes_ago, four_minutes_ago))
    Vault.open(vault.path).close()
    assert time.time() - secret.stat().st_mtime < 60


def test_a_new_unlock_replaces_the_previous_session(vault: Vault, runtime_dir: Path) -> None:
    vault.start_session()
    vault.start_session()
    assert len(list(session.secret_dir().iterdir())) == 1
    Vault.open(vault.path).close()


def test_credential_of_another_vault_is_ignored(
    make_vault: object, vault: Vault, tmp_path: Path, runtime_dir: Path
) -> None:
    from tests.vault.conftest import create_test_vault

    other = create_test_vault(tmp_path / "second")
    other.start_session()
    shutil.copy(other.path / session.CREDENTIAL_NAME, vault.path / session.CREDENTIAL_NAME)
    other.close()
    with pytest.raises(LockedError):
        Vault.open(vault.path)


def test_a_second_unlock_is_adopted_by_running_handles(vault: Vault, runtime_dir: Path) -> None:
    vault.start_session()
    server = Vault.open(vault.path)
    try:
        vault.start_session(idle_minutes=30)  # e.g. `affidavit unlock --auto-lock 30` again
        assert server.refresh() == []
        assert not server.closed
        vault.put(NewItem(data={"text": "after re-unlock", "source": "t"}))
        assert len(server.refresh()) == 1
    finally:
        server.close()
