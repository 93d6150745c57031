"""The memory vault: sealed records on disk, plaintext only in RAM.

The vault is the sealed log and nothing more: it stores records of any kind and knows nothing
of memories, ranking or grants (that is :mod:`affidavit.recall`, built on exactly this API).

Public API (every name is loaded on first use)::

    from affidavit.vault import Vault, VaultItem, NewItem, Change, KdfParams

    Vault.create(path, passphrase, *, keyfile=None, kdf=None) -> Vault
        New vault in directory ``path`` (ConflictError if one exists). ``kdf`` defaults to
        KdfParams.default(); tests use KdfParams.minimum() (or tests/vault/conftest.py).
    Vault.open(path=None, *, passphrase=None, keyfile=None, consume_once=True) -> Vault
        ``path`` defaults to AFFIDAVIT_VAULT, else ~/.affidavit/vault. Unlocks with the
        passphrase (argument, else AFFIDAVIT_PASSPHRASE; keyfile argument, else
        AFFIDAVIT_KEYFILE, else the remembered location) or the live unlock session
        (``consume_once=False``: leave a one-time session to the command it is for).
        NotFoundError (no vault) / LockedError (locked) / AuthError (wrong secret) /
        IntegrityError (tampered, corrupt) / UnsupportedError (newer format).

    v.put(NewItem(data={"text": ..., "source": ...}, kind="memory", namespace="default",
                  vector=None)) -> VaultItem
    v.put_many([NewItem, ...], *, progress=None, amend=None) -> list[VaultItem]   validates
        ALL first ("item 3: ..."), one transaction, one audit entry per item; NewItem.id /
        .saved_at only for imports (idempotent by id; different content under a known id ->
        ConflictError); progress(done, total) while sealing long batches; ``amend`` merges
        fields into live records in the same transaction
    v.import_items([NewItem with id, ...], *, progress=None) -> {"imported",
        "already_present", "kept_forgotten"}   like put_many, forgotten ids stay forgotten
    v.update(item_id, data, *, vector=<keep>) -> VaultItem   new sealed version, new seq
    v.update_many({item_id: (data, vector), ...}) -> [VaultItem]   several, one transaction
    v.get(item_id) -> VaultItem                  NotFoundError (unknown/forgotten/shredded)
    v.forget(item_id, *, shred=False) -> None
    v.items(kind=None, namespace=None) -> Iterator[VaultItem]   live items from RAM, by seq
    len(v); v.seq
    v.refresh() -> list[Change]   other processes' writes since the last call (incremental
        by seq; one PRAGMA when nothing changed). LockedError if the session was locked.
    v.add_listener(fn)            fn(Change) for every change applied to RAM, own or foreign
    v.get_setting(key, default=None) / v.set_setting(key, value)   sealed settings
    v.status() -> VaultStatus ; v.verify_audit() -> AuditReport (.ok, .problem, .as_dict())
    v.audit_log(ids=None, limit=None) -> [AuditEntry(n, prev, hash, body)]   the chain's
        entries (the last ``limit``, or those that wrote one of ``ids``); body: op, id, seq, at
    v.start_session(once=False, idle_minutes=None, store="runtime")   keep it unlocked for
        this user's other processes (what `affidavit unlock` does; store="keyring" puts the
        secret in the OS keyring); v.unlocked_by -> "session" | "passphrase"
    v.lock() (drops keys, then ends the unlock session for all processes) / v.close()
    v.set_credentials(passphrase, keyfile=None, op="passwd")   re-wrap the key slots

    VaultItem(id, kind, namespace, seq, saved_at, data, vector)   frozen; data is JSON
    Change(op: "put" | "forget" | "shred", id, seq, item: VaultItem | None)
    VaultStatus, LockedStatus   what ``status`` reports, unlocked or not (JSON); AuditHead

    locked_status(path=None) -> LockedStatus   what can be said without the key
    refuse_existing(path)       ConflictError when a vault is already there
    fold_wal(path=None) -> bool  fold the write-ahead log into the vault file (no key)
    now_iso() / new_id()        the vault's clock and its random record ids
    parse_export(text, source) -> [NewItem]   an export's rows, all checked (InputError)
    unknown_record(id) -> NotFoundError   the one answer for an id the vault does not hold
    check_structure(fields, where) / STRUCTURE_FIELDS   a memory's conversation fields
    PASSPHRASE_ENV, AUTO_LOCK_SETTING, DB_NAME

    session       the unlock session: start, peek, clear, STORES, RUNTIME, KEYRING
    manifest      sign / verify an Ed25519 manifest of a locked vault
    store         where the sealed rows live: RecordStore, check_url, is_url, STORE_ENV,
                  holds_vault (a SQLite file, or PostgreSQL for a team: docs/team.md)
    migrate       migrate(vault, "postgresql://..." | DIR) -> Migration, verified row by row

    Vault.create(..., store="postgresql://...") makes a team vault in an empty database;
    Vault.join(path, url, passphrase, keyfile=None) points a new directory at an existing one.

Kinds are lowercase words ("memory", "relation", ...); a "memory" needs non-empty
``data["text"]`` and ``data["source"]``. Reads never write.
"""

from typing import TYPE_CHECKING

from affidavit.core.exports import lazy_exports

if TYPE_CHECKING:
    from affidavit.crypto.keyslots import KdfParams
    from affidavit.vault import manifest, migrate, session, session_dir, store
    from affidavit.vault.audit import AuditReport
    from affidavit.vault.audit import Entry as AuditEntry
    from affidavit.vault.credentials import PASSPHRASE_ENV
    from affidavit.vault.export_rows import parse_export
    from affidavit.vault.header import DB_NAME
    from affidavit.vault.items import Change, NewItem, VaultItem, unknown_record
    from affidavit.vault.locked import fold_wal, locked_status
    from affidavit.vault.status import AuditHead, LockedStatus, VaultStatus
    from affidavit.vault.store import refuse_existing
    from affidavit.vault.validate import STRUCTURE_FIELDS, check_structure
    from affidavit.vault.vault import AUTO_LOCK_SETTING, Vault, new_id, now_iso

__all__ = [
    "AUTO_LOCK_SETTING",
    "DB_NAME",
    "PASSPHRASE_ENV",
    "STRUCTURE_FIELDS",
    "AuditEntry",
    "AuditHead",
    "AuditReport",
    "Change",
    "KdfParams",
    "LockedStatus",
    "NewItem",
    "Vault",
    "VaultItem",
    "VaultStatus",
    "check_structure",
    "fold_wal",
    "locked_status",
    "manifest",
    "migrate",
    "new_id",
    "now_iso",
    "parse_export",
    "refuse_existing",
    "session",
    "session_dir",
    "store",
    "unknown_record",
]
__getattr__, __dir__ = lazy_exports(globals())
