"""Suite-wide settings: the offline guard is on in this process and in every child."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from affidavit.core import offline
from tests.pg import Cluster, pg_bin, running_cluster

os.environ["AFFIDAVIT_ASSERT_OFFLINE"] = "1"
offline.install()


@pytest.fixture
def home(tmp_path: Path) -> Path:
    """A fresh fake home directory for one test."""
    path = tmp_path / "home"
    path.mkdir()
    return path


@pytest.fixture(scope="session")
def pg_cluster() -> Iterator[Cluster]:
    """One throwaway PostgreSQL cluster per test worker (tests/pg.py); tests take a database
    each with ``pg_cluster.new_database()``. Skipped only when PostgreSQL is not installed
    (.ci/run installs it, so CI never skips)."""
    if pg_bin() is None:
        pytest.skip("PostgreSQL is not installed (apt-get install postgresql)")
    with running_cluster() as cluster:
        yield cluster
