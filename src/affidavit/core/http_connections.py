"""Connection limits for the project's HTTP servers (``serve --http`` and the console).

uvicorn closes a kept-alive connection that stays quiet between requests, but nothing else:
a connection that never sends a request head, sends half of one, or stops in the middle of a
body stays open for ever, and one client address may open as many as it likes (issue 26: 103
stalled connections, none closed). :func:`guarded_h11` is uvicorn's own h11 protocol with
three rules added, each answered on the connection, before the application sees anything:

- at most ``per_address`` open connections per client address; the next one is answered
  ``503`` and closed at once;
- a request head must arrive whole within ``header_timeout`` seconds of the connection
  opening (or of its first byte, on a kept-alive connection): else ``408`` and closed;
- a request body may pause for at most ``idle_timeout`` seconds (while the server is the one
  waiting); a kept-alive connection may sit idle as long between requests.

A response the application is still producing is never timed: a tool may run for minutes.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from dataclasses import dataclass
from typing import Any

DEFAULT_PER_ADDRESS = 64
"""Connections one client address may hold open (every local process shares 127.0.0.1)."""
DEFAULT_HEADER_TIMEOUT = 10.0
"""Seconds a request head may take to arrive whole."""
DEFAULT_IDLE_TIMEOUT = 30.0
"""Seconds a connection may stay silent while the server waits for the client."""


@dataclass(frozen=True)
class ConnectionLimits:
    """How long a client may keep the server waiting, and how many connections it may hold."""

    per_address: int = DEFAULT_PER_ADDRESS
    header_timeout: float = DEFAULT_HEADER_TIMEOUT
    idle_timeout: float = DEFAULT_IDLE_TIMEOUT


def _plain_response(status: bytes, text: str) -> bytes:
    body = text.encode("ascii")
    head = (
        b"HTTP/1.1 " + status + b"\r\ncontent-type: text/plain; charset=utf-8\r\n"
        b"content-length: %d\r\nconnection: close\r\n" % len(body)
    )
    return head + (b"retry-after: 1\r\n" if status.startswith(b"503") else b"") + b"\r\n" + body


TOO_MANY = _plain_response(b"503 Service Unavailable", "too many connections from this address")
HEAD_LATE = _plain_response(b"408 Request Timeout", "the request head took too long")


def guarded_h11(limits: ConnectionLimits) -> type[asyncio.Protocol]:
    """A uvicorn HTTP protocol class that enforces ``limits`` (one class per server: it
    counts that server's connections)."""
    import h11
    from uvicorn.protocols.http.h11_impl import H11Protocol

    open_per_address: Counter[str] = Counter()

    class GuardedH11Protocol(H11Protocol):
        """uvicorn's h11 protocol plus the rules of :mod:`affidavit.core.http_connections`."""

        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self.address = ""
            self.head_timer: asyncio.TimerHandle | None = None
            self.body_timer: asyncio.TimerHandle | None = None

        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            super().connection_made(transport)
            self.address = self.client[0] if self.client else ""
            open_per_address[self.address] += 1
            if open_per_address[self.address] > limits.per_address:
                transport.write(TOO_MANY)
                transport.close()
                return
            self._arm_head_timer()

        def connection_lost(self, exc: Exception | None) -> None:
            open_per_address[self.address] -= 1
            if open_per_address[self.address] <= 0:
                del open_per_address[self.address]
            self._cancel_timers()
            super().connection_lost(exc)

        def data_received(self, data: bytes) -> None:
            super().data_received(data)
            self._watch()

        def on_response_complete(self) -> None:
            super().on_response_complete()
            if self.head_timer is not None:  # a pipelined head, or none yet: uvicorn's idle
                self.head_timer.cancel()  # timer runs until the next request's first byte
                self.head_timer = None
            self._watch_body()

        def _watch(self) -> None:
            """After bytes arrived: time the head that started, or the body that flows."""
            if self.transport.is_closing():
                return
            if self.conn.their_state is h11.IDLE:
                if self.head_timer is None:
                    self._arm_head_timer()
                return
            if self.head_timer is not None:
                self.head_timer.cancel()
                self.head_timer = None
            self._watch_body()

        def _watch_body(self) -> None:
            if self.body_timer is not None:
                self.body_timer.cancel()
                self.body_timer = None
            if self.conn.their_state is h11.SEND_BODY and not self.transport.is_closing():
                self.body_timer = self.loop.call_later(limits.idle_timeout, self._body_stalled)

        def _arm_head_timer(self) -> None:
            self.head_timer = self.loop.call_later(limits.header_timeout, self._head_late)

        def _head_late(self) -> None:
            self.head_timer = None
            if self.conn.their_state is h11.IDLE and not self.transport.is_closing():
                started = bool(self.conn.trailing_data[0])
                if started:
                    self.transport.write(HEAD_LATE)
                self.transport.close()

        def _body_stalled(self) -> None:
            self.body_timer = None
            if self.flow.read_paused:  # the server stopped reading, not the client sending
                self._watch_body()
                return
            self.transport.close()

        def _cancel_timers(self) -> None:
            for timer in (self.head_timer, self.body_timer):
                if timer is not None:
                    timer.cancel()
            self.head_timer = self.body_timer = None

    return GuardedH11Protocol


def uvicorn_settings(limits: ConnectionLimits) -> dict[str, Any]:
    """The ``uvicorn.Config`` arguments that apply ``limits`` (and turn WebSocket off)."""
    return {
        "http": guarded_h11(limits),
        "ws": "none",
        "timeout_keep_alive": limits.idle_timeout,
    }
