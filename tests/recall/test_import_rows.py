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
from affidavit.recall.memory import EMBED_CHUNK, Memory
from affidavit.vault import Vault
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
    from affidavit.recall.memory import Memory

    path, count, phase = Path(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
    memory = Memory(Vault.open(path), **({} if phase == "embedding" else {"embedder": None}))
    acknowledged = [{"id": f"a{i}", "text": f"kept note {i} on the shelf"} for i in range(5)]
    memory.import_rows(acknowledged)
    print("acknowledged", flush=True)
    rows = [{"id": f"r{i}", "text": f"turn {i} about the kettle"} for i in range(count)]

    def tick(now, *report):
        if now == phase:
            print("tick", now, *report, flush=True)
            time.sleep(30)  # killed here

    memory.import_rows(rows, progress=tick)
    print("done", flush=True)
    """
)


@pytest.mark.parametrize("phase", ["embedding", "sealing"])
def test_a_kill_during_the_import_leaves_none_of_it(tmp_path: Path, phase: str) -> None:
    """kill -9 while the model embeds the batch (on its bulk threads) or while it is being
    sealed: the memories acknowledged before are all there, none of the batch is, the audit
    chain verifies, and the same import then stores the whole batch."""
    path = tmp_path / "vault"
    create_test_vault(path).close()
    env = cli_env(tmp_path, vault_env(path, tmp_path / "run"))
    child = subprocess.Popen(
        [sys.executable, "-c", _IMPORTER, str(path), str(ROWS), phase],
        env=env,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert child.stdout is not None
    assert child.stdout.readline().strip() == "acknowledged"
    first = child.stdout.readline()
    assert first.startswith(f"tick {phase}"), first
    os.kill(child.pid, signal.SIGKILL)
    assert child.wait(timeout=30) == -signal.SIGKILL
    vault = Vault.open(path, passphrase=TEST_PASSPHRASE)
    try:
        assert sorted(it.id for it in vault.items("memory")) == [f"a{i}" for i in range(5)]
        assert vault.verify_audit().ok
        assert Memory(vault, embedder=None).import_rows(_rows()) == ROWS
        assert len(list(vault.items("memory"))) == ROWS + 5
    finally:
        vault.close()
