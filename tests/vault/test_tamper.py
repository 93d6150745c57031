"""Byte flips across every region of the vault's files: a typed error, or provably harmless.

"Harmless" is checked, not assumed: the damaged vault must open to exactly a state the vault
really had (every record, version and field equal), with an intact audit chain. Anything
else must be an AffidavitError (one clear line), never wrong plaintext and never a crash.
"""

from __future__ import annotations

import os
import random
import sqlite3
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from affidavit.core.errors import AffidavitError, IntegrityError
from affidavit.vault import DB_NAME, NewItem, Vault
from tests.vault.conftest import TEST_PASSPHRASE, both_stores, create_test_vault, raw_execute

State = dict[str, tuple[Any, ...]]


def _state(v: Vault) -> State:
    return {
        it.id: (it.kind, it.namespace, it.seq, it.saved_at, it.data, it.vector) for it in v.items()
    }


def _build(path: Path, *, keep_open: bool) -> tuple[list[State], Vault | None]:
    """A vault with every kind of row; returns each committed state along the way."""
    v = create_test_vault(path)
    states = [_state(v)]
    ops = [
        lambda: v.put_many(
            [
                NewItem(
                    data={"text": f"fact {i}", "source": "s", "tags": ["t"]},
                    namespace=f"ns{i % 2}",
                    vector=bytes([i]) * 64,
                )
                for i in range(6)
            ]
        ),
        lambda: v.update(next(iter(v.items())).id, {"text": "fact 0 corrected", "source": "s"}),
        lambda: v.forget(list(v.items())[1].id),
        lambda: v.forget(list(v.items())[1].id, shred=True),
        lambda: v.set_setting("grants", {"a": "rw"}),
        lambda: v.put(
            NewItem(data={"subject": "x", "predicate": "is", "object": "y"}, kind="relation")
        ),
    ]
    for op in ops:
        op()
        states.append(_state(v))
    if keep_open:
        return states, v
    v.close()
    return states, None


def _outcome(target: Path, files: dict[str, bytes], states: list[State]) -> str:
    for name in list(p.name for p in target.iterdir()):
        (target / name).unlink()
    for name, data in files.items():
        (target / name).write_bytes(data)
    try:
        v = Vault.open(target, passphrase=TEST_PASSPHRASE)
        try:
            got = _state(v)
            for rid in got:
                v.get(rid)
            report = v.verify_audit()
        finally:
            v.close()
    except AffidavitError as exc:
        assert "\n" not in str(exc)
        return type(exc).__name__
    if not report.ok:
        return "audit:" + (report.problem or "")[:20]
    assert got in states, "a damaged vault opened to a state it never had"
    return "harmless" if got == states[-1] else "rolled back"


