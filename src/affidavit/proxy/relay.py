"""The raw relay: JSON-RPC lines in from one side, the same bytes out the other.

Two reader loops (host stdin, backend output) classify each line with
:func:`affidavit.core.jsonrpc.peek` and forward it unchanged unless the
:class:`~affidavit.proxy.intercept.Interceptor` acts on its method. Requests flow both ways
(the host's ``tools/call``; the backend's ``sampling/createMessage``, ``elicitation/create``,
``roots/list``; the proxy's own questions to either side), so replies are correlated by
direction *and* id: a response read from the backend can only answer a request that went to
the backend, whatever id the other direction happens to be using.

Robustness rules: a blank or non-JSON line is reported on stderr and dropped; if the backend
dies, every request still waiting for it gets a JSON-RPC error and the proxy exits; if the
host goes away, the calls it already sent are still forwarded, answered and audited (within a
grace period), then the backend's stdin is closed, it gets a grace period, then it is stopped.
Acting on a message never blocks the reader loops: the interceptor runs each call in its own
task and verifiers in threads.

Nothing reaches the host around the interceptor: a line that repeats a key (its meaning
depends on the parser) is refused and whoever waits on it gets an error; a reply for no
request in flight (a second answer for one id) is dropped; the members of a backend batch are
handled one by one, as if each had come alone. Each refusal is reported to the interceptor
(which audits it).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import secrets
import signal
import sys
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

from affidavit.core import jsonrpc
from affidavit.core.jsonrpc import IdKey, Kind, Peek
from affidavit.proxy.hostio import HostIO


class Backend(Protocol):
    """What the relay needs from a backend transport (stdio subprocess or Streamable HTTP)."""

    @property
    def identity(self) -> str: ...

    async def start(self) -> None: ...

    async def send(self, line: bytes) -> None: ...

    async def receive(self) -> bytes | None: ...

    def exit_status(self) -> str: ...

    async def close(self, grace: float = 5.0) -> None: ...


class BackendGone(Exception):
    """The backend ended before it answered."""


class HostGone(Exception):
    """The host closed its side before it answered the proxy's question."""


HOST_GONE_GRACE = 5.0
"""Seconds the calls a departed host already sent get to be answered and audited."""


def log(message: str) -> None:
    """One diagnostic line on stderr (stdout is the protocol channel)."""
    with contextlib.suppress(OSError, ValueError):
        sys.stderr.write(f"affidavit proxy: {message}\n")
        sys.stderr.flush()


@dataclass
class Pending:
    """A request sent to one side and not yet answered."""

    method: str
    request_id: Any
    future: asyncio.Future[bytes] | None = None
    started: float = field(default_factory=time.perf_counter)


@dataclass
class HostRequest:
    """A request from the host that the interceptor acts on."""

    relay: Relay
    peek: Peek
    line: bytes
    message: dict[str, Any]
    forwarded: bool = False

    @property
    def id(self) -> Any:
        return self.peek.id

    @property
    def method(self) -> str:
        return self.peek.method or ""

    @property
    def params(self) -> dict[str, Any]:
        params = self.message.get("params")
        return params if isinstance(params, dict) else {}

    async def forward(self) -> bytes:
        """Send the original bytes to the backend; return the backend's reply line."""
        self.forwarded = True
        return await self.relay.send_to_backend(self.peek, self.line, wait=True)

    @property
    def stateless(self) -> bool:
        """Whether this is a 2026-07-28 request (its ``_meta`` carries the protocol version)."""
        meta = self.params.get("_meta")
        return isinstance(meta, dict) and jsonrpc.PROTOCOL_VERSION_META in meta

    def reply(self, line: bytes) -> None:
        """Answer the host with a line as it is."""
        self.relay.host.write(line)

    def answer(self, result: dict[str, Any]) -> None:
        """Answer the host with a result the proxy made (typed for the request's era)."""
        if self.stateless and "resultType" not in result:
            result = {**result, "resultType": "complete"}
        self.reply(jsonrpc.result_response(self.id, result).rstrip(b"\n"))


