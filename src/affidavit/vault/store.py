"""Where a vault keeps its sealed rows: the :class:`RecordStore` interface and its two engines.

The vault does all row I/O through this interface, so the sealed-record log is the same on
either engine (see ``docs/FORMAT.md``): a SQLite file in the vault directory (the embedded
default, :class:`~affidavit.vault.rows.RowFile`), or a PostgreSQL database shared by a team
(:class:`~affidavit.vault.pgstore.PgStore`). A team vault still has a local directory on each
client: it holds only ``store.url`` (where the database is, never a password) and the unlock
session lives beside it as for a file vault, so everything keyed by the vault directory works
unchanged. ADR 125 says why an interface rather than a second vault class.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager
from pathlib import Path
from typing import TYPE_CHECKING, Protocol
from urllib.parse import urlsplit

from affidavit.core.atomic import SECRET_FILE_MODE, ensure_private_dir, write_atomic
from affidavit.core.errors import ConflictError, InputError, IntegrityError, UnsupportedError
from affidavit.vault.header import DB_NAME
from affidavit.vault.rows import HeaderRow, Row, RowFile

if TYPE_CHECKING:
    from affidavit.vault.pgstore import PgStore

STORE_ENV = "AFFIDAVIT_STORE"
POINTER_NAME = "store.url"
SCHEMES = ("postgresql", "postgres")
_POINTER_LIMIT = 4096


class RecordStore(Protocol):
    """The row I/O a vault needs; every method but ``close`` raises only AffidavitErrors."""

    where: str  # what messages call it: a file path, or the database URL (no password)

    def read(self) -> AbstractContextManager[object]:
        """One consistent snapshot for several queries."""

    def write(self) -> AbstractContextManager[object]:
        """One write transaction, serialised against every other writer, all or nothing."""

    def init_schema(
        self,
        vault_id: bytes,
        anchor: bytes,
        slot_bodies: Sequence[bytes],
        entries: Sequence[bytes],
        rows: Sequence[Row] = (),
    ) -> None:
        """Tables, header, key slots, audit entries 1.. and rows in one transaction."""

    def header(self) -> HeaderRow:
        """The header row (vault id and sealed anchor)."""

    def set_anchor(self, anchor: bytes) -> None:
        """Replace the sealed anchor (inside the write that moved the log)."""

    def slots(self) -> list[tuple[int, bytes]]:
        """Every key slot as ``(number, body)``."""

    def replace_slots(self, bodies: Sequence[bytes]) -> None:
        """Swap the whole slot table (inside a write)."""

    def rows_since(self, seq: int) -> list[Row]:
        """Record rows written after ``seq``, oldest first."""

    def all_rows(self) -> list[Row]:
        """Every record row, oldest first."""

    def versions(self) -> list[tuple[str, int, int]]:
        """Every record row's ``(id, seq, state)`` in no particular order, without its
        ciphertext (what a vault opened from its sealed snapshot checks the rows against)."""

    def row(self, rid: str) -> Row | None:
        """One record row by id."""

    def put_row(self, row: Row) -> bool:
        """Insert or replace a record row; True when the id is new."""

    def append_audit(self, n: int, blob: bytes) -> None:
        """Append one sealed audit entry."""

    def audit_entries(self, after: int = 0) -> Iterator[tuple[int, bytes]]:
        """The sealed audit entries after number ``after`` (all of them by default), in order."""

    def data_version(self) -> int:
        """A number that changes when another client committed: the cheap "anything new?"."""

    def checkpoint(self) -> bool:
        """Drop freed bytes the engine still keeps (shred); True when done."""

    def quick_check(self) -> str | None:
        """The engine's own structural check; None when sound."""

    def size_on_disk(self) -> int:
        """Bytes the vault's rows take."""

    def discard(self) -> None:
        """Undo a create whose first transaction failed (close, remove what it made)."""

    def close(self) -> None:
        """Close the connection."""


def is_url(text: str) -> bool:
    """True for a PostgreSQL connection URL (the only kind of remote store)."""
    return text.split(":", 1)[0].lower() in SCHEMES


