"""Several processes writing one vault at once: nothing lost, nothing duplicated, one audit
chain; on either store (for PostgreSQL the advisory lock is what keeps the chain one)."""

from __future__ import annotations

import subprocess
from pathlib import Path

from affidavit.vault import Vault
from tests.support import cli_env
from tests.vault.conftest import TEST_PASSPHRASE, both_stores, vault_env, writer_command

WRITERS = 8
PER_WRITER = 250


@both_stores
def test_eight_processes_store_2000_records(vault: Vault, home: Path, runtime_dir: Path) -> None:
    env = cli_env(home, vault_env(vault.path, runtime_dir))
    procs = [
        subprocess.Popen(
            writer_command(vault.path, f"w{n}", PER_WRITER),
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for n in range(WRITERS)
    ]
    acked: list[str] = []
    for proc in procs:
        out, err = proc.communicate(timeout=600)
        assert proc.returncode == 0, err
        acked.extend(out.split())
    assert len(acked) == WRITERS * PER_WRITER == len(set(acked))
    # this process's handle catches up incrementally and sees exactly the same records
    changes = vault.refresh()
    assert len(changes) == len(acked)
    fresh = Vault.open(vault.path, passphrase=TEST_PASSPHRASE)
    try:
        for view in (vault, fresh):
            ids = [it.id for it in view.items()]
            texts = sorted(it.data["text"] for it in view.items())
            assert sorted(ids) == sorted(acked)
            assert texts == sorted(f"w{n} {i}" for n in range(WRITERS) for i in range(PER_WRITER))
            seqs = [it.seq for it in view.items()]
            assert seqs == list(range(1, len(acked) + 1))
        report = fresh.verify_audit()
        assert report.ok, report.problem
        assert report.entries == 1 + len(acked)
    finally:
        fresh.close()
