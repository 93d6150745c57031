"""``sqlite_query`` / ``sqlite_execute`` on database files inside the repository.

``sqlite_query`` opens the file with ``mode=ro`` and an authorizer that allows only reads, so
a write is refused by SQLite itself, not by guessing at SQL text. Both tools deny ``ATTACH``
and ``DETACH`` (which also covers ``VACUUM INTO``): either would let SQL reach a file outside
the repository. ``sqlite_execute`` runs one statement in one transaction: it is stored whole
or not at all.
"""

from __future__ import annotations

import sqlite3
import urllib.parse
from pathlib import Path
from typing import Any

from affidavit.core.errors import InputError, NotFoundError, PolicyError
from affidavit.servers.dev import confine

MAX_ROWS = 1000
MAX_SQL_CHARS = 100_000
BUSY_TIMEOUT_S = 10.0
_READ_ACTIONS = {
    sqlite3.SQLITE_SELECT,
    sqlite3.SQLITE_READ,
    sqlite3.SQLITE_FUNCTION,
    sqlite3.SQLITE_RECURSIVE,
    sqlite3.SQLITE_PRAGMA,
}
_ESCAPE_ACTIONS = {sqlite3.SQLITE_ATTACH, sqlite3.SQLITE_DETACH}


class _Guard:
    """An authorizer that remembers why it said no, so the error can say it too."""

    def __init__(self, read_only: bool) -> None:
        self.read_only = read_only
        self.refused: str | None = None

    def __call__(self, action: int, *_args: object) -> int:
        if action in _ESCAPE_ACTIONS:
            self.refused = "ATTACH, DETACH and VACUUM INTO are not allowed (they reach other files)"
            return sqlite3.SQLITE_DENY
        if self.read_only and action not in _READ_ACTIONS:
            self.refused = "sqlite_query is read-only; use sqlite_execute to change data"
            return sqlite3.SQLITE_DENY
        return sqlite3.SQLITE_OK


def _connect(
    target: Path, root: Path, db: str, *, read_only: bool
) -> tuple[str, sqlite3.Connection, _Guard]:
    if target.is_dir():
        raise InputError(f"db {db!r} is a directory", "name a database file")
    if read_only and not target.exists():
        raise NotFoundError(f"no database {db!r} in the repository")
    mode = "ro" if read_only else "rwc"
    uri = f"file:{urllib.parse.quote(str(target))}?mode={mode}"
    conn = sqlite3.connect(uri, uri=True, timeout=BUSY_TIMEOUT_S, isolation_level=None)
    guard = _Guard(read_only)
    conn.set_authorizer(guard)
    return confine.relative(root, target), conn, guard


def _check_sql(sql: str) -> str:
    if not isinstance(sql, str) or not sql.strip():
        raise InputError("sql must be a non-empty string")
    if len(sql) > MAX_SQL_CHARS:
        raise InputError(f"sql is longer than {MAX_SQL_CHARS} characters")
    return sql


def _rows(cursor: sqlite3.Cursor) -> dict[str, Any]:
    columns = [d[0] for d in cursor.description or ()]
    rows = cursor.fetchmany(MAX_ROWS + 1)
    truncated = len(rows) > MAX_ROWS
    return {
        "columns": columns,
        "rows": [[_json_value(v) for v in row] for row in rows[:MAX_ROWS]],
        "truncated": truncated,
    }


def _json_value(value: Any) -> Any:
    if isinstance(value, bytes):
        return {"blob_hex": value.hex()}
    return value


def _fail(exc: sqlite3.Error, guard: _Guard) -> PolicyError | InputError:
    if guard.refused is not None:
        return PolicyError(guard.refused)
    return InputError(f"SQLite refused the statement: {exc}", "check the SQL")


def query(root: Path, db: str, sql: str) -> dict[str, Any]:
    """Run a read-only statement; at most ``MAX_ROWS`` rows come back."""
    _check_sql(sql)
    target = confine.repo_path(root, db, what="db")
    rel, conn, guard = _connect(target, root, db, read_only=True)
    try:
        result = _rows(conn.execute(sql))
    except sqlite3.Error as exc:
        raise _fail(exc, guard) from None
    finally:
        conn.close()
    return {"db": rel, **result}


def execute(root: Path, db: str, sql: str) -> dict[str, Any]:
    """Run one statement that may change the database, inside one transaction.

    A database file this call created is removed again when the statement fails, so a
    failed call leaves the repository as it found it.
    """
    _check_sql(sql)
    target = confine.repo_path(root, db, what="db")
    existed = target.exists()
    rel, conn, guard = _connect(target, root, db, read_only=False)
    # VACUUM cannot run inside a transaction; it is atomic on its own.
    own_transaction = not sql.lstrip().upper().startswith("VACUUM")
    try:
        if own_transaction:
            conn.execute("BEGIN IMMEDIATE")
        try:
            cursor = conn.execute(sql)
            result = _rows(cursor)
            changed = conn.total_changes
            if own_transaction:
                conn.execute("COMMIT")
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise
    except sqlite3.Error as exc:
        conn.close()
        if not existed:
            for leftover in (target, target.with_name(target.name + "-journal")):
                leftover.unlink(missing_ok=True)
        raise _fail(exc, guard) from None
    conn.close()
    return {"db": rel, "changes": changed, **result}
