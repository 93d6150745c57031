"""The sealed audit chain: every mutation recorded, any edit, reorder or truncation named."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from affidavit.vault import DB_NAME, NewItem, Vault
from tests.vault.conftest import TEST_PASSPHRASE


def _fill(vault: Vault) -> list[str]:
    items = vault.put_many([NewItem(data={"text": f"m{i}", "source": "s"}) for i in range(4)])
    vault.update(items[0].id, {"text": "m0 again", "source": "s"})
    vault.forget(items[1].id)
    vault.forget(items[2].id, shred=True)
    vault.set_setting("k", "v")
    return [it.id for it in items]


def _sql(vault: Vault, *statements: tuple[str, tuple[object, ...]]) -> None:
    conn = sqlite3.connect(vault.path / DB_NAME)
    with conn:
        for sql, args in statements:
            conn.execute(sql, args)
    conn.close()


def _fresh_report(vault: Vault) -> dict[str, object]:
    v = Vault.open(vault.path, passphrase=TEST_PASSPHRASE)
    try:
        return v.verify_audit().as_dict()
    finally:
        v.close()


def test_every_mutation_is_one_entry(vault: Vault) -> None:
    _fill(vault)
    report = vault.verify_audit()
    assert report.ok, report.problem
    assert report.ops == {
        "init": 1,
        "create": 4,
        "update": 1,
        "forget": 1,
        "shred": 1,
        "setting": 1,
    }
    assert report.entries == 9 and report.head == vault.status()["audit"]["head"]


def test_entries_hold_no_plaintext(vault: Vault) -> None:
    vault.put(NewItem(data={"text": "audit-canary-4711", "source": "s"}))
    conn = sqlite3.connect(vault.path / DB_NAME)
    blobs = b"".join(b for (b,) in conn.execute("SELECT blob FROM audit"))
    conn.close()
    assert b"audit-canary" not in blobs and b"create" not in blobs


def test_a_flipped_entry_is_named(vault: Vault) -> None:
    _fill(vault)
    conn = sqlite3.connect(vault.path / DB_NAME)
    blob = bytearray(conn.execute("SELECT blob FROM audit WHERE n = 4").fetchone()[0])
    conn.close()
    blob[30] ^= 0x40
    _sql(vault, ("UPDATE audit SET blob = ? WHERE n = 4", (bytes(blob),)))
    report = _fresh_report(vault)
    assert report["ok"] is False and report["index"] == 4
    assert "entry 4 is unreadable" in str(report["problem"])


def test_swapped_entries_are_detected(vault: Vault) -> None:
    _fill(vault)
    _sql(
        vault,
        ("UPDATE audit SET n = -1 WHERE n = 3", ()),
        ("UPDATE audit SET n = 3 WHERE n = 5", ()),
        ("UPDATE audit SET n = 5 WHERE n = -1", ()),
    )
    report = _fresh_report(vault)
    assert report["ok"] is False and report["index"] == 3


def test_a_deleted_middle_entry_is_detected(vault: Vault) -> None:
    _fill(vault)
    _sql(vault, ("DELETE FROM audit WHERE n = 6", ()))
    report = _fresh_report(vault)
    assert report["ok"] is False and "entry 6 is missing" in str(report["problem"])


def test_truncating_the_tail_is_caught_by_the_anchor(vault: Vault) -> None:
    _fill(vault)
    _sql(vault, ("DELETE FROM audit WHERE n >= 8", ()))
    report = _fresh_report(vault)
    assert report["ok"] is False
    assert "7 entries but the header anchors 9" in str(report["problem"])


def test_a_row_rolled_back_to_an_older_version_is_caught(vault: Vault, tmp_path: Path) -> None:
    item = vault.put(NewItem(data={"text": "price is 10", "source": "s"}))
    conn = sqlite3.connect(vault.path / DB_NAME)
    old = conn.execute(
        "SELECT seq, state, wkey, blob FROM records WHERE rid = ?", (item.id,)
    ).fetchone()
    conn.close()
    vault.update(item.id, {"text": "price is 12", "source": "s"})
    vault.put(NewItem(data={"text": "later", "source": "s"}))
    # an attacker restores the old row from a backup (its seq, key and blob are genuine)
    _sql(
        vault,
        (
            "UPDATE records SET seq = ?, state = ?, wkey = ?, blob = ? WHERE rid = ?",
            (*old, item.id),
        ),
    )
    report = _fresh_report(vault)
    assert report["ok"] is False
    assert item.id in str(report["problem"])


def test_verify_after_reopen_and_concurrent_writers(vault: Vault) -> None:
    other = Vault.open(vault.path, passphrase=TEST_PASSPHRASE)
    try:
        for i in range(5):
            vault.put(NewItem(data={"text": f"a{i}", "source": "s"}))
            other.put(NewItem(data={"text": f"b{i}", "source": "s"}))
        assert other.verify_audit().ok and vault.verify_audit().ok
        assert other.verify_audit().entries == 11
    finally:
        other.close()
