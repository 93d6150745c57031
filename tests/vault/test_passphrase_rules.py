"""A passphrase in the environment and a passphrase chosen: empty means unset, weak is refused.

Through the real CLI: ``AFFIDAVIT_PASSPHRASE=`` (empty) with an unlock session open opens the
vault through the session (it used to be a wrong passphrase, exit 6); ``init`` and ``passwd``
refuse a one-character or common passphrase (exit 2, nothing created or changed) unless given
``--weak-passphrase-ok``.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from affidavit.crypto.passphrases import MIN_LENGTH, weakness
from affidavit.vault import DB_NAME
from tests.support import run_cli
from tests.vault.conftest import TEST_PASSPHRASE, vault_env


def _one_error(done: object, code: int, *words: str) -> str:
    err = done.stderr  # type: ignore[attr-defined]
    assert done.returncode == code, err  # type: ignore[attr-defined]
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("affidavit: error: "), err
    for word in words:
        assert word in lines[0], lines[0]
    return lines[0]


def test_an_empty_passphrase_variable_is_unset_and_the_session_opens_the_vault(
    home: Path, cli_vault: dict[str, str]
) -> None:
    assert run_cli(["unlock"], home, env=cli_vault).returncode == 0
    stored = run_cli(["store", "Alice owns billing.", "--source", "t"], home, env=cli_vault)
    assert stored.returncode == 0, stored.stderr
    empty = {**cli_vault, "AFFIDAVIT_PASSPHRASE": ""}
    found = run_cli(["recent", "--json"], home, env=empty)
    assert found.returncode == 0, found.stderr
    assert [m["text"] for m in json.loads(found.stdout)["results"]] == ["Alice owns billing."]
    status = run_cli(["status", "--json"], home, env=empty)
    assert status.returncode == 0 and json.loads(status.stdout)["unlocked_by"] == "session"
    assert run_cli(["lock"], home, env=empty).returncode == 0
    _one_error(run_cli(["recent"], home, env=empty), 6, "locked", "AFFIDAVIT_PASSPHRASE")


@pytest.mark.parametrize(
    ("weak", "reason"),
    [
        ("x", "it has 1 character, fewer than 12"),  # plural agreement
        ("password1234", "common password"),
        ("Correct Horse Battery Staple", "common password"),
        ("P@ssw0rd-2024!", "common password"),
        ("letmeinletmein", "common password"),
        ("abcabcabcabc", "common password"),
        ("123456789012", "common password"),
        ("zzzzzzzzzzzzzzzz", "repeats"),
    ],
)
def test_init_refuses_a_weak_passphrase_and_creates_nothing(
    home: Path, tmp_path: Path, weak: str, reason: str
) -> None:
    env = vault_env(tmp_path / "v", tmp_path / "run", passphrase=weak)
    line = _one_error(run_cli(["init"], home, env=env), 2, "too weak", reason, "12")
    assert weak not in line.replace("too weak", "")  # never repeated
    assert not (tmp_path / "v").exists()


def test_the_waiver_flag_accepts_a_weak_passphrase(home: Path, tmp_path: Path) -> None:
    env = vault_env(tmp_path / "v", tmp_path / "run", passphrase="x")
    done = run_cli(["init", "--weak-passphrase-ok"], home, env=env)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "v" / DB_NAME).exists()


def test_an_empty_passphrase_at_init_is_none_given(home: Path, tmp_path: Path) -> None:
    env = vault_env(tmp_path / "v", tmp_path / "run", passphrase="")
    _one_error(run_cli(["init"], home, env=env), 6, "AFFIDAVIT_PASSPHRASE is not set")
    assert not (tmp_path / "v").exists()


def test_passwd_refuses_a_weak_new_passphrase_and_keeps_the_old_one(
    home: Path, cli_vault: dict[str, str]
) -> None:
    weak = {**cli_vault, "AFFIDAVIT_NEW_PASSPHRASE": "hunter2"}
    _one_error(run_cli(["passwd"], home, env=weak), 2, "too weak", "fewer than 12")
    assert run_cli(["status", "--json"], home, env=cli_vault).returncode == 0  # old one opens
    strong = {**cli_vault, "AFFIDAVIT_NEW_PASSPHRASE": "marble otter violin 1987"}
    assert run_cli(["passwd"], home, env=strong).returncode == 0
    waived = {
        **cli_vault,
        "AFFIDAVIT_PASSPHRASE": "marble otter violin 1987",
        "AFFIDAVIT_NEW_PASSPHRASE": "hunter2",
    }
    assert run_cli(["passwd", "--weak-passphrase-ok"], home, env=waived).returncode == 0


def test_the_rule_accepts_long_uncommon_passphrases() -> None:
    for good in (TEST_PASSPHRASE, "marble otter violin 1987", "Tr4m-line!dusk-93", "quiet lantern"):
        assert weakness(good) is None, good
    assert MIN_LENGTH == 12
