"""The SQLite file of sealed rows under the vault (:class:`RowFile`): connection settings,
transactions, row access.

Why SQLite: it is the durable, crash-safe, multi-process log the vault needs, in the stdlib.
WAL mode lets readers run while one writer commits; ``synchronous=FULL`` makes every
acknowledged commit survive power loss; ``secure_delete`` overwrites freed content with
zeros, which forget --shred relies on. Only sealed bytes and small integers go in (see
``docs/FORMAT.md``). Every SQLite failure leaves this module as a typed error with one line.

A full disk is not damage: a write that finds no room fails as a whole (SQLite rolls the
transaction back; a checkpoint that cannot finish leaves the write-ahead log in place), so it
is reported as a full disk with the vault intact, never as corruption with advice to restore
a backup, which would throw away everything stored since.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

from affidavit.core.atomic import SECRET_FILE_MODE, ensure_private_dir
from affidavit.core.errors import (
    AffidavitError,
    ConflictError,
    ExternalError,
    IntegrityError,
    NotFoundError,
    UnsupportedError,
)
from affidavit.vault import header as hdr

BUSY_TIMEOUT_MS = 60_000
CACHE_KIB = 8192

LIVE = 1
FORGOTTEN = 2
SHREDDED = 3
STATES = (LIVE, FORGOTTEN, SHREDDED)

#: SQLite's codes for "no room": the disk is full (ENOSPC), or a write, a file extension or
#: the shared-memory index failed for want of space, a quota (EDQUOT) or the file-size limit
#: (EFBIG); SQLite reports all but ENOSPC as I/O errors of that write.
NO_ROOM = frozenset(
    {"SQLITE_FULL", "SQLITE_IOERR_WRITE", "SQLITE_IOERR_SHMSIZE", "SQLITE_IOERR_TRUNCATE"}
)


class Row(NamedTuple):
    """One record row as stored: sealed bytes plus the fields the wrapped key authenticates."""

    rid: str
    seq: int
    state: int
    wkey: bytes
    blob: bytes | None


@dataclass(frozen=True)
class HeaderRow:
    """The header row and the SQLite header fields checked on every open."""

    vault_id: bytes
    anchor: bytes


@contextlib.contextmanager
def db_errors(path: Path) -> Iterator[None]:
    """Turn SQLite exceptions into the project's one-line typed errors."""
    try:
        yield
    except (sqlite3.Error, UnicodeError) as exc:  # garbled bytes where text belongs, too
        raise _typed(exc, path) from None


def _typed(exc: sqlite3.Error | UnicodeError, path: Path) -> AffidavitError:
    """The typed error for one SQLite failure (see the module docstring on a full disk)."""
    detail = _one_line(exc)
    if getattr(exc, "sqlite_errorname", None) in NO_ROOM:
        return ExternalError(
            f"the disk holding the vault at {path.parent} is full, over quota or at a file-size "
            f"limit ({detail}); nothing was stored and the vault is intact",
            "free some space, then retry",
        )
    if isinstance(exc, sqlite3.OperationalError):
        text = detail.lower()
        if "locked" in text or "busy" in text:
            return ConflictError(
                f"the vault at {path.parent} is busy (another process holds it)",
                "retry in a moment",
            )
        if "readonly" in text or "unable to open" in text or "disk i/o" in text:
            return IntegrityError(f"cannot use the vault file {path}: {detail}")
    return IntegrityError(
        f"the vault file {path} is corrupt or truncated ({detail})", "restore it from a backup"
    )


