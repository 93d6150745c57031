"""The vault as a Python object: unlock once, hold plaintext in RAM, write sealed rows.

A :class:`Vault` decrypts every live record into RAM when it opens (one table scan), serves
reads from RAM (reads never write), and appends sealed rows plus audit entries for each
mutation in one SQLite transaction. Other processes' writes are picked up by tailing the
sequence number (:meth:`Vault.refresh`); a write first absorbs whatever others committed, so
the RAM view never falls behind the log. See ``docs/vault.md`` and ``docs/FORMAT.md``.
"""

from __future__ import annotations

import contextlib
import gc
import logging
import secrets
import threading
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import orjson

from affidavit.core import paths
from affidavit.core.clock import utc_iso
from affidavit.core.errors import (
    ConflictError,
    InputError,
    IntegrityError,
    LockedError,
    NotFoundError,
)
from affidavit.core.hashchain import GENESIS
from affidavit.crypto import aead
from affidavit.crypto.keyslots import KdfParams
from affidavit.vault import audit, credentials, envelope, session, snapshot
from affidavit.vault import store as stores
from affidavit.vault import validate as check
from affidavit.vault.audit import AuditReport
from affidavit.vault.audit import Entry as AuditEntry
from affidavit.vault.envelope import Payload
from affidavit.vault.header import FORMAT_VERSION, Anchor
from affidavit.vault.items import Change, NewItem, VaultItem, unknown_record
from affidavit.vault.keys import VaultKeys
from affidavit.vault.locked import session_fields
from affidavit.vault.rows import FORGOTTEN, LIVE, SHREDDED, Row
from affidavit.vault.status import VaultStatus
from affidavit.vault.store import RecordStore

logger = logging.getLogger(__name__)
SETTING = "_setting"
AUTO_LOCK_SETTING = "auto_lock_minutes"
_OPS = {LIVE: "put", FORGOTTEN: "forget", SHREDDED: "shred"}
_KEEP: Any = object()
#: The snapshot's own sections: the records' fields as JSON columns, their data (each
#: record's JSON, concatenated) and their vectors (raw bytes, concatenated), in one order.
#: (Release 1's single ``vault.records`` section is not read: that snapshot is ignored.)
_COLUMNS = "vault.columns"
_DATA = "vault.data"
_VECTORS = "vault.vectors"


def now_iso() -> str:
    """The current UTC time as ``saved_at`` writes it (milliseconds, ``Z``)."""
    return utc_iso()


def new_id() -> str:
    """A random record id: 80 bits from the OS CSPRNG, never derived from content."""
    return secrets.token_hex(10)


@dataclass
class _Write:
    """One row this transaction will write, before its seq is known."""

    rid: str
    op: str
    state: int
    record_key: bytes
    blob: bytes | None
    payload: Payload | None


