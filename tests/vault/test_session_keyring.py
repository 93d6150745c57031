"""The OS keyring as the session store: a real file-based backend, and every way it can be absent.

This machine has no desktop keyring, so the backend is keyrings.alt's plain-text file keyring,
chosen explicitly the way a user would (PYTHON_KEYRING_BACKEND), with its file in the test's
temporary folder.
"""

from __future__ import annotations

import os
import socket
import subprocess
from pathlib import Path

import pytest

from affidavit.core.errors import LockedError, UnsupportedError
from affidavit.vault import Vault, keyring_store, session, session_dir
from tests.support import PYTHON, cli_env, run_cli
from tests.vault.conftest import TEST_PASSPHRASE, create_test_vault

PLAINTEXT = "keyrings.alt.file.PlaintextKeyring"
FAIL = "keyring.backends.fail.Keyring"


@pytest.fixture
def keyring_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Keyring config and data in the test's folder, so no user setting leaks in or out."""
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    monkeypatch.delenv("PYTHON_KEYRING_BACKEND", raising=False)
    return tmp_path / "data" / "python_keyring" / "keyring_pass.cfg"


def _token(vault: Vault) -> Path:
    directory = session_dir.private_dir(create=False)
    assert directory is not None
    return directory / f"{vault.vault_id.hex()}.session"


def test_the_keyring_holds_the_secret_and_the_runtime_token_only_the_pulse(
    vault: Vault, runtime_dir: Path, keyring_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PYTHON_KEYRING_BACKEND", PLAINTEXT)
    vault.start_session(store=session.KEYRING)
    assert session.peek(vault.path) == session.Pending(False, session.KEYRING, None)
    assert len(_token(vault).read_bytes()) == 17  # tag + session id, no secret
    assert vault.vault_id.hex() in keyring_home.read_text()
    opened = Vault.open(vault.path)
    try:
        assert opened.unlocked_by == "session"
        vault.start_session()  # switching back to the runtime store empties the keyring entry
        assert vault.vault_id.hex() not in keyring_home.read_text()
        assert opened.refresh() == []  # the handle's pulse survived the replacement
    finally:
        opened.close()
    vault.start_session(store=session.KEYRING)
    assert session.clear(vault.path) is True
    assert vault.vault_id.hex() not in keyring_home.read_text()
    with pytest.raises(LockedError):
        Vault.open(vault.path)


def test_a_keyring_entry_removed_behind_our_back_reads_as_locked(
    vault: Vault, runtime_dir: Path, keyring_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PYTHON_KEYRING_BACKEND", PLAINTEXT)
    vault.start_session(store=session.KEYRING)
    keyring_store.delete(vault.vault_id)
    with pytest.raises(LockedError):
        Vault.open(vault.path)


def test_no_keyring_backend_is_one_clear_error_and_nothing_is_written(
    home: Path, tmp_path: Path, keyring_home: Path
) -> None:
    vault = tmp_path / "v"
    create_test_vault(vault).close()
    runtime = tmp_path / "run"
    runtime.mkdir(mode=0o700)
    env = {
        "AFFIDAVIT_VAULT": str(vault),
        "AFFIDAVIT_RUNTIME_DIR": str(runtime),
        "AFFIDAVIT_PASSPHRASE": TEST_PASSPHRASE,
        "XDG_CONFIG_HOME": os.environ["XDG_CONFIG_HOME"],
        "XDG_DATA_HOME": os.environ["XDG_DATA_HOME"],
        "PYTHON_KEYRING_BACKEND": FAIL,  # what keyring falls back to when it finds none
    }
    done = run_cli(["unlock", "--store", "keyring"], home, env=env)
    assert done.returncode == 9, done.stderr
    assert "no OS keyring is available" in done.stderr and "--store keyring" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
    assert not (vault / session.CREDENTIAL_NAME).exists()
    assert list(runtime.glob("*/*")) == []


def test_a_backend_keyring_does_not_recommend_is_refused_unless_chosen(
    vault: Vault, runtime_dir: Path, keyring_home: Path
) -> None:
    import keyring

    if keyring.get_keyring().priority >= 1:
        pytest.skip("this machine has a recommended keyring; nothing to refuse")
    with pytest.raises(UnsupportedError, match="not one keyring recommends"):
        vault.start_session(store=session.KEYRING)
    assert not (vault.path / session.CREDENTIAL_NAME).exists()
    assert not keyring_home.exists()


def test_without_the_keyring_package_the_error_says_how_to_install_it(
    home: Path, cli_vault: dict[str, str]
) -> None:
    hide = (
        "import sys; sys.modules['keyring'] = None; "  # the import system's "not installed"
        "from affidavit.cli.main import main; main(['unlock', '--store', 'keyring'])"
    )
    done = subprocess.run(
        [PYTHON, "-c", hide],
        env=cli_env(home, cli_vault),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 9, done.stderr
    assert "pip install 'affidavit[keyring]'" in done.stderr


def test_a_server_without_a_bus_address_finds_the_users_own_bus(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(keyring_store.BUS_ENV, raising=False)
    run_user = tmp_path / "ru"  # short: unix socket paths are limited to ~100 bytes
    (run_user / str(os.getuid())).mkdir(parents=True)
    bus_path = run_user / str(os.getuid()) / "bus"
    with socket.socket(socket.AF_UNIX) as bus:
        bus.bind(str(bus_path))
        keyring_store.default_session_bus(run_user=run_user)
        assert os.environ[keyring_store.BUS_ENV] == f"unix:path={bus_path}"
        monkeypatch.setenv(keyring_store.BUS_ENV, "unix:path=/elsewhere")
        keyring_store.default_session_bus(run_user=run_user)  # an explicit address wins
        assert os.environ[keyring_store.BUS_ENV] == "unix:path=/elsewhere"


@pytest.mark.skipif(os.geteuid() != 0, reason="a socket of another user needs root")
def test_a_bus_socket_of_another_user_is_not_trusted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(keyring_store.BUS_ENV, raising=False)
    run_user = tmp_path / "ru"
    (run_user / str(os.getuid())).mkdir(parents=True)
    bus_path = run_user / str(os.getuid()) / "bus"
    with socket.socket(socket.AF_UNIX) as bus:
        bus.bind(str(bus_path))
        os.chown(bus_path, 65534, 65534)
        keyring_store.default_session_bus(run_user=run_user)
        assert keyring_store.BUS_ENV not in os.environ
