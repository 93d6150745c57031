"""A canary stored in the vault never appears in any file, before or after forget --shred.

Beyond the plaintext, shred is checked at the byte level: the record's ciphertext and its
wrapped key are gone from the database, the write-ahead log and the shared-memory file.
"""

from __future__ import annotations

import secrets
import sqlite3
from pathlib import Path

from affidavit.vault import DB_NAME, NewItem, Vault, session
from tests.support import run_cli
from tests.vault.conftest import TEST_PASSPHRASE, vault_env


def _all_bytes(*directories: Path) -> dict[str, bytes]:
    found = {}
    for directory in directories:
        for path in directory.rglob("*"):
            if path.is_file():
                found[str(path)] = path.read_bytes()
    return found


def _holders(needle: bytes, *directories: Path) -> list[str]:
    return [name for name, data in _all_bytes(*directories).items() if needle in data]


def test_canary_never_on_disk_and_shred_removes_the_ciphertext(
    vault: Vault, runtime_dir: Path, home: Path
) -> None:
    canary = f"CANARY-{secrets.token_hex(8)}"
    needles = [canary.encode(), canary.encode("utf-16-le"), canary.lower().encode()]
    vault.put_many([NewItem(data={"text": f"filler {i}", "source": "s"}) for i in range(30)])
    item = vault.put(
        NewItem(
            data={
                "text": f"the door code is {canary}",
                "source": f"note {canary}",
                "tags": [canary],
            },
            namespace="private",
            vector=canary.encode() * 8,
        )
    )
    vault.set_setting(canary, canary)
    vault.start_session()
    # a second process reads it through the CLI while this one keeps the WAL open
    env = vault_env(vault.path, runtime_dir, passphrase=None)
    shown = run_cli(["get", item.id], home, env=env)
    assert canary in shown.stdout
    assert (vault.path / f"{DB_NAME}-wal").exists()
    for needle in needles:
        assert _holders(needle, vault.path, runtime_dir, home) == []

    conn = sqlite3.connect(vault.path / DB_NAME)
    wkey, blob = conn.execute("SELECT wkey, blob FROM records WHERE rid = ?", (item.id,)).fetchone()
    conn.close()
    assert _holders(blob[24:56], vault.path) != []  # the ciphertext is really there now

    forgot = run_cli(["forget", item.id, "--shred"], home, env=env)
    assert forgot.returncode == 0, forgot.stderr
    vault.refresh()
    for needle in [*needles, blob[24:56], blob[-32:], wkey[24:56]]:
        assert _holders(needle, vault.path, runtime_dir, home) == [], needle
    vault.close()
    session.clear(vault.path)
    for needle in [*needles, blob[24:56], wkey[24:56]]:
        assert _holders(needle, vault.path, runtime_dir, home) == []
    again = Vault.open(vault.path, passphrase=TEST_PASSPHRASE)
    try:
        assert len(again) == 30 and again.verify_audit().ok
    finally:
        again.close()


def test_plain_forget_keeps_ciphertext_but_no_plaintext(vault: Vault) -> None:
    canary = f"CANARY-{secrets.token_hex(8)}"
    item = vault.put(NewItem(data={"text": canary, "source": "s"}))
    vault.forget(item.id)
    vault.close()
    assert _holders(canary.encode(), vault.path) == []