class Vault:
    """An unlocked vault. Create with :meth:`create`, open with :meth:`open`."""

    def __init__(
        self,
        path: Path,
        store: RecordStore,
        keys: VaultKeys,
        vault_id: bytes,
        kdf: KdfParams,
        unlock_session: session.Session | None,
    ) -> None:
        self.path = path
        self.vault_id = vault_id
        self._store: RecordStore | None = store
        self._keys: VaultKeys | None = keys
        self._kdf = kdf
        self._session = unlock_session
        self._lock = threading.RLock()
        self._live: dict[str, VaultItem] = {}
        self._internal: dict[str, VaultItem] = {}
        self._gone: dict[str, int] = {}
        self._pending: list[Change] = []
        self._listeners: list[Callable[[Change], None]] = []
        self._seq = 0
        self._audit_n = 0  # the audit entries this view has checked, and the last one's hash
        self._audit_head = GENESIS
        self._data_version = -1
        self._refusal: IntegrityError | None = None  # set when the log does not hold
        #: The seq of the snapshot this view opened from or last saved (None: neither), and
        #: the sections it carried for the layers above (taken once, :meth:`take_section`).
        self._snapshot_seq: int | None = None
        self._sections: dict[str, bytes] = {}
        self.keyfile_path: Path | None = None  # the keyfile this handle was unlocked with
        self._load()

    # -- opening and closing ------------------------------------------------------------

    @classmethod
    def create(
        cls,
        path: Path,
        passphrase: str,
        *,
        keyfile: Path | None = None,
        kdf: KdfParams | None = None,
        store: str | None = None,
    ) -> Vault:
        """Make a new vault in directory ``path``; refuse if one is there.

        ``kdf`` defaults to :meth:`KdfParams.default`; tests pass :meth:`KdfParams.minimum`.
        ``store`` is a PostgreSQL URL for a team vault (the database must hold no vault yet;
        ``path`` then keeps only the pointer to it), else the rows go to a SQLite file there.
        """
        path = Path(path)
        vault_id = secrets.token_bytes(16)
        master = aead.random_key()
        params = kdf or KdfParams.default()
        slot = credentials.new_slot(master, vault_id, passphrase, keyfile=keyfile, kdf=params)
        keys = VaultKeys.derive(master)
        body = {"op": "init", "at": now_iso(), "format": FORMAT_VERSION}
        head, entry = audit.make_entry(keys.audit, vault_id, 1, GENESIS, body)
        anchor = Anchor(seq=0, audit_n=1, audit_head=head, rows=0).seal(keys.anchor, vault_id)
        rows = stores.create_store(path, store)
        try:
            rows.init_schema(vault_id, anchor, [slot.to_bytes()], [entry])
            if store is not None:
                stores.attach(path, store)
        except BaseException:
            rows.discard()
            raise
        return cls(path, rows, keys, vault_id, params, None)

    @classmethod
    def join(cls, path: Path, store: str, passphrase: str, *, keyfile: Path | None = None) -> Vault:
        """Point the new directory ``path`` at the team vault ``store`` and unlock it there.

        What a second member of a team runs: the vault exists in the database already, so
        this only writes ``store.url``, and removes it again when the passphrase is wrong.
        """
        stores.refuse_existing(path)
        stores.attach(path, store)
        try:
            return cls.open(path, passphrase=passphrase, keyfile=keyfile)
        except BaseException:
            stores.detach(path)
            raise

    @classmethod
    def open(
        cls,
        path: Path | None = None,
        *,
        passphrase: str | None = None,
        keyfile: Path | None = None,
        consume_once: bool = True,
    ) -> Vault:
        """Open and unlock the vault at ``path`` (default: ``AFFIDAVIT_VAULT`` or the user's).

        Unlocks with ``passphrase`` (else ``AFFIDAVIT_PASSPHRASE``) plus the keyfile for a
        two-factor vault (``keyfile``, else ``AFFIDAVIT_KEYFILE``, else the remembered
        location), or with the live unlock session; ``consume_once=False`` leaves a one-time
        session for the command it is meant for (LockedError instead). Raises NotFoundError
        (no vault), LockedError (no secret and no session), AuthError (wrong secret),
        IntegrityError.
        """
        directory = Path(path) if path is not None else paths.vault_dir()
        store = stores.open_store(directory)
        try:
            with store.read():
                vault_id = store.header().vault_id
                slots = credentials.parse_slots(directory, [body for _, body in store.slots()])
            opened = credentials.unlock(
                directory,
                vault_id,
                slots,
                passphrase=passphrase,
                keyfile=keyfile,
                consume_once=consume_once,
            )
            keys = VaultKeys.derive(opened.master)
            vault = cls(directory, store, keys, vault_id, opened.kdf, opened.session)
            vault.keyfile_path = opened.keyfile
            return vault
        except BaseException:
            store.close()
            raise

    def start_session(
        self, *, once: bool = False, idle_minutes: int | None = None, store: str = session.RUNTIME
    ) -> Path:
        """Keep this vault unlocked for the user's other processes (see :mod:`.session`)."""
        _, keys = self._open_parts()
        return session.start(
            self.path,
            self.vault_id,
            keys.master,
            once=once,
            idle_minutes=idle_minutes,
            store=store,
        )

    @property
    def unlocked_by(self) -> Literal["session", "passphrase"]:
        """``session`` when opened through the unlock session, else ``passphrase``."""
        return "passphrase" if self._session is None else "session"

    def close(self) -> None:
        """Close the file and drop every key and plaintext this object holds."""
        with self._lock:
            if self._store is not None:
                self._store.close()
            self._store = None
            self._keys = None
            self._live.clear()
            self._internal.clear()
            self._pending.clear()
            self._sections.clear()  # a snapshot's sections no layer took (plaintext too)
            if self._session is not None:
                self._session.release()

    def lock(self) -> bool:
        """End the unlock session for every process of this user, then close; True if one ran.

        Keys and plaintext are dropped first, so a failure to clear the session files (raised
        afterwards) never leaves this handle open.
        """
        with self._lock:
            held = self._session is not None and self._session.consumed and self._session.alive()
            self.close()
            return session.clear(self.path, self.vault_id) or held

    def __enter__(self) -> Vault:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def closed(self) -> bool:
        """True after :meth:`close` or :meth:`lock`."""
        return self._store is None

    def _open_parts(self) -> tuple[RecordStore, VaultKeys]:
        if self._store is None or self._keys is None:
            raise LockedError("this vault handle is closed (locked)", "open the vault again")
        return self._store, self._keys

    def _trusted_parts(self) -> tuple[RecordStore, VaultKeys]:
        """:meth:`_open_parts` for reads and writes of records: refused (IntegrityError)
        once the rows were found to differ from what the audit log wrote. Status, audit
        verify and the audit log stay available, to say what is wrong."""
        parts = self._open_parts()
        if self._refusal is not None:
            raise self._refusal
        return parts

    # -- loading and following the log ---------------------------------------------------

    def _load(self) -> None:
        with _gc_paused():
            if not self._load_snapshot():
                self._load_all()

    def _load_all(self) -> None:
        store, keys = self._open_parts()
        self._data_version = store.data_version()  # before the snapshot: nothing slips by
        with store.read():
            anchor = self._anchor(store, keys)
            rows = store.all_rows()
            top = rows[-1].seq if rows else 0
            if len(rows) != anchor.rows or top != anchor.seq:
                raise IntegrityError(
                    f"the vault holds {len(rows)} record rows up to seq {top}, but its header "
                    f"anchors {anchor.rows} up to seq {anchor.seq} (rows removed or rolled back)",
                    "restore the vault from a backup",
                )
            try:
                versions = audit.last_versions(
                    keys.audit, self.vault_id, store.audit_entries(), (0, GENESIS), anchor
                )
                _match_versions(versions, rows)
            except IntegrityError as exc:
                self._refusal = exc  # reads and writes refuse; verify_audit names the damage
        self._load_rows(rows, keys.wrap, self.vault_id)
        self._seq, self._audit_n, self._audit_head = anchor.seq, anchor.audit_n, anchor.audit_head

    def _load_rows(self, rows: list[Row], wrap: bytes, vault_id: bytes) -> None:
        for row in rows:  # the bulk path of unlock: no listeners yet, fresh dicts
            if row.state != LIVE:
                envelope.unwrap_key(wrap, vault_id, row)
                self._gone[row.rid] = row.state
                continue
            p = envelope.open_row(wrap, vault_id, row)
            if p is None:
                continue
            item = VaultItem(row.rid, p.kind, p.namespace, row.seq, p.saved_at, p.data, p.vector)
            (self._internal if p.kind.startswith("_") else self._live)[row.rid] = item

    def _load_snapshot(self) -> bool:
        """Open the view from the vault's snapshot and the log's tail after it; False (the
        view left empty) when there is no usable snapshot: the caller decrypts the log.

        The snapshot is a cache checked against the log, never trusted over it: its position
        must be on this log's own audit chain (the tail's entries link from its audit head to
        the anchor's, :meth:`_tail`), the tail's rows must be the versions those entries
        wrote, and every row in the store must be the version (or the state) the view ends
        up holding, so an older copy of a row put back below the snapshot's position is
        caught as at a full load. Anything that does not hold: the log is decrypted instead.
        """
        data = snapshot.read(self.path)
        if data is None:
            return False
        store, keys = self._open_parts()
        version = store.data_version()  # before the snapshot: nothing slips by
        try:
            with store.read():
                anchor = self._anchor(store, keys)
                key = self._stored_snapshot_key(store, keys)
                if key is None:
                    return False  # never saved here: its bytes are noise
                opened = snapshot.open_sealed(key, self.vault_id, data)
                del data
                at = opened.position
                sections = opened.sections
                self._restore_view(
                    sections.pop(_COLUMNS), sections.pop(_DATA), sections.pop(_VECTORS)
                )
                self._seq, self._audit_n, self._audit_head = at.seq, at.audit_n, at.audit_head
                tail = self._tail(store, keys, anchor)
                stored = store.versions()
            self._follow(keys, tail, anchor)
            self._match_view(stored, anchor)
        except (IntegrityError, KeyError, TypeError, ValueError) as exc:
            logger.info("the vault's snapshot was not used: %s", exc)
            self._live.clear()
            self._internal.clear()
            self._gone.clear()
            self._seq, self._audit_n, self._audit_head = 0, 0, GENESIS
            self._refusal = None  # the full load decides whether the log holds
            return False
        self._data_version = version
        self._snapshot_seq = at.seq
        self._sections = opened.sections
        return True

    def _match_view(self, rows: Sequence[tuple[str, int, int]], anchor: Anchor) -> None:
        """IntegrityError unless the store's rows are exactly the view's records: the same
        ids, each live one at the version the view holds, each gone one gone the same way
        (what a full load checks against the audit log, here against the checked view)."""
        top = max((seq for _, seq, _ in rows), default=0)
        if len(rows) != anchor.rows or top != anchor.seq:
            raise IntegrityError("the store's rows do not match its anchor")
        if len(self._live) + len(self._internal) + len(self._gone) != len(rows):
            raise IntegrityError("the snapshot and the log's tail do not add up to the log")
        live, internal, gone = self._live, self._internal, self._gone
        for rid, seq, state in rows:
            item = live.get(rid) or internal.get(rid)
            if item is not None:
                holds = state == LIVE and seq == item.seq
            else:
                holds = state != LIVE and gone.get(rid) == state
            if not holds:
                raise IntegrityError(f"record {rid} is not the version the view holds")

    def _restore_view(self, columns: bytes, data: bytes, vectors: bytes) -> None:
        """RAM from a snapshot's records (the inverse of :meth:`_view_sections`): one item
        per record whose data stays JSON until read (:meth:`VaultItem.encoded`)."""
        view = orjson.loads(columns)
        fields = [view[name] for name in ("ids", "kinds", "namespaces", "seqs", "saved_at")]
        items = VaultItem.encoded(fields, data, view["data_sizes"], vectors, view["vector_sizes"])
        live, internal = self._live, self._internal
        for item in items:
            (internal if item.kind.startswith("_") else live)[item.id] = item
        self._gone = {rid: int(state) for rid, state in view["gone"]}

    def _view_sections(self) -> dict[str, bytes]:
        """This view's records as the snapshot keeps them (call under the lock)."""
        items = [*self._live.values(), *self._internal.values()]
        data = [it.data_json() for it in items]
        vectors = [it.vector or b"" for it in items]
        view = {
            "ids": [it.id for it in items],
            "kinds": [it.kind for it in items],
            "namespaces": [it.namespace for it in items],
            "seqs": [it.seq for it in items],
            "saved_at": [it.saved_at for it in items],
            "data_sizes": [len(d) for d in data],
            "vector_sizes": [len(v) for v in vectors],
            "gone": list(self._gone.items()),
        }
        return {
            _COLUMNS: orjson.dumps(view),
            _DATA: b"".join(data),
            _VECTORS: b"".join(vectors),
        }

    def _stored_snapshot_key(self, store: RecordStore, keys: VaultKeys) -> bytes | None:
        """The snapshot key as the log holds it now (None: there is none)."""
        row = store.row(keys.name_id(snapshot.KEY_KIND, snapshot.KEY_NAME))
        if row is None or row.state != LIVE:
            return None
        payload = envelope.open_row(keys.wrap, self.vault_id, row)
        return None if payload is None else bytes.fromhex(str(payload.data["key"]))

    def take_section(self, name: str) -> bytes | None:
        """A section the layers above saved in the snapshot this view opened from (once:
        the bytes are dropped from here); None when there is none."""
        with self._lock:
            return self._sections.pop(name, None)

    @property
    def snapshot_lag(self) -> int | None:
        """How many sequence numbers the log moved since the snapshot this view opened from
        or last saved; None when it had neither."""
        return None if self._snapshot_seq is None else self._seq - self._snapshot_seq

    def save_snapshot(
        self, sections: Mapping[str, bytes] | None = None, *, renew: bool = False
    ) -> bool:
        """Seal this view (and the layers' ``sections``) as the vault's snapshot (ADR 0210).

        False when the snapshot already reflects this very position, unless ``renew`` (a
        layer found its own section in it of no use: another release's layout). The first
        save makes the snapshot key (one internal record); the sealing and the file write
        run outside the vault's lock.
        """
        with self._lock:
            self._trusted_parts()  # a view the audit log refused is never sealed as a cache
            if self._snapshot_seq == self._seq and not renew:
                return False
            key = self._snapshot_key()
            rows = len(self._live) + len(self._internal) + len(self._gone)
            at = snapshot.Position(self._seq, self._audit_n, self._audit_head, rows)
            parts = {**self._view_sections(), **(sections or {})}
        snapshot.write(self.path, snapshot.seal(key, self.vault_id, at, parts))
        with self._lock:
            self._snapshot_seq = at.seq
        return True

    def _snapshot_key(self) -> bytes:
        """The snapshot key, made (one write, seen by every client) when the log has none."""
        _, keys = self._open_parts()
        item = self._internal.get(keys.name_id(snapshot.KEY_KIND, snapshot.KEY_NAME))
        if item is None:
            write = self._snapshot_key_write(keys)
            item = self._write(lambda: [write])[write.rid]
        return bytes.fromhex(str(item.data["key"]))

    def _snapshot_key_write(self, keys: VaultKeys) -> _Write:
        """The write that sets a new random snapshot key (replacing any older one, whose
        row is overwritten like a shredded record's)."""
        rid = keys.name_id(snapshot.KEY_KIND, snapshot.KEY_NAME)
        data = {"key": aead.random_key().hex()}
        check.check_item(snapshot.KEY_KIND, "internal", data, None, internal=True)
        payload = Payload(snapshot.KEY_KIND, "internal", now_iso(), data, None)
        record_key, blob = envelope.seal_payload(
            self.vault_id, rid, envelope.encode_payload(payload)
        )
        return _Write(rid, "internal", LIVE, record_key, blob, payload)

    def _anchor(self, store: RecordStore, keys: VaultKeys) -> Anchor:
        return Anchor.unseal(keys.anchor, self.vault_id, store.header().anchor)

    def _open_row(self, keys: VaultKeys, row: Row) -> Payload | None:
        """Authenticate a row; decrypt it when live (forgotten content is never decrypted)."""
        if row.state == LIVE:
            return envelope.open_row(keys.wrap, self.vault_id, row)
        envelope.unwrap_key(keys.wrap, self.vault_id, row)
        return None

    def _apply(self, row: Row, payload: Payload | None) -> Change | None:
        """Put one row's state into RAM; return the public change (None for internal kinds)."""
        rid = row.rid
        old = self._live.pop(rid, None)
        internal = self._internal.pop(rid, None)
        self._gone.pop(rid, None)
        item = None
        if row.state == LIVE and payload is not None:
            item = VaultItem(
                rid,
                payload.kind,
                payload.namespace,
                row.seq,
                payload.saved_at,
                payload.data,
                payload.vector,
            )
            if payload.kind.startswith("_"):
                self._internal[rid] = item
                return None
            self._live[rid] = item
        else:
            self._gone[rid] = row.state
            if internal is not None and old is None:
                return None
        change = Change(_OPS[row.state], rid, row.seq, item)
        for listener in self._listeners:
            listener(change)
        return change

    def _tail(self, store: RecordStore, keys: VaultKeys, anchor: Anchor) -> list[Row]:
        """Other processes' rows since this view's last seq, each checked against the audit
        entries written since (call inside a transaction; nothing is applied yet).

        A log whose anchor is behind what this handle already applied was rolled back
        (a database restored from an older backup, rows deleted with their audit entries):
        refused, so no write lands on top of it and the lost records are not hidden. So is
        a tail that differs from what its entries wrote: a record whose newest row was
        replaced by an older copy (that copy sits below this view's seq, so the tail lacks
        the version the log recorded).
        """
        if anchor.seq < self._seq or anchor.audit_n < self._audit_n:
            raise IntegrityError(
                f"the vault's log went back from seq {self._seq} to seq {anchor.seq} (rolled "
                "back or restored from an older backup)",
                "stop writing; find out who restored it, then restore the newest backup",
            )
        if anchor.audit_n == self._audit_n:
            if (anchor.seq, anchor.audit_head) != (self._seq, self._audit_head):
                raise IntegrityError(
                    "the vault's log was replaced by another history of the same length "
                    "(restored from an older backup and written again)",
                    "stop writing; find out who restored it, then restore the newest backup",
                )
            return []
        start = (self._audit_n, self._audit_head)
        try:
            entries = store.audit_entries(self._audit_n)
            versions = audit.last_versions(keys.audit, self.vault_id, entries, start, anchor)
            rows = store.rows_since(self._seq)
            _match_versions(versions, rows)
        except IntegrityError as exc:
            self._refusal = exc  # what RAM holds may be what the damage hides: stop serving it
            raise
        return rows

    def _follow(self, keys: VaultKeys, rows: list[Row], anchor: Anchor) -> list[Change]:
        """Apply a checked tail to RAM (every row opened first: all of it or none of it)."""
        opened = [(row, self._open_row(keys, row)) for row in rows]
        changes = [c for row, payload in opened if (c := self._apply(row, payload)) is not None]
        self._seq, self._audit_n, self._audit_head = anchor.seq, anchor.audit_n, anchor.audit_head
        return changes

    def refresh(self) -> list[Change]:
        """Pick up other processes' writes since the last call; cheap when nothing changed.

        Returns their changes (this process's own writes are not repeated; they came back
        from the call that made them). Raises LockedError if the session was locked.
        """
        with self._lock:
            store, keys = self._trusted_parts()
            if self._session is not None and not self._session.alive():
                self.close()
                raise LockedError("the vault was locked", "run `affidavit unlock`")
            version = store.data_version()
            if version != self._data_version:
                with store.read():
                    anchor = self._anchor(store, keys)
                    rows = self._tail(store, keys, anchor)
                self._pending.extend(self._follow(keys, rows, anchor))
                self._data_version = version
            changes, self._pending = self._pending, []
            return changes

    def add_listener(self, listener: Callable[[Change], None]) -> None:
        """Call ``listener`` for every public change applied to RAM, own or foreign."""
        self._listeners.append(listener)

    # -- reads (RAM only; never write) ----------------------------------------------------

    def get(self, item_id: str) -> VaultItem:
        """One live record by id; NotFoundError if unknown, forgotten or shredded."""
        with self._lock:
            self._trusted_parts()
            item = self._live.get(item_id)
            if item is not None:
                return item
            state = self._gone.get(item_id)
        if state == FORGOTTEN:
            raise NotFoundError(f"record {item_id} was forgotten")
        if state == SHREDDED:
            raise NotFoundError(f"record {item_id} was shredded")
        raise unknown_record(item_id)

    def items(self, kind: str | None = None, namespace: str | None = None) -> Iterator[VaultItem]:
        """Live records, oldest version first, optionally of one kind and namespace."""
        with self._lock:
            self._trusted_parts()
            snapshot = list(self._live.values())
        return (
            it
            for it in snapshot
            if (kind is None or it.kind == kind)
            and (namespace is None or it.namespace == namespace)
        )

    def __len__(self) -> int:
        return len(self._live)

    @property
    def seq(self) -> int:
        """The last sequence number this view has applied."""
        return self._seq

    def get_setting(self, key: str, default: Any = None) -> Any:
        """A sealed setting (grants, feature switches); ``default`` when unset."""
        item = self._named_get(SETTING, key)
        return default if item is None else item.data.get("value", default)

    def named_record(self, kind: str, name: str) -> VaultItem | None:
        """An internal record addressed by name (e.g. the manifest signing key)."""
        return self._named_get(kind, name)

    def _named_get(self, kind: str, name: str) -> VaultItem | None:
        with self._lock:
            _, keys = self._trusted_parts()
            return self._internal.get(keys.name_id(kind, name))

    def status(self) -> VaultStatus:
        """Lock state, counts per namespace and kind, size on disk, audit head, format."""
        with self._lock:
            store, keys = self._open_parts()
            with store.read():
                anchor = self._anchor(store, keys)
            namespaces: dict[str, int] = {}
            kinds: dict[str, int] = {}
            for it in self._live.values():
                namespaces[it.namespace] = namespaces.get(it.namespace, 0) + 1
                kinds[it.kind] = kinds.get(it.kind, 0) + 1
            gone = list(self._gone.values())
            return {
                "path": str(self.path),
                "state": "unlocked",
                "unlocked_by": self.unlocked_by,
                **session_fields(session.peek(self.path, self.vault_id)),
                "format": FORMAT_VERSION,
                "vault_id": self.vault_id.hex(),
                "records": len(self._live),
                "namespaces": dict(sorted(namespaces.items())),
                "kinds": dict(sorted(kinds.items())),
                "forgotten": gone.count(FORGOTTEN),
                "shredded": gone.count(SHREDDED),
                "seq": anchor.seq,
                "audit": {"entries": anchor.audit_n, "head": anchor.audit_head},
                "size_bytes": store.size_on_disk(),
                "auto_lock_minutes": self.get_setting(AUTO_LOCK_SETTING),
            }

    def verify_audit(self) -> AuditReport:
        """Walk the audit chain against the anchor and every row; also SQLite's own check."""
        with self._lock:
            store, keys = self._open_parts()
            problem = store.quick_check()
            with store.read():
                anchor = self._anchor(store, keys)
                report = audit.verify(
                    keys.audit, self.vault_id, list(store.audit_entries()), anchor, store.all_rows()
                )
            if report.ok and problem is not None:
                report.ok, report.problem = False, f"the database file is damaged: {problem}"
            return report

    def audit_log(
        self, *, ids: Collection[str] | None = None, limit: int | None = None
    ) -> list[AuditEntry]:
        """The audit chain's entries, oldest first: the last ``limit`` of them, or every entry
        that wrote one of ``ids``. Reading does not verify the links (:meth:`verify_audit`
        does); an entry that does not open raises IntegrityError."""
        with self._lock:
            store, keys = self._open_parts()
            with store.read():
                stored = list(store.audit_entries())
            if ids is None and limit is not None:
                stored = stored[-limit:] if limit > 0 else []
            entries = [audit.open_entry(keys.audit, self.vault_id, n, blob) for n, blob in stored]
        if ids is not None:
            entries = [e for e in entries if e.body.get("id") in ids]
        return entries

    # -- writes ----------------------------------------------------------------------------

    def put(self, item: NewItem) -> VaultItem:
        """Store one record (see :meth:`put_many`)."""
        return self.put_many([item])[0]

    def put_many(
        self,
        items: Sequence[NewItem],
        *,
        progress: Callable[[int, int], None] | None = None,
        amend: Mapping[str, Mapping[str, Any]] | None = None,
    ) -> list[VaultItem]:
        """Store a batch in one transaction: all or nothing, every item validated first.

        Items with an ``id`` (imports) are idempotent: an identical live record is returned
        as is (a vector or ``saved_at`` the item leaves out is not compared: the vault
        derived those the first time); a different record under that id, or a forgotten
        one, is a ConflictError.
        ``progress(done, total)`` is called while the batch is sealed (for long imports).
        ``amend`` maps live record ids to fields merged into their data in the same
        transaction (a correction marks what it replaces), so a crash never leaves one
        without the other; a record in ``amend`` that is no longer live fails the batch.
        """
        stored = self._put_many(items, skip_forgotten=False, progress=progress, amend=amend)
        return [it for it in stored if it is not None]

    def _put_many(
        self,
        items: Sequence[NewItem],
        *,
        skip_forgotten: bool,
        progress: Callable[[int, int], None] | None,
        amend: Mapping[str, Mapping[str, Any]] | None = None,
    ) -> list[VaultItem | None]:
        vault_id = self.vault_id
        prepared: list[tuple[str, NewItem, Payload, bytes, bytes]] = []
        seen: set[str] = set()
        saved_at = now_iso()
        for index, item in enumerate(items):
            where = f"item {index}: " if len(items) > 1 else ""
            if not isinstance(item, NewItem):
                raise InputError(f"{where}expected a NewItem, got {type(item).__name__}")
            check.check_item(item.kind, item.namespace, item.data, item.vector, where)
            rid = check.check_id(item.id, where) if item.id is not None else new_id()
            if rid in seen:
                raise InputError(f"{where}id {rid} appears twice in the batch")
            seen.add(rid)
            stamp = check.check_timestamp(item.saved_at, where) if item.saved_at else saved_at
            payload = Payload(
                item.kind,
                item.namespace,
                stamp,
                item.data,
                bytes(item.vector) if item.vector is not None else None,
            )
            record_key, blob = envelope.seal_payload(
                vault_id, rid, envelope.encode_payload(payload)
            )
            prepared.append((rid, item, payload, record_key, blob))
            if progress is not None and (index + 1) % 1000 == 0:
                progress(index + 1, len(items))
        if progress is not None:
            progress(len(items), len(items))

        existing: dict[str, VaultItem] = {}

        def plan() -> list[_Write]:
            writes = []
            for index, (rid, item, payload, record_key, blob) in enumerate(prepared):
                if item.id is not None and (
                    rid in self._live or rid in self._gone or rid in self._internal
                ):
                    current = self._live.get(rid)
                    if current is not None and _same(current, item, payload):
                        existing[rid] = current
                        continue
                    if current is None and skip_forgotten and rid in self._gone:
                        continue
                    raise ConflictError(
                        f"item {index}: id {rid} already exists with different content"
                        if current is not None
                        else f"item {index}: id {rid} was forgotten here",
                        "remove that row from the batch or give it a new id",
                    )
                writes.append(_Write(rid, "create", LIVE, record_key, blob, payload))
            for rid, fields in (amend or {}).items():
                writes.append(self._revision(rid, {**self.get(rid).data, **fields}, _KEEP))
            return writes

        written = self._write(plan)
        return [existing.get(rid) or written.get(rid) for rid, *_ in prepared]

    def import_items(
        self, items: Sequence[NewItem], *, progress: Callable[[int, int], None] | None = None
    ) -> dict[str, int]:
        """Import exported records (each with its ``id``): all or nothing, idempotent by id.

        Records already present are left alone; ids this vault forgot or shredded stay
        forgotten (an old export never resurrects them). Returns the three counts.
        """
        for index, item in enumerate(items):
            if not isinstance(item, NewItem) or item.id is None:
                raise InputError(f"item {index}: an imported record needs its id")
        self.refresh()
        floor = self._seq  # records this import writes get higher sequence numbers
        stored = self._put_many(items, skip_forgotten=True, progress=progress)
        skipped = sum(1 for it in stored if it is None)
        new = sum(1 for it in stored if it is not None and it.seq > floor)
        return {
            "imported": new,
            "already_present": len(items) - skipped - new,
            "kept_forgotten": skipped,
        }

    def update(self, item_id: str, data: dict[str, Any], *, vector: Any = _KEEP) -> VaultItem:
        """Re-seal a live record with new ``data`` (and ``vector``) as a new version (new seq).

        ``saved_at``, kind and namespace are kept; the old ciphertext is overwritten.
        """

        return self._write(lambda: [self._revision(item_id, data, vector)])[item_id]

    def update_many(self, changes: Mapping[str, tuple[dict[str, Any], Any]]) -> list[VaultItem]:
        """Re-seal several live records in one transaction: all or nothing.

        ``changes`` maps an id to ``(data, vector)``; pass the record's own vector to keep it.
        Maintenance (retag, re-embed) changes many records at once, and a crash half way must
        not leave half of them changed.
        """
        if not changes:
            return []
        done = self._write(lambda: [self._revision(i, d, v) for i, (d, v) in changes.items()])
        return [done[i] for i in changes]

    def _revision(self, item_id: str, data: dict[str, Any], vector: Any) -> _Write:
        """The write that re-seals a live record with new data (planned inside a transaction)."""
        current = self.get(item_id)
        vec = current.vector if vector is _KEEP else vector
        check.check_item(current.kind, current.namespace, data, vec)
        payload = Payload(
            current.kind,
            current.namespace,
            current.saved_at,
            data,
            bytes(vec) if vec is not None else None,
        )
        record_key, blob = envelope.seal_payload(
            self.vault_id, item_id, envelope.encode_payload(payload)
        )
        return _Write(item_id, "update", LIVE, record_key, blob, payload)

    def forget(self, item_id: str, *, shred: bool = False) -> None:
        """Take a record out of the live set; with ``shred``, destroy its key and ciphertext.

        Without shred the sealed row stays (unreadable without the vault key, recoverable by
        nobody through this API). Shred overwrites the row (secure_delete) and truncates the
        WAL, so the vault's files hold nothing that decrypts to the record.
        """

        def plan() -> list[_Write]:
            store, keys = self._open_parts()
            state = self._gone.get(item_id)
            if item_id not in self._live and not (shred and state == FORGOTTEN):
                self.get(item_id)  # raises the right NotFoundError
            row = store.row(item_id)
            if row is None:
                raise unknown_record(item_id)
            if shred:
                writes = [_Write(item_id, "shred", SHREDDED, b"", None, None)]
                if keys.name_id(snapshot.KEY_KIND, snapshot.KEY_NAME) in self._internal:
                    # every snapshot, here or on another client, may hold the record: a new
                    # key overwrites the one they were sealed under, in the same transaction
                    writes.append(self._snapshot_key_write(keys))
                return writes
            record_key = envelope.unwrap_key(keys.wrap, self.vault_id, row)
            return [_Write(item_id, "forget", FORGOTTEN, record_key, row.blob, None)]

        self._write(plan)
        if shred:
            snapshot.discard(self.path)
            with self._lock:
                self._snapshot_seq = None
                self._sections.clear()
            self._flush_wal(f"record {item_id} is shredded in the database")

    def set_setting(self, key: str, value: Any) -> None:
        """Store a sealed setting (its name is hidden too: the row id is a keyed hash)."""
        if not isinstance(key, str) or not key:
            raise InputError("a setting needs a name")
        self._named_put(SETTING, key, {"key": key, "value": value})

    def put_named(self, kind: str, name: str, data: dict[str, Any]) -> VaultItem:
        """Create or replace an internal record addressed by name (kind starts with '_')."""
        return self._named_put(kind, name, data)

    def _named_put(self, kind: str, name: str, data: dict[str, Any]) -> VaultItem:
        _, keys = self._open_parts()
        check.check_item(kind, "internal", data, None, internal=True)
        rid = keys.name_id(kind, name)
        payload = Payload(kind, "internal", now_iso(), data, None)
        record_key, blob = envelope.seal_payload(
            self.vault_id, rid, envelope.encode_payload(payload)
        )
        op = "setting" if kind == SETTING else "internal"
        return self._write(lambda: [_Write(rid, op, LIVE, record_key, blob, payload)])[rid]

    def set_credentials(
        self,
        passphrase: str,
        *,
        keyfile: Path | None = None,
        op: str = "passwd",
        kdf: KdfParams | None = None,
    ) -> None:
        """Replace every key slot with one for ``passphrase`` (+ ``keyfile``); records untouched.

        The master key stays the same, so nothing is re-encrypted and a running unlock
        session stays valid; the old slots are overwritten (secure_delete, WAL truncated).
        """
        _, keys = self._open_parts()
        slot = credentials.new_slot(
            keys.master, self.vault_id, passphrase, keyfile=keyfile, kdf=kdf or self._kdf
        )
        self._write(lambda: [], op=op, slots=[slot.to_bytes()])
        self._kdf = slot.kdf
        self._flush_wal("the key slots were replaced")

    def slot_kinds(self) -> list[str]:
        """The kinds of the current key slots (``passphrase``, ``passphrase+keyfile``)."""
        store, _ = self._open_parts()
        with store.read():
            bodies = [body for _, body in store.slots()]
        return [slot.kind for slot in credentials.parse_slots(self.path, bodies)]

    def _write(
        self,
        plan: Callable[[], list[_Write]],
        *,
        op: str | None = None,
        slots: Sequence[bytes] | None = None,
    ) -> dict[str, VaultItem]:
        """Run one write transaction: absorb others' rows, plan, write rows + audit + anchor."""
        with self._lock:
            store, keys = self._trusted_parts()
            rows: list[tuple[Row, _Write]] = []
            with store.write():
                anchor = self._anchor(store, keys)
                self._pending.extend(self._follow(keys, self._tail(store, keys, anchor), anchor))
                writes = plan()
                seq, audit_n, head, count = (
                    anchor.seq,
                    anchor.audit_n,
                    anchor.audit_head,
                    anchor.rows,
                )
                at = now_iso()
                bodies: list[dict[str, Any]] = []
                for w in writes:
                    seq += 1
                    row = envelope.bind_row(
                        keys.wrap, self.vault_id, w.rid, seq, w.state, w.record_key, w.blob
                    )
                    count += store.put_row(row)
                    rows.append((row, w))
                    bodies.append(
                        {
                            "op": w.op,
                            "id": w.rid,
                            "seq": seq,
                            "at": at,
                            "payload": audit.payload_hash(row.blob),
                        }
                    )
                if slots is not None:
                    store.replace_slots(slots)
                    bodies.append({"op": op, "at": at})
                if not bodies:
                    return {}
                for body in bodies:
                    audit_n += 1
                    head, sealed = audit.make_entry(keys.audit, self.vault_id, audit_n, head, body)
                    store.append_audit(audit_n, sealed)
                store.set_anchor(Anchor(seq, audit_n, head, count).seal(keys.anchor, self.vault_id))
            result: dict[str, VaultItem] = {}
            for row, w in rows:
                self._apply(row, w.payload)
                if w.state == LIVE:
                    result[w.rid] = self._live.get(w.rid) or self._internal[w.rid]
            self._seq, self._audit_n, self._audit_head = seq, audit_n, head
            return result

    def checkpoint(self) -> None:
        """Fold the write-ahead log into the vault file and truncate it (see forget --shred)."""
        self._flush_wal("the vault is written")

    def _flush_wal(self, what: str) -> None:
        store, _ = self._open_parts()
        if not store.checkpoint():
            raise ConflictError(
                f"{what}, but another process is still reading an older snapshot, so the "
                "write-ahead log could not be cleared yet",
                "run `affidavit lock` or close other agents, then `affidavit status`",
            )


