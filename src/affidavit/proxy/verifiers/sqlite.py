"""SQLite claims: the dev server's ``sqlite_execute`` report ("N row(s) changed in DB").

How: before the call the verifier copies the database as it is (SQLite's own backup, into
memory); after the reply it runs the same statement on that copy, itself, and compares. The
copy's outcome is what the statement really does to the database the call started from, so:

- the statement fails on it: the claimed success is contradicted;
- it changes another number of rows than the reply's ``changes``: contradicted;
- the database on disk now holds exactly what the copy holds (every table, row and schema
  entry, compared by digest): verified; anything else is contradicted ("nothing was written",
  "another table changed").

What it cannot prove: values that depend on the clock or on chance (``datetime('now')``,
``random()``, a ``DEFAULT CURRENT_TIMESTAMP``, in the statement or in the schema it runs
under). Then only what does not depend on them is compared — the number of changed rows and,
when only the clock is involved, each table's row count — and a match is ``unchecked``.
A database larger than :data:`MAX_DB_BYTES` is not copied (``unchecked``).

The copy is private to the verifier: the statement runs under an authorizer that refuses
``ATTACH``/``DETACH`` (so ``VACUUM INTO`` too) and ``fts3_tokenizer()``, with extensions off and
a deadline, so re-running an agent's SQL can reach nothing but that copy. Only a database inside
the repository the backend was started on is judged.
"""

from __future__ import annotations

import hashlib
import re
import time
import urllib.parse
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from affidavit.proxy.verifiers import replies
from affidavit.proxy.verifiers.base import CallContext, Evidence, Receipt
from affidavit.proxy.verifiers.locate import call_repo, resolve_under, string_arg
from affidavit.proxy.verifiers.overlap import WINDOWS
from affidavit.proxy.verifiers.replies import Judge, ToolCallVerifier, judged_in_window

TOOLS = {"sqlite_execute": frozenset({"db", "sql"})}
MAX_DB_BYTES = 64 * 1024 * 1024
REPLAY_TIMEOUT_S = 20.0
_CLOCK = re.compile(
    r"\b(?:date|time|datetime|julianday|strftime|unixepoch)\s*\(|\bcurrent_(?:date|time|timestamp)\b",
    re.I,
)
_CHANCE = re.compile(r"\b(?:random|randomblob)\s*\(", re.I)

if TYPE_CHECKING:
    import sqlite3


@dataclass(frozen=True)
class _Before:
    """The database the call started from (``image``: its bytes; None: no such file yet)."""

    path: Path | None
    problem: str | None = None
    image: bytes | None = None
    digest: str = ""
    window: int | None = None


@dataclass(frozen=True)
class _State:
    """What a database holds: a digest of its schema and rows, and each table's row count."""

    digest: str
    counts: Mapping[str, int]
    schema: str


def _read_only(path: Path) -> sqlite3.Connection:
    import sqlite3  # imported when a SQLite claim is checked, not at every proxy start

    uri = f"file:{urllib.parse.quote(str(path))}?mode=ro"
    return sqlite3.connect(uri, uri=True, timeout=5.0)


def _state(conn: sqlite3.Connection) -> _State:
    """The schema and every row, order-independent (a table's rows are sorted by their text)."""
    digest = hashlib.sha256()
    entries = conn.execute(
        "SELECT type, name, tbl_name, coalesce(sql, '') FROM sqlite_master ORDER BY type, name"
    ).fetchall()
    schema = "\n".join(row[3] for row in entries)
    digest.update(repr(entries).encode())
    counts = {}
    for kind, name, *_ in entries:
        if kind != "table":
            continue
        quoted = '"' + str(name).replace('"', '""') + '"'
        rows = sorted(repr(row) for row in conn.execute(f"SELECT * FROM {quoted}"))  # noqa: S608
        counts[str(name)] = len(rows)
        digest.update(f"\0{name}\0{len(rows)}\0".encode())
        for row in rows:
            digest.update(row.encode("utf-8", "surrogatepass") + b"\n")
    return _State(digest.hexdigest(), counts, schema)


def _rollback_journal(image: bytes) -> bytes:
    """``image`` marked as a rollback-journal database: an in-memory copy cannot use WAL, and
    a WAL-mode header (file format 2 at bytes 18-19) would not open there."""
    if len(image) >= 20 and image[18:20] == b"\x02\x02":
        return image[:18] + b"\x01\x01" + image[20:]
    return image


def _guard(deadline: float) -> tuple[Any, Any]:
    """An authorizer and a progress handler for running an agent's statement on the copy."""
    import sqlite3

    refused = {sqlite3.SQLITE_ATTACH, sqlite3.SQLITE_DETACH}

    def authorize(action: int, _a: object, arg2: object, *_rest: object) -> int:
        if action in refused:
            return sqlite3.SQLITE_DENY
        if action == sqlite3.SQLITE_FUNCTION and str(arg2).lower() == "fts3_tokenizer":
            return sqlite3.SQLITE_DENY
        return sqlite3.SQLITE_OK

    return authorize, lambda: 1 if time.monotonic() > deadline else 0


@dataclass(frozen=True)
class _Replay:
    """The statement run on the copy: rows it changed and what the copy then holds."""

    changes: int | None
    state: _State | None
    error: str | None = None


