"""Choosing and reaching a store: URL checks, the pointer file, clear errors for a database
that is absent, empty or unreachable."""

from __future__ import annotations

from pathlib import Path

import pytest

from affidavit.core.errors import ExternalError, InputError, IntegrityError, NotFoundError
from affidavit.vault import Vault
from affidavit.vault import store as stores
from tests.pg import Cluster
from tests.vault.conftest import TEST_PASSPHRASE


@pytest.mark.parametrize(
    "url",
    [
        "postgresql://alice:s3cret-pw@db.example.com/team",
        "postgresql://db.example.com/team?sslmode=require&password=s3cret-pw",
        "postgres://alice:s3cret-pw@/team?host=/run/postgresql",
    ],
)
def test_a_password_anywhere_in_the_url_is_refused_and_never_repeated(url: str) -> None:
    with pytest.raises(InputError, match="carries a password") as caught:
        stores.check_url(url)
    assert "s3cret-pw" not in str(caught.value) and ".pgpass" in caught.value.hint


@pytest.mark.parametrize("url", ["mysql://u:s3cret-pw@h/db", "postgresql://[oops/db", "vault"])
def test_what_is_not_a_postgresql_url_is_one_clear_error(url: str) -> None:
    with pytest.raises(InputError) as caught:
        stores.check_url(url)
    assert "s3cret-pw" not in str(caught.value)


def test_a_url_without_a_password_is_kept_as_written() -> None:
    url = "postgresql://alice@db.example.com:5433/team?sslmode=verify-full"
    assert stores.check_url(url) == url and stores.is_url(url) and not stores.is_url("/srv/v")


def test_a_garbled_pointer_is_damage_not_a_url(tmp_path: Path) -> None:
    (tmp_path / stores.POINTER_NAME).write_bytes(b"\xff\xfe not a url")
    with pytest.raises(IntegrityError, match="does not hold a store URL"):
        Vault.open(tmp_path, passphrase=TEST_PASSPHRASE)


def test_an_empty_database_holds_no_vault(tmp_path: Path, pg_cluster: Cluster) -> None:
    stores.attach(tmp_path / "v", pg_cluster.new_database())
    with pytest.raises(NotFoundError, match="holds no affidavit vault"):
        Vault.open(tmp_path / "v", passphrase=TEST_PASSPHRASE)


def test_an_unreachable_server_says_what_to_check(tmp_path: Path) -> None:
    stores.attach(tmp_path / "v", f"postgresql://nobody@/team?host={tmp_path}&connect_timeout=2")
    with pytest.raises(ExternalError, match="cannot reach") as caught:
        Vault.open(tmp_path / "v", passphrase=TEST_PASSPHRASE)
    assert "\n" not in str(caught.value) and "PGPASSWORD" in caught.value.hint
