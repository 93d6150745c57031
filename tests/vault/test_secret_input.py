"""Secrets as an attacker or a clumsy script hands them over: undecodable passphrases, odd keyfiles.

Each case runs the real CLI and must end in one clear line, never a traceback, a hang or an
exhausted memory. The keyfile runs are capped at 2 GiB of address space so a regression
fails the test instead of the machine.
"""

from __future__ import annotations

import os
import resource
import subprocess
from pathlib import Path

import pytest

from affidavit.core.errors import AuthError, InputError
from affidavit.crypto import keyslots
from tests.support import PYTHON, cli_env, run_cli, run_on_terminal
from tests.vault.conftest import TEST_PASSPHRASE, create_test_vault

NOT_UTF8 = os.fsdecode(b"caf\xe9 \xff")  # Latin-1 bytes as a process environment carries them


def _one_line(stderr: str) -> str:
    lines = [line for line in stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("affidavit: error: "), stderr
    assert "internal error" not in lines[0] and "Traceback" not in stderr
    return lines[0]


def test_a_passphrase_that_is_not_utf8_is_one_clear_error(
    home: Path, cli_vault: dict[str, str]
) -> None:
    done = run_cli(["unlock"], home, env={**cli_vault, "AFFIDAVIT_PASSPHRASE": NOT_UTF8})
    line = _one_line(done.stderr)
    assert done.returncode == 2 and "not valid UTF-8" in line and "AFFIDAVIT_PASSPHRASE" in line
    assert "\\xe9" not in line and "\\udc" not in line and "caf" not in line


def test_a_new_passphrase_that_is_not_utf8_creates_no_vault(home: Path, tmp_path: Path) -> None:
    env = {"AFFIDAVIT_VAULT": str(tmp_path / "v"), "AFFIDAVIT_PASSPHRASE": NOT_UTF8}
    done = run_cli(["init"], home, env=env)
    assert done.returncode == 2 and "not valid UTF-8" in _one_line(done.stderr)
    assert not (tmp_path / "v").exists()


def test_the_key_derivation_refuses_lone_surrogates_by_name_not_value() -> None:
    with pytest.raises(InputError, match="not valid UTF-8") as caught:
        keyslots.make_slot(
            os.urandom(32), os.urandom(16), "x\udcffy", kdf=keyslots.KdfParams.minimum()
        )
    assert "\\udcff" not in str(caught.value)


def test_a_non_utf8_passphrase_typed_at_the_terminal_is_one_clear_error(
    home: Path, cli_vault: dict[str, str]
) -> None:
    env = cli_env(home, {k: v for k, v in cli_vault.items() if k != "AFFIDAVIT_PASSPHRASE"})
    code, screen = run_on_terminal(["unlock"], env, b"passphrase:", b"caf\xe9 \xff\r")
    assert code == 2, screen
    assert "not valid UTF-8" in screen and "internal error" not in screen
    assert "0xe9" not in screen and "0xff" not in screen


# -- keyfiles ----------------------------------------------------------------------------------


def _two_factor(tmp_path: Path) -> dict[str, str]:
    keyfile = tmp_path / "usb.key"
    keyfile.write_bytes(os.urandom(64))
    create_test_vault(tmp_path / "v2fa", keyfile=keyfile).close()
    return {"AFFIDAVIT_VAULT": str(tmp_path / "v2fa"), "AFFIDAVIT_PASSPHRASE": TEST_PASSPHRASE}


def _capped() -> None:
    limit = 2 * 1024**3
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


def _unlock_with_keyfile(home: Path, env: dict[str, str], keyfile: Path) -> tuple[int, str]:
    done = subprocess.run(
        [PYTHON, "-m", "affidavit", "unlock"],
        env=cli_env(home, {**env, "AFFIDAVIT_KEYFILE": str(keyfile)}),
        capture_output=True,
        text=True,
        timeout=120,
        preexec_fn=_capped,
        check=False,
    )
    return done.returncode, _one_line(done.stderr)


def test_a_fifo_as_keyfile_is_refused_without_waiting_for_a_writer(
    home: Path, tmp_path: Path
) -> None:
    fifo = tmp_path / "keyfile.fifo"
    os.mkfifo(fifo)
    code, line = _unlock_with_keyfile(home, _two_factor(tmp_path), fifo)
    assert code == 6 and "not a regular file" in line and str(fifo) in line


def test_dev_zero_as_keyfile_is_refused_before_reading(home: Path, tmp_path: Path) -> None:
    code, line = _unlock_with_keyfile(home, _two_factor(tmp_path), Path("/dev/zero"))
    assert code == 6 and "not a regular file" in line


def test_a_huge_keyfile_is_refused_before_reading(home: Path, tmp_path: Path) -> None:
    huge = tmp_path / "huge.key"
    with huge.open("wb") as handle:  # sparse: 64 GiB on paper, nothing on disk
        handle.truncate(64 * 1024**3)
    code, line = _unlock_with_keyfile(home, _two_factor(tmp_path), huge)
    assert code == 6 and "larger than" in line and "MiB" in line


def test_a_directory_as_keyfile_is_refused(home: Path, tmp_path: Path) -> None:
    code, line = _unlock_with_keyfile(home, _two_factor(tmp_path), tmp_path)
    assert code == 6 and "not a regular file" in line


def test_a_keyfile_reached_through_a_symlink_still_works(tmp_path: Path) -> None:
    real = tmp_path / "media" / "usb.key"
    real.parent.mkdir()
    real.write_bytes(b"k" * 64)
    link = tmp_path / "vault.key"
    link.symlink_to(real)
    assert keyslots.read_keyfile(link) == b"k" * 64
    with pytest.raises(AuthError, match="shorter than"):
        (tmp_path / "short.key").write_bytes(b"k")
        keyslots.read_keyfile(tmp_path / "short.key")
