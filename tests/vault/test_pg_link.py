"""A team vault's handle outlives its database's bad moments: a restart is ridden out, every
call is bounded by a timeout, and each failure is one typed line (never a psycopg exception).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TypeVar

import psycopg
import pytest

from affidavit.core.errors import AffidavitError, ExternalError, UsageError
from affidavit.vault import NewItem, Vault
from affidavit.vault.pglink import TIMEOUT_ENV
from affidavit.vault.pgstore import WRITE_LOCK
from tests.pg import Cluster, pg_bin, running_cluster
from tests.vault.conftest import TEST_PASSPHRASE, create_test_vault

DEADLINE = 120.0
T = TypeVar("T")


@pytest.fixture
def own_cluster() -> Iterator[Cluster]:
    """A cluster this test may stop and start (the shared one serves other tests)."""
    if pg_bin() is None:
        pytest.skip("PostgreSQL is not installed (apt-get install postgresql)")
    with running_cluster() as cluster:
        yield cluster


def _fact(text: str) -> NewItem:
    return NewItem(data={"text": text, "source": "s"})


def _once_back(call: Callable[[], T]) -> T:
    """``call()`` as soon as it succeeds: the handle retries the database by itself, no
    sooner than its backoff allows, and fails with ExternalError until then."""
    deadline = time.monotonic() + DEADLINE
    while True:
        try:
            return call()
        except ExternalError:
            assert time.monotonic() < deadline, "the handle never reconnected"
            time.sleep(0.1)


def test_a_handle_rides_out_a_restart(
    tmp_path: Path, runtime_dir: Path, own_cluster: Cluster
) -> None:
    url = own_cluster.new_database()
    vault = create_test_vault(tmp_path / "v", store=url)
    reader = Vault.open(tmp_path / "v", passphrase=TEST_PASSPHRASE)
    try:
        before = vault.put(_fact("before the restart"))
        own_cluster.stop_server()
        for attempt in (vault.refresh, lambda: vault.put(_fact("while away"))):
            with pytest.raises(ExternalError, match="database") as caught:
                attempt()
            assert "\n" not in str(caught.value)
        own_cluster.start_server()
        after = _once_back(lambda: vault.put(_fact("after the restart")))  # the same handle
        _once_back(reader.refresh)  # its connection died too: reopened, and it reads the log
        assert {before.id, after.id} <= {it.id for it in reader.items()}
    finally:
        reader.close()
        vault.close()


def test_a_write_behind_a_held_write_lock_gives_up_after_the_timeout(
    tmp_path: Path, runtime_dir: Path, pg_cluster: Cluster, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A writer that stopped inside its transaction (SIGSTOP, a debugger) holds the team's
    write lock: the others' writes fail after the timeout instead of waiting forever."""
    monkeypatch.setenv(TIMEOUT_ENV, "1")
    url = pg_cluster.new_database()
    vault = create_test_vault(tmp_path / "v", store=url)
    outcome: list[BaseException | str] = []

    def write() -> None:
        try:
            vault.put(_fact("behind the lock"))
            outcome.append("stored")
        except BaseException as exc:  # reported to the test thread
            outcome.append(exc)

    try:
        with psycopg.connect(url) as stuck:
            stuck.execute("SELECT pg_advisory_xact_lock(%s)", (WRITE_LOCK,))
            worker = threading.Thread(target=write, daemon=True)
            worker.start()
            worker.join(DEADLINE)
            assert not worker.is_alive(), "the write waited for the lock without end"
            stuck.rollback()
        (failure,) = outcome
        assert isinstance(failure, ExternalError), failure
        assert "did not answer within 1 s" in str(failure) and TIMEOUT_ENV in str(failure)
        vault.put(_fact("once the lock is free"))  # the same connection serves on
    finally:
        vault.close()


@pytest.mark.parametrize("value", ["soon", "0", "-3", "nan"])
def test_a_timeout_that_is_not_seconds_is_one_clear_error(
    tmp_path: Path,
    runtime_dir: Path,
    pg_cluster: Cluster,
    monkeypatch: pytest.MonkeyPatch,
    value: str,
) -> None:
    url = pg_cluster.new_database()
    create_test_vault(tmp_path / "v", store=url).close()
    monkeypatch.setenv(TIMEOUT_ENV, value)
    with pytest.raises(UsageError, match=TIMEOUT_ENV) as caught:
        Vault.open(tmp_path / "v", passphrase=TEST_PASSPHRASE)
    assert isinstance(caught.value, AffidavitError)
