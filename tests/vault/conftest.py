"""Fixtures for vault tests, reusable by the recall and MCP-server tests.

A real vault on disk, made with the cheapest Argon2id parameters through the explicit
``kdf=`` argument (never an environment switch), so a test unlocks in microseconds.
Import from elsewhere with ``from tests.vault.conftest import create_test_vault, vault_env``.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest

from affidavit.vault import DB_NAME, KdfParams, Vault
from affidavit.vault.session_dir import RUNTIME_ENV
from tests.pg import Cluster

TEST_PASSPHRASE = "plover quasar tandem mulch"
"""Strong enough for `init` and `passwd` (the strength rule, ADR 0179): one place for every test."""


#: The engines the crash, concurrency, tamper and canary tests run on: mark a test (or a
#: module, with ``pytestmark``) ``@both_stores`` and its ``vault`` lives in each in turn.
STORES = ("sqlite", "postgresql")
both_stores = pytest.mark.parametrize("store", STORES, indirect=True)


def create_test_vault(
    path: Path,
    passphrase: str = TEST_PASSPHRASE,
    *,
    keyfile: Path | None = None,
    store: str | None = None,
) -> Vault:
    """A new vault at ``path`` with cheap KDF parameters (tests only); ``store`` is a
    PostgreSQL URL for a team vault."""
    return Vault.create(path, passphrase, keyfile=keyfile, kdf=KdfParams.minimum(), store=store)


@pytest.fixture
def store(request: pytest.FixtureRequest) -> str | None:
    """Where ``vault`` keeps its rows: None for the SQLite file (the default), or the URL of
    a fresh database in the session's throwaway cluster (``@both_stores``)."""
    if getattr(request, "param", "sqlite") == "sqlite":
        return None
    cluster: Cluster = request.getfixturevalue("pg_cluster")
    return cluster.new_database()


def raw_execute(
    vault_dir: Path, store: str | None, sql: str, params: tuple[object, ...] = ()
) -> list[tuple[Any, ...]]:
    """Run ``sql`` on the vault's rows behind its back, as an attacker with database access
    would. Table names are written ``{t}records``; placeholders ``?``."""
    if store is None:
        conn = sqlite3.connect(vault_dir / DB_NAME, isolation_level=None)
        try:
            return conn.execute(sql.format(t=""), params).fetchall()
        finally:
            conn.close()
    with psycopg.connect(store, autocommit=True) as pg:
        cur = pg.execute(sql.format(t="affidavit.").replace("?", "%s"), params)
        return cur.fetchall() if cur.description else []


def vault_env(
    vault_dir: Path, runtime: Path, *, passphrase: str | None = TEST_PASSPHRASE
) -> dict[str, str]:
    """Environment for a CLI or server subprocess using the vault at ``vault_dir``.

    ``runtime`` stands in for the machine's session place (AFFIDAVIT_RUNTIME_DIR), so
    sessions of parallel tests never meet and none is left in /dev/shm. Pass
    ``passphrase=None`` to rely on an unlock session instead.
    """
    runtime.mkdir(parents=True, exist_ok=True, mode=0o700)
    env = {"AFFIDAVIT_VAULT": str(vault_dir), RUNTIME_ENV: str(runtime)}
    if passphrase is not None:
        env["AFFIDAVIT_PASSPHRASE"] = passphrase
    return env


@pytest.fixture
def runtime_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A private stand-in for the session place (/dev/shm), set in this process too."""
    path = tmp_path / "run"
    path.mkdir(mode=0o700)
    monkeypatch.setenv(RUNTIME_ENV, str(path))
    return path


@pytest.fixture
def vault_dir(tmp_path: Path) -> Path:
    """Where the test vault lives (not created yet)."""
    return tmp_path / "vault"


@pytest.fixture
def make_vault(
    vault_dir: Path, runtime_dir: Path, store: str | None
) -> Iterator[Callable[..., Vault]]:
    """A factory for the test vault at ``vault_dir``; every vault it made is closed after."""
    made: list[Vault] = []

    def factory(passphrase: str = TEST_PASSPHRASE, *, keyfile: Path | None = None) -> Vault:
        v = create_test_vault(vault_dir, passphrase, keyfile=keyfile, store=store)
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


#: A writer process for crash and concurrency tests: stores ``COUNT`` memories (forever when
#: negative) in batches of ``BATCH``, forgets (or shreds) every ``FORGET_EVERY``-th batch's
#: predecessor, and prints each acknowledged batch's ids on one line (``F id`` for a forget)
#: only after the vault call returned. ``zygote`` mode imports once, then forks one writer per
#: stdin line (``TAG BATCH FORGET_EVERY``), printing ``pid N`` and, when it died, ``dead S``:
#: so a kill -9 loop pays for Python's start-up once, not per kill.
WRITER = """
import os, sys
from pathlib import Path
from affidavit.vault import NewItem, Vault

def write(path, tag, count, batch, forget_every):
    v = Vault.open(Path(path), passphrase=os.environ["AFFIDAVIT_PASSPHRASE"])
    i, last = 0, None
    while count < 0 or i < count:
        items = v.put_many([NewItem(data={"text": f"{tag} {i + j}", "source": "writer"})
                            for j in range(batch)])
        sys.stdout.write(" ".join(it.id for it in items) + "\\n")
        sys.stdout.flush()
        i += batch
        if forget_every and last and (i // batch) % forget_every == 0:
            v.forget(last, shred=(i // batch) % 2 == 0)
            sys.stdout.write("F " + last + "\\n")
            sys.stdout.flush()
        last = items[-1].id
    v.close()

if sys.argv[1] == "zygote":
    for line in sys.stdin:
        tag, batch, forget_every = line.split()
        pid = os.fork()
        if pid == 0:
            try:
                write(sys.argv[2], tag, -1, int(batch), int(forget_every))
            finally:
                os._exit(1)
        sys.stdout.write(f"pid {pid}\\n")
        sys.stdout.flush()
        sys.stdout.write(f"dead {os.waitpid(pid, 0)[1]}\\n")
        sys.stdout.flush()
else:
    write(sys.argv[1], sys.argv[2], *map(int, sys.argv[3:6]))
"""


def writer_command(
    vault_path: Path, tag: str, count: int, batch: int = 1, forget_every: int = 0
) -> list[str]:
    """argv for one :data:`WRITER` process."""
    import sys

    return [
        sys.executable,
        "-c",
        WRITER,
        str(vault_path),
        tag,
        str(count),
        str(batch),
        str(forget_every),
    ]


def zygote_command(vault_path: Path) -> list[str]:
    """argv for a :data:`WRITER` in zygote mode."""
    import sys

    return [sys.executable, "-c", WRITER, "zygote", str(vault_path)]
