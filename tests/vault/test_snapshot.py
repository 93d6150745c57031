"""The vault's sealed snapshot (ADR 0210): a cache of the unlocked view that a new process
reads instead of decrypting every record, never trusted over the log.

Each test compares a vault opened from the snapshot with what a full decrypt of the same log
gives, and checks the snapshot was (or was not) used through ``snapshot_lag`` (None: the
view was decrypted from the log).
"""

from __future__ import annotations

import shutil
import stat
from pathlib import Path

import orjson
import pytest

from affidavit.core.errors import IntegrityError
from affidavit.crypto import aead
from affidavit.vault import DB_NAME, NewItem, Vault, snapshot
from tests.vault.conftest import TEST_PASSPHRASE, both_stores, create_test_vault, raw_execute

ROW = "SELECT rid, seq, state, wkey, blob FROM {t}records WHERE rid = ?"
RESTORE = "UPDATE {t}records SET seq = ?, state = ?, wkey = ?, blob = ? WHERE rid = ?"


def _facts(vault: Vault, n: int, tag: str = "fact") -> list[str]:
    items = vault.put_many(
        [NewItem(data={"text": f"{tag} {i}", "source": "s"}, vector=bytes(768)) for i in range(n)]
    )
    return [it.id for it in items]


def _view(vault: Vault) -> dict[str, tuple[int, str, dict, bytes | None]]:
    return {it.id: (it.seq, it.namespace, it.data, it.vector) for it in vault.items()}


def _decrypted(path: Path) -> dict[str, tuple[int, str, dict, bytes | None]]:
    """The view a full decrypt of the log gives (the snapshot moved aside meanwhile)."""
    aside = path / "aside.sealed"
    snapshot.path_in(path).replace(aside)
    try:
        fresh = Vault.open(path, passphrase=TEST_PASSPHRASE)
        try:
            assert fresh.snapshot_lag is None
            return _view(fresh)
        finally:
            fresh.close()
    finally:
        aside.replace(snapshot.path_in(path))


def _reopen(vault: Vault) -> Vault:
    vault.close()
    return Vault.open(vault.path, passphrase=TEST_PASSPHRASE)


@both_stores
def test_a_vault_opens_from_its_snapshot_and_the_log_after_it(vault: Vault) -> None:
    """Saved, then updated, forgotten, shredded and written by another process: the view
    opened from the snapshot plus the tail is the full decrypt's, bit for bit."""
    ids = _facts(vault, 20)
    assert vault.save_snapshot()
    assert not vault.save_snapshot()  # nothing new to keep
    other = Vault.open(vault.path, passphrase=TEST_PASSPHRASE)
    try:
        _facts(other, 5, "later")
        other.update(ids[0], {"text": "fact 0, corrected", "source": "s"})
        other.forget(ids[1])
    finally:
        other.close()
    vault = _reopen(vault)
    try:
        assert vault.snapshot_lag is not None and vault.snapshot_lag > 0
        assert _view(vault) == _decrypted(vault.path)
        assert vault.get(ids[0]).data["text"] == "fact 0, corrected"
        assert ids[1] not in _view(vault)
        assert len(_view(vault)) == 24
    finally:
        vault.close()


def test_the_snapshot_is_ciphertext_only_and_private(vault: Vault) -> None:
    _facts(vault, 3, "a very particular kettle descaled on tuesday")
    vault.save_snapshot()
    path = snapshot.path_in(vault.path)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    raw = path.read_bytes()
    assert b"kettle" not in raw and b"tuesday" not in raw and b"source" not in raw


