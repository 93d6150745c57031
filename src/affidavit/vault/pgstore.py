"""A team vault's sealed rows in PostgreSQL (:class:`PgStore`), through psycopg 3.

The database holds exactly what the SQLite file holds (``docs/FORMAT.md``): the vault id, the
sealed anchor, key-slot blobs, record rows (ciphertext, wrapped record key, sequence number,
state) and the sealed audit chain; never plaintext, never a key. Every client unlocks the
vault key itself, as for a file vault.

Appends are serialised by a transaction-level advisory lock taken first in every write, so
writers on many machines take turns and the audit chain stays one chain; the lock is released
by COMMIT, ROLLBACK or the server noticing a dead client (kill -9). Each write ends with a
NOTIFY; every client LISTENs from the moment it connects, so "anything new?" is a look at the
notifications already on its socket (no round trip), and a reader that finds one follows the
log by sequence number. ADR 126 weighs the lock and the notifications. The connection is a
:class:`~affidavit.vault.pglink.PgLink`: every call bounded by a timeout, reconnected by
itself after a restart or an outage (ADR 0180).
"""

from __future__ import annotations

import contextlib
import select
from collections.abc import Iterator, Sequence
from typing import Any

import psycopg
from psycopg import errors as pg_errors

from affidavit.core.errors import (
    AffidavitError,
    ConflictError,
    ExternalError,
    IntegrityError,
    NotFoundError,
    UnsupportedError,
)
from affidavit.vault import header as hdr
from affidavit.vault.pglink import PgLink, TimedConnection
from affidavit.vault.rows import HeaderRow, Row, checked_header, checked_row, checked_slots

SCHEMA_NAME = "affidavit"
CHANNEL = "affidavit_vault"
#: The advisory lock every write takes (``AFDV`` as a number): one vault per database.
WRITE_LOCK = hdr.APPLICATION_ID

#: Reads of the socket per look for news: notifications, or a server's goodbye and then its
#: end of file, which libpq reports one read later.
_READS_PER_LOOK = 4
#: Rows a migration sends per round trip (each batch is one bounded wait, see PgLink).
_COPY_BATCH = 1000

SCHEMA = f"""
CREATE SCHEMA {SCHEMA_NAME};
CREATE TABLE {SCHEMA_NAME}.header (
  id integer PRIMARY KEY CHECK (id = 1),
  magic text NOT NULL,
  format integer NOT NULL,
  vault_id bytea NOT NULL,
  anchor bytea NOT NULL
);
CREATE TABLE {SCHEMA_NAME}.slots (
  slot integer PRIMARY KEY,
  body bytea NOT NULL
);
CREATE TABLE {SCHEMA_NAME}.records (
  rid text PRIMARY KEY,
  seq bigint NOT NULL UNIQUE,
  state smallint NOT NULL,
  wkey bytea NOT NULL,
  blob bytea
);
CREATE TABLE {SCHEMA_NAME}.audit (
  n bigint PRIMARY KEY,
  blob bytea NOT NULL
)
"""


