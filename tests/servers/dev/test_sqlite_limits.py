"""Attacks on ``sqlite_query`` / ``sqlite_execute`` that used to wedge or flood the server:
a statement that never ends (stopped by its deadline, by the client's cancel, or by the client
going away), replies that would run to hundreds of megabytes, and ``fts3_tokenizer()``, which
hands out a native pointer. Real server subprocesses, the official SDK client, real SQLite."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import anyio
import pytest

from affidavit.servers.dev import sqlite_tools
from tests.servers.dev.conftest import eventually
from tests.servers.rawwire import RawServer
from tests.support import GIT_IDENTITY, cli_env

HANG_GUARD_S = 60.0
"""A call that has not come back by then never will (a hang detector, not a measurement)."""
RUNAWAY = (
    "WITH RECURSIVE c(x) AS (SELECT n FROM seed UNION ALL SELECT x + 1 FROM c) "
    "SELECT count(*) FROM c"
)
"""Reads a table (so it holds a read lock while it runs) and never finishes."""
NO_DEADLINE = ["--sql-timeout", "3600"]
"""So that only the mechanism under test (cancel, going away) can stop the runaway query."""


@pytest.fixture
def db(repo: Path) -> Path:
    path = repo / "app.db"
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE seed(n INTEGER)")
        conn.execute("INSERT INTO seed VALUES (1)")
    conn.close()
    return path


def running(db: Path) -> bool:
    """Whether a statement is still running on ``db``: it holds a lock an exclusive
    transaction cannot get past."""
    conn = sqlite3.connect(db, timeout=0, isolation_level=None)
    try:
        conn.execute("BEGIN EXCLUSIVE")
        conn.execute("ROLLBACK")
        return False
    except sqlite3.OperationalError:
        return True
    finally:
        conn.close()


def text(result: Any) -> str:
    return str(result.content[0].text)


def test_a_runaway_statement_stops_at_the_deadline(repo: Path, db: Path, client_for) -> None:
    async def scenario() -> None:
        async with client_for(repo, server_args=["--sql-timeout", "1"]) as client:
            for tool in ("sqlite_query", "sqlite_execute"):
                with anyio.fail_after(HANG_GUARD_S):
                    result = await client.call_tool(tool, {"db": "app.db", "sql": RUNAWAY})
                assert result.is_error, tool
                assert "ran longer than 1 s" in text(result) and "LIMIT" in text(result)
            ok = await client.call_tool(
                "sqlite_query", {"db": "app.db", "sql": "SELECT n FROM seed"}
            )
            assert ok.structured_content["rows"] == [[1]]

    anyio.run(scenario)
    assert not running(db)


@pytest.mark.parametrize("tool", ["sqlite_query", "sqlite_execute"])
def test_cancel_stops_a_running_statement(repo: Path, db: Path, client_for, tool: str) -> None:
    async def scenario() -> None:
        async with client_for(repo, server_args=NO_DEADLINE) as client:
            async with anyio.create_task_group() as group:
                group.start_soon(client.call_tool, tool, {"db": "app.db", "sql": RUNAWAY})
                await eventually(lambda: running(db), HANG_GUARD_S)
                group.cancel_scope.cancel()  # the SDK client sends notifications/cancelled
            await eventually(lambda: not running(db), HANG_GUARD_S)
            with anyio.fail_after(HANG_GUARD_S):  # the one-call-at-a-time lock is free again
                status = await client.call_tool("git_status", {})
            assert not status.is_error

    anyio.run(scenario)


def test_the_server_exits_when_the_client_goes_away_mid_statement(
    repo: Path, db: Path, home: Path
) -> None:
    server = RawServer(
        ["devserver", "--repo-path", str(repo), *NO_DEADLINE], cli_env(home, GIT_IDENTITY)
    )
    try:
        server.open_session()
        server.call_tool(2, "sqlite_query", {"db": "app.db", "sql": RUNAWAY})
        anyio.run(eventually, lambda: running(db), HANG_GUARD_S)
        code, stderr = server.close(wait=HANG_GUARD_S)
    finally:
        if server.process.poll() is None:
            server.process.kill()
    assert code == 0 and "Traceback" not in stderr, stderr
    assert not running(db)


def reply_bytes(result: Any) -> int:
    return len(json.dumps(result.model_dump(mode="json", by_alias=True)))


def test_replies_are_bounded(repo: Path, db: Path, client_for) -> None:
    four_blobs = "SELECT " + ", ".join(f"zeroblob(3000000) AS b{i}" for i in range(4))
    many_rows = (
        "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c LIMIT 200) "
        "SELECT x, zeroblob(100000) FROM c"
    )
    bound = 2 * sqlite_tools.MAX_REPLY_BYTES + 64 * 1024  # rows go out as text and as JSON

    async def scenario() -> None:
        async with client_for(repo) as client:
            wide = await client.call_tool("sqlite_query", {"db": "app.db", "sql": four_blobs})
            assert reply_bytes(wide) <= bound
            assert wide.is_error and "reply limit" in text(wide) and "substr" in text(wide)

            tall = await client.call_tool("sqlite_query", {"db": "app.db", "sql": many_rows})
            assert reply_bytes(tall) <= bound
            shown = tall.structured_content
            assert shown["truncated"] is True and 0 < len(shown["rows"]) < 200
            assert [row[0] for row in shown["rows"]] == list(range(1, len(shown["rows"]) + 1))
            assert "reply limit" in text(tall)

            written = await client.call_tool(
                "sqlite_execute", {"db": "app.db", "sql": four_blobs.replace("SELECT", "SELECT 1,")}
            )
            assert reply_bytes(written) <= bound and written.is_error

    anyio.run(scenario)


def test_fts3_tokenizer_is_refused(repo: Path, db: Path, client_for) -> None:
    """With one argument it returns the address of a native tokenizer (an ASLR leak); with
    two it would install one from a pointer."""

    async def scenario() -> None:
        async with client_for(repo) as client:
            for tool, sql in (
                ("sqlite_query", "SELECT hex(fts3_tokenizer('simple'))"),
                ("sqlite_query", "SELECT hex(FTS3_Tokenizer('porter'))"),
                ("sqlite_execute", "SELECT hex(fts3_tokenizer('simple'))"),
            ):
                result = await client.call_tool(tool, {"db": "app.db", "sql": sql})
                assert result.is_error, (tool, sql, text(result))
                assert "fts3_tokenizer() is not allowed" in text(result)

    anyio.run(scenario)
