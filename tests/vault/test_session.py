"""The unlock session: open for this user's processes until lock or reboot, useless when copied."""

from __future__ import annotations

import json
import os
import shutil
import time
from pathlib import Path

import pytest

from affidavit.core.errors import LockedError, UsageError
from affidavit.vault import NewItem, Vault, session, session_dir
from tests.support import run_cli
from tests.vault.conftest import vault_env


def _token(vault: Vault) -> Path:
    """The session's runtime half: ``<vault id>.session`` in this user's private directory."""
    directory = session_dir.private_dir(create=False)
    assert directory is not None
    return directory / f"{vault.vault_id.hex()}.session"


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
    directory = _token(vault).parent
    assert [p.name for p in directory.iterdir()] == [_token(vault).name]
    assert directory.stat().st_mode & 0o777 == 0o700
    assert directory == runtime_dir / f"affidavit-{os.getuid()}"
    for path in (credential, _token(vault)):
        assert path.stat().st_mode & 0o777 == 0o600
    master = vault._keys.master  # type: ignore[union-attr]
    assert master not in credential.read_bytes()
    assert master not in _token(vault).read_bytes()


def test_reboot_wipes_the_ram_secret_and_the_credential_alone_opens_nothing(
    vault: Vault, runtime_dir: Path
) -> None:
    vault.start_session()
    vault.close()
    Vault.open(vault.path).close()
    _token(vault).unlink()  # what a reboot does to /dev/shm
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
    monkeypatch.setenv(session_dir.RUNTIME_ENV, str(other_machine))
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


def test_once_session_belongs_to_the_first_open_until_it_closes(
    vault: Vault, runtime_dir: Path
) -> None:
    vault.start_session(once=True)
    with pytest.raises(LockedError):
        Vault.open(vault.path, consume_once=False)  # looking does not take it
    taker = Vault.open(vault.path)
    try:
        assert taker.unlocked_by == "session"
        with pytest.raises(LockedError):
            Vault.open(vault.path)
        taker.put(NewItem(data={"text": "written by the taker", "source": "t"}))
        assert taker.refresh() == [] and not taker.closed  # it keeps what it took
    finally:
        taker.close()
    assert not _token(vault).exists()
    assert not (vault.path / session.CREDENTIAL_NAME).exists()


def test_lock_reaches_the_process_that_took_a_once_session(vault: Vault, runtime_dir: Path) -> None:
    vault.start_session(once=True)
    taker = Vault.open(vault.path)
    try:
        assert session.clear(vault.path) is True
        with pytest.raises(LockedError):
            taker.refresh()
    finally:
        taker.close()


def test_idle_auto_lock(vault: Vault, runtime_dir: Path) -> None:
    vault.start_session(idle_minutes=5)
    Vault.open(vault.path).close()
    secret = _token(vault)
    six_minutes_ago = time.time() - 6 * 60
    os.utime(secret, (six_minutes_ago, six_minutes_ago))
    assert session.peek(vault.path) is None
    with pytest.raises(LockedError):
        Vault.open(vault.path)
    assert not secret.exists() and not (vault.path / session.CREDENTIAL_NAME).exists()


def test_using_the_vault_keeps_the_idle_clock_running(vault: Vault, runtime_dir: Path) -> None:
    vault.start_session(idle_minutes=5)
    secret = _token(vault)
    four_minutes_ago = time.time() - 4 * 60
    os.utime(secret, (four_minutes_ago, four_minutes_ago))
    Vault.open(vault.path).close()
    assert time.time() - secret.stat().st_mtime < 60


def test_a_new_unlock_replaces_the_previous_session(vault: Vault, runtime_dir: Path) -> None:
    vault.start_session()
    first = _token(vault).read_bytes()
    vault.start_session()
    assert [p.name for p in _token(vault).parent.iterdir()] == [_token(vault).name]
    assert _token(vault).read_bytes() != first
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


def test_a_newer_unlock_without_auto_lock_frees_handles_of_the_old_one(
    vault: Vault, runtime_dir: Path
) -> None:
    vault.start_session(idle_minutes=5)
    server = Vault.open(vault.path)
    try:
        vault.start_session()  # `affidavit unlock --auto-lock 0`
        long_ago = time.time() - 6 * 60
        os.utime(_token(vault), (long_ago, long_ago))
        assert server.refresh() == [] and not server.closed
        assert session.peek(vault.path) == session.Pending(False, session.RUNTIME, None)
    finally:
        server.close()


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


def test_an_unknown_store_is_refused_before_anything_is_written(
    vault: Vault, runtime_dir: Path
) -> None:
    with pytest.raises(UsageError, match="runtime or keyring"):
        vault.start_session(store="clipboard")
    assert not (vault.path / session.CREDENTIAL_NAME).exists()
    assert list(runtime_dir.iterdir()) == []


def test_a_credential_from_the_previous_release_reads_as_locked(
    vault: Vault, runtime_dir: Path
) -> None:
    credential = vault.start_session()
    value = json.loads(credential.read_text())
    value["meta"]["v"] = 1
    credential.write_text(json.dumps(value))
    assert session.peek(vault.path) is None
    with pytest.raises(LockedError):
        Vault.open(vault.path)
    assert session.clear(vault.path) is True  # lock still cleans up both halves
    assert not credential.exists() and not _token(vault).exists()


# -- unlock --once through the CLI -------------------------------------------------------------


def _cli_json(args: list[str], home: Path, env: dict[str, str]) -> dict[str, object]:
    done = run_cli([*args, "--json"], home, env=env)
    assert done.returncode == 0, done.stderr
    return dict(json.loads(done.stdout))


def test_a_one_time_unlock_serves_the_next_command_that_needs_the_key(
    home: Path, cli_vault: dict[str, str]
) -> None:
    stored = run_cli(
        ["store", "Once is enough for this fact.", "--source", "t"], home, env=cli_vault
    )
    assert stored.returncode == 0, stored.stderr
    assert run_cli(["unlock", "--once"], home, env=cli_vault).returncode == 0
    bare = {k: v for k, v in cli_vault.items() if k != "AFFIDAVIT_PASSPHRASE"}
    for _ in range(2):  # status looks, and leaves the session for the command it is meant for
        info = _cli_json(["status"], home, bare)
        assert info["state"] == "unlocked" and info["once"] is True
        shown = run_cli(["status"], home, env=bare).stdout
        assert "AFFIDAVIT_PASSPHRASE" not in shown and "once" in shown
    found = _cli_json(["search", "once is enough"], home, bare)
    assert "Once is enough for this fact." in json.dumps(found)
    again = run_cli(["recent"], home, env=bare)
    assert again.returncode == 6 and "locked" in again.stderr
    assert _cli_json(["status"], home, bare)["state"] == "locked"


def test_status_names_the_source_that_really_unlocked_it(
    home: Path, cli_vault: dict[str, str]
) -> None:
    by_passphrase = run_cli(["status"], home, env=cli_vault).stdout
    assert "for this process only (AFFIDAVIT_PASSPHRASE)" in by_passphrase
    assert _cli_json(["status"], home, cli_vault)["unlocked_by"] == "passphrase"
    assert run_cli(["unlock"], home, env=cli_vault).returncode == 0
    bare = {k: v for k, v in cli_vault.items() if k != "AFFIDAVIT_PASSPHRASE"}
    info = _cli_json(["status"], home, bare)
    assert info["unlocked_by"] == "session" and info["session"] == "unlocked"
    assert "AFFIDAVIT_PASSPHRASE" not in run_cli(["status"], home, env=bare).stdout
