"""``sqlite_query`` / ``sqlite_execute`` on database files inside the repository.

``sqlite_query`` opens the file with ``mode=ro`` and an authorizer that allows only reads, so
a write is refused by SQLite itself, not by guessing at SQL text. Both tools deny ``ATTACH``
and ``DETACH`` (which also covers ``VACUUM INTO``): either would let SQL reach a file outside
the repository, and ``fts3_tokenizer()``, which hands out (or, given two arguments, installs)
a native function pointer. ``sqlite_execute`` runs one statement in one transaction: it is
stored whole or not at all.

An agent's SQL is bounded the way a CI step is (docs/adr/0036-devserver-sqlite-bounds.md):
every statement has a deadline (``--sql-timeout``) and stops as soon as the client cancels the
call or goes away, both through SQLite's progress handler; a single value may not exceed
:data:`MAX_VALUE_BYTES`, and a reply carries at most :data:`MAX_REPLY_BYTES` of rows (whole rows,
marked ``truncated``).
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
import urllib.parse
from pathlib import Path
from typing import Any

from affidavit.core.errors import (
    AffidavitError,
    InputError,
    Interrupted,
    NotFoundError,
    PolicyError,
)
from affidavit.servers.dev import confine

MAX_ROWS = 1000
MAX_SQL_CHARS = 100_000
BUSY_TIMEOUT_S = 10.0
MAX_REPLY_BYTES = 1024 * 1024
"""The rows of one reply, as JSON; they go out twice (text and structuredContent)."""
MAX_VALUE_BYTES = 16 * 1024 * 1024
"""SQLite's own bound on one string or blob: the memory a single value can take."""
PROGRESS_STEPS = 10_000
"""SQLite virtual-machine steps between two looks at the deadline and the cancel flag."""
_READ_ACTIONS = {
    sqlite3.SQLITE_SELECT,
    sqlite3.SQLITE_READ,
    sqlite3.SQLITE_FUNCTION,
    sqlite3.SQLITE_RECURSIVE,
    sqlite3.SQLITE_PRAGMA,
}
_ESCAPE_ACTIONS = {sqlite3.SQLITE_ATTACH, sqlite3.SQLITE_DETACH}
_REFUSED_FUNCTIONS = {"fts3_tokenizer"}
_SHRINK_HINT = "select fewer or smaller columns: length(x), substr(x, 1, 1000), a LIMIT"


class _Guard:
    """What a statement may do and for how long; it remembers why it said no, so the error
    can say it too."""

    def __init__(self, read_only: bool, timeout_s: float, stop: threading.Event) -> None:
        self.read_only = read_only
        self.timeout_s = timeout_s
        self.stop = stop
        self.deadline = time.monotonic() + timeout_s
        self.refused: AffidavitError | None = None

    def authorize(self, action: int, _arg1: object, arg2: object, *_rest: object) -> int:
        if action in _ESCAPE_ACTIONS:
            return self._deny(
                PolicyError(
                    "ATTACH, DETACH and VACUUM INTO are not allowed (they reach other files)"
                )
            )
        if action == sqlite3.SQLITE_FUNCTION and str(arg2).lower() in _REFUSED_FUNCTIONS:
            return self._deny(PolicyError(f"{arg2}() is not allowed (it exposes native pointers)"))
        if self.read_only and action not in _READ_ACTIONS:
            return self._deny(
                PolicyError("sqlite_query is read-only; use sqlite_execute to change data")
            )
        return sqlite3.SQLITE_OK

    def progress(self) -> int:
        """Non-zero stops the statement: the call was cancelled, or its time is up."""
        if self.stop.is_set():
            self.refused = Interrupted("the call was cancelled; the statement was stopped")
            return 1
        if time.monotonic() > self.deadline:
            self.refused = InputError(
                f"the statement ran longer than {self.timeout_s:g} s and was stopped",
                "add a LIMIT or a narrower WHERE, or start the server with a longer --sql-timeout",
            )
            return 1
        return 0

    def _deny(self, reason: AffidavitError) -> int:
        self.refused = reason
        return sqlite3.SQLITE_DENY

    def failure(self, exc: sqlite3.Error) -> AffidavitError:
        """The one error a failed statement is reported as."""
        if self.refused is not None:
            return self.refused
        if isinstance(exc, sqlite3.DataError):
            return InputError(f"a value is larger than {MAX_VALUE_BYTES} bytes", _SHRINK_HINT)
        return InputError(f"SQLite refused the statement: {exc}", "check the SQL")


