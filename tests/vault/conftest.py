"""Fixtures for vault tests, reusable by the recall and MCP-server tests.

A real vault on disk, made with the cheapest Argon2id parameters through the explicit
``kdf=`` argument (never an environment switch), so a test unlocks in microseconds.
Import from elsewhere with ``from tests.vault.conftest import create_test_vault, vault_env``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from affidavit.vault import KdfParams, Vault

TEST_PASSPHRASE = "correct horse battery staple"


def create_test_vault(
    path: Path, passphrase: str = TEST_PASSPHRASE, *, keyfile: Path | None = None
) -> Vault:
    """A new vault at ``path`` with cheap KDF parameters (tests only)."""
    return Vault.create(path, passphrase, keyfile=keyfile, kdf=KdfParams.minimum())


def vault_env(
    vault_dir: Path, runtime: Path, *, passphrase: str | None = TEST_PASSPHRASE
) -> dict[str, str]:
    """Environment for a CLI or server subprocess using the vault at ``vault_dir``.

    ``runtime`` stands in for RAM-backed storage (XDG_RUNTIME_DIR), so sessions of parallel
    tests never meet. Pass ``passphrase=None`` to rely on an unlock session instead.
    """
    runtime.mkdir(parents=True, exist_ok=True, mode=0o700)
    env = {"AFFIDAVIT_VAULT": str(vault_dir), "XDG_RUNTIME_DIR": str(runtime)}
    if passphrase is not None:
        env["AFFIDAVIT_PASSPHRASE"] = passphrase
    return env


@pytest.fixture
def runtime_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A private stand-in for /dev/shm, also set in this process's XDG_RUNTIME_DIR."""
    path = tmp_path / "run"
    path.mkdir(mode=0o700)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(path))
    return path


@pytest.fixture
def vault_dir(tmp_path: Path) -> Path:
    """Where the test vault lives (not created yet)."""
    return tmp_path / "vault"


@pytest.fixture
def make_vault(vault_dir: Path, runtime_dir: Path) -> Iterator[Callable[..., Vault]]:
    """A factory for the test vault at ``vault_dir``; every vault it made is closed after."""
    made: list[Vault] = []

    def factory(passphrase: str = TEST_PASSPHRASE, *, keyfile: Path | None = None) -> Vault:
        v = create_test_vault(vault_dir, passphrase, keyfile=keyfile)
        made.append(v)
        return v

    yield factory
    for v in made:
        v.close()


@pytest.fixture
def vault(make_vault: Callable[..., Vault]) -> Vault:
    """An empty, unlocked test vault."""
    return make_vault()


@pytest.fixture
def cli_vault(home: Path, tmp_path: Path) -> dict[str, str]:
    """A test vault plus the environment that points CLI subprocesses at it."""
    vault_path = tmp_path / "cli-vault"
    create_test_vault(vault_path).close()
    return vault_env(vault_path, tmp_path / "cli-run")