class Interceptor(Protocol):
    """The acting half of the proxy (see :mod:`affidavit.proxy.intercept`)."""

    methods: frozenset[str]

    async def handle(self, request: HostRequest) -> None: ...

    def on_host_notification(self, peek: Peek, line: bytes) -> None: ...

    def on_backend_request(self, peek: Peek, line: bytes) -> bytes | None: ...

    def on_refused(self, side: str, reason: str, ids: tuple[Any, ...], line: bytes) -> None: ...

    async def close(self) -> None: ...


class Relay:
    """One host, one backend, and the tables that correlate their requests."""

    def __init__(self, backend: Backend, host: HostIO | None = None) -> None:
        self.backend = backend
        self.host = host or HostIO()
        self.interceptor: Interceptor | None = None
        self._to_backend: dict[IdKey, Pending] = {}
        self._to_host: dict[IdKey, Pending] = {}
        self._held: dict[IdKey, tuple[HostRequest, asyncio.Task[None]]] = {}
        self._tasks: set[asyncio.Task[Any]] = set()
        self._prefix = f"affidavit-{secrets.token_hex(4)}-"
        self._counter = itertools.count(1)
        self._backend_gone = False
        self._host_gone = asyncio.Event()
        self.exit_code = 0

    # ----------------------------------------------------------------- sending

    async def send_to_backend(self, peek: Peek, line: bytes, *, wait: bool) -> bytes:
        """Forward a host request; with ``wait``, return the backend's reply line."""
        key = peek.key
        if self._backend_gone:
            raise BackendGone(self.backend.exit_status())
        pending = Pending(peek.method or "", peek.id)
        if wait:
            pending.future = asyncio.get_running_loop().create_future()
        if key is not None:
            self._to_backend[key] = pending
        await self.backend.send(line + b"\n")
        if pending.future is None:
            return b""
        return await pending.future

    async def ask(self, side: str, method: str, params: Any, timeout: float) -> dict[str, Any]:
        """The proxy's own request to ``side`` (``"host"`` or ``"backend"``); its result.

        Raises :class:`BackendGone`, ``TimeoutError``, or ``RuntimeError`` for an error reply.
        """
        request_id = f"{self._prefix}{next(self._counter)}"
        key = jsonrpc.id_key(request_id)
        assert key is not None
        future: asyncio.Future[bytes] = asyncio.get_running_loop().create_future()
        table = self._to_host if side == "host" else self._to_backend
        table[key] = Pending(method, request_id, future)
        line = jsonrpc.request_line(request_id, method, params)
        try:
            if side == "host":
                self.host.write(line.rstrip(b"\n"))
                await self.host.drain()
            else:
                if self._backend_gone:
                    raise BackendGone(self.backend.exit_status())
                await self.backend.send(line)
            reply = jsonrpc.parse(await asyncio.wait_for(future, timeout))
        finally:
            table.pop(key, None)
        if not isinstance(reply, dict) or "error" in reply:
            error = reply.get("error") if isinstance(reply, dict) else None
            message = error.get("message") if isinstance(error, dict) else "invalid reply"
            raise RuntimeError(str(message))
        result = reply.get("result")
        return result if isinstance(result, dict) else {}

    def _is_own(self, request_id: Any) -> bool:
        return isinstance(request_id, str) and request_id.startswith(self._prefix)

    def spawn(self, coro: Awaitable[Any]) -> asyncio.Task[Any]:
        """Run ``coro`` as a tracked task (finished or cancelled at shutdown)."""
        task: asyncio.Task[Any] = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._task_done)
        return task

    def _task_done(self, task: asyncio.Task[Any]) -> None:
        self._tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            exc = task.exception()
            log(f"internal error while handling a message ({type(exc).__name__}: {exc})")

    # ------------------------------------------------------------- host side

    async def _host_loop(self) -> None:
        while True:
            line = await self.host.readline()
            if line is None:
                break
            peek = jsonrpc.peek(line)
            await self._from_host(peek, line)
        self._host_gone.set()

    async def _from_host(self, peek: Peek, line: bytes) -> None:
        kind = peek.kind
        if kind is Kind.INVALID:
            log(f"dropped a line from the host: {peek.reason}")
        elif kind is Kind.AMBIGUOUS:
            self._refuse("host", peek, line)
        elif kind is Kind.RESPONSE:
            key = peek.key
            pending = self._to_host.pop(key, None) if key is not None else None
            if pending is not None and pending.future is not None:
                if not pending.future.done():
                    pending.future.set_result(line)
            elif self._is_own(peek.id):
                log("dropped a late answer to a question the proxy had given up on")
            elif not self._backend_gone:
                await self.backend.send(line + b"\n")
        elif kind is Kind.REQUEST:
            await self._host_request(peek, line)
        elif kind is Kind.NOTIFICATION:
            await self._host_notification(peek, line)
        else:
            await self._host_batch(peek, line)

    async def _host_request(self, peek: Peek, line: bytes) -> None:
        assert peek.method is not None
        key = peek.key
        if key is not None and (key in self._held or key in self._to_backend):
            self.host.write(
                jsonrpc.error_response(
                    peek.id,
                    jsonrpc.INVALID_REQUEST,
                    f"affidavit proxy: id {peek.id!r} is already in use by a request in flight; "
                    "give each request its own id",
                ).rstrip(b"\n")
            )
            return
        interceptor = self.interceptor
        if interceptor is not None and peek.method in interceptor.methods:
            try:  # what the proxy acts on is parsed in full, repeated keys refused
                message = peek.message if peek.message is not None else jsonrpc.parse(line)
            except jsonrpc.AmbiguousMessage as exc:
                self._refuse(
                    "host", replace(peek, reason=str(exc), waiting=(((peek.id,), True),)), line
                )
                return
            request = HostRequest(self, peek, line, message)
            task = self.spawn(self._handle(request))
            if key is not None:
                self._held[key] = (request, task)
            return
        if self._backend_gone:
            self.host.write(self._gone_error(peek.id).rstrip(b"\n"))
            return
        await self.send_to_backend(peek, line, wait=False)

    async def _handle(self, request: HostRequest) -> None:
        assert self.interceptor is not None
        try:
            await self.interceptor.handle(request)
        except BackendGone:
            request.reply(self._gone_error(request.id).rstrip(b"\n"))
        except jsonrpc.AmbiguousMessage as exc:
            request.reply(
                jsonrpc.error_response(
                    request.id,
                    jsonrpc.REPLY_REFUSED,
                    f"affidavit proxy: refused the backend's reply: {exc} (parsers disagree on "
                    "what it means)",
                ).rstrip(b"\n")
            )
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            log(f"internal error on {request.method} ({type(exc).__name__}: {exc})")
            request.reply(
                jsonrpc.error_response(
                    request.id, jsonrpc.INTERNAL_ERROR, f"affidavit proxy: internal error ({exc})"
                ).rstrip(b"\n")
            )
        finally:
            key = request.peek.key
            if key is not None and self._held.get(key, (None,))[0] is request:
                del self._held[key]
        await self.host.drain()

    async def _host_notification(self, peek: Peek, line: bytes) -> None:
        if peek.method == "notifications/cancelled":
            message = peek.message if peek.message is not None else jsonrpc.parse(line)
            params = message.get("params") if isinstance(message, dict) else None
            target = jsonrpc.id_key(params.get("requestId")) if isinstance(params, dict) else None
            held = self._held.get(target) if target is not None else None
            if held is not None and not held[0].forwarded:
                held[1].cancel()  # never reached the backend: nothing to tell it
                return
        if self.interceptor is not None:
            self.interceptor.on_host_notification(peek, line)
        if not self._backend_gone:
            await self.backend.send(line + b"\n")

    async def _host_batch(self, peek: Peek, line: bytes) -> None:
        members = [jsonrpc.classify(m) for m in peek.message]
        acted = self.interceptor.methods if self.interceptor is not None else frozenset()
        if any(m.kind is Kind.REQUEST and m.method in acted for m in members):
            errors = [
                {
                    "jsonrpc": "2.0",
                    "id": m.id,
                    "error": {
                        "code": jsonrpc.INVALID_REQUEST,
                        "message": "affidavit proxy: a batch containing "
                        f"{m.method} cannot be verified; send each call as its own message",
                    },
                }
                for m in members
                if m.kind is Kind.REQUEST
            ]
            self.host.write(jsonrpc.encode(errors).rstrip(b"\n"))
            return
        for member in members:
            key = member.key
            if member.kind is Kind.REQUEST and key is not None:
                self._to_backend[key] = Pending(member.method or "", member.id)
        if not self._backend_gone:
            await self.backend.send(line + b"\n")

    # ---------------------------------------------------------- backend side

    async def _backend_loop(self) -> None:
        while True:
            line = await self.backend.receive()
            if line is None:
                break
            peek = jsonrpc.peek(line)
            self._from_backend(peek, line)
            await self.host.drain()
        self._backend_gone = True

    def _from_backend(self, peek: Peek, line: bytes) -> None:
        kind = peek.kind
        if kind is Kind.INVALID:
            log(f"dropped a line from the backend: {peek.reason}")
        elif kind is Kind.AMBIGUOUS:
            self._refuse("backend", peek, line)
        elif kind is Kind.RESPONSE:
            if self._backend_reply(peek, line):
                self.host.write(line)
        elif kind is Kind.REQUEST:
            if self._backend_request(peek, line):
                self.host.write(line)
        elif kind is Kind.BATCH:
            self._backend_batch(peek, line)
        else:
            self.host.write(line)

    def _backend_reply(self, peek: Peek, line: bytes) -> bool:
        """Route a reply to whoever waits on it; True when that is the host (write ``line``)."""
        key = peek.key
        if key is None:
            return True  # an error about a line the backend could not read: the host may want it
        pending = self._to_backend.pop(key, None)
        if pending is None:
            if self._is_own(peek.id):
                log("dropped a late answer to a question the proxy had given up on")
            else:  # never relayed: it could overtake the verified answer to the same id
                reason = "a reply for no request in flight (a second answer, or one never asked)"
                log(f"dropped a reply from the backend: {reason}")
                self._report("backend", reason, (peek.id,), line)
            return False
        if pending.future is not None:
            if not pending.future.done():
                pending.future.set_result(line)
            return False
        return True

    def _backend_request(self, peek: Peek, line: bytes) -> bool:
        """Let the interceptor answer a backend request; True when it goes on to the host."""
        answer = self.interceptor.on_backend_request(peek, line) if self.interceptor else None
        if answer is None:
            return True
        self.spawn(self.backend.send(answer))
        return False

    def _backend_batch(self, peek: Peek, line: bytes) -> None:
        """Each member as if it had come alone; the rest go on to the host as one array."""
        members = peek.message
        kept = []
        for member in members:
            single = jsonrpc.classify(member)
            member_line = jsonrpc.encode(member).rstrip(b"\n")
            if single.kind is Kind.RESPONSE:
                keep = self._backend_reply(single, member_line)
            elif single.kind is Kind.REQUEST:
                keep = self._backend_request(single, member_line)
            else:
                keep = True
            if keep:
                kept.append(member)
        if len(kept) == len(members):
            self.host.write(line)
        elif kept:
            self.host.write(jsonrpc.encode(kept).rstrip(b"\n"))

    # ------------------------------------------------------------- refusals

    def _report(self, side: str, reason: str, ids: tuple[Any, ...], line: bytes) -> None:
        if self.interceptor is not None:
            self.interceptor.on_refused(side, reason, ids, line)

    def _refuse(self, side: str, peek: Peek, line: bytes) -> None:
        """An ambiguous line goes nowhere; whoever waits on one of its ids is told why."""
        log(f"refused a line from the {side}: {peek.reason}")
        self._report(side, peek.reason, tuple(i for ids, _ in peek.waiting for i in ids), line)
        text = (
            f"affidavit proxy: refused a message in which {peek.reason} (parsers disagree on "
            "what it means); send each key once"
        )
        for ids, is_request in peek.waiting:
            if is_request:  # its sender waits for an answer; an id it repeats is unknown: null
                self._error_to(
                    side, ids[0] if len(ids) == 1 else None, jsonrpc.INVALID_REQUEST, text
                )
                continue
            for request_id in ids:  # a reply: the other side waits for it
                self._fail_waiting(side, request_id, peek.reason, text)

    def _fail_waiting(self, side: str, request_id: Any, reason: str, text: str) -> None:
        key = jsonrpc.id_key(request_id)
        table = self._to_backend if side == "backend" else self._to_host
        pending = table.pop(key, None) if key is not None else None
        if pending is not None and pending.future is not None:
            if not pending.future.done():
                pending.future.set_exception(jsonrpc.AmbiguousMessage(reason))
        elif side == "backend" and pending is not None:
            self._error_to("host", request_id, jsonrpc.REPLY_REFUSED, text)
        elif side == "host" and not self._is_own(request_id):
            self._error_to("backend", request_id, jsonrpc.INVALID_REQUEST, text)

    def _error_to(self, side: str, request_id: Any, code: int, text: str) -> None:
        line = jsonrpc.error_response(request_id, code, text)
        if side == "host":
            self.host.write(line.rstrip(b"\n"))
        elif not self._backend_gone:
            self.spawn(self.backend.send(line))

    def _gone_error(self, request_id: Any) -> bytes:
        return jsonrpc.error_response(
            request_id,
            jsonrpc.BACKEND_GONE,
            f"affidavit proxy: the backend {self.backend.exit_status()} before answering",
        )

    def _fail_in_flight(self) -> None:
        """Answer every request the backend will now never answer."""
        for pending in list(self._to_backend.values()):
            if pending.future is not None:
                if not pending.future.done():
                    pending.future.set_exception(BackendGone(self.backend.exit_status()))
            else:
                self.host.write(self._gone_error(pending.request_id).rstrip(b"\n"))
        self._to_backend.clear()

    # --------------------------------------------------------------- running

    async def run(self, make_interceptor: Callable[[Relay], Interceptor] | None = None) -> int:
        """Relay until either side ends; return the process exit code."""
        await self.backend.start()
        await self.host.open()
        if make_interceptor is not None:
            try:
                self.interceptor = make_interceptor(self)
            except BaseException:
                await self.backend.close(grace=1.0)  # never leave the backend running alone
                raise
        host_task = asyncio.create_task(self._host_loop())
        backend_task = asyncio.create_task(self._backend_loop())
        with contextlib.suppress(NotImplementedError, RuntimeError):
            # a host that stops us with SIGTERM gets the same clean shutdown as closing stdin
            asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, host_task.cancel)
        done, _ = await asyncio.wait({host_task, backend_task}, return_when=asyncio.FIRST_COMPLETED)
        if backend_task in done:
            await self._after_backend_exit(host_task)
        else:
            await self._after_host_exit(backend_task)
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        if self.interceptor is not None:
            await self.interceptor.close()
        await self.host.close()
        return self.exit_code

    async def _settle_held(self, timeout: float) -> None:
        """Give the calls the interceptor holds up to ``timeout`` to finish (and be audited)."""
        held = [task for _, task in self._held.values()]
        if held:  # asyncio.wait, unlike wait_for, does not cancel what is still running
            await asyncio.wait(held, timeout=timeout)

    async def _after_backend_exit(self, host_task: asyncio.Task[None]) -> None:
        self._backend_gone = True
        await self.backend.close(grace=2.0)  # reap it, so its exit status can be reported
        log(f"the backend {self.backend.exit_status()}")
        self._fail_in_flight()
        await self._settle_held(3.0)  # let the interceptor answer the calls it was holding
        for request, task in list(self._held.values()):  # e.g. still waiting for an approval
            task.cancel()
            request.reply(self._gone_error(request.id).rstrip(b"\n"))
        self._held.clear()
        await self.host.drain()
        host_task.cancel()
        await asyncio.gather(host_task, return_exceptions=True)
        self.exit_code = 8

    async def _after_host_exit(self, backend_task: asyncio.Task[None]) -> None:
        # the host closed our stdin: nobody answers the proxy's questions any more, but the
        # calls it already sent still reach the backend and are judged and audited
        for pending in list(self._to_host.values()):
            if pending.future is not None and not pending.future.done():
                pending.future.set_exception(HostGone("the host closed its side"))
        await self._settle_held(HOST_GONE_GRACE)
        # then close the backend's stdin, give it time to finish and exit
        await self.backend.close(grace=5.0)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(backend_task, 5.0)
        backend_task.cancel()
        await asyncio.gather(backend_task, return_exceptions=True)
        self._backend_gone = True
        self._fail_in_flight()
        await self._settle_held(3.0)
        await self.host.drain()
