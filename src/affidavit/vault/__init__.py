"""The memory vault: sealed records on disk, plaintext only in RAM.

Public API (the recall layer and the memory MCP server build on exactly this)::

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
    v.put_many([NewItem, ...], *, progress=None) -> list[VaultItem]   validates ALL first
        ("item 3: ..."), one transaction, one audit entry per item; NewItem.id / .saved_at
        only for imports (idempotent by id; different content under a known id ->
        ConflictError); progress(done, total) while sealing long batches
    v.import_items([NewItem with id, ...], *, progress=None) -> {"imported",
        "already_present", "kept_forgotten"}   like put_many, forgotten ids stay forgotten
    v.update(item_id, data, *, vector=<keep>) -> VaultItem   new sealed version, new seq
    v.get(item_id) -> VaultItem                  NotFoundError (unknown/forgotten/shredded)
    v.forget(item_id, *, shred=False) -> None
    v.items(kind=None, namespace=None) -> Iterator[VaultItem]   live items from RAM, by seq
    len(v); v.seq
    v.refresh() -> list[Change]   other processes' writes since the last call (incremental
        by seq; one PRAGMA when nothing changed). LockedError if the session was locked.
    v.add_listener(fn)            fn(Change) for every change applied to RAM, own or foreign
    v.get_setting(key, default=None) / v.set_setting(key, value)   sealed settings
    v.status() -> dict ; v.verify_audit() -> AuditReport (.ok, .problem, .as_dict())
    v.start_session(once=False, idle_minutes=None, store="runtime")   keep it unlocked for
        this user's other processes (what `affidavit unlock` does; store="keyring" puts the
        secret in the OS keyring); v.unlocked_by -> "session" | "passphrase"
    v.lock() (drops keys, then ends the unlock session for all processes) / v.close()
    v.set_credentials(passphrase, keyfile=None, op="passwd")   re-wrap the key slots

    VaultItem(id, kind, namespace, seq, saved_at, data, vector)   frozen; data is JSON
    Change(op: "put" | "forget" | "shred", id, seq, item: VaultItem | None)

Kinds are lowercase words ("memory", "relation", ...); a "memory" needs non-empty
``data["text"]`` and ``data["source"]``. Reads never write. Session helpers live in
:mod:`affidavit.vault.session`; the signed manifest in :mod:`affidavit.vault.manifest`.
"""

from affidavit.crypto.keyslots import KdfParams
from affidavit.vault.api import Vault, now_iso
from affidavit.vault.audit import AuditReport
from affidavit.vault.items import Change, NewItem, VaultItem

__all__ = ["AuditReport", "Change", "KdfParams", "NewItem", "Vault", "VaultItem", "now_iso"]
