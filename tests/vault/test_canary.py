"""A canary stored in the vault never appears in any file, before or after forget --shred.

Beyond the plaintext, shred is checked at the byte level: the record's ciphertext and its
wrapped key are gone from the database, the write-ahead log and the shared-memory file. For
a team vault, "any file" is the server's whole data directory plus a pg_dump of the database
(every table); after shred the dump no longer holds the sealed bytes (the server's own
write-ahead log may: SECURITY.md says so).
"""

from __future__ import annotations

import secrets
from pathlib import Path

import pytest

from affidavit.vault import DB_NAME, NewItem, Vault, session
from tests.support import run_cli
from tests.vault.conftest import TEST_PASSPHRASE, both_stores, raw_execute, vault_env


def _all_bytes(*directories: Path) -> dict[str, bytes]:
    found = {}
    for directory in directories:
        for path in directory.rglob("*"):
            if path.is_file():
                found[str(path)] = path.read_bytes()
    return found


def _holders(needle: bytes, *directories: Path) -> list[str]:
    return [name for name, data in _all_bytes(*directories).items() if needle in data]


def _dump(request: pytest.FixtureRequest, store: str | None) -> bytes:
    """Every table of a team vault's database; nothing for a file vault."""
    return b"" if store is None else request.getfixturevalue("pg_cluster").pg_dump(store)


def _server_dirs(request: pytest.FixtureRequest, store: str | None) -> list[Path]:
    return [] if store is None else [request.getfixturevalue("pg_cluster").data_dir]


@both_stores
def test_canary_never_on_disk_and_shred_removes_the_ciphertext(
    vault: Vault, runtime_dir: Path, home: Path, store: str | None, request: pytest.FixtureRequest
) -> None:
    server = _server_dirs(request, store)
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
    assert store is not None or (vault.path / f"{DB_NAME}-wal").exists()
    for needle in needles:
        assert _holders(needle, vault.path, runtime_dir, home, *server) == []
        assert needle not in _dump(request, store)

    ((wkey, blob),) = raw_execute(
        vault.path, store, "SELECT wkey, blob FROM {t}records WHERE rid = ?", (item.id,)
    )
    wkey, blob = bytes(wkey), bytes(blob)
    if store is None:
        assert _holders(blob[24:56], vault.path) != []  # the ciphertext is really there now
    else:
        assert blob[24:56].hex().encode() in _dump(request, store)

    forgot = run_cli(["forget", item.id, "--shred"], home, env=env)
    assert forgot.returncode == 0, forgot.stderr
    vault.refresh()
    for needle in [*needles, blob[24:56], blob[-32:], wkey[24:56]]:
        assert _holders(needle, vault.path, runtime_dir, home) == [], needle
        assert needle.hex().encode() not in _dump(request, store)
    for needle in needles:
        assert _holders(needle, *server) == []
    vault.close()
    session.clear(vault.path)
    for needle in [*needles, blob[24:56], wkey[24:56]]:
        assert _holders(needle, vault.path, runtime_dir, home) == []
    again = Vault.open(vault.path, passphrase=TEST_PASSPHRASE)
    try:
        assert len(again) == 30 and again.verify_audit().ok
    finally:
        again.close()


@both_stores
def test_plain_forget_keeps_ciphertext_but_no_plaintext(vault: Vault) -> None:
    canary = f"CANARY-{secrets.token_hex(8)}"
    item = vault.put(NewItem(data={"text": canary, "source": "s"}))
    vault.forget(item.id)
    vault.close()
    assert _holders(canary.encode(), vault.path) == []