def replay(image: bytes | None, sql: str, timeout_s: float = REPLAY_TIMEOUT_S) -> _Replay:
    """Run ``sql`` on a private in-memory copy of ``image`` (None: an empty database) the way
    the dev server runs it (one statement, its own transaction unless it is VACUUM)."""
    import sqlite3

    conn = sqlite3.connect(":memory:", isolation_level=None)
    try:
        if image is not None:
            conn.deserialize(image)
        authorize, progress = _guard(time.monotonic() + timeout_s)
        conn.set_authorizer(authorize)
        conn.set_progress_handler(progress, 10_000)
        own_transaction = not sql.lstrip().upper().startswith("VACUUM")
        try:
            if own_transaction:
                conn.execute("BEGIN IMMEDIATE")
            conn.execute(sql).fetchall()
            changes = conn.total_changes
            if own_transaction:
                conn.execute("COMMIT")
        except (sqlite3.Error, sqlite3.Warning) as exc:
            return _Replay(None, None, f"{type(exc).__name__}: {exc}")
        conn.set_authorizer(None)
        conn.set_progress_handler(None, 0)
        return _Replay(changes, _state(conn))
    finally:
        conn.close()


class SQLiteVerifier(ToolCallVerifier):
    """Re-runs ``sqlite_execute`` on a copy of the database it started from and compares."""

    name = "sqlite"
    tools = TOOLS

    @staticmethod
    def well_formed(tool: str, args: Mapping[str, Any]) -> bool:
        return isinstance(args.get("db"), str) and isinstance(args.get("sql"), str)

    def snapshot(self, ctx: CallContext) -> _Before:
        repo = call_repo(ctx)
        db = string_arg(ctx.arguments, "db") or ""
        path = resolve_under(db, [repo]) if repo is not None else None
        if path is None:
            return _Before(None, "the database cannot be placed inside the repository")
        window = WINDOWS.begin([str(path)])
        limit = int(ctx.settings.get("sqlite_max_bytes", MAX_DB_BYTES))
        if not path.exists():
            return _Before(path, window=window)
        if path.stat().st_size > limit:
            return _Before(path, f"the database is larger than {limit} bytes", window=window)
        import sqlite3

        try:
            source = _read_only(path)
            try:
                image = _rollback_journal(source.serialize())
                digest = _state(source).digest
            finally:
                source.close()
        except sqlite3.Error as exc:
            return _Before(path, f"the database could not be read ({exc})", window=window)
        return _Before(path, image=image, digest=digest, window=window)

    def verify(self, ctx: CallContext, before: Any, result: Mapping[str, Any]) -> Receipt:
        window = before.window if isinstance(before, _Before) else None
        return judged_in_window(window, lambda: self._judge(ctx, before, result))

    def _judge(self, ctx: CallContext, before: Any, result: Mapping[str, Any]) -> Receipt:
        db = string_arg(ctx.arguments, "db")
        reported = replies.structured(result)
        claimed = reported.get("changes") if reported is not None else None
        judge = Judge(self.name, f"changed {claimed} row(s) in {db}")
        if replies.is_error(result):
            return replies.backend_failed(judge, ctx, result)
        if not isinstance(before, _Before) or before.path is None or before.problem:
            why = before.problem if isinstance(before, _Before) else "no snapshot"
            return judge.unchecked(f"the database could not be re-derived: {why}", str(db))
        where = str(before.path)
        if not isinstance(claimed, int) or isinstance(claimed, bool):
            return judge.unchecked("the reply carries no structured row count", where)
        sql = str(ctx.arguments["sql"])
        again = replay(
            before.image, sql, float(ctx.settings.get("sqlite_timeout_s", REPLAY_TIMEOUT_S))
        )
        if again.error is not None:
            if any(word in again.error for word in ("interrupted", "authoriz")):  # our guard's
                return judge.unchecked(
                    f"the statement could not be run again ({again.error})", where
                )
            return judge.contradicted(
                Evidence(
                    "run on the database as it was before the call, the statement fails: "
                    + again.error,
                    where,
                )
            )
        assert again.state is not None and again.changes is not None
        chance = _CHANCE.search(sql + "\n" + again.state.schema) is not None
        if claimed != again.changes and not chance:
            return judge.contradicted(
                Evidence(
                    f"the statement changes {again.changes} row(s) of the database as it was "
                    f"before the call; the reply claims {claimed}",
                    where,
                    details={"rerun_changes": again.changes},
                )
            )
        return self._compare(judge, before, sql, again.state, where)

    def _compare(
        self, judge: Judge, before: _Before, sql: str, expected: _State, where: str
    ) -> Receipt:
        import sqlite3

        try:
            conn = _read_only(before.path) if before.path and before.path.exists() else None
        except sqlite3.Error as exc:
            return judge.unchecked(f"the database could not be read after the call ({exc})", where)
        if conn is None:
            return judge.contradicted(Evidence("the database file does not exist", where))
        try:
            actual = _state(conn)
        finally:
            conn.close()
        if actual.digest == expected.digest:
            return judge.verified(
                Evidence(
                    "the database holds exactly what the statement produces when run again on "
                    "its state before the call",
                    where,
                    details={"digest": actual.digest},
                ),
                vouched={"db": where, "digest": actual.digest},
            )
        text = sql + "\n" + expected.schema
        if _CHANCE.search(text) or (_CLOCK.search(text) and actual.counts == expected.counts):
            return judge.unchecked(
                "the statement or its schema uses the clock or chance, so its values (and, with "
                "chance, its row count) cannot be re-derived",
                where,
            )
        nothing = actual.digest == before.digest
        what = (
            "the database is exactly as it was before the call"
            if nothing
            else "the database does not hold what the statement produces"
        )
        return judge.contradicted(
            Evidence(
                what,
                where,
                details={"rows_now": dict(actual.counts), "rows_expected": dict(expected.counts)},
            )
        )

    def still_holds(self, ctx: CallContext, receipt: Receipt) -> bool:
        path, digest = receipt.vouched.get("db"), receipt.vouched.get("digest")
        if not isinstance(path, str) or not Path(path).exists():
            return False
        conn = _read_only(Path(path))
        try:
            return _state(conn).digest == digest
        finally:
            conn.close()
