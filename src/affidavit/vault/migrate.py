"""Move a vault to another store: a file vault into a team database, or any vault into a new
file vault (ADR 127).

Sealed rows are bound to the vault id, record id, sequence number and state, never to the
engine holding them, so a migration copies the log byte for byte (header, key slots, every
record row, every audit entry) in one transaction on the target, with the source's write lock
held so nothing commits meanwhile. It then reads the target back and checks it record by
record: every row and audit entry identical, every live record decrypts, the audit chain walks
to the anchor. Any difference removes what it wrote and leaves the source as it was.

``--to postgresql://...`` converts the vault directory in place: once the copy is verified,
``store.url`` points at the database and the SQLite files are kept beside it as
``vault.db.before-migrate`` (a backup, not used again). ``--to DIR`` writes a new file vault
at DIR and leaves the source alone (a team vault stays in its database for the others).

A target that already holds this vault's very log is verified the same way and adopted, so
a rerun finishes a run killed after its copy committed, and a team's members follow a copy
of their database one by one. A team vault is never copied into an empty database in place:
that would move one member away from the team (ADR 0181).
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from pathlib import Path

from affidavit.core.errors import ConflictError, IntegrityError
from affidavit.vault import audit, envelope
from affidavit.vault import store as stores
from affidavit.vault.header import DB_NAME, Anchor
from affidavit.vault.rows import LIVE, Row
from affidavit.vault.store import RecordStore
from affidavit.vault.vault import Vault

BACKUP_SUFFIX = ".before-migrate"
_DB_FILES = ("", "-wal", "-shm")


@dataclass(frozen=True)
class SealedLog:
    """Everything a store holds, as stored: what a migration copies and compares."""

    vault_id: bytes
    anchor: bytes
    slots: tuple[bytes, ...]
    rows: tuple[Row, ...]
    entries: tuple[bytes, ...]


@dataclass(frozen=True)
class Migration:
    """What ``affidavit migrate`` did (its JSON output)."""

    source: str
    target: str
    directory: str  # where AFFIDAVIT_VAULT should point now
    records: int  # record rows copied (live, forgotten and shredded)
    audit_entries: int


def read_log(store: RecordStore) -> SealedLog:
    """The store's whole log (call inside its read or write transaction)."""
    head = store.header()
    entries = []
    for expected, (n, blob) in enumerate(store.audit_entries(), start=1):
        if n != expected:
            raise IntegrityError(f"audit entry {expected} is missing", "restore a backup")
        entries.append(blob)
    return SealedLog(
        head.vault_id,
        head.anchor,
        tuple(body for _, body in store.slots()),
        tuple(store.all_rows()),
        tuple(entries),
    )


def migrate(vault: Vault, target: str) -> Migration:
    """Copy ``vault`` to ``target`` (a PostgreSQL URL or a new directory), verified.

    A target that already holds this very vault (same id, the same log row for row) is
    verified and adopted instead of refused: the copy of a run killed after it committed,
    or a team database an administrator copied. Moving a team vault into an empty database
    is refused: it would take only this member away from the team (ADR 0181).
    """
    source, keys = vault._open_parts()  # the package's own vault: its keys verify the copy
    in_place = stores.is_url(target)
    directory = vault.path if in_place else Path(target).expanduser()
    if not in_place and directory.resolve() == vault.path.resolve():
        raise ConflictError(f"{directory} is where this vault is", "choose a new directory")
    team = stores.pointer(vault.path)
    if in_place and team == target:
        return _finish_in_place(vault, source, target)
    existing = stores.existing_target(target)
    if existing is None and in_place and team is not None:
        raise ConflictError(
            f"this vault is the team vault in {team}; copying it into the empty database "
            f"{target} would point only this member there, away from the team",
            "to move the team, copy the database (pg_dump, then restore it into the new one) "
            "while nobody writes, then every member runs `affidavit migrate --to URL`; for "
            "a private copy, `affidavit migrate --to DIR`",
        )
    new = existing or (
        stores.new_database(target) if in_place else stores.create_store(directory, None)
    )
    try:
        with source.write():  # no other writer commits while the log is copied
            log = read_log(source)
            anchor = Anchor.unseal(keys.anchor, log.vault_id, log.anchor)
            _check(keys.audit, log, anchor, "the source")
            if existing is None:
                new.init_schema(log.vault_id, log.anchor, log.slots, log.entries, log.rows)
            with new.read():
                copied = _copy_of(new, log, target) if existing else read_log(new)
            if copied != log:
                raise IntegrityError(
                    f"the copy in {new.where} differs from the source", "nothing was changed"
                )
            for row in copied.rows:  # record by record: every live one decrypts
                if row.state == LIVE:
                    envelope.open_row(keys.wrap, log.vault_id, row)
            _check(keys.audit, copied, anchor, "the copy")
        if in_place:  # only once the source's transaction ended cleanly
            stores.attach(vault.path, target)
    except BaseException:
        if existing is None:
            new.discard()
        else:
            new.close()  # a vault that was there before is never removed
        raise
    new.close()
    vault.close()
    if in_place:
        _set_aside(directory)
    return Migration(
        source=source.where,
        target=target if in_place else str(directory),
        directory=str(directory),
        records=len(log.rows),
        audit_entries=len(log.entries),
    )


def _copy_of(found: RecordStore, log: SealedLog, target: str) -> SealedLog:
    """The log of a vault found at the target, when it is this vault's copy (call inside its
    read transaction); ConflictError for another vault or a copy that went its own way."""
    copied = read_log(found)
    if copied.vault_id != log.vault_id:
        raise ConflictError(
            f"{target} already holds a vault, another one than this",
            "choose an empty database or a new directory",
        )
    if copied != log:
        raise ConflictError(
            f"{target} holds a copy of this vault, but its log differs from this one's "
            f"({len(copied.entries)} audit entries there, {len(log.entries)} here): written "
            "to since it was copied, or copied from an older state",
            "find out which is current; to copy again, remove the copy (DROP SCHEMA "
            "affidavit CASCADE in that database, or delete the directory) and rerun",
        )
    return copied


def _finish_in_place(vault: Vault, source: RecordStore, target: str) -> Migration:
    """``--to`` the database this directory already points at: nothing to copy, but a run
    killed after pointing here may have left the SQLite files under their old name."""
    if not any((vault.path / (DB_NAME + suffix)).exists() for suffix in _DB_FILES):
        raise ConflictError(f"the vault already lives in {target}", "nothing to migrate")
    with source.read():
        log = read_log(source)
    vault.close()
    _set_aside(vault.path)
    return Migration(source.where, target, str(vault.path), len(log.rows), len(log.entries))


def _set_aside(directory: Path) -> None:
    """Keep the SQLite files of a vault that moved to its database, renamed as a backup."""
    for suffix in _DB_FILES:
        with contextlib.suppress(FileNotFoundError):
            old = directory / (DB_NAME + suffix)
            old.rename(old.with_name(old.name + BACKUP_SUFFIX))


def _check(key: bytes, log: SealedLog, anchor: Anchor, what: str) -> None:
    report = audit.verify(key, log.vault_id, enumerate(log.entries, start=1), anchor, log.rows)
    if not report.ok:
        raise IntegrityError(
            f"{what}'s audit chain does not verify: {report.problem}",
            "run `affidavit audit verify`; nothing was migrated",
        )
