"""``Memory.import_rows`` stores a batch all or nothing: a bad row or a kill leaves no part of it.

The batch spans several embedding chunks (``EMBED_CHUNK`` rows each), which is where a
chunk-at-a-time commit used to leave the first chunks stored.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from affidavit.core.errors import InputError
from affidavit.vault import Vault
from affidavit.vault.recall import EMBED_CHUNK, Memory
from tests.support import cli_env
from tests.vault.conftest import TEST_PASSPHRASE, create_test_vault, vault_env

ROWS = EMBED_CHUNK + 50


def _rows(bad_at: int | None = None) -> list[dict[str, str]]:
    return [
        {"id": "bad id!" if i == bad_at else f"r{i}", "text": f"turn {i} about the kettle"}
        for i in range(ROWS)
    ]


def test_a_bad_row_late_in_the_batch_stores_nothing(vault: Vault) -> None:
    memory = Memory(vault, embedder=None)
    with pytest.raises(InputError, match="bad id!"):
        memory.import_rows(_rows(bad_at=ROWS - 1))
    assert list(vault.items("memory")) == []
    assert memory.import_rows(_rows()) == ROWS
    assert len(list(vault.items("memory"))) == ROWS


def test_progress_reports_each_phase_to_its_total(vault: Vault) -> None:
    seen: dict[str, tuple[int, int]] = {}
    Memory(vault, embedder=None).import_rows(
        _rows(), progress=lambda phase, done, total: seen.__setitem__(phase, (done, total))
    )
    assert seen == {"sealing": (ROWS, ROWS)}  # no model: nothing to embed


_IMPORTER = textwrap.dedent(
    """
    import sys, time
    from pathlib import Path
    from affidavit.vault import Vault
    from affidavit.vault.recall import Memory

    memory = Memory(Vault.open(Path(sys.argv[1])), embedder=None)
    rows = [{"id": f"r{i}", "text": f"turn {i} about the kettle"} for i in range(int(sys.argv[2]))]

    def tick(*report):
        print("tick", *report, flush=True)
        time.sleep(30)  # killed here

    memory.import_rows(rows, progress=tick)
    print("done", flush=True)
    """
)


def test_a_kill_during_the_import_leaves_none_of_it(tmp_path: Path) -> None:
    path = tmp_path / "vault"
    create_test_vault(path).close()
    env = cli_env(tmp_path, vault_env(path, tmp_path / "run"))
    child = subprocess.Popen(
        [sys.executable, "-c", _IMPORTER, str(path), str(ROWS)],
        env=env,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert child.stdout is not None
    first = child.stdout.readline()
    assert first.startswith("tick"), first
    os.kill(child.pid, signal.SIGKILL)
    assert child.wait(timeout=30) == -signal.SIGKILL
    vault = Vault.open(path, passphrase=TEST_PASSPHRASE)
    try:
        assert len(list(vault.items("memory"))) in (0, ROWS)
        assert vault.verify_audit().ok
    finally:
        vault.close()
