"""The team vault's fault suite: real ``affidavit serve`` processes over a real PostgreSQL
cluster of each test's own, which is restarted, frozen (the postmaster and every backend
SIGSTOPped), has a server killed -9 under it, or has a row rolled back behind its back.

Each test asserts that nothing acknowledged is lost (every fact a server answered as stored
is found afterwards by a fresh client) and that the service recovers by itself (no server is
restarted for it). While the database is away, every answer is a clear JSON-RPC error or
``isError`` line naming the database: never a bare 500, never a traceback, never a hang, and
the server logs one line per change of the database's state, not one per request.
Conditions are awaited with generous deadlines; nothing asserts on time. A writer killed -9
mid-transaction on PostgreSQL is ``tests/vault/test_crash.py`` (``[postgresql]``).
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import httpx2
import psycopg
import pytest

from affidavit.vault import Vault
from tests.pg import Cluster, pg_bin, running_cluster
from tests.servers.http_support import JSON_HEADERS, HttpServer, http_server
from tests.servers.memory.conftest import LIGHT, VaultSetup, body, error_text, run
from tests.support import mcp_client, run_cli
from tests.vault.conftest import TEST_PASSPHRASE, create_test_vault

SERVE_HTTP = ["serve", "--http", "127.0.0.1:0"]
#: How long one database call may take before it fails: short, so a freeze costs little.
TIMEOUT_ENV = {"AFFIDAVIT_DB_TIMEOUT": "2"}
#: The most any awaited condition may take before the test gives up (generous on purpose).
DEADLINE = 120.0
ROW = "SELECT rid, seq, state, wkey, blob FROM affidavit.records WHERE rid = %s"
RESTORE = "UPDATE affidavit.records SET seq = %s, state = %s, wkey = %s, blob = %s WHERE rid = %s"


@dataclass
class Team:
    """A throwaway cluster, the team vault's database in it, and a member's vault directory."""

    cluster: Cluster
    url: str
    setup: VaultSetup

    def env(self) -> dict[str, str]:
        return self.setup.env(**LIGHT, **TIMEOUT_ENV)


@pytest.fixture
def team(home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Team]:
    """A cluster of this test's own (the faults would disturb others' databases)."""
    if pg_bin() is None:
        pytest.skip("PostgreSQL is not installed (apt-get install postgresql)")
    runtime = tmp_path / "run"
    runtime.mkdir(mode=0o700)
    monkeypatch.setenv("AFFIDAVIT_RUNTIME_DIR", str(runtime))
    with running_cluster() as cluster:
        url = cluster.new_database()
        create_test_vault(tmp_path / "vault", store=url).close()
        yield Team(cluster, url, VaultSetup(tmp_path / "vault", runtime, home))


def _fact(text: str) -> dict[str, Any]:
    return {"text": text, "source": "fault suite"}


def _store_call(text: str) -> dict[str, Any]:
    params = {"name": "memory_store", "arguments": _fact(text)}
    return {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params}


def _until_acked(writer: Writer, count: int, what: str) -> None:
    _until(lambda: len(writer.acked) >= count, what)


def _until(condition: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + DEADLINE
    while not condition():
        assert time.monotonic() < deadline, f"gave up waiting: {what}"
        time.sleep(0.05)


@dataclass
class Answer:
    """One HTTP answer the writer got: status, JSON body (None if not JSON), when it came."""

    status: int
    body: dict[str, Any] | None
    phase: str

    def failure(self) -> str | None:
        """The error line of a JSON-RPC error or an isError result; None for a success."""
        if self.body is None:
            return f"HTTP {self.status} without a JSON body"
        if "error" in self.body:
            return str(self.body["error"]["message"])
        result = self.body.get("result", {})
        return str(result["content"][0]["text"]) if result.get("isError") else None


@dataclass
class Writer:
    """Stores facts over HTTP, one after another, until stopped; keeps every answer and the
    id of each fact the server acknowledged. ``phase`` labels answers (e.g. "away")."""

    url: str
    token: str
    phase: str = "up"
    answers: list[Answer] = field(default_factory=list)
    acked: list[str] = field(default_factory=list)
    _stop: threading.Event = field(default_factory=threading.Event)

    def run(self) -> None:
        headers = {**JSON_HEADERS, "authorization": f"Bearer {self.token}"}
        with httpx2.Client(timeout=DEADLINE) as http:
            number = 0
            while not self._stop.is_set():
                number += 1
                phase = self.phase
                try:
                    sent = json.dumps(_store_call(f"fault suite fact {number}"))
                    reply = http.post(self.url, content=sent, headers=headers)
                except httpx2.TransportError:  # the server was killed: nothing acknowledged
                    if self._stop.wait(0.05):
                        return
                    continue
                try:
                    parsed = reply.json()
                except ValueError:
                    parsed = None
                answer = Answer(reply.status_code, parsed, phase)
                self.answers.append(answer)
                if answer.failure() is None and parsed is not None:
                    self.acked.append(parsed["result"]["structuredContent"]["id"])
                self._stop.wait(0.05)  # a steady writer, well under the per-caller rate limit

    def count(self, phase: str) -> int:
        return sum(1 for a in self.answers if a.phase == phase)

    def stop(self) -> None:
        self._stop.set()


@dataclass
class Running:
    writer: Writer
    thread: threading.Thread


def _start(writer: Writer) -> Running:
    thread = threading.Thread(target=writer.run, daemon=True)
    thread.start()
    return Running(writer, thread)


def _finish(running: Running) -> None:
    running.writer.stop()
    running.thread.join(timeout=DEADLINE)
    assert not running.thread.is_alive(), "the writer is stuck in a call"


def _issue(team: Team, caller: str) -> str:
    done = run_cli(["grant", "token", caller], team.setup.home, env=team.setup.env())
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def _all_present(team: Team, acked: list[str]) -> None:
    """A fresh client (a new vault handle, a new connection) holds every acknowledged fact."""
    assert acked
    fresh = Vault.open(team.setup.path, passphrase=TEST_PASSPHRASE)
    try:
        missing = set(acked) - {it.id for it in fresh.items()}
        assert not missing, f"{len(missing)} acknowledged stores lost"
        assert fresh.verify_audit().ok
    finally:
        fresh.close()


def _database_lines(log: str) -> list[str]:
    return [line for line in log.splitlines() if "database" in line]


def _clear_errors(answers: list[Answer]) -> None:
    """Every failed answer is one JSON-RPC line about the database: no 500, no traceback."""
    for answer in answers:
        failure = answer.failure()
        assert answer.status != 500 and answer.body is not None, failure
        if failure is not None:
            assert "database" in failure and "\n" not in failure, failure


@contextlib.contextmanager
def _serving_writer(team: Team, token: str, first: int = 5) -> Iterator[tuple[HttpServer, Writer]]:
    """``serve --http`` with a :class:`Writer` storing through it, from ``first`` stores
    acknowledged until the block ends."""
    with http_server(SERVE_HTTP, team.setup.home, team.env()) as server:
        running = _start(Writer(server.url, token))
        try:
            _until_acked(running.writer, first, "the first stores")
            yield server, running.writer
        finally:
            _finish(running)


def _until_storing_again(writer: Writer, what: str) -> None:
    _until_acked(writer, len(writer.acked) + 5, what)


def test_http_server_rides_out_a_database_restart(team: Team) -> None:
    with _serving_writer(team, _issue(team, "cursor")) as (server, writer):
        team.cluster.stop_server()
        writer.phase = "away"
        _until(lambda: writer.count("away") >= 10, "ten answers while the database is away")
        writer.phase = "back"
        team.cluster.start_server()
        _until_storing_again(writer, "stores again, without a restart")
    away = [a for a in writer.answers if a.phase == "away"]
    _clear_errors(writer.answers)
    assert all(a.failure() is not None for a in away)
    log = server.log()
    assert "Traceback" not in log and len(log.splitlines()) <= 20  # not a line per request
    lines = _database_lines(log)
    # one line per change of the database's state (away, back), not one per request
    assert 1 <= len(lines) <= 4 and "reachable again" in lines[-1], lines
    _all_present(team, writer.acked)


async def _stored(client: Any, text: str) -> str:
    return str(body(await client.call_tool("memory_store", _fact(text)))["id"])


async def _until_stored(client: Any, text: str) -> str:
    """Store ``text`` as soon as the server can (errors meanwhile are expected)."""
    with anyio.fail_after(DEADLINE):
        while True:
            result = await client.call_tool("memory_store", _fact(text))
            if not result.is_error:
                return str(result.structured_content["id"])
            error_text(result)
            await anyio.sleep(0.1)


def test_stdio_server_rides_out_a_database_restart(team: Team) -> None:
    async def scenario() -> None:
        async with mcp_client(["serve"], team.setup.home, env=team.env()) as client:
            acked = [await _stored(client, f"before the restart {i}") for i in range(3)]
            team.cluster.stop_server()
            with anyio.fail_after(DEADLINE):
                away = await client.call_tool("memory_store", _fact("while it is away"))
            assert "database" in error_text(away)
            team.cluster.start_server()
            acked.append(await _until_stored(client, "after the restart"))
            for rid in acked:
                body(await client.call_tool("memory_get", {"id": rid}))
        _all_present(team, acked)

    run(scenario)


def test_a_frozen_database_fails_calls_in_time_then_recovers(team: Team) -> None:
    """SIGSTOP of the whole server: a write waits for the database call's timeout, not
    forever; after SIGCONT the same server stores again by itself."""

    async def scenario() -> None:
        async with mcp_client(["serve"], team.setup.home, env=team.env()) as client:
            acked = [await _stored(client, f"before the freeze {i}") for i in range(3)]
            with team.cluster.frozen():
                for attempt in range(2):  # the call that meets the freeze, then a reconnect
                    with anyio.fail_after(DEADLINE):
                        frozen = await client.call_tool("memory_store", _fact(f"frozen {attempt}"))
                    assert "database" in error_text(frozen)
            acked.append(await _until_stored(client, "after the freeze"))
        _all_present(team, acked)

    run(scenario)


def test_http_writes_through_a_freeze_lose_nothing(team: Team) -> None:
    with _serving_writer(team, _issue(team, "cursor")) as (server, writer):
        with team.cluster.frozen():
            writer.phase = "frozen"
            _until(lambda: writer.count("frozen") >= 3, "answers while frozen")
        writer.phase = "thawed"
        _until_storing_again(writer, "stores again after the freeze")
    _clear_errors(writer.answers)
    assert "Traceback" not in server.log()
    _all_present(team, writer.acked)


def test_a_server_killed_mid_write_loses_nothing_acknowledged(team: Team) -> None:
    """kill -9 of an HTTP server while it stores: its transaction dies with its connection
    (the write lock with it), and the next server serves the same team vault."""
    token = _issue(team, "cursor")
    acked: list[str] = []
    for _ in range(2):
        with _serving_writer(team, token, first=10) as (server, writer):
            os.kill(server.process.pid, signal.SIGKILL)
            server.process.wait(timeout=DEADLINE)
        _clear_errors(writer.answers)
        acked += writer.acked
    _all_present(team, acked)


def test_a_rolled_back_row_is_refused_by_a_fresh_server(team: Team) -> None:
    """The administrator saves a record's row, the record is forgotten, the saved row is put
    back and another write follows: a server started afterwards must not serve it."""

    async def remember_then_forget() -> tuple[str, tuple[Any, ...]]:
        async with mcp_client(["serve"], team.setup.home, env=team.env()) as client:
            ids = [await _stored(client, f"the launch code is heron {i}") for i in range(3)]
            with psycopg.connect(team.url, autocommit=True) as admin:
                saved = admin.execute(ROW, (ids[1],)).fetchone()
            body(await client.call_tool("memory_forget", {"id": ids[1]}))
            with psycopg.connect(team.url, autocommit=True) as admin:
                admin.execute(RESTORE, (*saved[1:], saved[0]))
            await _stored(client, "a later write")
            return ids[1], saved

    async def fresh_reader(victim: str) -> None:
        async with mcp_client(["serve"], team.setup.home, env=team.env()) as client:
            got = await client.call_tool("memory_get", {"id": victim})
            assert "audit" in error_text(got)
            found = await client.call_tool("memory_search", {"query": "launch code heron 1"})
            if not found.is_error:
                assert victim not in json.dumps(found.structured_content)

    victim, _ = anyio.run(remember_then_forget)
    run(lambda: fresh_reader(victim))