@pytest.mark.parametrize("where", ["header", "middle", "end", "truncated", "appended"])
def test_a_tampered_snapshot_is_ignored_and_the_log_decrypted(vault: Vault, where: str) -> None:
    _facts(vault, 10)
    vault.save_snapshot()
    path = snapshot.path_in(vault.path)
    raw = bytearray(path.read_bytes())
    if where == "truncated":
        raw = raw[: len(raw) // 2]
    elif where == "appended":
        raw += b"\0" * 16
    else:
        at = {"header": 20, "middle": len(raw) // 2, "end": len(raw) - 1}[where]
        raw[at] ^= 0x01
    path.write_bytes(bytes(raw))
    want = _decrypted(vault.path)
    vault = _reopen(vault)
    try:
        assert vault.snapshot_lag is None
        assert _view(vault) == want
    finally:
        vault.close()


def test_another_vaults_snapshot_is_ignored(vault: Vault, tmp_path: Path) -> None:
    """Same passphrase, another vault: its snapshot key is not this vault's."""
    _facts(vault, 3)
    stranger = create_test_vault(tmp_path / "stranger")
    try:
        _facts(stranger, 7, "stranger")
        stranger.save_snapshot()
        shutil.copy(snapshot.path_in(stranger.path), snapshot.path_in(vault.path))
    finally:
        stranger.close()
    vault = _reopen(vault)
    try:
        assert vault.snapshot_lag is None
        assert sorted(it.data["text"] for it in vault.items()) == ["fact 0", "fact 1", "fact 2"]
    finally:
        vault.close()


def test_a_snapshot_ahead_of_the_log_is_ignored(vault: Vault, tmp_path: Path) -> None:
    """The log restored from an older backup: the newer snapshot names records the log no
    longer has; the vault opens what the log holds."""
    _facts(vault, 4)
    vault.close()
    backup = tmp_path / "backup.db"
    shutil.copy(vault.path / DB_NAME, backup)
    vault = Vault.open(vault.path, passphrase=TEST_PASSPHRASE)
    _facts(vault, 6, "after the backup")
    vault.save_snapshot()
    vault.close()
    shutil.copy(backup, vault.path / DB_NAME)
    fresh = Vault.open(vault.path, passphrase=TEST_PASSPHRASE)
    try:
        assert fresh.snapshot_lag is None
        assert sorted(it.data["text"] for it in fresh.items()) == [f"fact {i}" for i in range(4)]
    finally:
        fresh.close()


@both_stores
def test_shredding_a_record_makes_every_earlier_snapshot_undecryptable(
    vault: Vault, tmp_path: Path
) -> None:
    """Attack: a copy of the snapshot taken before a shred (another client's file, a backup
    of the home directory) must not give the shredded record back. The shred replaces the
    snapshot key in its own transaction, so the old file opens under no key the vault has."""
    ids = _facts(vault, 5, "the secret of")
    assert vault.save_snapshot()
    first = vault.named_record(snapshot.KEY_KIND, snapshot.KEY_NAME)
    assert first is not None
    old_key = bytes.fromhex(first.data["key"])
    stolen = tmp_path / "stolen.sealed"
    shutil.copy(snapshot.path_in(vault.path), stolen)
    vault.forget(ids[2], shred=True)
    assert not snapshot.path_in(vault.path).exists()  # this client's copy is gone at once
    new_key = vault.named_record(snapshot.KEY_KIND, snapshot.KEY_NAME)
    assert new_key is not None and bytes.fromhex(new_key.data["key"]) != old_key
    shutil.copy(stolen, snapshot.path_in(vault.path))  # put back, as an attacker would
    vault = _reopen(vault)
    try:
        assert vault.snapshot_lag is None  # ignored: the log was decrypted
        assert ids[2] not in _view(vault)
        assert vault.save_snapshot()  # snapshots go on, under the new key
        with pytest.raises(IntegrityError):
            snapshot.open_sealed(
                bytes.fromhex(vault.named_record(snapshot.KEY_KIND, snapshot.KEY_NAME).data["key"]),
                vault.vault_id,
                stolen.read_bytes(),
            )
    finally:
        vault.close()
    vault = Vault.open(vault.path, passphrase=TEST_PASSPHRASE)
    try:
        assert vault.snapshot_lag == 0
        assert ids[2] not in _view(vault)
    finally:
        vault.close()


@both_stores
@pytest.mark.parametrize("when", ["before", "after"])
def test_an_older_row_put_back_is_refused_with_or_without_a_snapshot(
    vault: Vault, store: str | None, when: str
) -> None:
    """Attack: an administrator of the rows puts back a saved copy of a forgotten record's
    row. The snapshot (saved before or after the forget) holds the truth, but must not hide
    the damage either: the vault refuses exactly as a full decrypt does (ADR 0182)."""
    ids = _facts(vault, 3)
    ((saved),) = raw_execute(vault.path, store, ROW, (ids[1],))
    if when == "before":
        vault.save_snapshot()
    vault.forget(ids[1])
    if when == "after":
        vault.save_snapshot()
    vault.put(NewItem(data={"text": "a later write", "source": "s"}))
    rid, seq, state, wkey, blob = saved
    raw_execute(vault.path, store, RESTORE, (seq, state, wkey, blob, rid))
    vault.close()
    with pytest.raises(IntegrityError, match=f"record {ids[1]}"):
        fresh = Vault.open(vault.path, passphrase=TEST_PASSPHRASE)
        try:
            fresh.get(ids[1])
        finally:
            fresh.close()


def test_a_refused_view_is_never_saved_as_a_snapshot(vault: Vault) -> None:
    """Attack: the damage above, then a save. Were the refused view sealed, the next open
    would find the rows matching the (laundered) snapshot and serve the put-back record."""
    ids = _facts(vault, 3)
    vault.save_snapshot()  # the key exists: a later save needs no write (which would refuse)
    ((saved),) = raw_execute(vault.path, None, ROW, (ids[1],))
    vault.forget(ids[1])
    vault.put(NewItem(data={"text": "a later write", "source": "s"}))
    rid, seq, state, wkey, blob = saved
    raw_execute(vault.path, None, RESTORE, (seq, state, wkey, blob, rid))
    vault.close()
    fresh = Vault.open(vault.path, passphrase=TEST_PASSPHRASE)
    try:
        with pytest.raises(IntegrityError):
            fresh.save_snapshot()
    finally:
        fresh.close()
    fresh = Vault.open(vault.path, passphrase=TEST_PASSPHRASE)
    try:
        with pytest.raises(IntegrityError, match=f"record {ids[1]}"):
            fresh.get(ids[1])
    finally:
        fresh.close()


def test_sections_are_bound_to_their_snapshot() -> None:
    """Sections of two snapshots under one key cannot be spliced into a third."""
    key, vid = aead.random_key(), b"v" * 16
    at = snapshot.Position(3, 3, "h", 3)
    first = snapshot.seal(key, vid, at, {"a": b"one", "b": b"two"})
    second = snapshot.seal(key, vid, at, {"a": b"ONE", "b": b"TWO"})
    spliced = b"".join(first[:5] + second[5:])
    assert snapshot.open_sealed(key, vid, b"".join(first)).sections == {"a": b"one", "b": b"two"}
    with pytest.raises(IntegrityError):
        snapshot.open_sealed(key, vid, spliced)


def test_a_snapshot_in_the_layout_before_lazy_records_is_ignored_not_misread(
    vault: Vault,
) -> None:
    """A snapshot whose records are release 1's single ``vault.records`` JSON (sealed under
    the vault's own snapshot key, at the log's current position: everything about it holds
    but its layout) is ignored, the log decrypted, and the next save writes this layout."""
    _facts(vault, 6)
    key = vault._snapshot_key()
    items = [*vault.items(), *vault._internal.values()]
    records = [
        [it.id, it.kind, it.namespace, it.seq, it.saved_at, it.data, len(it.vector or b"")]
        for it in items
    ]
    old = {
        "vault.records": orjson.dumps({"records": records, "gone": []}),
        "vault.vectors": b"".join(it.vector or b"" for it in items),
    }
    at = snapshot.Position(vault.seq, vault._audit_n, vault._audit_head, len(items))
    snapshot.write(vault.path, snapshot.seal(key, vault.vault_id, at, old))
    want = _view(vault)

    reopened = _reopen(vault)
    try:
        assert reopened.snapshot_lag is None  # not used: decrypted from the log
        assert _view(reopened) == want
        assert reopened.save_snapshot()
    finally:
        reopened.close()
    again = Vault.open(vault.path, passphrase=TEST_PASSPHRASE)
    try:
        assert again.snapshot_lag == 0
        assert _view(again) == want
    finally:
        again.close()


def test_records_opened_from_the_snapshot_decode_only_when_read(vault: Vault) -> None:
    """A record from the snapshot keeps its JSON until read; ``field`` answers a key it does
    not hold without decoding, and the same as ``data.get`` for keys it holds, including a
    key's name written inside a value."""
    quoted = 'the word "expires" in quotes'
    vault.put(NewItem(data={"text": quoted, "source": "s"}))
    vault.put(NewItem(data={"text": "plain", "source": "s", "expires": "2030-01-01"}))
    vault.save_snapshot()
    want = _view(vault)
    reopened = _reopen(vault)
    try:
        assert reopened.snapshot_lag == 0
        items = list(reopened.items())
        assert [it.field("superseded_by") for it in items] == [None, None]
        assert all(it._data is None for it in items)  # no record names it: none decoded
        by_text = {it.field("text"): it for it in items}
        assert by_text["plain"].field("expires") == "2030-01-01"
        assert by_text[quoted].field("expires") is None
        assert _view(reopened) == want
    finally:
        reopened.close()