def _one_line(exc: BaseException, limit: int = 120) -> str:
    """SQLite's message squeezed to one short line (it may quote multi-line schema text)."""
    text = " ".join(str(exc).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


class RowFile:
    """One connection to a vault's SQLite file (the embedded :class:`RecordStore`)."""

    def __init__(self, path: Path, conn: sqlite3.Connection) -> None:
        self.path = path
        self.where = str(path)
        self.conn = conn

    # -- opening -------------------------------------------------------------------------

    @classmethod
    def create(cls, directory: Path) -> RowFile:
        """Make a new, empty vault file in ``directory``; refuse to overwrite one."""
        directory = Path(directory)
        path = directory / hdr.DB_NAME
        cls.refuse_existing(directory)
        ensure_private_dir(directory)
        fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, SECRET_FILE_MODE)
        os.close(fd)
        store = cls._connect(path)
        with db_errors(path):
            store.conn.execute("PRAGMA journal_mode=WAL")
        return store

    @staticmethod
    def refuse_existing(directory: Path) -> None:
        """ConflictError when ``directory`` already holds a vault (or pieces of one)."""
        directory = Path(directory)
        if (directory / hdr.DB_NAME).exists():
            raise ConflictError(
                f"a vault already exists at {directory}",
                "use it, or choose another directory with AFFIDAVIT_VAULT",
            )
        if directory.is_dir() and any(p.name.startswith(hdr.DB_NAME) for p in directory.iterdir()):
            raise ConflictError(f"{directory} holds leftovers of a vault", "move them away first")
        if directory.is_dir() and any(directory.iterdir()):
            # the vault makes its directory 0700; never do that to a folder holding other things
            raise ConflictError(
                f"{directory} is not empty; a vault needs a directory of its own",
                "point AFFIDAVIT_VAULT at a new or empty directory",
            )

    @classmethod
    def open(cls, directory: Path) -> RowFile:
        """Connect to the vault in ``directory`` and check it is one we can read."""
        directory = Path(directory)
        path = directory / hdr.DB_NAME
        if not path.is_file():
            raise NotFoundError(
                f"no vault at {directory}", "run `affidavit init` or set AFFIDAVIT_VAULT"
            )
        store = cls._connect(path)
        try:
            store._check_sqlite_header()
        except BaseException:
            store.close()
            raise
        return store

    @classmethod
    def _connect(cls, path: Path) -> RowFile:
        with db_errors(path):
            conn = sqlite3.connect(
                f"file:{path}?mode=rw",
                uri=True,
                timeout=BUSY_TIMEOUT_MS / 1000,
                isolation_level=None,
                check_same_thread=False,
            )
            for pragma in (
                f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}",
                "PRAGMA synchronous=FULL",
                "PRAGMA secure_delete=ON",
                "PRAGMA cell_size_check=ON",
                "PRAGMA trusted_schema=OFF",
                # random record ids land on random B-tree pages: a bigger page cache took
                # store p95 at 100k records from ~7 ms to ~1 ms (benchmarks/vault.py)
                f"PRAGMA cache_size=-{CACHE_KIB}",
            ):
                conn.execute(pragma)
        return cls(path, conn)

    def _check_sqlite_header(self) -> None:
        with db_errors(self.path):
            app_id = self.conn.execute("PRAGMA application_id").fetchone()[0]
            version = self.conn.execute("PRAGMA user_version").fetchone()[0]
            mode = self.conn.execute("PRAGMA journal_mode").fetchone()[0]
        if app_id != hdr.APPLICATION_ID:
            raise IntegrityError(
                f"{self.path} is not an affidavit vault (or its header is damaged)",
                "point AFFIDAVIT_VAULT at a vault directory",
            )
        if version > hdr.FORMAT_VERSION:
            raise UnsupportedError(
                f"the vault at {self.path.parent} uses format {version}; this affidavit "
                f"reads up to format {hdr.FORMAT_VERSION}",
                "upgrade affidavit",
            )
        if version < 1 or mode != "wal":
            raise IntegrityError(f"the header of {self.path} is damaged", "restore a backup")

    def init_schema(
        self,
        vault_id: bytes,
        anchor: bytes,
        slot_bodies: Sequence[bytes],
        entries: Sequence[bytes],
        rows: Sequence[Row] = (),
    ) -> None:
        """Write schema, header, slots, audit entries (numbered from 1) and rows in one
        transaction (all or nothing): a new vault's first entry, or a whole migrated log."""
        with self.write():
            for statement in hdr.SCHEMA.split(";"):
                if statement.strip():
                    self.conn.execute(statement)
            self.conn.execute(
                "INSERT INTO header (id, magic, format, vault_id, anchor) VALUES (1, ?, ?, ?, ?)",
                (hdr.MAGIC, hdr.FORMAT_VERSION, vault_id, anchor),
            )
            for body in slot_bodies:
                self.conn.execute("INSERT INTO slots (body) VALUES (?)", (body,))
            for n, entry in enumerate(entries, start=1):
                self.append_audit(n, entry)
            for row in rows:
                self.put_row(row)
            self.conn.execute(f"PRAGMA application_id={hdr.APPLICATION_ID}")
            self.conn.execute(f"PRAGMA user_version={hdr.FORMAT_VERSION}")

    def close(self) -> None:
        """Close the connection (SQLite checkpoints the WAL when the last one closes)."""
        with contextlib.suppress(sqlite3.Error):
            self.conn.close()

    def discard(self) -> None:
        """Close and delete the file of a create that failed (nothing half-made stays)."""
        self.close()
        for suffix in ("", "-wal", "-shm"):
            (self.path.parent / (self.path.name + suffix)).unlink(missing_ok=True)

    def data_version(self) -> int:
        """SQLite's counter of commits by *other* connections: one PRAGMA, no disk read."""
        with db_errors(self.path):
            return int(self.conn.execute("PRAGMA data_version").fetchone()[0])

    # -- transactions --------------------------------------------------------------------

    @contextlib.contextmanager
    def write(self) -> Iterator[sqlite3.Connection]:
        """A write transaction: serialized across processes, committed whole or not at all."""
        with db_errors(self.path):
            self.conn.execute("BEGIN IMMEDIATE")
            try:
                yield self.conn
                self.conn.execute("COMMIT")  # a failed COMMIT (no room) is rolled back too
            except BaseException:
                if self.conn.in_transaction:
                    with contextlib.suppress(sqlite3.Error):
                        self.conn.execute("ROLLBACK")
                raise

    @contextlib.contextmanager
    def read(self) -> Iterator[sqlite3.Connection]:
        """A read transaction: one consistent snapshot for several queries."""
        with db_errors(self.path):
            self.conn.execute("BEGIN")
            try:
                yield self.conn
            finally:
                with contextlib.suppress(sqlite3.Error):
                    self.conn.execute("COMMIT")

    # -- queries (call inside read() or write()) -----------------------------------------

    def header(self) -> HeaderRow:
        """The header row; a vault without one is damaged."""
        row = self.conn.execute(
            "SELECT magic, format, vault_id, anchor FROM header WHERE id = 1"
        ).fetchone()
        return checked_header(row, str(self.path))

    def set_anchor(self, anchor: bytes) -> None:
        """Replace the sealed anchor (inside the write transaction that moved the log)."""
        self.conn.execute("UPDATE header SET anchor = ? WHERE id = 1", (anchor,))

    def slots(self) -> list[tuple[int, bytes]]:
        """Every key slot as ``(number, stored body)``."""
        found = self.conn.execute("SELECT slot, body FROM slots ORDER BY slot").fetchall()
        return checked_slots(found, self.where)

    def replace_slots(self, bodies: Sequence[bytes]) -> None:
        """Swap the whole slot table (inside a write transaction)."""
        self.conn.execute("DELETE FROM slots")
        for body in bodies:
            self.conn.execute("INSERT INTO slots (body) VALUES (?)", (body,))

    def rows_since(self, seq: int) -> list[Row]:
        """Record rows written after ``seq``, oldest first (the incremental tail)."""
        cur = self.conn.execute(
            "SELECT rid, seq, state, wkey, blob FROM records WHERE seq > ? ORDER BY seq", (seq,)
        )
        return [checked_row(r) for r in cur]

    def all_rows(self) -> list[Row]:
        """Every record row, oldest first (a table scan, then one sort in RAM).

        The scan's pages are then handed back (``PRAGMA shrink_memory``): the caller keeps
        the rows decrypted in RAM, and the table is next read by seq a few rows at a time,
        so the page cache it filled (up to :data:`CACHE_KIB`: ~8 MiB in every server at
        2,000 memories) would only hold copies.
        """
        rows = [
            checked_row(r)
            for r in self.conn.execute("SELECT rid, seq, state, wkey, blob FROM records")
        ]
        self.conn.execute("PRAGMA shrink_memory")
        rows.sort(key=lambda r: r.seq)
        return rows

    def versions(self) -> list[tuple[str, int, int]]:
        """Every record row's ``(id, seq, state)``: one scan of the table in key order (by
        seq, each row would be a lookup through the seq index: ~18 times the CPU)."""
        return self.conn.execute("SELECT rid, seq, state FROM records").fetchall()

    def row(self, rid: str) -> Row | None:
        """One record row by id."""
        r = self.conn.execute(
            "SELECT rid, seq, state, wkey, blob FROM records WHERE rid = ?", (rid,)
        ).fetchone()
        return None if r is None else checked_row(r)

    def put_row(self, row: Row) -> bool:
        """Insert or replace a record row; True when the id is new."""
        cur = self.conn.execute(
            "UPDATE records SET seq = ?, state = ?, wkey = ?, blob = ? WHERE rid = ?",
            (row.seq, row.state, row.wkey, row.blob, row.rid),
        )
        if cur.rowcount:
            return False
        self.conn.execute(
            "INSERT INTO records (rid, seq, state, wkey, blob) VALUES (?, ?, ?, ?, ?)",
            (row.rid, row.seq, row.state, row.wkey, row.blob),
        )
        return True

    def append_audit(self, n: int, blob: bytes) -> None:
        """Append one sealed audit entry."""
        self.conn.execute("INSERT INTO audit (n, blob) VALUES (?, ?)", (n, blob))

    def audit_entries(self, after: int = 0) -> Iterator[tuple[int, bytes]]:
        """The sealed audit entries after number ``after``, in order (a damaged cell reads as
        an empty blob)."""
        for n, blob in self.conn.execute(
            "SELECT n, blob FROM audit WHERE n > ? ORDER BY n", (after,)
        ):
            if not isinstance(n, int):
                raise IntegrityError(f"the audit log of {self.path} is damaged", "restore a backup")
            yield n, blob if isinstance(blob, bytes) else b""

    def checkpoint(self) -> bool:
        """Copy the WAL into the main file and truncate it to zero bytes; True when done."""
        with db_errors(self.path):
            busy, _, _ = self.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
        return int(busy) == 0

    def quick_check(self) -> str | None:
        """SQLite's structural check of the file; None when it is sound."""
        with db_errors(self.path):
            result = [r[0] for r in self.conn.execute("PRAGMA quick_check")]
        return None if result == ["ok"] else "; ".join(result[:3])

    def size_on_disk(self) -> int:
        """Bytes used by the vault's files (database, WAL, shared-memory index)."""
        total = 0
        for suffix in ("", "-wal", "-shm"):
            with contextlib.suppress(FileNotFoundError):
                total += (self.path.parent / (self.path.name + suffix)).stat().st_size
        return total


