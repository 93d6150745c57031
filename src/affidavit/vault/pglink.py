"""One connection to a team vault's database that outlives the database's bad moments.

A team vault's clients are long-running MCP servers, and the database under them restarts
(an upgrade, a failover), freezes (a stalled disk, a paused VM) or drops connections. So each
store holds its connection through a :class:`PgLink` (ADR 0180):

- every call waits at most ``AFFIDAVIT_DB_TIMEOUT`` seconds (default 30). The server is told
  (``statement_timeout``: a write queued behind a stuck writer's lock gives up cleanly), and the
  client stops waiting one second later on its own, because a frozen server enforces nothing;
  a call cut off that way leaves the connection mid-query, so it is closed;
- a lost connection is reopened on its next use: at once the first time, then no more often
  than a backoff allows (0.5 s doubling to 10 s), with one clear error in between instead of a
  connection attempt per request against a server that is not there;
- the process logs one line when a database becomes unreachable and one when it is back,
  however many connections and requests noticed.

Nothing is retried behind the caller's back: a call that failed reports it (a write that was
not acknowledged may or may not have committed, and the log tells: the next refresh reads it).
"""

from __future__ import annotations

import contextlib
import logging
import math
import os
import threading
import time
from collections.abc import Callable
from typing import Any

import psycopg
from psycopg import errors as pg_errors
from psycopg.abc import RV, PQGen

from affidavit.core.errors import ExternalError, UsageError

TIMEOUT_ENV = "AFFIDAVIT_DB_TIMEOUT"
DEFAULT_TIMEOUT_S = 30.0
#: How much longer than the server's own limit the client waits for its answer to arrive.
GRACE_S = 1.0
FIRST_RETRY_S = 0.5
MAX_RETRY_S = 10.0
_WAIT_INTERVAL_S = 0.1  # psycopg's own: how often a wait wakes to notice Ctrl-C

_log = logging.getLogger(__name__)


def call_timeout() -> float:
    """Seconds one database call may take: ``AFFIDAVIT_DB_TIMEOUT``, else 30."""
    raw = os.environ.get(TIMEOUT_ENV, "").strip()
    if not raw:
        return DEFAULT_TIMEOUT_S
    try:
        value = float(raw)
    except ValueError:
        value = math.nan
    if not 0 < value <= 86_400:
        raise UsageError(
            f"{TIMEOUT_ENV}={raw!r} is not a number of seconds", f"e.g. {TIMEOUT_ENV}=30"
        )
    return value


class TimedConnection(psycopg.Connection[Any]):
    """A psycopg connection on which no wait for the server outlasts :attr:`limit` seconds.

    psycopg waits for an answer as long as it takes; every query, commit and fetch goes
    through :meth:`wait`, so bounding it bounds them all.
    """

    limit = DEFAULT_TIMEOUT_S + GRACE_S
    timed_out = False

    def wait(
        self, gen: PQGen[RV], interval: float = _WAIT_INTERVAL_S, timeout: float | None = None
    ) -> RV:
        try:
            return super().wait(gen, interval, self.limit if timeout is None else timeout)
        except pg_errors._WaitTimeout:
            self.timed_out = True
            self.pgconn.finish()  # mid-query: nothing more can be sent on it
            raise


class _Health:
    """The databases this process finds unreachable now: each change is logged once."""

    def __init__(self) -> None:
        self._down: set[str] = set()
        self._lock = threading.Lock()

    def down(self, url: str, detail: str) -> None:
        with self._lock:
            if url in self._down:
                return
            self._down.add(url)
        _log.warning(
            "the team vault's database %s is unreachable (%s); retrying in the background, "
            "calls fail until it is back",
            url,
            detail,
        )

    def up(self, url: str) -> None:
        with self._lock:
            if url not in self._down:
                return
            self._down.discard(url)
        _log.warning("the team vault's database %s is reachable again", url)

    def is_down(self, url: str) -> bool:
        with self._lock:
            return url in self._down


_HEALTH = _Health()


class PgLink:
    """The connection of one store: opened now, reopened when lost (see the module docstring).

    ``setup`` is SQL run on every new connection (the store's LISTEN); ``on_connect`` is
    called with each new connection before that, so nothing it should see slips by.
    """

    def __init__(self, url: str, setup: str, on_connect: Callable[[TimedConnection], None]) -> None:
        self.url = url
        self.timeout = call_timeout()
        self._setup = setup
        self._on_connect = on_connect
        self._retry_at = 0.0
        self._backoff = 0.0
        self._last_error = ""
        self.conn = self._connect()  # psycopg.Error: the caller words a first failure

    def _connect(self) -> TimedConnection:
        conn = TimedConnection.connect(
            self.url, autocommit=True, connect_timeout=max(2, math.ceil(self.timeout))
        )
        conn.limit = self.timeout + GRACE_S
        try:
            self._on_connect(conn)
            conn.execute(f"SET statement_timeout = {math.ceil(self.timeout * 1000)}")
            conn.execute(self._setup)
        except BaseException:
            conn.close()
            raise
        return conn

    def live(self) -> TimedConnection:
        """The connection, reopened first if it was lost; ExternalError while the database
        cannot be reached (at once, without trying, while the backoff lasts)."""
        if not self.conn.closed:
            return self.conn
        now = time.monotonic()
        if now < self._retry_at and _HEALTH.is_down(self.url):
            raise self._unreachable(self._retry_at - now)
        try:
            conn = self._connect()
        except psycopg.Error as exc:
            self._backoff = min(MAX_RETRY_S, max(FIRST_RETRY_S, 2 * self._backoff))
            self._retry_at = time.monotonic() + self._backoff
            self._last_error = _one_line(exc)
            _HEALTH.down(self.url, self._last_error)
            raise self._unreachable(self._backoff) from None
        self.conn, self._backoff, self._retry_at = conn, 0.0, 0.0
        _HEALTH.up(self.url)
        return conn

    def _unreachable(self, wait: float) -> ExternalError:
        return ExternalError(
            f"the team vault's database {self.url} is unreachable ({self._last_error}); the "
            f"next attempt to reconnect is in {max(wait, 0.1):.1f} s",
            "retry shortly; affidavit reconnects by itself once the database server is back",
        )

    def failure(self, exc: psycopg.Error) -> ExternalError | None:
        """The error for a call that failed because the database did not serve it (a
        timeout or a lost connection); None for other failures."""
        if self.conn.timed_out or isinstance(exc, pg_errors.QueryCanceled):
            return ExternalError(
                f"the team vault's database {self.url} did not answer within "
                f"{self.timeout:g} s (frozen, overloaded, or another writer holds the lock)",
                f"retry shortly; {TIMEOUT_ENV} sets the limit",
            )
        if isinstance(exc, psycopg.OperationalError) or self.conn.closed:
            return ExternalError(
                f"lost the team vault's database {self.url}: {_one_line(exc)}",
                "retry shortly; affidavit reconnects by itself",
            )
        return None

    def close(self) -> None:
        """Close the connection (the server rolls back anything unfinished)."""
        with contextlib.suppress(psycopg.Error):
            self.conn.close()


def _one_line(exc: BaseException, limit: int = 160) -> str:
    text = " ".join(str(exc).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"
