"""Where the unlock session lives: found from the uid, refused when another user could reach it.

The location tests inject the platform (so the macOS branch runs on Linux too). The attack
tests run the real CLI against a stand-in for /dev/shm (AFFIDAVIT_RUNTIME_DIR), planting what
another local user could: a directory of theirs, a directory with a loose mode, symlinks.
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from affidavit.core.errors import UnsupportedError
from affidavit.vault import session_dir
from affidavit.vault.session_dir import Machine
from tests.support import run_cli
from tests.vault.conftest import TEST_PASSPHRASE, create_test_vault

UID = os.getuid()
OTHER_UID = 65534  # nobody
as_root = pytest.mark.skipif(os.geteuid() != 0, reason="planting another user's files needs root")


@pytest.fixture(autouse=True)
def no_override(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(session_dir.RUNTIME_ENV, raising=False)


def _linux(tmp_path: Path, **kw: object) -> Machine:
    shm = tmp_path / "shm"
    shm.mkdir(exist_ok=True)
    return Machine("linux", UID, run_user=tmp_path / "run-user", shm=shm, **kw)  # type: ignore[arg-type]


def _user_runtime(tmp_path: Path, mode: int = 0o700) -> Path:
    path = tmp_path / "run-user" / str(UID)
    path.mkdir(parents=True)
    path.chmod(mode)
    return path


def test_linux_uses_the_users_run_directory_when_it_is_private(tmp_path: Path) -> None:
    assert session_dir.base(_linux(tmp_path)) == tmp_path / "shm"
    private = _user_runtime(tmp_path)
    assert session_dir.base(_linux(tmp_path)) == private


def test_the_environment_does_not_move_the_session(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    private = _user_runtime(tmp_path)
    elsewhere = tmp_path / "terminal-xdg"
    elsewhere.mkdir(mode=0o700)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(elsewhere))
    assert session_dir.base(_linux(tmp_path)) == private
    monkeypatch.delenv("XDG_RUNTIME_DIR")
    monkeypatch.delenv("TMPDIR", raising=False)
    assert session_dir.base(_linux(tmp_path)) == private


def test_a_run_directory_that_is_not_private_is_passed_over(tmp_path: Path) -> None:
    _user_runtime(tmp_path, mode=0o755)
    assert session_dir.base(_linux(tmp_path)) == tmp_path / "shm"


def test_a_symlink_in_place_of_the_run_directory_is_passed_over(tmp_path: Path) -> None:
    target = tmp_path / "somewhere"
    target.mkdir(mode=0o700)
    (tmp_path / "run-user").mkdir()
    (tmp_path / "run-user" / str(UID)).symlink_to(target)
    assert session_dir.base(_linux(tmp_path)) == tmp_path / "shm"


@as_root
def test_a_run_directory_of_another_user_is_passed_over(tmp_path: Path) -> None:
    os.chown(_user_runtime(tmp_path), OTHER_UID, OTHER_UID)
    assert session_dir.base(_linux(tmp_path)) == tmp_path / "shm"


def test_no_ram_backed_storage_is_one_clear_error(tmp_path: Path) -> None:
    machine = Machine("linux", UID, run_user=tmp_path / "none", shm=tmp_path / "no-shm")
    with pytest.raises(UnsupportedError, match="no RAM-backed storage") as caught:
        session_dir.base(machine)
    assert "AFFIDAVIT_PASSPHRASE" in str(caught.value)


def test_macos_uses_the_per_user_temporary_folder_the_system_reports(tmp_path: Path) -> None:
    folder = tmp_path / "var-folders" / "T"
    folder.mkdir(parents=True, mode=0o700)
    mac = Machine("darwin", UID, darwin_temp_dir=lambda: str(folder) + "/")
    assert session_dir.base(mac) == folder
    assert session_dir.private_dir(mac, create=True) == folder / f"affidavit-{UID}"


def test_macos_without_a_private_temporary_folder_is_one_clear_error(tmp_path: Path) -> None:
    with pytest.raises(UnsupportedError, match="macOS"):
        session_dir.base(Machine("darwin", UID, darwin_temp_dir=lambda: None))
    loose = tmp_path / "T"
    loose.mkdir(mode=0o777)
    loose.chmod(0o777)
    with pytest.raises(UnsupportedError, match="macOS"):
        session_dir.base(Machine("darwin", UID, darwin_temp_dir=lambda: str(loose)))


def test_the_system_temporary_folder_query_is_harmless_off_macos() -> None:
    if os.uname().sysname != "Darwin":
        assert session_dir.darwin_user_temp_dir() is None


def test_the_private_directory_is_made_0700_whatever_the_umask(tmp_path: Path) -> None:
    old = os.umask(0o277)
    try:
        made = session_dir.private_dir(_linux(tmp_path), create=True)
    finally:
        os.umask(old)
    assert made == tmp_path / "shm" / f"affidavit-{UID}"
    assert made is not None and made.stat().st_mode & 0o777 == 0o700


def test_looking_for_the_private_directory_creates_nothing(tmp_path: Path) -> None:
    assert session_dir.private_dir(_linux(tmp_path), create=False) is None
    assert list((tmp_path / "shm").iterdir()) == []


# -- attacks through the real CLI --------------------------------------------------------------


@pytest.fixture
def shared(tmp_path: Path) -> Path:
    """A stand-in for /dev/shm: world-writable and sticky, like the real one."""
    path = tmp_path / "shm"
    path.mkdir()
    path.chmod(0o1777)
    return path


@pytest.fixture
def env(tmp_path: Path, shared: Path) -> dict[str, str]:
    vault = tmp_path / "vault"
    create_test_vault(vault).close()
    return {
        "AFFIDAVIT_VAULT": str(vault),
        "AFFIDAVIT_RUNTIME_DIR": str(shared),
        "AFFIDAVIT_PASSPHRASE": TEST_PASSPHRASE,
    }


def _refused(done: object, *words: str) -> str:
    err = done.stderr  # type: ignore[attr-defined]
    assert done.returncode == 5, err  # type: ignore[attr-defined]
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("affidavit: error: "), err
    for word in words:
        assert word in lines[0], lines[0]
    return lines[0]


def _nothing_unlocked(env: dict[str, str]) -> None:
    assert not (Path(env["AFFIDAVIT_VAULT"]) / "unlock.cred").exists()


def _another_users(planted: Path, tmp_path: Path) -> Path:
    if os.geteuid() != 0:
        pytest.skip("planting another user's directory needs root")
    planted.mkdir()
    planted.chmod(0o777)
    os.chown(planted, OTHER_UID, OTHER_UID)
    return planted


def _loose(planted: Path, tmp_path: Path) -> Path:
    planted.mkdir()
    planted.chmod(0o777)
    return planted


def _symlink_to_disk(planted: Path, tmp_path: Path) -> Path:
    on_disk = tmp_path / "on-disk"
    on_disk.mkdir(mode=0o700)
    planted.symlink_to(on_disk)
    return on_disk


@pytest.mark.parametrize(
    ("plant", "words"),
    [
        (_another_users, [f"uid {OTHER_UID}", "not by you"]),
        (_loose, ["0777", "0700"]),
        (_symlink_to_disk, ["symbolic link"]),
    ],
    ids=["another-users-directory", "loose-mode", "symlink-to-disk"],
)
def test_a_squatted_session_directory_is_left_alone_and_unlock_falls_back_to_a_private_one(
    home: Path, shared: Path, env: dict[str, str], tmp_path: Path, plant, words: list[str]
) -> None:
    planted = shared / f"affidavit-{UID}"
    watched = plant(planted, tmp_path)
    before = os.lstat(planted)
    unlocked = run_cli(["unlock"], home, env=env)
    assert unlocked.returncode == 0, unlocked.stderr
    warning = [line for line in unlocked.stderr.splitlines() if "warning" in line]
    assert len(warning) == 1 and str(planted) in warning[0], unlocked.stderr
    assert all(word in warning[0] for word in words), warning
    assert list(watched.iterdir()) == []  # the secret landed nowhere near the squatter
    after = os.lstat(planted)
    assert (after.st_mode, after.st_uid) == (before.st_mode, before.st_uid)  # left as found
    (fallback,) = [p for p in shared.iterdir() if p.name.startswith(f"affidavit-{UID}-")]
    info = os.lstat(fallback)
    assert (info.st_uid, info.st_mode & 0o777) == (UID, 0o700)
    pointer = home / ".affidavit" / session_dir.POINTER_NAME
    assert pointer.read_text() == str(fallback) and pointer.stat().st_mode & 0o777 == 0o600
    assert [p.name for p in fallback.iterdir()] and str(fallback) in warning[0]
    # every other process of the user finds the session there, with no passphrase
    no_secret = {k: v for k, v in env.items() if k != "AFFIDAVIT_PASSPHRASE"}
    status = run_cli(["status", "--json"], home, env=no_secret)
    assert status.returncode == 0, status.stderr
    assert json.loads(status.stdout)["unlocked_by"] == "session"
    assert run_cli(["lock"], home, env=no_secret).returncode == 0
    assert list(fallback.iterdir()) == [] and list(watched.iterdir()) == []
    _nothing_unlocked(env)
    assert run_cli(["status", "--json"], home, env=no_secret).returncode == 0  # locked, calm


def test_a_pointer_to_a_directory_that_is_not_ours_is_ignored(
    home: Path, shared: Path, env: dict[str, str], tmp_path: Path
) -> None:
    planted = _another_users(shared / f"affidavit-{UID}", tmp_path)
    decoy = _another_users(shared / f"affidavit-{UID}-decoy", tmp_path)
    pointer = home / ".affidavit" / session_dir.POINTER_NAME
    pointer.parent.mkdir(mode=0o700)
    pointer.write_text(str(decoy))  # recorded before a reboot; someone made the name since
    assert run_cli(["unlock"], home, env=env).returncode == 0
    assert list(decoy.iterdir()) == [] and list(planted.iterdir()) == []
    assert pointer.read_text() not in (str(decoy), str(planted))


@pytest.fixture
def victim(tmp_path: Path) -> Path:
    """A file of the user's that a planted symlink points at."""
    path = tmp_path / "notes.txt"
    path.write_text("my notes, not a secret")
    return path


