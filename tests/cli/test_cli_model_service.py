"""The terminal's ``store`` and ``search`` embed through the user's model service (ADR 0167):
the one the MCP servers share, started when none runs, so a warm command loads no model."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from affidavit.vault.session_dir import RUNTIME_ENV
from tests.support import model_service_pid, process_alive, run_cli


@pytest.fixture
def runtime() -> Iterator[Path]:
    """A private runtime directory whose path is short enough for the service's socket."""
    place = Path(tempfile.mkdtemp(prefix="afcli", dir="/tmp"))
    place.chmod(0o700)
    yield place
    pid = model_service_pid(place)
    if pid is not None and process_alive(pid):
        os.kill(pid, 15)
    shutil.rmtree(place, ignore_errors=True)


def test_store_and_search_share_the_users_model_service(
    home: Path, cli_vault: dict[str, str], runtime: Path
) -> None:
    env = {**cli_vault, RUNTIME_ENV: str(runtime)}
    stored = run_cli(["store", "Deploys go out from the blue runner.", "--source", "t", "--json"],
                     home, env=env)  # fmt: skip
    assert stored.returncode == 0, stored.stderr
    pid = model_service_pid(runtime)
    assert pid is not None and process_alive(pid), "store did not start the model service"
    found = run_cli(["search", "which machine ships our releases", "--json"], home, env=env)
    assert found.returncode == 0, found.stderr
    page = json.loads(found.stdout)
    assert page["semantic"] is True
    assert [hit["id"] for hit in page["results"]] == [json.loads(stored.stdout)["id"]]
    assert model_service_pid(runtime) == pid, "search started a second service"


def test_local_mode_loads_the_model_here_and_starts_no_service(
    home: Path, cli_vault: dict[str, str], runtime: Path
) -> None:
    env = {**cli_vault, RUNTIME_ENV: str(runtime), "AFFIDAVIT_EMBEDDER": "local"}
    stored = run_cli(["store", "Deploys go out from the blue runner.", "--source", "t"],
                     home, env=env)  # fmt: skip
    assert stored.returncode == 0, stored.stderr
    found = run_cli(["search", "which machine ships our releases", "--json"], home, env=env)
    assert json.loads(found.stdout)["semantic"] is True
    assert model_service_pid(runtime) is None


def test_a_service_that_cannot_start_falls_back_to_the_model_here(
    home: Path, cli_vault: dict[str, str], runtime: Path
) -> None:
    deep = runtime / ("x" * 120)  # a socket path too long for sun_path: no service
    deep.mkdir(mode=0o700)
    env = {**cli_vault, RUNTIME_ENV: str(deep)}
    found = run_cli(["search", "anything at all", "--json"], home, env=env)
    assert found.returncode == 0, found.stderr
    assert json.loads(found.stdout)["semantic"] is True
    assert model_service_pid(deep) is None