def _connect(target: Path, db: str, guard: _Guard) -> sqlite3.Connection:
    if target.is_dir():
        raise InputError(f"db {db!r} is a directory", "name a database file")
    if guard.read_only and not target.exists():
        raise NotFoundError(f"no database {db!r} in the repository")
    mode = "ro" if guard.read_only else "rwc"
    uri = f"file:{urllib.parse.quote(str(target))}?mode={mode}"
    try:
        conn = sqlite3.connect(uri, uri=True, timeout=BUSY_TIMEOUT_S, isolation_level=None)
    except sqlite3.Error as exc:  # e.g. its folder does not exist: the caller's to fix
        raise InputError(
            f"cannot open database {db!r}: {exc}", "check the path; its folder must exist"
        ) from None
    conn.set_authorizer(guard.authorize)
    conn.set_progress_handler(guard.progress, PROGRESS_STEPS)
    conn.setlimit(sqlite3.SQLITE_LIMIT_LENGTH, MAX_VALUE_BYTES)
    return conn


def _check_sql(sql: str) -> str:
    if not isinstance(sql, str) or not sql.strip():
        raise InputError("sql must be a non-empty string")
    if len(sql) > MAX_SQL_CHARS:
        raise InputError(f"sql is longer than {MAX_SQL_CHARS} characters")
    return sql


def _rows(cursor: sqlite3.Cursor) -> dict[str, Any]:
    """At most ``MAX_ROWS`` whole rows and ``MAX_REPLY_BYTES`` of them, fetched one by one so
    that nothing past the bounds is ever turned into JSON."""
    columns = [d[0] for d in cursor.description or ()]
    rows: list[list[Any]] = []
    size = 0
    cut: str | None = None
    for row in iter(cursor.fetchone, None):
        if len(rows) == MAX_ROWS:
            cut = f"only the first {MAX_ROWS} rows are shown"
            break
        size += _json_size(row, MAX_REPLY_BYTES - size)
        if size > MAX_REPLY_BYTES:
            if not rows:
                raise InputError(
                    f"the first row alone is larger than the {MAX_REPLY_BYTES}-byte reply limit",
                    _SHRINK_HINT,
                )
            cut = f"only the first {len(rows)} rows fit the {MAX_REPLY_BYTES}-byte reply limit"
            break
        rows.append([_json_value(v) for v in row])
    cursor.close()
    result: dict[str, Any] = {"columns": columns, "rows": rows, "truncated": cut is not None}
    if cut is not None:
        result["truncated_because"] = cut
    return result


def _json_value(value: Any) -> Any:
    return {"blob_hex": value.hex()} if isinstance(value, bytes) else value


def _json_size(row: tuple[Any, ...], room: int) -> int:
    """The size of ``row`` as JSON, or ``room + 1`` as soon as it is clear it will not fit
    (so a huge value is measured, never serialized)."""
    total = 2
    for value in row:
        if isinstance(value, bytes):
            total += 2 * len(value) + len('{"blob_hex": ""}, ')
        elif isinstance(value, str) and len(value) > room:
            return room + 1
        else:
            total += len(json.dumps(value, ensure_ascii=False).encode("utf-8")) + 2
        if total > room:
            return room + 1
    return total


def query(
    root: Path, db: str, sql: str, *, timeout_s: float, stop: threading.Event
) -> dict[str, Any]:
    """Run a read-only statement; the rows come back within the reply bounds."""
    _check_sql(sql)
    target = confine.repo_path(root, db, what="db")
    guard = _Guard(read_only=True, timeout_s=timeout_s, stop=stop)
    conn = _connect(target, db, guard)
    try:
        result = _rows(conn.execute(sql))
    except sqlite3.Error as exc:
        raise guard.failure(exc) from None
    finally:
        conn.close()
    return {"db": confine.relative(root, target), **result}


def execute(
    root: Path, db: str, sql: str, *, timeout_s: float, stop: threading.Event
) -> dict[str, Any]:
    """Run one statement that may change the database, inside one transaction.

    A database file this call created is removed again when the statement fails, so a
    failed call leaves the repository as it found it.
    """
    _check_sql(sql)
    target = confine.repo_path(root, db, what="db")
    existed = target.exists()
    guard = _Guard(read_only=False, timeout_s=timeout_s, stop=stop)
    conn = _connect(target, db, guard)
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
            conn.set_progress_handler(None, 0)  # the rollback itself must not be stopped
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise
    except (sqlite3.Error, InputError) as exc:
        conn.close()
        if not existed:
            for leftover in (target, target.with_name(target.name + "-journal")):
                leftover.unlink(missing_ok=True)
        if isinstance(exc, InputError):
            raise
        raise guard.failure(exc) from None
    conn.close()
    return {"db": confine.relative(root, target), "changes": changed, **result}
