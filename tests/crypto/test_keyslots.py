"""Key slots: wrong secrets refused cleanly, two-factor enforced by the KDF, passwd re-wraps."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from affidavit.core.errors import AuthError, IntegrityError, NotFoundError, UnsupportedError
from affidavit.crypto import keyslots
from affidavit.crypto.keyslots import KdfParams, KeySlot
from affidavit.vault import DB_NAME, NewItem, Vault
from tests.vault.conftest import TEST_PASSPHRASE, create_test_vault


def _keyfile(path: Path, byte: int = 7) -> Path:
    path.write_bytes(bytes([byte]) * 64)
    return path


def _blobs(vault_path: Path) -> dict[str, bytes]:
    conn = sqlite3.connect(vault_path / DB_NAME)
    try:
        return dict(conn.execute("SELECT rid, blob FROM records").fetchall())
    finally:
        conn.close()


def test_wrong_passphrase_is_refused_without_echoing_it(vault: Vault) -> None:
    vault.close()
    with pytest.raises(AuthError) as err:
        Vault.open(vault.path, passphrase="hunter2-wrong")
    assert "wrong passphrase" in str(err.value)
    assert "hunter2" not in str(err.value)


def test_slot_alone_is_useless_and_unrelated_to_the_passphrase(tmp_path: Path) -> None:
    master = b"m" * 32
    # a passphrase with spaces cannot turn up by chance in the slot's base64/hex fields
    secret = "tall maple quiet river"
    slot = keyslots.make_slot(master, b"v" * 16, secret, kdf=KdfParams.minimum())
    raw = slot.to_bytes()
    assert master not in raw and secret.encode() not in raw
    again = KeySlot.from_bytes(raw)
    assert keyslots.open_slot(again, b"v" * 16, secret, None) == master
    assert keyslots.open_slot(again, b"v" * 16, secret.upper(), None) is None
    assert keyslots.open_slot(again, b"w" * 16, secret, None) is None  # bound to its vault


def test_kdf_parameters_live_in_each_slot() -> None:
    params = KdfParams(2, 1 << 16)
    slot = keyslots.make_slot(b"k" * 32, b"v" * 16, "pw", kdf=params)
    assert KeySlot.from_bytes(slot.to_bytes()).kdf == params
    assert KdfParams.default().memlimit >= 1 << 28  # real vaults stay expensive


def test_corrupt_slot_is_an_integrity_error_not_a_wrong_passphrase() -> None:
    raw = bytearray(
        keyslots.make_slot(b"k" * 32, b"v" * 16, "pw", kdf=KdfParams.minimum()).to_bytes()
    )
    raw[raw.index(b"salt") + 10] ^= 0x01
    with pytest.raises(IntegrityError, match="key slot"):
        KeySlot.from_bytes(bytes(raw))


def test_slot_from_a_newer_version_is_unsupported() -> None:
    import hashlib
    import json

    slot = json.loads(
        keyslots.make_slot(b"k" * 32, b"v" * 16, "pw", kdf=KdfParams.minimum()).to_bytes()
    )
    slot["body"]["v"] = 99
    slot["sha256"] = hashlib.sha256(
        json.dumps(slot["body"], sort_keys=True, separators=(",", ":")).encode()
    ).hexdigest()
    with pytest.raises(UnsupportedError):
        KeySlot.from_bytes(json.dumps(slot).encode())


def test_two_factor_needs_both_factors(
    tmp_path: Path, runtime_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    keyfile = _keyfile(tmp_path / "usb.key")
    path = tmp_path / "v2fa"
    v = create_test_vault(path, keyfile=keyfile)
    v.put(NewItem(data={"text": "2fa secret fact", "source": "test"}))
    v.close()
    assert Vault.open(path, passphrase=TEST_PASSPHRASE, keyfile=keyfile).close() is None
    wrong = _keyfile(tmp_path / "other.key", byte=8)
    with pytest.raises(AuthError, match="wrong passphrase or keyfile"):
        Vault.open(path, passphrase=TEST_PASSPHRASE, keyfile=wrong)
    with pytest.raises(AuthError, match="wrong passphrase or keyfile"):
        Vault.open(path, passphrase="not it", keyfile=keyfile)
    # the remembered location works while the keyfile is present ...
    opened = Vault.open(path, passphrase=TEST_PASSPHRASE)
    assert len(opened) == 1
    opened.close()
    # ... and a missing keyfile is named, not mistaken for a wrong passphrase
    keyfile.rename(tmp_path / "moved.key")
    with pytest.raises(NotFoundError, match=r"keyfile .* does not exist"):
        Vault.open(path, passphrase=TEST_PASSPHRASE)
    monkeypatch.setenv("AFFIDAVIT_KEYFILE", str(tmp_path / "moved.key"))
    Vault.open(path, passphrase=TEST_PASSPHRASE).close()


def test_short_keyfile_is_refused(tmp_path: Path) -> None:
    short = tmp_path / "short.key"
    short.write_bytes(b"x" * 8)
    with pytest.raises(AuthError, match="shorter than"):
        create_test_vault(tmp_path / "v", keyfile=short)
    assert not (tmp_path / "v").exists()


def test_passwd_rewraps_slots_without_reencrypting_records(vault: Vault) -> None:
    vault.put_many([NewItem(data={"text": f"m{i}", "source": "s"}) for i in range(5)])
    before = _blobs(vault.path)
    vault.set_credentials("a new passphrase")
    vault.close()
    assert _blobs(vault.path) == before
    with pytest.raises(AuthError):
        Vault.open(vault.path, passphrase=TEST_PASSPHRASE)
    again = Vault.open(vault.path, passphrase="a new passphrase")
    try:
        assert len(again) == 5
        report = again.verify_audit()
        assert report.ok and report.ops["passwd"] == 1
        assert again._kdf == KdfParams.minimum()  # the cheap test parameters were kept
    finally:
        again.close()


def test_enabling_two_factor_removes_the_passphrase_only_slot(vault: Vault, tmp_path: Path) -> None:
    keyfile = _keyfile(tmp_path / "k")
    vault.set_credentials(TEST_PASSPHRASE, keyfile=keyfile, op="2fa-enable")
    assert vault.slot_kinds() == [keyfile and keyslots.PASSPHRASE_KEYFILE]
    vault.close()
    keyfile.rename(tmp_path / "gone")
    with pytest.raises(NotFoundError):
        Vault.open(vault.path, passphrase=TEST_PASSPHRASE)
    v = Vault.open(vault.path, passphrase=TEST_PASSPHRASE, keyfile=tmp_path / "gone")
    v.set_credentials(TEST_PASSPHRASE, keyfile=None, op="2fa-disable")
    v.close()
    Vault.open(vault.path, passphrase=TEST_PASSPHRASE).close()


def test_bad_kdf_parameters_are_refused_clearly() -> None:
    with pytest.raises(UnsupportedError, match="memlimit"):
        keyslots.make_slot(b"k" * 32, b"v" * 16, "pw", kdf=KdfParams(1, 10))


def test_empty_passphrase_is_refused(tmp_path: Path) -> None:
    with pytest.raises(AuthError, match="empty"):
        create_test_vault(tmp_path / "v", passphrase="")
    assert not (tmp_path / "v" / DB_NAME).exists()