def _positions(data: bytes, needles: list[bytes], stride: int, rng: random.Random) -> list[int]:
    """Every ``stride``-th byte plus first, middle and last byte of every sealed blob."""
    spots = set(range(0, len(data), stride)) | set(range(0, 100))  # whole SQLite header
    for blob in needles:
        at = data.find(blob)
        if at >= 0:
            spots.update({at, at + len(blob) // 2, at + len(blob) - 1})
    spots.update(rng.randrange(len(data)) for _ in range(50))
    return sorted(p for p in spots if p < len(data))


def _sealed_blobs(db: Path) -> list[bytes]:
    conn = sqlite3.connect(db)
    try:
        found = [conn.execute("SELECT anchor FROM header").fetchone()[0]]
        found += [b for (b,) in conn.execute("SELECT body FROM slots")]
        for wkey, blob in conn.execute("SELECT wkey, blob FROM records"):
            found += [wkey] + ([blob] if blob else [])
        found += [b for (b,) in conn.execute("SELECT blob FROM audit")]
        return found
    finally:
        conn.close()


def _flip_all(
    region: str, files: dict[str, bytes], positions: list[int], states: list[State], target: Path
) -> Counter[str]:
    outcomes: Counter[str] = Counter()
    for pos in positions:
        damaged = dict(files)
        data = bytearray(damaged[region])
        data[pos] ^= 1 << (pos % 8)
        damaged[region] = bytes(data)
        outcomes[_outcome(target, damaged, states)] += 1
    return outcomes


def test_flips_in_the_vault_file(tmp_path: Path, runtime_dir: Path) -> None:
    states, _ = _build(tmp_path / "v", keep_open=False)
    db = tmp_path / "v" / DB_NAME
    files = {DB_NAME: db.read_bytes()}
    rng = random.Random(7)
    positions = _positions(files[DB_NAME], _sealed_blobs(db), 97, rng)
    target = tmp_path / "damaged"
    target.mkdir()
    outcomes = _flip_all(DB_NAME, files, positions, states, target)
    assert sum(outcomes.values()) == len(positions) > 400
    detected = sum(n for k, n in outcomes.items() if k not in ("harmless", "rolled back"))
    assert detected > 0 and outcomes["rolled back"] == 0
    assert {"IntegrityError"} <= set(outcomes)


def test_flips_in_the_write_ahead_log(tmp_path: Path, runtime_dir: Path) -> None:
    states, live = _build(tmp_path / "v", keep_open=True)
    assert live is not None
    try:
        wal = (tmp_path / "v" / f"{DB_NAME}-wal").read_bytes()
        files = {DB_NAME: (tmp_path / "v" / DB_NAME).read_bytes(), f"{DB_NAME}-wal": wal}
    finally:
        live.close()
    assert len(wal) > 4096
    target = tmp_path / "damaged"
    target.mkdir()
    positions = _positions(wal, [], 211, random.Random(8))
    outcomes = _flip_all(f"{DB_NAME}-wal", files, positions, states, target)
    # SQLite drops WAL frames whose checksum fails: the vault then opens to an earlier state
    # it really had (anchored and chained consistently), never to a state it never had
    assert sum(outcomes.values()) == len(positions)
    assert outcomes["harmless"] + outcomes["rolled back"] > 0


def test_flips_in_the_unlock_credential(vault: Vault, runtime_dir: Path) -> None:
    vault.put(NewItem(data={"text": "x", "source": "s"}))
    credential = vault.start_session()
    vault.close()
    pristine = credential.read_bytes()
    results: Counter[str] = Counter()
    for pos in range(len(pristine)):
        data = bytearray(pristine)
        data[pos] ^= 0x04
        credential.write_bytes(bytes(data))
        try:
            Vault.open(vault.path).close()
            results["opened"] += 1
        except AffidavitError as exc:
            results[type(exc).__name__] += 1
    credential.write_bytes(pristine)
    Vault.open(vault.path).close()
    assert results["opened"] == 0, results
    assert set(results) <= {"IntegrityError", "LockedError", "SealError"}


@pytest.mark.parametrize(
    ("offset", "mask", "expected"),
    [
        *[(o, 0x01, "IntegrityError") for o in (68, 69, 70, 71)],  # application_id
        (60, 0x01, "UnsupportedError"),  # user_version: a "newer" format is named as such
        (63, 0x02, "UnsupportedError"),
        (63, 0x01, "IntegrityError"),  # version 0: not a vault format at all
    ],
)
def test_header_fields_that_identify_the_vault(
    tmp_path: Path, offset: int, mask: int, expected: str
) -> None:
    """application_id (bytes 68-71) and user_version (60-63) are checked before anything."""
    create_test_vault(tmp_path / "v").close()
    db = tmp_path / "v" / DB_NAME
    data = bytearray(db.read_bytes())
    data[offset] ^= mask
    db.write_bytes(bytes(data))
    with pytest.raises(AffidavitError) as err:
        Vault.open(tmp_path / "v", passphrase=TEST_PASSPHRASE)
    assert type(err.value).__name__ == expected


def test_truncated_vault_file(tmp_path: Path) -> None:
    states, _ = _build(tmp_path / "v", keep_open=False)
    db = tmp_path / "v" / DB_NAME
    data = db.read_bytes()
    target = tmp_path / "damaged"
    target.mkdir()
    outcomes = Counter(
        _outcome(target, {DB_NAME: data[:cut]}, states)
        for cut in (0, 50, 100, 4096, len(data) // 2, len(data) - 2000, len(data) - 1)
    )
    # cutting only the zero padding at the very end of the last page loses nothing
    assert outcomes["rolled back"] == 0 and outcomes["harmless"] <= 1, outcomes


def test_session_credential_without_ram_secret_after_tamper(
    vault: Vault, runtime_dir: Path
) -> None:
    vault.start_session()
    vault.close()
    (token,) = (runtime_dir / f"affidavit-{os.getuid()}").iterdir()
    token.write_bytes(token.read_bytes()[:17] + b"\0" * 32)  # the right session, a wrong secret
    with pytest.raises(AffidavitError):
        Vault.open(vault.path)


def test_every_byte_of_each_sealed_region_is_guarded(tmp_path: Path, runtime_dir: Path) -> None:
    """Dense flips inside the anchor, a key slot, a record's key and payload, an audit entry:
    every single one is detected (none is harmless: all of these bytes are authenticated)."""
    states, _ = _build(tmp_path / "v", keep_open=False)
    db = tmp_path / "v" / DB_NAME
    data = db.read_bytes()
    conn = sqlite3.connect(db)
    regions = {
        "anchor": conn.execute("SELECT anchor FROM header").fetchone()[0],
        "slot": conn.execute("SELECT body FROM slots").fetchone()[0],
        "record key": conn.execute("SELECT wkey FROM records WHERE state = 1").fetchone()[0],
        "record payload": conn.execute("SELECT blob FROM records WHERE state = 1").fetchone()[0],
        "audit entry": conn.execute("SELECT blob FROM audit WHERE n = 3").fetchone()[0],
    }
    conn.close()
    target = tmp_path / "damaged"
    target.mkdir()
    for name, blob in regions.items():
        start = data.find(blob)
        assert start >= 0, name
        span = range(start, start + min(len(blob), 160))
        outcomes = _flip_all(DB_NAME, {DB_NAME: data}, list(span), states, target)
        assert outcomes["harmless"] == 0 and outcomes["rolled back"] == 0, (name, outcomes)


# -- rows altered through the database (either store: what a database administrator can do) --

#: Each alteration, as SQL on the vault's tables ({t}: the table prefix; ? a parameter bound
#: to the id of a live record).
ALTERATIONS = {
    "ciphertext byte flipped": "UPDATE {t}records SET blob = "
    "substr(blob, 1, 40) || substr(blob, 42) || substr(blob, 41, 1) WHERE rid = ?",
    "wrapped key of one row swapped onto another": "UPDATE {t}records SET wkey = "
    "(SELECT wkey FROM {t}records WHERE rid <> ? ORDER BY seq LIMIT 1) WHERE rid = ?",
    "sequence number moved": "UPDATE {t}records SET seq = seq + 1000 WHERE rid = ?",
    "record row deleted": "DELETE FROM {t}records WHERE rid = ?",
    "forgotten row made live": "UPDATE {t}records SET state = 1 WHERE state = 2 AND rid <> ?",
}


def _victim(v: Vault) -> str:
    return next(iter(v.items())).id


@both_stores
@pytest.mark.parametrize("alteration", sorted(ALTERATIONS))
def test_a_row_altered_in_the_database_is_detected(
    vault: Vault, store: str | None, alteration: str
) -> None:
    vault.put_many([NewItem(data={"text": f"fact {i}", "source": "s"}) for i in range(4)])
    vault.forget(list(vault.items())[-1].id)
    rid = _victim(vault)
    vault.close()
    sql = ALTERATIONS[alteration]
    raw_execute(vault.path, store, sql, (rid,) * sql.count("?"))
    with pytest.raises(AffidavitError) as caught:
        v = Vault.open(vault.path, passphrase=TEST_PASSPHRASE)
        try:
            for it in v.items():
                v.get(it.id)
            report = v.verify_audit()
            assert not report.ok
            raise IntegrityError(report.problem or "")
        finally:
            v.close()
    assert "\n" not in str(caught.value)


@both_stores
def test_an_altered_audit_entry_fails_verify(vault: Vault, store: str | None) -> None:
    vault.put(NewItem(data={"text": "fact", "source": "s"}))
    vault.close()
    raw_execute(
        vault.path,
        store,
        "UPDATE {t}audit SET blob = (SELECT blob FROM {t}audit WHERE n = 1) WHERE n = 2",
    )
    v = Vault.open(vault.path, passphrase=TEST_PASSPHRASE)
    try:
        assert not v.verify_audit().ok
    finally:
        v.close()


@both_stores
def test_a_rollback_behind_a_running_client_is_refused(vault: Vault, store: str | None) -> None:
    """The database restored to an earlier, self-consistent moment (a backup): a client that
    saw a later sequence number refuses it at its next write instead of writing over it."""
    vault.put(NewItem(data={"text": "before", "source": "s"}))
    ((anchor,),) = raw_execute(vault.path, store, "SELECT anchor FROM {t}header")
    seq = vault.seq
    ((audit_n,),) = raw_execute(vault.path, store, "SELECT max(n) FROM {t}audit")
    vault.put(NewItem(data={"text": "after", "source": "s"}))
    raw_execute(vault.path, store, "DELETE FROM {t}records WHERE seq > ?", (seq,))
    raw_execute(vault.path, store, "DELETE FROM {t}audit WHERE n > ?", (audit_n,))
    raw_execute(vault.path, store, "UPDATE {t}header SET anchor = ?", (bytes(anchor),))
    with pytest.raises(IntegrityError, match="went back"):
        vault.put(NewItem(data={"text": "lost?", "source": "s"}))