def checked_row(r: Sequence[object]) -> Row:
    """A fetched record row, its types checked (a damaged cell is an IntegrityError)."""
    rid, seq, state, wkey, blob = r
    if (
        not isinstance(rid, str)
        or not isinstance(seq, int)
        or state not in STATES
        or not isinstance(wkey, bytes)
        or not (blob is None or isinstance(blob, bytes))
    ):
        raise IntegrityError("a record row of the vault is damaged", "restore a backup")
    return Row(rid, seq, int(state), wkey, blob)


def checked_header(row: Sequence[object] | None, name: str) -> HeaderRow:
    """A fetched ``(magic, format, vault_id, anchor)`` header row, checked on either engine:
    missing, foreign, of another format or with odd cells, it is damage to ``name``."""
    if (
        row is None
        or row[0] != hdr.MAGIC
        or row[1] != hdr.FORMAT_VERSION
        or not isinstance(row[2], bytes)
        or not isinstance(row[3], bytes)
    ):
        raise IntegrityError(f"the header row of {name} is damaged", "restore a backup")
    return HeaderRow(vault_id=row[2], anchor=row[3])


def checked_slots(found: Sequence[Sequence[object]], name: str) -> list[tuple[int, bytes]]:
    """Fetched ``(slot, body)`` rows, their types checked on either engine (damage to ``name``)."""
    slots: list[tuple[int, bytes]] = []
    for number, body in found:
        if not isinstance(number, int) or not isinstance(body, bytes):
            raise IntegrityError(f"the key slots of {name} are damaged", "restore a backup")
        slots.append((number, body))
    return slots