class PgStore:
    """One connection to a team vault's database (a :class:`RecordStore`)."""

    def __init__(self, url: str) -> None:
        self.where = url
        self._version = 0
        try:
            self._link = PgLink(url, f"LISTEN {CHANNEL}", self._connected)
        except psycopg.Error as exc:
            raise ExternalError(
                f"cannot reach the team vault's database {url}: {_one_line(exc)}",
                "check that the server runs and the URL is right; a password belongs in "
                "~/.pgpass (or PGPASSFILE) or PGPASSWORD, never in the URL",
            ) from None

    @property
    def conn(self) -> TimedConnection:
        """The current connection (the queries below run on it inside read() or write())."""
        return self._link.conn

    # -- opening -------------------------------------------------------------------------

    @classmethod
    def connect(cls, url: str) -> PgStore:
        """Connect and LISTEN, so no commit after this moment goes unnoticed."""
        return cls(url)

    def _connected(self, conn: TimedConnection) -> None:
        """Each new connection (the first, or one after a loss): count its notifications,
        and count one now, since those sent while no connection listened are gone: the next
        refresh reads the log instead of trusting that nothing changed."""
        conn.add_notify_handler(self._notified)
        self._version += 1

    @classmethod
    def open(cls, url: str) -> PgStore:
        """Connect to the team vault at ``url`` and check it is one this release reads."""
        store = cls.connect(url)
        try:
            if not store._has_tables():
                raise NotFoundError(
                    f"the database {url} holds no affidavit vault",
                    "run `affidavit init --store URL` to create one there",
                )
            with store.read():
                store.header()
        except BaseException:
            store.close()
            raise
        return store

    @classmethod
    def create(cls, url: str) -> PgStore:
        """Connect to a database that must not hold a vault yet (init_schema fills it)."""
        store = cls.connect(url)
        if store._has_tables():
            store.close()
            raise ConflictError(
                f"the database {url} already holds a vault",
                "join it with `affidavit init --store URL` from an empty AFFIDAVIT_VAULT",
            )
        return store

    @classmethod
    def holds_vault(cls, url: str) -> bool:
        """Whether ``url`` already holds a vault (a new client then joins it)."""
        store = cls.connect(url)
        try:
            return store._has_tables()
        finally:
            store.close()

    def _has_tables(self) -> bool:
        with self._errors():
            found = (
                self._live()
                .execute("SELECT to_regclass(%s) IS NOT NULL", ("affidavit.header",))
                .fetchone()
            )
        return bool(found and found[0])

    def init_schema(
        self,
        vault_id: bytes,
        anchor: bytes,
        slot_bodies: Sequence[bytes],
        entries: Sequence[bytes],
        rows: Sequence[Row] = (),
    ) -> None:
        """Tables, header, slots, audit entries and rows in one transaction (all or nothing)."""
        with self.write():
            for statement in SCHEMA.split(";"):
                self.conn.execute(statement)
            self.conn.execute(
                "INSERT INTO affidavit.header (id, magic, format, vault_id, anchor) "
                "VALUES (1, %s, %s, %s, %s)",
                (hdr.MAGIC, hdr.FORMAT_VERSION, vault_id, anchor),
            )
            self.replace_slots(slot_bodies)
            numbered = list(enumerate(entries, start=1))
            records = [tuple(r) for r in rows]
            with self.conn.cursor() as cur:  # in batches: each one waits within the timeout
                for start in range(0, max(len(numbered), len(records)), _COPY_BATCH):
                    cur.executemany(
                        "INSERT INTO affidavit.audit (n, blob) VALUES (%s, %s)",
                        numbered[start : start + _COPY_BATCH],
                    )
                    cur.executemany(
                        "INSERT INTO affidavit.records (rid, seq, state, wkey, blob) "
                        "VALUES (%s, %s, %s, %s, %s)",
                        records[start : start + _COPY_BATCH],
                    )

    def close(self) -> None:
        """Close the connection (the server rolls back anything unfinished)."""
        self._link.close()

    def discard(self) -> None:
        """Remove what a create or migration wrote (the database held no vault before it)."""
        with contextlib.suppress(psycopg.Error, AffidavitError):
            self._live().execute(f"DROP SCHEMA IF EXISTS {SCHEMA_NAME} CASCADE")
        self.close()

    # -- transactions --------------------------------------------------------------------

    @contextlib.contextmanager
    def _errors(self) -> Iterator[None]:
        try:
            yield
        except psycopg.Error as exc:
            raise self._typed(exc) from None

    def _typed(self, exc: psycopg.Error) -> AffidavitError:
        detail = _one_line(exc)
        if isinstance(exc, pg_errors.DuplicateSchema | pg_errors.UniqueViolation):
            return ConflictError(
                f"the team vault {self.where} changed meanwhile ({detail})", "retry"
            )
        unavailable = self._link.failure(exc)
        if unavailable is not None:
            return unavailable
        return IntegrityError(
            f"the team vault {self.where} is damaged ({detail})",
            "restore the database from a backup",
        )

    def _live(self) -> TimedConnection:
        """The connection for the next transaction: a server that hung up since the last
        one (a restart ends every session) is noticed now and the connection reopened, so
        the caller's call does not fail on a connection that was already gone."""
        self.data_version()
        return self._link.live()

    @contextlib.contextmanager
    def write(self) -> Iterator[psycopg.Connection[Any]]:
        """A write transaction, after every earlier writer on any machine (advisory lock).

        BEGIN and COMMIT by hand, as in :meth:`read`: psycopg's own transaction block logs a
        warning for each rollback that cannot reach a lost server, one line per request.
        """
        conn = self._live()
        with self._errors():
            conn.execute("BEGIN")
            try:
                conn.execute("SELECT pg_advisory_xact_lock(%s)", (WRITE_LOCK,))
                yield conn
                conn.execute(f"NOTIFY {CHANNEL}")
                conn.execute("COMMIT")
            except BaseException:
                if not conn.closed:
                    with contextlib.suppress(psycopg.Error):
                        conn.execute("ROLLBACK")
                raise

    @contextlib.contextmanager
    def read(self) -> Iterator[psycopg.Connection[Any]]:
        """A read-only snapshot (REPEATABLE READ): header and rows from the same moment."""
        conn = self._live()
        with self._errors():
            # one statement, not BEGIN + SET TRANSACTION: a round trip less on every refresh
            conn.execute("BEGIN ISOLATION LEVEL REPEATABLE READ, READ ONLY")
            try:
                yield conn
            finally:
                if not conn.closed:
                    conn.execute("COMMIT")  # after an error PostgreSQL rolls back instead

    # -- queries (call inside read() or write()) -----------------------------------------

    def header(self) -> HeaderRow:
        """The header row; a newer format is refused, a missing or odd one is damage."""
        row = self.conn.execute(
            "SELECT magic, format, vault_id, anchor FROM affidavit.header WHERE id = 1"
        ).fetchone()
        if row is not None and row[0] == hdr.MAGIC and row[1] > hdr.FORMAT_VERSION:
            raise UnsupportedError(
                f"the team vault {self.where} uses format {row[1]}; this affidavit reads up "
                f"to format {hdr.FORMAT_VERSION}",
                "upgrade affidavit",
            )
        return checked_header(row, f"the team vault {self.where}")

    def set_anchor(self, anchor: bytes) -> None:
        """Replace the sealed anchor (inside the write transaction that moved the log)."""
        self.conn.execute("UPDATE affidavit.header SET anchor = %s WHERE id = 1", (anchor,))

    def slots(self) -> list[tuple[int, bytes]]:
        """Every key slot as ``(number, stored body)``."""
        found = self.conn.execute("SELECT slot, body FROM affidavit.slots ORDER BY slot").fetchall()
        return checked_slots(found, self.where)

    def replace_slots(self, bodies: Sequence[bytes]) -> None:
        """Swap the whole slot table (inside a write transaction)."""
        self.conn.execute("DELETE FROM affidavit.slots")
        for number, body in enumerate(bodies, start=1):
            self.conn.execute(
                "INSERT INTO affidavit.slots (slot, body) VALUES (%s, %s)", (number, body)
            )

    def rows_since(self, seq: int) -> list[Row]:
        """Record rows written after ``seq``, oldest first (the incremental tail)."""
        cur = self.conn.execute(
            "SELECT rid, seq, state, wkey, blob FROM affidavit.records WHERE seq > %s ORDER BY seq",
            (seq,),
        )
        return [checked_row(r) for r in cur]

    def all_rows(self) -> list[Row]:
        """Every record row, oldest first."""
        return self.rows_since(0)

    def versions(self) -> list[tuple[str, int, int]]:
        """Every record row's ``(id, seq, state)`` (no ciphertext read)."""
        cur = self.conn.execute("SELECT rid, seq, state FROM affidavit.records")
        return [(str(rid), int(seq), int(state)) for rid, seq, state in cur]

    def row(self, rid: str) -> Row | None:
        """One record row by id."""
        r = self.conn.execute(
            "SELECT rid, seq, state, wkey, blob FROM affidavit.records WHERE rid = %s", (rid,)
        ).fetchone()
        return None if r is None else checked_row(r)

    def put_row(self, row: Row) -> bool:
        """Insert or replace a record row in one statement; True when the id is new."""
        found = self.conn.execute(
            "INSERT INTO affidavit.records (rid, seq, state, wkey, blob) "
            "VALUES (%s, %s, %s, %s, %s) "
            "ON CONFLICT (rid) DO UPDATE SET seq = excluded.seq, state = excluded.state, "
            "wkey = excluded.wkey, blob = excluded.blob RETURNING (xmax = 0)",
            (row.rid, row.seq, row.state, row.wkey, row.blob),
        ).fetchone()
        return bool(found and found[0])

    def append_audit(self, n: int, blob: bytes) -> None:
        """Append one sealed audit entry."""
        self.conn.execute("INSERT INTO affidavit.audit (n, blob) VALUES (%s, %s)", (n, blob))

    def audit_entries(self, after: int = 0) -> Iterator[tuple[int, bytes]]:
        """The sealed audit entries after number ``after``, in order."""
        for n, blob in self.conn.execute(
            "SELECT n, blob FROM affidavit.audit WHERE n > %s ORDER BY n", (after,)
        ):
            yield int(n), blob if isinstance(blob, bytes) else b""

    # -- following other clients ---------------------------------------------------------

    def data_version(self) -> int:
        """Counts notifications: no round trip to the server, one ``select`` when idle.

        Those that arrived during a query were counted by :meth:`_notified`; the rest wait on
        the socket and are read the libpq way (consume input, then take its notifications),
        about 50 times cheaper than psycopg's ``notifies()`` generator for "nothing new".
        A server that hung up (its goodbye, then end of file) is found here too: the
        connection is reopened at once, which counts as news (see :meth:`_connected`).
        """
        conn = self._link.live()
        try:
            for _ in range(_READS_PER_LOOK):
                if not select.select([conn.fileno()], [], [], 0)[0]:
                    break
                conn.pgconn.consume_input()
                while conn.pgconn.notifies() is not None:
                    self._version += 1
        except psycopg.Error:
            if not conn.closed:
                conn.close()
            self._link.live()  # reopened, or ExternalError while the database is away
        return self._version

    def _notified(self, _notify: psycopg.Notify) -> None:
        """psycopg's callback for a notification that came in with a query's results."""
        self._version += 1

    # -- maintenance ---------------------------------------------------------------------

    def checkpoint(self) -> bool:
        """VACUUM the tables, so a shredded row's old versions leave the live heap.

        The server's write-ahead log, its replicas and its backups keep what they kept:
        sealed bytes only (see SECURITY.md on what the database administrator holds).
        """
        conn = self._live()
        with self._errors():
            for table in ("records", "slots"):
                conn.execute(f"VACUUM {SCHEMA_NAME}.{table}")
        return True

    def quick_check(self) -> str | None:
        """PostgreSQL checks its own pages (checksums, if the cluster has them): nothing here."""
        return None

    def size_on_disk(self) -> int:
        """Bytes the four tables take on the server, indexes and TOAST included."""
        conn = self._live()
        with self._errors():
            found = conn.execute(
                "SELECT sum(pg_total_relation_size(c.oid)) FROM pg_class c "
                "JOIN pg_namespace n ON n.oid = c.relnamespace "
                "WHERE n.nspname = %s AND c.relkind = 'r'",
                (SCHEMA_NAME,),
            ).fetchone()
        return int(found[0]) if found and found[0] is not None else 0


def _one_line(exc: BaseException, limit: int = 160) -> str:
    text = " ".join(str(exc).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"
