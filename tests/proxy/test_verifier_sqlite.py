"""The SQLite verifier on real database files: honest statements verified, held-back lies caught.

Each case snapshots, lets a real SQLite connection do (or not do) the backend's work, and asks
for the verdict, as the relay does; the last case runs the real dev server behind the proxy.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path

import anyio
import pytest
from mcp import Client

from affidavit.proxy.verifiers.base import Verdict
from affidavit.proxy.verifiers.sqlite import SQLiteVerifier
from tests.proxy import _verifier_fixtures as fixtures
from tests.proxy._verifier_fixtures import call, dev_command, init_repo, judge, tool_result

V = SQLiteVerifier()


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    repo = init_repo(tmp_path / "repo")
    conn = sqlite3.connect(repo / "data.db")
    conn.execute("CREATE TABLE items (id INTEGER PRIMARY KEY, name TEXT, at TEXT)")
    conn.execute("INSERT INTO items (name) VALUES ('first')")
    conn.commit()
    conn.close()
    return repo


def run(repo: Path, sql: str, db: str = "data.db") -> int:
    """What an honest backend does: the statement in its own transaction; rows changed."""
    conn = sqlite3.connect(repo / db, isolation_level=None)
    try:
        conn.execute("BEGIN IMMEDIATE")
        conn.execute(sql).fetchall()
        changed = conn.total_changes
        conn.execute("COMMIT")
        return changed
    finally:
        conn.close()


def claim(changes: int, db: str = "data.db") -> dict:
    report = {"db": db, "changes": changes, "columns": [], "rows": [], "truncated": False}
    return tool_result(f"{changes} row(s) changed in {db}", report)


def judged(repo: Path, sql: str, act: Callable[[], dict], db: str = "data.db"):
    ctx = call("sqlite_execute", {"db": db, "sql": sql}, backend_command=dev_command(repo))
    return judge(V, ctx, act)


@pytest.mark.parametrize(
    "sql",
    [
        "INSERT INTO items (name) VALUES ('second')",
        "UPDATE items SET name = 'renamed'",
        "UPDATE items SET name = name",  # a change that changes nothing is still one row
        "DELETE FROM items",
        "CREATE TABLE more (x)",
        "CREATE TRIGGER t AFTER INSERT ON items BEGIN UPDATE items SET name = 'x'; END",
    ],
)
def test_honest_statements_are_verified(repo: Path, sql: str) -> None:
    receipt = judged(repo, sql, lambda: claim(run(repo, sql)))
    assert receipt.verdict is Verdict.VERIFIED, receipt.evidence
    assert V.still_holds(call("sqlite_execute", {}), receipt)


def test_a_new_database_file_is_verified(repo: Path) -> None:
    sql = "CREATE TABLE fresh (x)"
    receipt = judged(repo, sql, lambda: claim(run(repo, sql, "new.db"), "new.db"), "new.db")
    assert receipt.verdict is Verdict.VERIFIED, receipt.evidence


INSERT = "INSERT INTO items (name) VALUES ('second')"


@pytest.mark.parametrize(
    ("act", "observed"),
    [
        (lambda repo: claim(1), "exactly as it was before the call"),
        (lambda repo: claim(run(repo, INSERT) + 1), "the reply claims 2"),
        (
            lambda repo: claim(run(repo, "INSERT INTO items (name) VALUES ('third')")),
            "does not hold",
        ),
        (
            lambda repo: claim(run(repo, f"{INSERT.replace('items', 'other')}", "other.db")),
            "exactly as it was",
        ),
    ],
    ids=["nothing written", "count inflated", "other values", "another database"],
)
def test_held_back_lies_are_contradicted(repo: Path, act, observed: str) -> None:
    conn = sqlite3.connect(repo / "other.db")
    conn.execute("CREATE TABLE other (id INTEGER PRIMARY KEY, name TEXT)")
    conn.close()
    receipt = judged(repo, INSERT, lambda: act(repo))
    assert receipt.verdict is Verdict.CONTRADICTED
    assert observed in receipt.evidence[0].observed, receipt.evidence[0].observed


def test_a_statement_that_cannot_succeed_is_contradicted(repo: Path) -> None:
    receipt = judged(repo, "INSERT INTO missing VALUES (1)", lambda: claim(1))
    assert receipt.verdict is Verdict.CONTRADICTED
    assert "no such table: missing" in receipt.evidence[0].observed


def test_the_clock_and_chance_are_not_held_against_a_statement(repo: Path) -> None:
    stamped = "INSERT INTO items (name, at) VALUES ('x', datetime('now'))"

    def other_time() -> dict:  # the backend ran a moment earlier: another timestamp
        return claim(run(repo, stamped.replace("datetime('now')", "'2001-01-01 00:00:00'")))

    assert judged(repo, stamped, other_time).verdict is Verdict.UNCHECKED
    nothing = judged(repo, stamped, lambda: claim(1))
    assert nothing.verdict is Verdict.CONTRADICTED  # the row count does not depend on the clock
    chance = "DELETE FROM items WHERE random() IS NOT NULL"  # chance, as far as text shows
    assert judged(repo, chance, lambda: claim(0)).verdict is Verdict.UNCHECKED


def test_a_default_timestamp_in_the_schema_counts_as_the_clock(repo: Path) -> None:
    run(repo, "CREATE TABLE log (id INTEGER PRIMARY KEY, at TEXT DEFAULT CURRENT_TIMESTAMP)")
    sql = "INSERT INTO log (id) VALUES (1)"

    def earlier() -> dict:
        return claim(run(repo, "INSERT INTO log (id, at) VALUES (1, '2001-01-01 00:00:00')"))

    assert judged(repo, sql, earlier).verdict is Verdict.UNCHECKED


def test_the_rerun_reaches_nothing_but_its_copy(repo: Path, tmp_path: Path) -> None:
    """ATTACH (and VACUUM INTO) would let the re-run write elsewhere: refused, unchecked."""
    target = tmp_path / "escaped.db"
    for sql in (f"ATTACH '{target}' AS x", f"VACUUM INTO '{target}'"):
        receipt = judged(repo, sql, lambda: claim(0))
        assert receipt.verdict is Verdict.UNCHECKED, receipt.evidence
        assert not target.exists()


def test_a_database_outside_the_repository_is_not_judged(repo: Path, tmp_path: Path) -> None:
    ctx = call(
        "sqlite_execute", {"db": "../x.db", "sql": INSERT}, backend_command=dev_command(repo)
    )
    receipt = judge(V, ctx, lambda: claim(1, "../x.db"))
    assert receipt.verdict is Verdict.UNCHECKED
    assert "inside the repository" in receipt.evidence[0].observed


def test_the_dev_server_behind_the_proxy(repo: Path, home: Path) -> None:
    """The official client -> affidavit proxy -> the real dev server: the row count verified,
    with the output-schema conformance as further evidence; a read-only tool with no domain
    verifier gets the shape verdict alone."""
    params = fixtures.proxied(dev_command(repo), [repo], home)
    params.args = ["-m", "affidavit", *params.args[2:]]

    async def session() -> tuple[dict, dict]:
        async with Client(params, read_timeout_seconds=60) as client:  # type: ignore[arg-type]
            await client.list_tools()
            executed = fixtures.wire(
                await client.call_tool("sqlite_execute", {"db": "data.db", "sql": INSERT})
            )
            status = fixtures.wire(await client.call_tool("git_status", {}))
        return executed, status

    executed, status = anyio.run(session)
    assert fixtures.verdict_of(executed) == "verified", executed
    receipt = executed["_meta"]["affidavit/receipt"]
    assert receipt["verifier"] == "sqlite"
    assert any("outputSchema" in e["observed"] for e in receipt["evidence"])
    assert status["_meta"]["affidavit/receipt"]["verifier"] == "output-schema"
    assert fixtures.verdict_of(status) == "verified"