def check_url(url: str) -> str:
    """The URL itself when it can name a team vault; InputError (saying why) otherwise.

    A password in the URL is refused wherever the URL came from: it would sit in argv (any
    user's ``ps``), in shell history and in ``store.url``. libpq reads it from the password
    file or the environment instead.
    """
    try:
        parts = urlsplit(url)
    except ValueError:
        raise InputError(
            "the store URL is malformed", "give postgresql://[user@]host[:port]/db"
        ) from None
    if parts.scheme not in SCHEMES:
        raise InputError(
            f"{redact(url)} is not a PostgreSQL URL", "give postgresql://[user@]host[:port]/db"
        )
    if parts.password is not None or "password=" in parts.query:
        raise InputError(
            "the store URL carries a password; it would be visible in the process list and "
            "saved in store.url",
            "remove it and put it in ~/.pgpass (or PGPASSFILE), or set PGPASSWORD",
        )
    return url


def redact(url: str) -> str:
    """The URL as messages show it: any password replaced (before check_url refused it)."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    host = parts.netloc.rsplit("@", 1)[1]
    return parts._replace(netloc=f"{parts.username}:***@{host}").geturl()


def pointer(directory: Path) -> str | None:
    """The team vault URL ``directory`` points at; None for a file vault or no vault."""
    path = Path(directory) / POINTER_NAME
    try:
        with path.open("rb") as fh:
            raw = fh.read(_POINTER_LIMIT)
    except FileNotFoundError:
        return None
    try:
        return check_url(raw.decode().strip())
    except (UnicodeError, InputError):
        raise IntegrityError(
            f"{path} does not hold a store URL", "run `affidavit init --store` again"
        ) from None


def attach(directory: Path, url: str) -> None:
    """Make ``directory`` point at the team vault ``url`` (0600, written atomically)."""
    ensure_private_dir(Path(directory))
    write_atomic(Path(directory) / POINTER_NAME, (check_url(url) + "\n").encode(), SECRET_FILE_MODE)


def detach(directory: Path) -> None:
    """Remove the pointer ``attach`` wrote (a join that did not unlock)."""
    (Path(directory) / POINTER_NAME).unlink(missing_ok=True)


def refuse_existing(directory: Path) -> None:
    """ConflictError when ``directory`` already holds a vault of either kind."""
    if (Path(directory) / POINTER_NAME).exists():
        raise ConflictError(
            f"{directory} already points at a team vault",
            "use it, or choose another directory with AFFIDAVIT_VAULT",
        )
    RowFile.refuse_existing(directory)


def open_store(directory: Path) -> RecordStore:
    """The store of the vault in ``directory``: its team database, else its SQLite file."""
    url = pointer(directory)
    if url is None:
        return RowFile.open(directory)
    return _pg().open(url)


def create_store(directory: Path, url: str | None) -> RecordStore:
    """A new, empty store: a SQLite file in ``directory``, or the empty database at ``url``."""
    if url is None:
        return RowFile.create(directory)
    refuse_existing(directory)
    return new_database(url)


def new_database(url: str) -> RecordStore:
    """The empty database at ``url`` as a new store (a migration's target)."""
    return _pg().create(check_url(url))


def existing_target(target: str) -> RecordStore | None:
    """The vault already at a migration's target (a database URL or a directory), if any:
    an earlier copy that was not finished, or a copy of a team's database."""
    if is_url(target):
        return _pg().open(target) if holds_vault(target) else None
    directory = Path(target).expanduser()
    return RowFile.open(directory) if (directory / DB_NAME).is_file() else None


def store_from_env() -> str | None:
    """``AFFIDAVIT_STORE`` when set (checked), else None: where ``init`` puts a new vault."""
    value = os.environ.get(STORE_ENV, "").strip()
    return check_url(value) if value else None


def holds_vault(url: str) -> bool:
    """Whether the database at ``url`` already holds a vault (``init`` then joins it)."""
    return _pg().holds_vault(check_url(url))


def _pg() -> type[PgStore]:
    """The PostgreSQL engine; psycopg is the optional ``team`` extra."""
    try:
        from affidavit.vault.pgstore import PgStore
    except ImportError:
        raise UnsupportedError(
            "a team vault on PostgreSQL needs psycopg 3, which is not installed",
            "pip install 'affidavit[team]'",
        ) from None
    return PgStore