def _unlocked_token(home: Path, shared: Path, env: dict[str, str]) -> Path:
    """Unlock through the CLI; the session's file in the private directory."""
    assert run_cli(["unlock"], home, env=env).returncode == 0
    private = shared / f"affidavit-{UID}"
    (token,) = [p for p in private.iterdir() if not p.name.startswith(".")]
    return token


def test_a_symlink_planted_in_place_of_the_session_file_is_never_followed(
    home: Path, shared: Path, env: dict[str, str], victim: Path
) -> None:
    token = _unlocked_token(home, shared, env)
    token.unlink()
    token.symlink_to(victim)
    no_secret = {k: v for k, v in env.items() if k != "AFFIDAVIT_PASSPHRASE"}
    _refused(run_cli(["status"], home, env=no_secret), "symbolic link")
    _refused(run_cli(["search", "notes"], home, env=no_secret), "symbolic link")
    assert run_cli(["lock"], home, env=no_secret).returncode == 0
    assert victim.read_text() == "my notes, not a secret"
    assert not token.is_symlink() and not token.exists()


def test_a_symlink_at_the_session_file_name_before_unlock_is_replaced_not_written_through(
    home: Path, shared: Path, env: dict[str, str], victim: Path
) -> None:
    token = _unlocked_token(home, shared, env)
    assert run_cli(["lock"], home, env=env).returncode == 0
    token.symlink_to(victim)
    assert run_cli(["unlock"], home, env=env).returncode == 0
    assert victim.read_text() == "my notes, not a secret"
    assert token.is_file() and not token.is_symlink()
    assert token.stat().st_mode & 0o777 == 0o600