def _match_versions(versions: Mapping[str, int], rows: Sequence[Row]) -> None:
    """IntegrityError unless ``rows`` are exactly the versions the audit log wrote last.

    What catches an older copy of a row put back (a record forgotten or shredded since, or
    updated): the copy is genuine and opens, but the log's last entry for its id names a
    later sequence number.
    """
    for row in rows:
        want = versions.get(row.rid)
        if want != row.seq:
            raise IntegrityError(
                f"record {row.rid} is not the version its last audit entry wrote (the row "
                f"says seq {row.seq}, the log {want}): an older copy of the row was put back",
                "stop writing; restore the newest backup (`affidavit audit verify` shows "
                "the details)",
            )
    if len(versions) != len(rows):
        missing = sorted(set(versions) - {row.rid for row in rows})[0]
        raise IntegrityError(
            f"record {missing} was written at seq {versions[missing]} by its last audit entry, "
            "but that row is not there (removed, or an older copy put back)",
            "stop writing; restore the newest backup (`affidavit audit verify` shows the details)",
        )


def _same(current: VaultItem, item: NewItem, payload: Payload) -> bool:
    """Whether ``item`` (sealed as ``payload``) is the record ``current`` already holds.

    What the item leaves out was filled in when it was first stored: ``saved_at`` with the
    time of that import, the vector by embedding a row that came without one. Comparing
    those would make importing the same file twice fail, and import is idempotent.
    """
    return (
        (current.kind, current.namespace, current.data)
        == (payload.kind, payload.namespace, payload.data)
        and (item.saved_at is None or current.saved_at == payload.saved_at)
        and (item.vector is None or current.vector == payload.vector)
    )


@contextlib.contextmanager
def _gc_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector while unlock builds ~100k objects that all live on.

    Its generational passes would rescan the growing heap again and again (measured: ~15%
    of a 100k-record open); the objects hold no cycles, so nothing is lost by waiting.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