def test_an_unsafe_session_directory_does_not_stop_lock(
    home: Path, shared: Path, env: dict[str, str]
) -> None:
    _unlocked_token(home, shared, env).parent.chmod(0o777)
    assert run_cli(["lock"], home, env=env).returncode == 0
    _nothing_unlocked(env)


def test_an_unsafe_directory_is_passed_over_for_a_recorded_private_one(
    tmp_path: Path, shared: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AFFIDAVIT_HOME", str(tmp_path / "home"))
    planted = shared / f"affidavit-{UID}"
    planted.mkdir(mode=0o700)
    planted.chmod(0o755)
    machine = Machine("linux", UID, run_user=tmp_path / "none", shm=shared)
    assert session_dir.private_dir(machine, create=False) is None  # nothing made by looking
    made = session_dir.private_dir(machine, create=True)
    assert made is not None and made.parent == shared and made != planted
    assert session_dir.private_dir(machine, create=False) == made
    assert session_dir.private_dir(machine, create=True) == made  # one place, not one per call
    planted.chmod(0o700)  # the usual name is fine again: the recorded one still wins
    assert session_dir.private_dir(machine, create=True) == made
    made.rmdir()  # a reboot
    assert session_dir.private_dir(machine, create=True) == planted
    assert stat.S_IMODE(os.lstat(planted).st_mode) == 0o700
